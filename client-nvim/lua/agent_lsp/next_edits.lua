-- Next-edit suggestions (PROTOCOL §11, textDocument/copilotInlineEdit), on every Neovim from 0.7: after a change
-- made in Normal mode or in Insert mode, back in Normal mode and after a pause, the server is asked for the edit
-- that follows (a newer change cancels the older request); its edit is drawn with extmarks — the text it replaces
-- highlighted, the new text beside it as virtual text, a sign when it is away from the cursor — and the accept key
-- jumps there, then applies it (its command goes to the server); the dismiss key, any change, Insert mode or
-- leaving the buffer clears it. Only in Normal mode: ghost text lives in Insert mode, so the two never meet.
local config = require('agent_lsp.config')
local client = require('agent_lsp.client')
local positions = require('agent_lsp.positions')

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace('agent_lsp_next_edit')
M.unmapped = {}  -- {action = key}: keys left alone because something else maps them in Normal mode

local function link()
  vim.cmd('highlight default link AgentLspNextEditOld DiffDelete')
  vim.cmd('highlight default link AgentLspNextEditNew DiffAdd')
  vim.cmd('highlight default link AgentLspNextEditSign DiffAdd')
end
link()
api.nvim_create_autocmd('ColorScheme', { group = api.nvim_create_augroup('agent_lsp_next_edit', { clear = true }),
  callback = link })

local INLINE = vim.fn.has('nvim-0.10') == 1  -- virt_text_pos = 'inline' (older: at the end of the line)

local paced = require('agent_lsp.paced').new()  -- the request in flight: {id, client, buf, uri, version, tick}
local shown = nil    -- the edit on screen: {buf, tick, edit, client, srow, scol, erow, ecol, lines}

local function changed_event()
  -- For statuslines and tests: what is shown changed (M.current() says what it is now).
  vim.cmd('doautocmd <nomodeline> User AgentLspNextEdit')
end

-- The agent-lsp client when it serves `buf` and offers next edits.
local function agent_client(buf)
  local c = client.get()
  if c and client.has('nextEdits') and vim.lsp.buf_is_attached(buf, c.id) then
    return c
  end
end

local function line_at(buf, row)
  return api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

local function cursor_row()
  return api.nvim_win_get_cursor(0)[1] - 1
end

local function clear()
  if shown then
    if api.nvim_buf_is_valid(shown.buf) then
      api.nvim_buf_clear_namespace(shown.buf, M.ns, 0, -1)
    end
    shown = nil
    changed_event()
  end
end

-- The edit on screen when the current buffer is still as it was answered for; else nil.
local function fitting()
  local buf = api.nvim_get_current_buf()
  if shown and shown.buf == buf and api.nvim_buf_get_changedtick(buf) == shown.tick then
    return shown
  end
end

local function away(s)
  local row = cursor_row()
  return row < s.srow or row > s.erow
end

local function display(text)
  return (text:gsub('\t', string.rep(' ', vim.bo.tabstop)))
end

local function draw()
  local s = fitting()
  if not s then
    return clear()
  end
  api.nvim_buf_clear_namespace(s.buf, M.ns, 0, -1)
  if s.srow ~= s.erow or s.scol ~= s.ecol then  -- the text it replaces
    api.nvim_buf_set_extmark(s.buf, M.ns, s.srow, s.scol, { end_row = s.erow, end_col = s.ecol,
      hl_group = 'AgentLspNextEditOld', hl_mode = 'combine' })
  end
  local opts = {}
  if s.lines[1] ~= '' or #s.lines > 1 then  -- the new text beside it: its first line, the others under it
    local first = { display(s.lines[1]), 'AgentLspNextEditNew' }
    if INLINE then
      opts.virt_text, opts.virt_text_pos = { first }, 'inline'
    else
      opts.virt_text, opts.virt_text_pos = { { ' → ', 'NonText' }, first }, 'eol'
    end
    if #s.lines > 1 then
      opts.virt_lines = {}
      for i = 2, #s.lines do
        table.insert(opts.virt_lines, { { display(s.lines[i]), 'AgentLspNextEditNew' } })
      end
    end
  end
  if next(opts) then
    api.nvim_buf_set_extmark(s.buf, M.ns, s.erow, s.ecol, opts)
  end
  if away(s) then  -- on the edit's first line
    api.nvim_buf_set_extmark(s.buf, M.ns, s.srow, 0, { sign_text = '→', sign_hl_group = 'AgentLspNextEditSign' })
  end
  changed_event()
