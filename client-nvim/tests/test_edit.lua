-- An edit lands in the buffer, not on disk: the server reads the unsaved text (it edits a line that exists only
-- in the buffer) and Neovim's own workspace/applyEdit handler applies it. :AgentMode acceptEdits means no question.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('an edit lands in the buffer, not on disk', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'Changing y.' }, { type = 'tool_use', id = 'toolu_edit',
      name = 'edit_file', input = { path = 'a.py', old_string = 'y = 3', new_string = 'y = 4' } } } },
    { content = { { type = 'text', text = 'Edited.' } } },
  })
  H.setup()
  local asked = H.stub_select({})
  local notes = H.stub_notify()
  vim.cmd('edit a.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { 'y = 3' })  -- unsaved
  vim.cmd('AgentMode acceptEdits')
  H.eq({ { msg = 'agent-lsp: permission mode acceptEdits', level = vim.log.levels.INFO } }, notes, 'notifications')
  vim.cmd('AgentChat change y')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')

  H.eq({ 'x = 1', 'y = 4' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'a.py in the buffer')
  H.eq(true, vim.bo[buf].modified, 'a.py is modified')
  H.eq({ 'x = 1' }, vim.fn.readfile(H.dir .. '/a.py'), 'a.py on disk')
  H.eq({}, asked, 'questions (acceptEdits asks none; the default mode would have asked, and been refused)')
  H.eq({
    '> change y',
    'Changing y.',
    '● Edit a.py [completed]',
    'Edited.',
    '-- done (2 turns, 1 tool call)',
  }, chat.view:lines(), 'chat buffer')
end)
