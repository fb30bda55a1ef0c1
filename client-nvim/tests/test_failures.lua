-- A server that is missing, does not start, is another program, or dies mid-chat: one clear notification
-- (no cascade), the chat buffer says so, and nothing hangs.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local ERROR = vim.log.levels.ERROR

-- Restart the plugin's state with another server command.
local function fresh(cmd, settings)
  for name in pairs(package.loaded) do
    if name:match('^agent_lsp') then
      package.loaded[name] = nil
    end
  end
  H.setup({ cmd = cmd, settings = settings })
end

-- Our notifications (Neovim itself may add a WARN "Client N quit with exit code …" for a server that exits).
local function ours(notes)
  return vim.tbl_filter(function(n) return n.msg:find('^agent%-lsp: ') ~= nil end, notes)
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
  H.eq(1, #ours(notes), 'missing: one notification: ' .. vim.inspect(notes))
  H.eq(ERROR, ours(notes)[1].level, 'missing: level')
  H.truthy(ours(notes)[1].msg:find('agent-lsp was not found (`no-such-agent-lsp`). Install it with `pipx install '
    .. 'agent-lsp-server`', 1, true), 'missing: ' .. ours(notes)[1].msg)

  -- Not executable.
  notes = H.stub_notify()
  vim.fn.writefile({ 'echo hi' }, H.dir .. '/not-executable')
  fresh({ H.dir .. '/not-executable' })
  vim.cmd('wincmd p | AgentChat! hi')
  H.eq(1, #ours(notes), 'not executable: one notification: ' .. vim.inspect(notes))
  H.truthy(ours(notes)[1].msg:find('agent-lsp is not executable (`' .. H.dir .. '/not-executable`)', 1, true),
    'not executable: ' .. ours(notes)[1].msg)

  notes = H.stub_notify()
  fresh({ 'sh', '-c', 'exit 3' })
  vim.cmd('wincmd p | AgentChat! hi')
  chat = require('agent_lsp.chat').current()
  H.wait_chat(chat)
  H.eq('-- request failed: the agent-lsp server did not start', chat.view:lines()[2], 'no start: chat buffer')
  H.eq(1, #ours(notes), 'no start: one notification: ' .. vim.inspect(notes))
  H.truthy(ours(notes)[1].level == ERROR
    and ours(notes)[1].msg:find('`sh -c exit 3` is not agent-lsp (it reports `exit code 3`)', 1, true),
    'no start: ' .. vim.inspect(notes))

  -- A language server that is not agent-lsp: refused after initialize, said once.
  notes = H.stub_notify()
  fresh({ 'python3', H.plugin .. '/tests/bare_server.py' })
  vim.cmd('wincmd p | AgentChat! hi')
  chat = require('agent_lsp.chat').current()
  H.wait_chat(chat)
  H.eq('-- request failed: the server is not agent-lsp', chat.view:lines()[2], 'not ours: chat buffer')
  H.eq({ { level = ERROR, msg = 'agent-lsp: `python3 ' .. H.plugin .. '/tests/bare_server.py` is not agent-lsp '
    .. '(it reports `bare 0, protocol none`). Install agent-lsp with `pipx install agent-lsp-server` or '
    .. '`uv tool install agent-lsp-server` and set `cmd` in require("agent_lsp").setup() to its path.' } },
    ours(notes), 'not ours: one notification')

  -- The settings go through: bypassPermissions runs the command without asking.
  notes = H.stub_notify()
  fresh({ 'agent-lsp', '--data-dir', H.dir .. '/.data' }, { permissionMode = 'bypassPermissions' })
  vim.cmd('wincmd p | AgentChat! please die')
  chat = require('agent_lsp.chat').current()
  H.wait_chat(chat)
  H.eq('-- request failed: the agent-lsp server exited', chat.view:lines()[#chat.view:lines()], 'died: chat buffer')
  H.eq(1, #ours(notes), 'died: one notification: ' .. vim.inspect(notes))
  H.truthy(ours(notes)[1].level == ERROR and ours(notes)[1].msg:find('server exited (exit code 0, signal 9)', 1, true),
    'died: ' .. vim.inspect(notes))

end)