end

-- Nothing shown, nothing asked.
function M.reset()
  paced:stop()
  paced:cancel()
  clear()
end

-- The server's edit as byte positions in `req.buf`, when it answers this very request (uri and version) and the
-- buffer is still at that version; else nil.
local function placed(req, result)
  local edit = type(result) == 'table' and type(result.edits) == 'table' and result.edits[1]
  if type(edit) ~= 'table' or type(edit.text) ~= 'string' or type(edit.range) ~= 'table'
    or type(edit.textDocument) ~= 'table' or edit.textDocument.uri ~= req.uri
    or edit.textDocument.version ~= req.version or vim.lsp.util.buf_versions[req.buf] ~= req.version
    or api.nvim_buf_get_changedtick(req.buf) ~= req.tick then
    return nil
  end
  local start, stop = edit.range.start, edit.range['end']
  local function position(p)
    return type(p) == 'table' and type(p.line) == 'number' and p.line >= 0 and type(p.character) == 'number'
      and p.character >= 0
  end
  if not position(start) or not position(stop) then
    return nil
  end
  local first, last = line_at(req.buf, start.line), line_at(req.buf, stop.line)
  if not first or not last then
    return nil
  end
  local encoding = req.client.offset_encoding or 'utf-16'
  local scol, ecol = positions.to_bytes(first, start.character, encoding), positions.to_bytes(last, stop.character, encoding)
  if stop.line < start.line or (stop.line == start.line and ecol < scol) then
    return nil
  end
  return { buf = req.buf, tick = req.tick, edit = edit, client = req.client, srow = start.line, scol = scol,
           erow = stop.line, ecol = ecol, lines = vim.split(edit.text, '\r?\n') }
end

local function answered(req, err, result)
  if not paced:answered(req) then  -- a newer change, Insert mode or leaving the buffer dropped it
    return
  end
  if err or api.nvim_get_current_buf() ~= req.buf or api.nvim_get_mode().mode ~= 'n' then
    return
  end
  local s = placed(req, result)
  if s then
    shown = s
    draw()
    client.notify(req.client, 'textDocument/didShowInlineEdit', { item = s.edit })
  end
end

-- Ask for the next edit at the cursor of `buf` (the current buffer).
local function request(buf)
  local c = agent_client(buf)
  local version = vim.lsp.util.buf_versions[buf]
  if not c or type(version) ~= 'number' then
    return
  end
  paced:cancel()
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local uri = vim.uri_from_bufnr(buf)
  local req = { client = c, buf = buf, uri = uri, version = version, tick = api.nvim_buf_get_changedtick(buf) }
  local params = {
    textDocument = { uri = uri, version = version },
    position = { line = row - 1, character = positions.from_bytes(line_at(buf, row - 1), col, c.offset_encoding or 'utf-16') },
  }
  req.id = client.request(c, 'textDocument/copilotInlineEdit', params, function(err, result)
    answered(req, err, result)
  end, buf)
  paced.pending = req.id and req or nil
end

-- The text of `buf` changed (in Normal mode, or Insert mode was left after a change): what was shown is gone;
-- after the pause, still in Normal mode in that buffer, the server is asked.
function M.changed(buf)
  M.reset()
  if not config.next_edits_enabled() or not agent_client(buf) then
    return
  end
  paced:after(config.options.next_edits.debounce_ms, function()
    if api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode == 'n' then
      request(buf)
    end
  end)
