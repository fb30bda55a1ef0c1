-- :AgentMemory opens the project memory where the server says it is (agent/memoryFile): with memoryFile
-- "private" the file under the data directory that the remember tool wrote; with "agents" (the default) AGENTS.md
-- at the workspace root.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentMemory opens the project memory', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'tool_use', id = 'toolu_mem', name = 'remember',
      input = { fact = 'Tests run with pytest.' } } } },
    { content = { { type = 'text', text = 'Remembered.' } } },
  })
  H.setup({ settings = { memoryFile = 'private', permissionMode = 'bypassPermissions' } })
  local notes = H.stub_notify()
  vim.cmd('edit a.py')
  vim.cmd('AgentMemory')  -- starts the server, then asks it
  H.wait(H.CEILING, function() return notes[1] ~= nil end, 'the note')
  H.truthy(notes[1] and notes[1].msg:find('^agent%-lsp: the private memory file .*%.md does not exist yet'),
    'before anything is remembered: ' .. vim.inspect(notes))
  vim.cmd('AgentChat remember how tests run')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')
  H.eq({ '> remember how tests run', '● Remember: Tests run with pytest. [completed]', 'Remembered.',
    '-- done (2 turns, 1 tool call)' }, chat.view:lines(), 'chat buffer')
  vim.cmd('wincmd p')
  vim.cmd('AgentMemory')
  H.wait(H.CEILING, function() return vim.api.nvim_buf_get_name(0):find('%.md$') ~= nil end, 'the memory file')
  local path = vim.api.nvim_buf_get_name(0)
  H.truthy(path:find('^' .. vim.pesc(H.dir .. '/.data/memory/') .. '%x+%.md$'), 'the private file: ' .. path)
  H.truthy(vim.tbl_contains(vim.api.nvim_buf_get_lines(0, 0, -1, false), '- Tests run with pytest.'),
    'the fact: ' .. vim.inspect(vim.api.nvim_buf_get_lines(0, 0, -1, false)))

  H.setup({})  -- memoryFile "agents": AGENTS.md at the root, for a server started with these settings
  local client = require('agent_lsp.client')
  client.stop()
  H.wait(H.CEILING, function() return not client.running() end, 'the server to stop')
  vim.cmd('AgentMemory')
  H.wait(H.CEILING, function() return vim.api.nvim_buf_get_name(0) == H.dir .. '/AGENTS.md' end, 'AGENTS.md')
  H.eq(H.dir .. '/AGENTS.md', vim.api.nvim_buf_get_name(0), 'AGENTS.md')
end)
