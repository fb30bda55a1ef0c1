-- Stopping a stream (<C-c> in the input area, or :AgentStop from any window): the chat answers stopReason
-- aborted, the buffer says stopped, and the next message continues the same session with the partial answer
-- in its history.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentStop stops a streaming chat', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'Working on it' } }, hang = true },
    { content = { { type = 'text', text = 'Resumed.' } }, hang = true },
  })
  H.setup()
  vim.cmd('edit a.py')
  vim.cmd('AgentChat take your time')
  local chat = require('agent_lsp.chat').current()
  H.wait(nil, function()
    return vim.tbl_contains(chat.view:lines(), 'Working on it')
  end, 'the stream to start')
  H.eq(chat.input, vim.api.nvim_get_current_buf(), 'the cursor is in the input area')
  H.keys('<C-c>')
  local result = H.wait_chat(chat)
  H.eq('aborted', result.stopReason, 'stopReason')
  H.eq({ '> take your time', 'Working on it', '-- stopped (1 turn, 0 tool calls)' }, chat.view:lines(),
    'chat buffer after the stop')

  vim.cmd('AgentChat go on')
  H.wait(nil, function() return vim.tbl_contains(chat.view:lines(), 'Resumed.') end, 'the next answer')
  vim.cmd('wincmd p')  -- :AgentStop works from any window: it stops the last chat
  vim.cmd('AgentStop')
  local second = H.wait_chat(chat)
  H.eq({ 'aborted', result.sessionId }, { second.stopReason, second.sessionId }, 'the next chat, stopped')
  H.eq('Resumed.', chat.view:lines()[6], 'the next answer')
  local history = H.requests()[2].messages
  H.eq({ 'user', 'assistant', 'user' }, vim.tbl_map(function(m) return m.role end, history), 'history roles')
  H.truthy(vim.fn.json_encode(history[2]):find('Working on it'), 'the partial answer is in the history: '
    .. vim.inspect(history[2]))
end)
