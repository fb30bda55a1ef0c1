-- The agent's language tools, end to end: the scripted model calls find_references, the real server asks the
-- plugin (agent/languageFeature), the plugin asks jedi-language-server attached beside agent-lsp, and the model
-- gets the references of the buffer's unsaved text, at 1-based character columns whatever the encodings on the
-- way (agent-lsp: UTF-16 on 0.7, UTF-8 on 0.11; jedi: UTF-32), without the declaration (which jedi lists
-- whatever includeDeclaration says, and the plugin leaves out). Then rename_symbol (jedi has no prepareRename:
-- the plugin answers its default behaviour): one question, and the rename lands in both buffers, not on disk.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('find_references and rename_symbol are answered by the editor\'s language server', function()
  H.workspace({
    ['shop.py'] = 'def total(prices):\n    return sum(prices)\n',
    ['main.py'] = 'from shop import total\n\ns = "😀" + str(total([1, 2]))\n',
  })
  H.fake_api({
    { content = { { type = 'tool_use', id = 'toolu_refs', name = 'find_references',
      input = { path = 'main.py', line = 3, column = 15 } } } },
    { content = { { type = 'text', text = 'total is used on lines 3 and 4.' } } },
    { content = { { type = 'tool_use', id = 'toolu_rename', name = 'rename_symbol',
      input = { path = 'main.py', line = 4, column = 5, newName = 'grand_total' } } } },
    { content = { { type = 'text', text = 'Renamed.' } } },
  })
  H.setup()
  vim.cmd('edit main.py')
  vim.api.nvim_buf_set_lines(0, 3, 3, false, { 't = total([3])' })  -- unsaved
  H.jedi('jedi', 'utf-32')
  local asked = H.stub_select({ 'Allow once' })
  vim.cmd('AgentChat who uses total?')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')

  local requests = H.requests()
  local tools = vim.tbl_map(function(t) return t.name end, requests[1].tools)
  H.truthy(vim.tbl_contains(tools, 'find_references'), 'find_references offered: ' .. table.concat(tools, ' '))
  local result = requests[2].messages[#requests[2].messages].content[1]
  -- find_references asks with includeDeclaration false: shop.py:1:5, which jedi lists anyway, is left out.
  H.eq({ type = 'tool_result', tool_use_id = 'toolu_refs', content = table.concat({
    'main.py:1:18: from shop import total',
    'main.py:3:15: s = "😀" + str(total([1, 2]))',
    'main.py:4:5: t = total([3])',
    -- PROTOCOL §11: through the editor's route, unknown while the plugin sends no agent/languageStatus.
    'index: unknown — the editor does not say whether its language servers finished indexing',
  }, '\n') }, { type = result.type, tool_use_id = result.tool_use_id, content = result.content },
    'what the model read')
  H.eq({
    '> who uses total?',
    '● References at main.py:3:15 [completed]',
    'total is used on lines 3 and 4.',
    '-- done (2 turns, 1 tool call)',
  }, chat.view:lines(), 'chat buffer')

  vim.cmd('AgentChat rename it to grand_total')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason of the rename')
  H.eq({ { items = { 'Allow once', 'Allow always', 'Reject' }, prompt = 'agent-lsp: Rename main.py:4:5 to grand_total?' } },
    asked, 'one question for the whole rename')
  H.eq({ 'from shop import grand_total', '', 's = "😀" + str(grand_total([1, 2]))', 't = grand_total([3])' },
    vim.api.nvim_buf_get_lines(vim.fn.bufnr(H.dir .. '/main.py'), 0, -1, false), 'main.py renamed in its buffer')
  H.eq({ 'def grand_total(prices):', '    return sum(prices)' },
    vim.api.nvim_buf_get_lines(vim.fn.bufnr(H.dir .. '/shop.py'), 0, -1, false), 'shop.py renamed in its buffer')
  H.eq({ 'def total(prices):', '    return sum(prices)' }, vim.fn.readfile(H.dir .. '/shop.py'), 'shop.py on disk')
  local last = H.requests()[4].messages
  local renamed = last[#last].content[1].content
  H.truthy(renamed:find('^Renamed total to grand_total: 4 edits in 2 files %(main.py, shop.py%)'), renamed)
end)
