-- A server that is missing, does not start, dies mid-chat, or lacks agent/sessions: a clear notification,
-- the chat buffer says so, and nothing hangs.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local ERROR, WARN = vim.log.levels.ERROR, vim.log.levels.WARN

-- Restart the plugin's state with another server command.
local function fresh(cmd, settings)
  for name in pairs(package.loaded) do
    if name:match('^agent_lsp') then
      package.loaded[name] = nil
    end
  end
  H.setup({ cmd = cmd, settings = settings })
end

H.run('a missing or dying server is reported, never a hang', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'tool_use', id = 'toolu_kill', name = 'run_command',
      input = { command = 'kill -9 $PPID' } } } },  -- the shell's parent is the server
  })
  vim.cmd('edit a.py')
  local notes = H.stub_notify()

  fresh({ 'no-such-agent-lsp' })
  vim.cmd('AgentChat! hi')
  local chat = require('agent_lsp.chat').current()
  H.eq(false, chat.running, 'the chat ended at once')
  H.eq('-- request failed: the server is not running', chat.view:lines()[2], 'missing: chat buffer')
  H.eq(ERROR, notes[1].level, 'missing: level')
  H.truthy(notes[1].msg:find('`no-such-agent-lsp` not found on PATH', 1, true), 'missing: ' .. notes[1].msg)

  notes = H.stub_notify()
  fresh({ 'sh', '-c', 'exit 3' })
  vim.cmd('wincmd p | AgentChat! hi')
  chat = require('agent_lsp.chat').current()
  H.wait_chat(chat, 5000)
  H.eq('-- request failed: the agent-lsp server did not start', chat.view:lines()[2], 'no start: chat buffer')
  H.truthy(notes[1].level == ERROR and notes[1].msg:find('did not start (exit code 3, signal 0)', 1, true),
    'no start: ' .. vim.inspect(notes))

  -- The settings go through: bypassPermissions runs the command without asking.
  notes = H.stub_notify()
  fresh({ 'agent-lsp', '--data-dir', H.dir .. '/.data' }, { permissionMode = 'bypassPermissions' })
  vim.cmd('wincmd p | AgentChat! please die')
  chat = require('agent_lsp.chat').current()
  H.wait_chat(chat, 10000)
  H.eq('-- request failed: the agent-lsp server exited', chat.view:lines()[#chat.view:lines()], 'died: chat buffer')
  H.truthy(notes[1].level == ERROR and notes[1].msg:find('server exited (exit code 0, signal 9)', 1, true),
    'died: ' .. vim.inspect(notes))

  notes = H.stub_notify()
  fresh({ 'python3', H.plugin .. '/tests/bare_server.py' })
  vim.cmd('AgentSessions')
  H.wait(5000, function() return #notes > 0 end, 'the sessions notification')
  H.eq({ { msg = 'agent-lsp: this server does not support agent/sessions; update agent-lsp to list sessions',
    level = WARN } }, notes, 'no agent/sessions')
end)
