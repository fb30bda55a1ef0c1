-- :checkhealth agent_lsp (the old :checkhealth agent points to it) and :AgentHealth check identity, not just presence: the real server passes; a program named
-- agent-lsp that is somebody else's (it prints `agent-lsp 0.23.5`) is an error saying what it reported and what to
-- install; a missing command is one error notification with the fix, at once, and no chat waits on it.
-- :AgentLog opens the log that applies.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local INSTALL = '`pipx install agent-lsp-server` or `uv tool install agent-lsp-server`'

local function checkhealth(name)
  vim.cmd('checkhealth ' .. (name or 'agent_lsp'))
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return report
end

H.run('health checks identity', function()
  H.workspace()
  -- AGENT_LSP_OFFLINE too: tests/run.sh sets it for the suites, and with it the answer of `agent-lsp model` (what
  -- the health check reads; it asks no API) refuses the real API a user's key would reach
  for _, name in ipairs({ 'ANTHROPIC_API_KEY', 'AGENT_LSP_MODEL', 'AGENT_LSP_PROVIDER', 'OPENAI_API_KEY',
                          'OPENAI_BASE_URL', 'AGENT_LSP_OFFLINE' }) do
    vim.env[name] = nil
  end
  local version = vim.trim(vim.fn.system({ 'agent-lsp', '--version' }))
  local path = vim.fn.exepath('agent-lsp')

  -- The real server.
  local notes = H.stub_notify()
  H.setup({ cmd = { 'agent-lsp' }, settings = { model = 'demo' } })
  vim.cmd('AgentHealth')
  H.eq({ { level = vim.log.levels.INFO, msg = table.concat({
    'agent-lsp health',
    'OK: `agent-lsp` is ' .. path .. ' (' .. version .. ')',
    'OK: the offline demo model is configured',
    'OK: suggestions as you type are on: the plugin\'s ghost text',
    'OK: suggestions from the offline demo model',
    'OK: the server is not running yet: it starts with the first :AgentChat or Insert mode in a file',
  }, '\n') } }, notes, 'the real server, demo model')
  vim.env.ANTHROPIC_API_KEY = 'sk-test'
  H.setup({ cmd = { 'agent-lsp' }, settings = { model = 'claude-sonnet-4-5' } })
  local report = checkhealth()
  H.truthy(report:find('OK:? `agent%-lsp` is ' .. vim.pesc(path)), ':checkhealth agent_lsp, real server: ' .. report)
  H.truthy(report:find('OK:? ANTHROPIC_API_KEY is set %(model claude%-sonnet%-4%-5%)'), report)
  H.truthy(report:find('OK:? suggestions from anthropic claude%-haiku%-5%-5 %(api chat%) at '), report)
  H.truthy(not report:find('ERROR'), ':checkhealth agent_lsp has no error: ' .. report)
  -- The old name points to the new one, and runs no check.
  report = checkhealth('agent')
  H.truthy(report:find('the checks of agent-lsp are `:checkhealth agent_lsp` now', 1, true), ':checkhealth agent: ' .. report)
  H.truthy(not report:find('agent%-lsp` is'), ':checkhealth agent runs no check: ' .. report)

  local function model_line(settings)
    notes = H.stub_notify()
    H.setup({ cmd = { 'agent-lsp' }, settings = settings })
    vim.cmd('AgentHealth')
    return vim.split(notes[1].msg, '\n')[3]
  end
  H.eq('OK: provider openai: model qwen2.5-coder:7b at http://127.0.0.1:11434/v1',
    model_line({ provider = 'openai', model = 'qwen2.5-coder:7b', baseUrl = 'http://127.0.0.1:11434/v1' }), 'ollama')
  H.truthy(model_line({ provider = 'openai' }):find('^ERROR: provider "openai" needs a model'), 'openai, no model')
  H.truthy(model_line({ provider = 'openai', model = 'gpt-4.1' }):find('^ERROR: provider "openai" needs OPENAI_API_KEY'),
    'openai, no key and no base URL')
  -- What keeps suggestions from working, as the server says it (`completions` of `agent-lsp model --json`).
  local function suggestion_lines(completions)
    H.eq('OK: ANTHROPIC_API_KEY is set (model claude-sonnet-4-5)',
      model_line({ model = 'claude-sonnet-4-5', completions = completions }), 'the chat has a model')
    return vim.list_slice(vim.split(notes[1].msg, '\n'), 4, 5)
  end
  local lines = suggestion_lines({ provider = 'openai', baseUrl = 'http://127.0.0.1:11434/v1' })
  H.eq('OK: suggestions as you type are on: the plugin\'s ghost text', lines[1], 'on')
  H.truthy(lines[2]:find('^ERROR: suggestions: Suggestions from the openai provider need the `completions%.model` '
    .. 'setting'), 'openai, no completions model: ' .. lines[2])
  lines = suggestion_lines({ provider = 'openai', baseUrl = 'http://127.0.0.1:11434/v1', api = 'fim',
                             model = 'qwen2.5-coder:1.5b-base' })
  H.eq('OK: suggestions from openai qwen2.5-coder:1.5b-base (api fim) at http://127.0.0.1:11434/v1', lines[2],
    'ollama, fim')
  lines = suggestion_lines({ api = 'fim' })
  H.truthy(lines[2]:find('^ERROR: suggestions: `completions%.api` "fim" posts to an OpenAI%-compatible '
    .. '/completions endpoint'), 'fim with anthropic: ' .. lines[2])

  -- :AgentLog opens the server's --log-file when the command gives one, else Neovim's LSP log.
  H.setup({ cmd = { 'agent-lsp', '--log-file', H.dir .. '/server.log' } })
  vim.cmd('AgentLog')
  H.eq(H.dir .. '/server.log', vim.api.nvim_buf_get_name(0), ':AgentLog with --log-file')
  vim.cmd('close')
  H.setup({ cmd = { 'agent-lsp' } })
  vim.cmd('AgentLog')
  H.eq(vim.lsp.get_log_path(), vim.api.nvim_buf_get_name(0), ':AgentLog without')
  vim.cmd('close')

  -- Somebody else's agent-lsp, first on PATH.
  local bin = H.dir .. '/bin'
  vim.fn.mkdir(bin, 'p')
  vim.fn.writefile({ '#!/bin/sh', 'echo "agent-lsp 0.23.5"' }, bin .. '/agent-lsp')
  vim.fn.setfperm(bin .. '/agent-lsp', 'rwxr-xr-x')
  vim.env.PATH = bin .. ':' .. vim.env.PATH
  report = checkhealth()
  local expected = '`agent-lsp` is not agent-lsp (it reports `agent-lsp 0.23.5`). Install agent-lsp with '
    .. INSTALL .. ' and set `cmd` in require("agent_lsp").setup() to its path.'
  H.truthy(report:find('ERROR:? ' .. vim.pesc(expected)), ':checkhealth agent_lsp, another program: ' .. report)
  H.truthy(not report:find('OK:? `agent%-lsp` is'), 'no OK for the other program: ' .. report)

  -- A missing command: :AgentHealth and a chat say it once, with the fix, and nothing waits.
  notes = H.stub_notify()
  H.setup({ cmd = { 'no-such-agent-lsp' } })
  vim.cmd('AgentHealth')
  local lines = vim.split(notes[1].msg, '\n')
  local missing = 'agent-lsp was not found (`no-such-agent-lsp`). Install it with ' .. INSTALL
    .. ', or set `cmd` in require("agent_lsp").setup() to its full path.'
  H.eq({ vim.log.levels.ERROR, 'ERROR: ' .. missing }, { notes[1].level, lines[2] }, ':AgentHealth, missing')
  notes = H.stub_notify()
  vim.cmd('AgentChat hi')
  local chat = require('agent_lsp.chat').current()
  H.eq(false, chat.running, 'the chat ended at once')
  H.eq({ { level = vim.log.levels.ERROR, msg = 'agent-lsp: ' .. missing } }, notes, 'one notification')
end)
