-- The server's agent/diagnostics request is answered from vim.diagnostic, converted to LSP shapes (0-based
-- lines, UTF-16 columns, severity 1-4), and the model's get_diagnostics tool sees them.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('agent/diagnostics is answered from vim.diagnostic', function()
  H.workspace({ ['a.py'] = 'x = 1\ns = "é" + x\n', ['b.py'] = 'y = 2\n' })
  H.fake_api({
    -- vim.empty_dict(): an empty Lua table would be the JSON list [], which the server refuses as tool input.
    { content = { { type = 'tool_use', id = 'toolu_diag', name = 'get_diagnostics', input = vim.empty_dict() } } },
    { content = { { type = 'text', text = 'One error.' } } },
  })
  H.setup()
  vim.cmd('edit b.py')
  vim.cmd('edit a.py')
  local buf = vim.api.nvim_get_current_buf()
  local ns = vim.api.nvim_create_namespace('test_linter')
  -- Byte columns 11-12 are the `x` after the two-byte é: UTF-16 column 10.
  vim.diagnostic.set(ns, buf, {
    { lnum = 1, col = 11, end_col = 12, severity = vim.diagnostic.severity.ERROR, message = 'boom',
      source = 'testlint' },
    { lnum = 0, col = 0, end_lnum = 0, end_col = 1, severity = vim.diagnostic.severity.HINT, message = 'psst' },
  })

  local uri_a, uri_b = vim.uri_from_bufnr(buf), vim.uri_from_bufnr(vim.fn.bufnr('b.py'))
  local collect = require('agent_lsp.diagnostics').collect
  local boom = { range = { start = { line = 1, character = 10 }, ['end'] = { line = 1, character = 11 } },
    severity = 1, message = 'boom', source = 'testlint' }
  local psst = { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 1 } },
    severity = 4, message = 'psst' }
  local got = collect({ uris = { uri_a, uri_b, 'file:///not/open.py' } }, { offset_encoding = 'utf-16' })
  table.sort(got.items[1].diagnostics, function(p, q) return p.range.start.line > q.range.start.line end)
  H.eq({ items = {
    { uri = uri_a, diagnostics = { boom, psst } },
    { uri = uri_b, diagnostics = {} },
    { uri = 'file:///not/open.py', diagnostics = {} },
  } }, got, 'agent/diagnostics for given uris')
  local utf8 = collect({ uris = { uri_a } }, { offset_encoding = 'utf-8' }).items[1].diagnostics
  H.eq({ 11, 12 }, { utf8[1].range.start.character, utf8[1].range['end'].character }, 'utf-8 columns')
  H.eq({ uri_a }, vim.tbl_map(function(i) return i.uri end, collect({}, nil).items),
    'without uris: the documents that have diagnostics')

  vim.cmd('AgentChat any errors?')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')
  local requests = H.requests()
  local result = requests[2].messages[#requests[2].messages].content[1]
  local text = vim.fn.json_encode(result.content)
  -- The model sees character columns whatever encoding was negotiated (0.11 negotiates utf-8, 0.7 utf-16):
  -- the `x` after `s = "é" + ` is the 11th character.
  H.truthy(text:find('a.py:2:11: error: boom [testlint]', 1, true) and text:find('a.py:1:1: hint: psst', 1, true),
    'get_diagnostics shows the editor\'s diagnostics: ' .. text)
end)
