-- A chat streams into the chat buffer (markdown): thinking (dimmed, in a fold), then each text delta as it
-- comes, then the closing line; a second message, typed in the input area and sent with <CR>, continues the
-- same session; :AgentChat again (with or without !) leaves one chat window and one input window.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('chat streams into the chat buffer', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'thinking', thinking = 'The user says hi.\nAnswer in kind.' },
      { type = 'text', text = 'Hello from the fake model.\nSecond line of the answer.' } }, delay = 0.03 },
    { content = { { type = 'text', text = 'Same session.' } } },
  })
  H.setup()
  vim.cmd('edit a.py')
  vim.cmd('AgentChat hi')
  local chat = require('agent_lsp.chat').current()
  local buf = chat.view.buf
  H.eq(chat.input, vim.api.nvim_get_current_buf(), 'the input area has the focus')
  H.eq({ 'markdown', 'markdown' }, { vim.bo[buf].filetype, vim.bo[chat.input].filetype }, 'filetypes')
  if vim.fn.has('nvim-0.11') == 1 then  -- it ships a markdown parser
    H.truthy(vim.treesitter.highlighter.active[buf], 'treesitter highlights the chat')
  end

  -- The answer as shown right after each text delta was drawn. (How the server cuts the text into deltas is
  -- its business; that each one is drawn as it comes is the plugin's.)
  local chats = require('agent_lsp.chat')
  local on_update, deltas, shown = chats.on_update, {}, {}
  chats.on_update = function(params)
    on_update(params)
    if params.update.kind == 'text_delta' then
      table.insert(deltas, params.update.text)
      table.insert(shown, table.concat(vim.list_slice(chat.view:lines(), 4), '\n'))
    end
  end
  local result = H.wait_chat(chat)
  H.eq('end_turn', result.stopReason, 'stopReason')
  H.eq({
    '> hi',
    '│ The user says hi.',
    '│ Answer in kind.',
    'Hello from the fake model.',
    'Second line of the answer.',
    '-- done (1 turn, 0 tool calls)',
  }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'chat buffer')

  chats.on_update = on_update
  H.truthy(#deltas > 0, 'text deltas')
  local expected = {}
  for i = 1, #deltas do
    expected[i] = table.concat(deltas, '', 1, i)
  end
  H.eq(expected, shown, 'the answer after each delta: the text so far')

  local ns = vim.api.nvim_create_namespace('agent_lsp_hl')
  local groups = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    groups[m[2]] = m[4].hl_group
  end
  H.eq({ [0] = 'AgentLspUser', [1] = 'AgentLspThinking', [2] = 'AgentLspThinking', [5] = 'AgentLspEnd' }, groups,
    'highlights by row')

  local win = vim.fn.win_findbuf(buf)[1]
  H.eq({ { 0, 1, 1, 0, 0, 0 }, 2 }, { H.fold_levels(chat), vim.api.nvim_win_call(win, function()
    return vim.fn.foldclosed(3)
  end) }, 'the thinking is in a closed fold')

  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'and again' })
  H.keys('<CR>')
  H.eq({ '' }, vim.api.nvim_buf_get_lines(chat.input, 0, -1, false), 'the input area after sending')
  local second = H.wait_chat(chat)
  H.eq(result.sessionId, second.sessionId, 'the second message continues the session')
  H.eq({ '', '> and again', 'Same session.', '-- done (1 turn, 0 tool calls)' },
    vim.api.nvim_buf_get_lines(buf, 6, -1, false), 'chat buffer after the second message')
  local requests = H.requests()
  H.eq(2, #requests, 'model calls')
  H.eq({ 'user', 'assistant', 'user' }, vim.tbl_map(function(m) return m.role end, requests[2].messages),
    'the second model call carries the first exchange')

  vim.cmd('wincmd p')
  vim.cmd('AgentChat')
  H.eq({ { transcript = 1, input = 1 }, chat.input }, { H.chat_windows(), vim.api.nvim_get_current_buf() },
    ':AgentChat again: the same windows, the cursor in the input')
  vim.cmd('AgentChat!')
  local third = require('agent_lsp.chat').current()
  H.truthy(third ~= chat, ':AgentChat! makes a new chat')
  H.eq({ transcript = 1, input = 1 }, H.chat_windows(), ':AgentChat!: the new chat in the same windows')
  vim.cmd('AgentChat!')
  H.eq({ transcript = 1, input = 1 }, H.chat_windows(), ':AgentChat! twice: still one pair')
  local newest = require('agent_lsp.chat').current()
  vim.cmd('bwipeout! ' .. newest.input)  -- an input area the user wiped comes back with the chat
  vim.cmd('AgentChat')
  H.eq({ transcript = 1, input = 1 }, H.chat_windows(), 'the input area is back')
  H.eq({ 1, 1 }, { #vim.fn.win_findbuf(newest.view.buf), #vim.fn.win_findbuf(newest.input) },
    'the newest chat is the one shown')
end)
