-- Index status both ways (PROTOCOL §11), and a symbol edit's confirmation. Beside agent-lsp run jedi (which
-- answers the symbols and reports no progress) and tests/fakes/language_server.py as "indexer" (which begins and
-- ends work-done progress when asked). The plugin tells agent-lsp what "indexer"'s $/progress says
-- (agent/languageStatus), so the model's language answers end "index: loading — …" while it indexes and
-- "index: ready — …" after; the statusline component follows the agent's last answer (User AgentLspIndex).
-- insert_symbol asks as edit_file does: its diff in a floating window, and in the chat under its call.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local function request_sync(c, method, params)
  local mt = getmetatable(c)
  if mt and mt.request_sync then
    return c:request_sync(method, params, H.CEILING, 0)
  end
  return c.request_sync(method, params, H.CEILING, 0)
end

-- Send `message` in the chat; the last line of the tool result the model got in its request `n`.
local function index_line(message, n)
  vim.cmd('AgentChat ' .. message)
  H.eq('end_turn', H.wait_chat(require('agent_lsp.chat').current()).stopReason, 'stopReason of: ' .. message)
  local messages = H.requests()[n].messages
  return messages[#messages].content[1].content:match('[^\n]+$')
end

H.run('the index status goes to agent-lsp and back; a symbol edit asks with its diff', function()
  H.workspace({ ['a.py'] = 'def greet(name):\n    return name\n' })
  H.fake_api({
    { content = { { type = 'tool_use', id = 'toolu_outline', name = 'document_symbols', input = { path = 'a.py' } } } },
    { content = { { type = 'text', text = 'One function.' } } },
    { content = { { type = 'tool_use', id = 'toolu_insert', name = 'insert_symbol',
      input = { path = 'a.py', anchor = 'greet', where = 'after', text = 'def wave():\n    return 1\n' } } } },
    { content = { { type = 'text', text = 'Added wave.' } } },
  })
  H.setup()
  local status = require('agent_lsp.index_status')
  local events = {}
  vim.api.nvim_create_autocmd('User', { pattern = 'AgentLspIndex', callback = function()
    table.insert(events, require('agent_lsp').statusline())
  end })
  vim.cmd('edit a.py')
  H.jedi('jedi', 'utf-32')
  local indexer = H.language_server({ name = 'indexer',
    cmd = { H.JEDI_VENV .. '/bin/python', H.repo .. '/tests/fakes/language_server.py' } })
  H.eq(nil, status.editor_state(), 'nothing known before a language server reports progress')

  request_sync(indexer, 'workspace/symbol', { query = 'progress:begin' })
  H.wait(H.CEILING, function() return status.editor_state() ~= nil end, 'the progress to be seen')
  H.eq({ state = 'loading', server = 'indexer' }, status.editor_state(), 'while indexer indexes')

  -- The server starts with the chat and is told at once: the outline's index line says loading.
  local DIFF
  local asked = H.stub_select({ function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        local fbuf = vim.api.nvim_win_get_buf(win)
        DIFF = { filetype = vim.bo[fbuf].filetype, lines = vim.api.nvim_buf_get_lines(fbuf, 0, -1, false) }
      end
    end
    return 'Allow once'
  end })
  H.eq('index: loading — the editor\'s indexer still indexing, as the editor says',
    index_line('what is in a.py?', 2), 'the outline\'s index line')
  H.eq('index: loading', require('agent_lsp').statusline(), 'the statusline after the outline')

  request_sync(indexer, 'workspace/symbol', { query = 'progress:end' })
  H.wait(H.CEILING, function() return (status.editor_state() or {}).state == 'ready' end, 'the progress to end')
  H.eq({ state = 'ready', server = 'indexer' }, status.editor_state(), 'once indexer is done')

  H.eq('index: ready — the editor\'s indexer finished indexing, as the editor says',
    index_line('add wave after greet', 4), 'the insertion\'s index line')
  H.eq({ 'index: loading', 'index: ready' }, events, 'User AgentLspIndex, with the statusline at each')

  local expected = {
    '--- a/a.py', '+++ b/a.py', '@@ -1,2 +1,6 @@', ' def greet(name):', '     return name', '+', '+',
    '+def wave():', '+    return 1',
  }
  H.eq({ { items = { 'Allow once', 'Allow always', 'Reject' }, prompt = 'agent-lsp: Insert after greet in a.py?' } },
    asked, 'one question, as for edit_file')
  H.eq({ filetype = 'diff', lines = expected }, DIFF, 'the diff on screen while asked')
  local chat = require('agent_lsp.chat').current()
  H.truthy(table.concat(chat.view:lines(), '\n'):find('```diff\n' .. table.concat(expected, '\n') .. '\n```', 1, true),
    'the diff in the chat: ' .. table.concat(chat.view:lines(), '\n'))
  H.eq({ 'def greet(name):', '    return name', '', '', 'def wave():', '    return 1' },
    vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.py'), 0, -1, false), 'a.py after the insertion')
end)
