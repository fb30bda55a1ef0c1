-- The server's "Fix with agent" code action, run by Neovim's own vim.lsp.buf.code_action() (a filter and
-- apply on 0.8+, the picker on 0.7): workspace/executeCommand runs the chat, its edit lands in the buffer, and
-- the chat this plugin did not send is drawn in a chat buffer and ends with the command's answer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('"Fix with agent" from vim.lsp.buf.code_action runs a chat', function()
  H.workspace({ ['a.py'] = 'x = 1\ny = 3\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'Fixing y.' }, { type = 'tool_use', id = 'toolu_edit',
      name = 'edit_file', input = { path = 'a.py', old_string = 'y = 3', new_string = 'y = 4' } } } },
    { content = { { type = 'text', text = 'Fixed.' } } },
  })
  H.setup({ settings = { permissionMode = 'acceptEdits' } })
  local asked = H.stub_select({ function(items)
    for _, item in ipairs(items) do
      if item[2].title:find('^Fix with agent') then
        return item
      end
    end
  end })
  vim.cmd('edit a.py')
  local buf = vim.api.nvim_get_current_buf()
  local client = require('agent_lsp.client')
  local ready = false
  client.when_ready(function() ready = true end)
  H.wait(nil, function() return ready and vim.lsp.buf_is_attached(buf, client.get().id) end, 'the server')
  local ns = vim.api.nvim_create_namespace('test_linter')  -- a linter's, not the server's
  vim.diagnostic.set(ns, buf, { { lnum = 1, col = 0, end_col = 5, severity = vim.diagnostic.severity.ERROR,
    message = 'y must be 4', source = 'testlint' } })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })

  local context = require('agent_lsp').code_action_context()
  H.eq({ { range = { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 5 } }, severity = 1,
    message = 'y must be 4', source = 'testlint' } }, context.diagnostics, 'the code action context')
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action({ context = context, apply = true, filter = function(action)
      return action.title == 'Fix with agent'
    end })
  else  -- 0.7: no filter; the picker (vim.ui.select) gets {client_id, action} pairs
    vim.lsp.buf.code_action(context)
  end

  local chats = require('agent_lsp.chat')
  H.wait(nil, function()
    local c = chats.current()
    return c and c.result ~= nil
  end, 'the code action\'s chat to end')
  local chat = chats.current()
  H.eq('end_turn', chat.result.stopReason, 'the command\'s answer (an agent/chat result)')
  H.eq({ 'x = 1', 'y = 4' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'a.py in the buffer')
  H.eq({
    '> (a code action)',
    'Fixing y.',
    '● Edit a.py [completed]',
    'Fixed.',
    '-- done (2 turns, 1 tool call)',
  }, chat.view:lines(), 'chat buffer')
  H.eq(1, H.chat_windows().transcript, 'the chat is shown')
  H.eq(buf, vim.api.nvim_get_current_buf(), 'the cursor stays in a.py')
  local first = vim.fn.json_encode(H.requests()[1].messages[1])
  H.truthy(first:find('y must be 4', 1, true), 'the model sees the diagnostic: ' .. first)
  H.eq(vim.fn.has('nvim-0.8') == 1 and 0 or 1, #asked, 'pickers shown')
end)
