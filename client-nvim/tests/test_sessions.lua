-- :AgentSessions lists the server's sessions (agent/sessions {workspace}) through vim.ui.select and reopens the
-- one picked from its agent/history, in a chat buffer that continues that session. A session of another
-- workspace (same store) is not listed by a server that records workspaces.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentSessions reopens a session from its history', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'Elsewhere.' } } },
    { content = { { type = 'text', text = 'Reading.' }, { type = 'tool_use', id = 'toolu_read', name = 'read_file',
      input = { path = 'a.py' } } } },
    { content = { { type = 'text', text = 'x is 1.' } } },
    { content = { { type = 'text', text = 'Still here.' } } },
  })
  H.setup()  -- the store is H.dir/.data whatever the directory the server starts in
  local client = require('agent_lsp.client')

  -- A session in another workspace folder, with the same store.
  local other = H.dir .. '/other'
  vim.fn.mkdir(other, 'p')
  vim.cmd('cd ' .. vim.fn.fnameescape(other))
  vim.cmd('AgentChat! elsewhere')
  local chats = require('agent_lsp.chat')
  H.eq('end_turn', H.wait_chat(chats.current()).stopReason, 'the other workspace\'s chat')
  vim.cmd('bwipeout ' .. chats.current().view.buf)
  client.stop()
  H.wait(nil, function() return not client.running() end, 'the server to stop')
  vim.cmd('cd ' .. vim.fn.fnameescape(H.dir))

  vim.cmd('wincmd p | edit a.py')
  vim.cmd('AgentChat! what is x?')
  local first = chats.current()
  local session = H.wait_chat(first).sessionId
  vim.cmd('bwipeout ' .. first.view.buf)  -- forget it on the client side: only the server knows it now

  local labels, listed
  local asked = H.stub_select({ function(items, opts)
    labels, listed = vim.tbl_map(opts.format_item, items), items
    return items[1]
  end })
  vim.cmd('AgentSessions')
  H.wait(nil, function() return chats.current() and chats.current() ~= first end, 'the session to reopen')
  H.eq(1, #asked, 'pickers shown')
  if listed[1].workspace ~= nil then  -- a server that records workspaces (PROTOCOL §8) lists this one's only
    H.eq({ { vim.uri_from_fname(H.dir) }, 1 }, { vim.tbl_map(function(x) return x.workspace end, listed), #labels },
      'sessions listed: this workspace\'s')
  else
    H.eq(2, #labels, 'sessions listed (a server that does not record workspaces lists all)')
  end
  H.truthy(labels[1]:match('^what is x%?  %(%d%d%d%d%-%d%d%-%d%dT.*%)$'), 'the label: ' .. labels[1])

  local chat = chats.current()
  H.eq(chat.input, vim.api.nvim_get_current_buf(), 'the reopened chat\'s input has the focus')
  H.eq({ transcript = 1, input = 1 }, H.chat_windows(), 'in the one chat window')
  H.eq(session, chat.session_id, 'the reopened chat\'s session')
  H.eq({ '> what is x?', 'Reading.', '● Read a.py [completed]', 'x is 1.' }, chat.view:lines(), 'the history')

  vim.cmd('AgentChat still there?')
  H.eq(session, H.wait_chat(chat).sessionId, 'a message continues that session')
  H.eq({ '', '> still there?', 'Still here.', '-- done (1 turn, 0 tool calls)' },
    vim.list_slice(chat.view:lines(), 5), 'the new exchange')
end)
