-- Switching suggestions and owning keys: a key the user maps in Insert mode is left to that mapping (and
-- :AgentHealth names it); :AgentSuggestions off makes the server answer with no suggestion (it is told at once,
-- workspace/didChangeConfiguration) and clears what is shown; on brings them back. On 0.7-0.11 <M-]> asks at
-- once, without waiting for the pause (here the pause is set longer than any test).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local NATIVE = vim.lsp.inline_completion ~= nil
local ns = NATIVE and vim.api.nvim_create_namespace('nvim.lsp.inline_completion')
  or vim.api.nvim_create_namespace('agent_lsp_suggestion')

local function shown()
  return #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}) > 0
end

-- What the server answers at the cursor, asked directly.
local function ask()
  local client = require('agent_lsp.client')
  local c = client.get()
  local pos = vim.api.nvim_win_get_cursor(0)
  local line = vim.api.nvim_get_current_line()
  local answer = client.request_sync(c, 'textDocument/inlineCompletion', {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    position = { line = pos[1] - 1, character = require('agent_lsp.positions').from_bytes(line, pos[2],
      c.offset_encoding) },
    context = { triggerKind = 1 },
  }, 5000)
  return vim.tbl_map(function(item) return item.insertText end, answer.items)
end

H.run_typing(':AgentSuggestions, keys left to the user', function()
  H.workspace({ ['a.py'] = 'import os\nprint(\'hello world\')\n' })
  vim.o.showmode = false
  vim.cmd('inoremap <C-]> <C-]>')  -- the user's own
  local notes = H.stub_notify()
  H.setup({ settings = { model = 'demo' }, suggestions = { debounce_ms = 600000 } })
  H.eq({ dismiss = '<C-]>' }, require('agent_lsp.suggestions').unmapped, 'keys left alone')
  H.eq('<C-]>', vim.fn.maparg('<C-]>', 'i'), 'the user\'s mapping')
  vim.cmd('AgentHealth')
  H.truthy(notes[1].msg:find('suggestions as you type are on: .*; keys mapped by something else, left to it: '
    .. '<C%-%]> %(dismiss%)'), ':AgentHealth: ' .. notes[1].msg)

  vim.cmd('edit a.py')
  H.type('Gopri')
  if NATIVE then
    H.await(shown, 'the suggestion (0.12: after its own 200 ms)')
  else
    H.await(function() return require('agent_lsp.client').get() ~= nil end, 'the server')
    H.eq(false, shown(), 'nothing before the pause')
    H.type('<M-]>')
    H.await(shown, 'the suggestion <M-]> asked for')
  end
  H.eq({ "nt('hello world')" }, ask(), 'the server\'s answer')

  vim.cmd('AgentSuggestions off')
  H.eq({ level = vim.log.levels.INFO, msg = 'agent-lsp: suggestions off' }, notes[#notes], ':AgentSuggestions off')
  H.await(function() return #ask() == 0 end, 'the server to answer with nothing')
  if not NATIVE then
    H.eq(false, shown(), 'nothing shown once off')
  end
  vim.cmd('AgentSuggestions')
  H.eq({ level = vim.log.levels.INFO, msg = 'agent-lsp: suggestions on' }, notes[#notes], ':AgentSuggestions')
  H.await(function() return #ask() == 1 end, 'the server to suggest again')
  H.type('n')
  if not NATIVE then
    H.type('<M-]>')
  end
  H.await(shown, 'the suggestion after switching on')
  H.eq("print('hello world')", vim.api.nvim_get_current_line() .. vim.api.nvim_buf_get_extmarks(0, ns, 0, -1,
    { details = true })[1][4].virt_text[1][1], 'the line and the suggestion')
end)