end

-- The edit shown in the current buffer, as {range, text, away}; or nil.
function M.current()
  local s = fitting()
  if s then
    return { range = s.edit.range, text = s.edit.text, away = away(s) }
  end
end

-- Accept: jump to the edit when the cursor is away from its lines, else apply it (the cursor on its last
-- character) and run its command. False when no edit is shown.
function M.accept()
  local s = fitting()
  if not s then
    return false
  end
  if away(s) then
    api.nvim_win_set_cursor(0, { s.srow + 1, s.scol })
    draw()
    return true
  end
  M.reset()
  api.nvim_buf_set_text(s.buf, s.srow, s.scol, s.erow, s.ecol, s.lines)
  local row = s.srow + #s.lines - 1
  local col = (#s.lines == 1 and s.scol or 0) + #s.lines[#s.lines]
  api.nvim_win_set_cursor(0, { row + 1, math.max(col - 1, 0) })
  local command = s.edit.command
  if type(command) == 'table' and command.command then
    client.request(s.client, 'workspace/executeCommand', { command = command.command, arguments = command.arguments },
      function() end)
  end
  return true
end

-- Dismiss the edit shown. False when there is none.
function M.dismiss()
  if not fitting() then
    return false
  end
  M.reset()
  return true
end

local DESC = {
  accept = 'agent-lsp: jump to the next edit, or apply it',
  dismiss = 'agent-lsp: dismiss the next edit',
}

local mapped = {}  -- keys this plugin mapped in Normal mode

local function map_keys()
  for key in pairs(mapped) do  -- setup() again
    pcall(vim.keymap.del, 'n', key)
  end
  mapped, M.unmapped = {}, {}
  for name, key in pairs(config.options.next_edits.keys or {}) do
    if DESC[name] and type(key) == 'string' and key ~= '' then
      if next(vim.fn.maparg(key, 'n', false, true)) then
        M.unmapped[name] = key  -- someone else's: left alone (call require('agent_lsp.next_edits').accept())
      else
        vim.keymap.set('n', key, function()
          if not M[name]() then  -- no edit shown: the key does what it does otherwise
            api.nvim_feedkeys(api.nvim_replace_termcodes(key, true, false, true), 'n', false)
          end
        end, { desc = DESC[name] })
        mapped[key] = true
      end
    end
  end
end

function M.setup(group)
  map_keys()
  local entered = {}  -- changedtick of each buffer at InsertEnter
  api.nvim_create_autocmd('TextChanged', { group = group, callback = function(args) M.changed(args.buf) end })
  api.nvim_create_autocmd('InsertEnter', { group = group, callback = function(args)
    entered[args.buf] = api.nvim_buf_get_changedtick(args.buf)
    M.reset()
  end })
  api.nvim_create_autocmd('InsertLeave', { group = group, callback = function(args)
    if entered[args.buf] ~= api.nvim_buf_get_changedtick(args.buf) then
      M.changed(args.buf)
    end
    entered[args.buf] = nil
  end })
  api.nvim_create_autocmd({ 'BufLeave', 'WinLeave' }, { group = group, callback = function() M.reset() end })
  api.nvim_create_autocmd('CursorMoved', { group = group, callback = function()
    if shown then
      draw()  -- the sign shows only while the cursor is away
    end
  end })
end

-- :AgentNextEdits [on|off]: the server's nextEdits.enabled, for this Neovim (no argument: switch it). The running
-- server is told at once (workspace/didChangeConfiguration).
function M.switch(arg)
  local on = config.switch('nextEdits', arg, ':AgentNextEdits')
  if on == nil then
    return
  end
  client.push_settings()
  if not on then
    M.reset()
  end
  vim.notify('agent-lsp: next edits ' .. (on and 'on' or 'off'), vim.log.levels.INFO)
end

return M
