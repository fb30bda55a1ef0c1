-- :AgentStop during a stream: the chat answers stopReason aborted at once, the buffer says stopped, and the
-- next message in the buffer continues the same session with the partial answer in its history.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentStop stops a streaming chat', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'Working on it' } }, hang = true },
    { content = { { type = 'text', text = 'Resumed.' } } },
  })
  H.setup()
  vim.cmd('edit a.py')
  vim.cmd('AgentChat take your time')
  local chat = require('agent_lsp.chat').current()
  H.wait(10000, function()
    return vim.tbl_contains(chat.view:lines(), 'Working on it')
  end, 'the stream to start')
  vim.cmd('wincmd p')  -- :AgentStop works from any window: it stops the last chat
  local t0 = vim.loop.hrtime()
  vim.cmd('AgentStop')
  local result = H.wait_chat(chat, 3000)
  local ms = (vim.loop.hrtime() - t0) / 1e6
  H.eq('aborted', result.stopReason, 'stopReason')
  H.truthy(ms < 1000, 'the stop took ' .. ms .. ' ms')
  H.eq({ '> take your time', 'Working on it', '-- stopped (1 turn, 0 tool calls)' }, chat.view:lines(),
    'chat buffer after the stop')

  vim.cmd('AgentChat go on')
  local second = H.wait_chat(chat)
  H.eq({ 'end_turn', result.sessionId }, { second.stopReason, second.sessionId }, 'the next chat')
  H.eq('Resumed.', chat.view:lines()[6], 'the next answer')
  local history = H.requests()[2].messages
  H.eq({ 'user', 'assistant', 'user' }, vim.tbl_map(function(m) return m.role end, history), 'history roles')
  H.truthy(vim.fn.json_encode(history[2]):find('Working on it'), 'the partial answer is in the history: '
    .. vim.inspect(history[2]))
end)
