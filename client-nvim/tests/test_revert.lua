-- :AgentRevert sends agent/revert for the current chat's session: the last chat's edit is undone in the buffer
-- (through Neovim's workspace/applyEdit), a file the user changed since is refused by name, and a session with
-- nothing left to revert is a warning with the server's reason.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local function edit(id, old, new)
  return { content = { { type = 'tool_use', id = id, name = 'edit_file',
    input = { path = 'a.py', old_string = old, new_string = new } } } }
end

H.run(':AgentRevert undoes the last chat\'s edits', function()
  H.workspace({ ['a.py'] = 'x = 1\ny = 3\n' })
  H.fake_api({
    edit('toolu_1', 'y = 3', 'y = 4'), { content = { { type = 'text', text = 'Done.' } } },
    edit('toolu_2', 'x = 1', 'x = 2'), { content = { { type = 'text', text = 'Done again.' } } },
  })
  H.setup({ settings = { permissionMode = 'acceptEdits' } })
  local notes = H.stub_notify()
  vim.cmd('edit a.py')
  local buf = vim.api.nvim_get_current_buf()
  local function lines()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  vim.cmd('AgentChat make y 4')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'first chat')
  H.eq({ 'x = 1', 'y = 4' }, lines(), 'a.py after the chat')

  vim.cmd('AgentRevert')
  H.wait(nil, function() return vim.deep_equal(lines(), { 'x = 1', 'y = 3' }) end, 'a.py to be reverted')
  H.wait(nil, function() return #notes > 0 end, 'the revert\'s notification')
  H.eq({ msg = 'agent-lsp: reverted: a.py', level = vim.log.levels.INFO }, notes[1], 'notification')
  H.eq('-- reverted: a.py', chat.view:lines()[#chat.view:lines()], 'the transcript says it')

  vim.cmd('AgentChat make x 2')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'second chat')
  H.eq({ 'x = 2', 'y = 3' }, lines(), 'a.py after the second chat')
  vim.api.nvim_buf_set_lines(buf, 2, 2, false, { 'z = 5' })  -- the user's own change since
  vim.cmd('AgentRevert')
  H.wait(nil, function() return #notes > 1 end, 'the refusal')
  local refused = { msg = 'agent-lsp: reverted: nothing; not reverted: a.py (it was changed since the agent '
    .. 'edited it, so it was left as it is)', level = vim.log.levels.WARN }
  H.eq(refused, notes[2], 'a refusal warns, naming the file')
  H.eq({ 'x = 2', 'y = 3', 'z = 5' }, lines(), 'the user\'s change is kept')

  vim.cmd('AgentRevert 0')  -- both chats' edits: the file still differs from what the agent left
  H.wait(nil, function() return #notes > 2 end, 'the second refusal')
  H.eq(refused, notes[3], 'still refused')
  vim.cmd('AgentRevert x')
  H.eq({ msg = 'agent-lsp: :AgentRevert takes a number of chats to keep, not x', level = vim.log.levels.ERROR },
    notes[4], 'a bad argument')
end)
