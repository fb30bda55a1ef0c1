-- Answers the server's `agent/diagnostics` request with what vim.diagnostic holds (every language server's
-- diagnostics, and any other source's), converted back to LSP shapes.
local M = {}

-- vim.diagnostic columns are byte offsets; LSP columns are in the client's position encoding.
local function character(buf, row, col, encoding)
  local ok, offset = pcall(vim.lsp.util.character_offset, buf, row, col, encoding)
  return ok and offset or col
end

local function to_lsp(d, encoding)
  local end_row = d.end_lnum or d.lnum
  return {
    range = {
      start = { line = d.lnum, character = character(d.bufnr, d.lnum, d.col, encoding) },
      ['end'] = { line = end_row, character = character(d.bufnr, end_row, d.end_col or d.col, encoding) },
    },
    severity = d.severity,  -- vim.diagnostic.severity uses LSP's numbers: 1 error … 4 hint
    message = d.message,
    source = d.source,
    code = d.code,
  }
end

-- Loaded buffers by URI; vim.uri_to_bufnr would create a buffer for every URI the server names.
local function buffers_by_uri()
  local by_uri = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= '' then
      by_uri[vim.uri_from_bufnr(buf)] = buf
    end
  end
  return by_uri
end

-- The LSP diagnostics of the cursor's line in the current buffer, from every source: the context a
-- textDocument/codeAction must carry for the server to offer "Fix with agent" (Neovim 0.8+ sends only the
-- diagnostics of the server the request goes to, and agent-lsp publishes none).
function M.at_cursor(client)
  local encoding = client and client.offset_encoding or 'utf-16'
  local lnum = vim.api.nvim_win_get_cursor(0)[1] - 1
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0, { lnum = lnum })) do
    table.insert(diagnostics, to_lsp(d, encoding))
  end
  return diagnostics
end

function M.collect(params, client)
  local encoding = client and client.offset_encoding or 'utf-16'
  local by_uri = buffers_by_uri()
  local uris = params and params.uris
  if uris == nil or uris == vim.NIL then
    uris = {}
    for uri, buf in pairs(by_uri) do
      if #vim.diagnostic.get(buf) > 0 then
        table.insert(uris, uri)
      end
    end
    table.sort(uris)
  end
  local items = {}
  for _, uri in ipairs(uris) do
    local diagnostics = {}
    if by_uri[uri] then
      for _, d in ipairs(vim.diagnostic.get(by_uri[uri])) do
        table.insert(diagnostics, to_lsp(d, encoding))
      end
    end
    table.insert(items, { uri = uri, diagnostics = diagnostics })  -- an empty Lua table encodes as []
  end
  return { items = items }
end

return M
