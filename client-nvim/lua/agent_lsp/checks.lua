-- The checks of `:checkhealth agent_lsp` (lua/agent_lsp/health.lua) and of :AgentHealth.
local config = require('agent_lsp.config')

local M = {}

M.KEYS = { 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY' }

-- Run `argv` (a program of agent-lsp's) and decode the JSON object it prints; nil and why when it does not answer.
local function json_of(argv)
  local out = {}
  local ok_job, job = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true, stdin = 'null',
    on_stdout = function(_, data) out = data end,
  })
  if not ok_job or job <= 0 then
    return nil, 'it could not be run'
  end
  if vim.fn.jobwait({ job }, 20000)[1] == -1 then
    vim.fn.jobstop(job)
    return nil, 'no answer within 20 s'
  end
  local ok, answer = pcall(vim.fn.json_decode, table.concat(out, '\n'))
  if not ok or type(answer) ~= 'table' then
    return nil, 'no JSON answer'
  end
  return answer
end

-- What the server's `doctor --json` says of its Python ("Python 3.11.2 at …; agent_lsp from …"), or nil (an older
-- server without doctor, or one that did not answer in time).
function M.server_python(program)
  local report = json_of({ program, 'doctor', '--json', '--model', 'demo' })
  if not report or type(report.checks) ~= 'table' then
    return nil
  end
  for _, c in ipairs(report.checks) do
    if c.name == 'python' then
      return c.detail
    end
  end
end

-- Which model chats would use with these settings, as the server decides it (`agent-lsp model --json`: provider,
-- model, baseUrl, key, lacks, problem, and the same of suggestions under `completions`); nil and why when it does
-- not say.
function M.server_model(cmd)
  local argv = { cmd[1], 'model', '--json', '--settings', vim.fn.json_encode(config.wire_settings()) }
  local cmd_model = table.concat(cmd, ' '):match('%-%-model[ =](%S+)')
  if cmd_model then
    vim.list_extend(argv, { '--model', cmd_model })
  end
  local answer, why = json_of(argv)
  if answer and type(answer.provider) ~= 'string' then
    return nil, 'no provider in its answer'
  end
  return answer, why
end

-- The line of the model the server would use, or of what is missing (the server's decision, in this plugin's
-- words: how to set it here).
local function model_result(answer)
  if answer.provider == 'demo' then
    return 'ok', 'the offline demo model is configured'
  elseif answer.provider == 'scripted' then
    return 'ok', 'the scripted model is configured: ' .. answer.model
  elseif answer.provider == 'openai' and answer.model == '' then  -- before the key, as the plugin always said
    return 'error', 'provider "openai" needs a model: setup({ settings = { model = "..." } }) (see docs/providers.md)'
  elseif answer.provider == 'openai' and answer.lacks == 'key' then
    return 'error', 'provider "openai" needs OPENAI_API_KEY, or settings.baseUrl for a local server (see docs/providers.md)'
  elseif answer.lacks == 'provider' or answer.lacks == 'key' then
    return 'error', 'no model: export ANTHROPIC_API_KEY before starting Neovim, or use the offline demo with '
      .. 'setup({ settings = { model = "demo" } })'
  elseif type(answer.problem) == 'string' then
    return 'error', answer.problem
  elseif answer.provider == 'openai' then
    return 'ok', 'provider openai: model ' .. answer.model .. ' at ' .. answer.baseUrl
  end
  return 'ok', answer.key .. ' is set (model ' .. answer.model .. ')'
end

-- The line of the model suggestions would use (`completions` of the server's answer), or of what keeps them from
-- working; nothing when the server did not say, or when no provider is configured (the model line says it).
local function suggestion_result(s)
  if type(s) ~= 'table' or s.lacks == 'provider' then
    return nil
  elseif type(s.problem) == 'string' then
    return 'error', 'suggestions: ' .. s.problem
  elseif s.provider == 'demo' then
    return 'ok', 'suggestions from the offline demo model'
  end
  return 'ok', 'suggestions from ' .. s.provider .. ' ' .. s.model .. ' (api ' .. s.api .. ')'
    .. (type(s.baseUrl) == 'string' and ' at ' .. s.baseUrl or '')
end

-- The checks as {level = 'ok' | 'error', message}; `full` (for :checkhealth) adds the server's Python and which
-- provider keys are set (their names only).
function M.results(full)
  local cmd = config.options.cmd
  local results = {}
  local function add(level, message)
    if level then
      table.insert(results, { level = level, message = message })
    end
  end

  -- Identity, not just presence: another program may be installed under the same name.
  local ok, said = require('agent_lsp.identity').check_version(cmd)
  if ok then
    add('ok', string.format('`%s` is %s (%s)', cmd[1], vim.fn.exepath(cmd[1]), said))
    local python = full and M.server_python(cmd[1])
    if python then
      add('ok', 'the server runs on ' .. python)
    end
  else
    add('error', said)
  end

  -- Which provider and model chats use is the server's to decide (one place, models/resolver.py): ask it.
  local answer, why
  if ok then
    answer, why = M.server_model(cmd)
    if answer then
      add(model_result(answer))
    else
      add('error', 'could not ask the server which model chats would use (`' .. cmd[1] .. ' model --json`: '
        .. why .. ')')
    end
  end

  if full then
    local set = vim.tbl_filter(function(name) return (vim.env[name] or '') ~= '' end, M.KEYS)
    add('ok', #set > 0 and 'provider keys set: ' .. table.concat(set, ', ')
      or 'no provider key is set (' .. table.concat(M.KEYS, ', ') .. ')')
  end

  local suggestions = require('agent_lsp.suggestions')
  if config.suggestions_enabled() then
    local left = {}
    for name, key in pairs(suggestions.unmapped) do
      table.insert(left, key .. ' (' .. name .. ')')
    end
    table.sort(left)
    add('ok', 'suggestions as you type are on: ' .. (suggestions.native and 'Neovim\'s own inline completion'
      or 'the plugin\'s ghost text') .. (#left > 0 and '; keys mapped by something else, left to it: '
      .. table.concat(left, ', ') or ''))
    add(suggestion_result(answer and answer.completions))
  else
    add('ok', 'suggestions as you type are off (settings.completions.enabled); :AgentSuggestions on')
  end

  local client = require('agent_lsp.client')
  local running = client.get()
  if not running then
    add('ok', 'the server is not running yet: it starts with the first :AgentChat'
      .. (config.suggestions_enabled() and ' or Insert mode in a file' or ''))
    return results
  end
  local model = ''
  if client.has('models') then
    local answer, why = client.request_sync(running, 'agent/models', vim.empty_dict(), 3000)
    if answer then
      model = ', chatting with ' .. (answer.default ~= '' and answer.default or 'no model')
      if answer.error then
        add('error', 'the server could not list the models: ' .. answer.error)
      end
    else
      add('error', 'agent/models did not answer: ' .. tostring(why))
    end
  end
  add('ok', 'the server is running (client id ' .. running.id .. ')' .. model .. '; its log: :AgentLog')
  return results
end

function M.check()
  local h = vim.health or require('health')  -- vim.health since 0.8; the `health` module before
  local report = {
    ok = h.ok or h.report_ok,
    error = h.error or h.report_error,
  }
  ;(h.start or h.report_start)('agent-lsp')
  for _, r in ipairs(M.results(true)) do
    report[r.level](r.message)
  end
end

-- :AgentHealth: the same checks as one notification, for editors without a Lua :checkhealth.
function M.notify()
  local lines, level = {}, vim.log.levels.INFO
  for _, r in ipairs(M.results()) do
    table.insert(lines, r.level:upper() .. ': ' .. r.message)
    if r.level == 'error' then
      level = vim.log.levels.ERROR
    end
  end
  vim.notify('agent-lsp health\n' .. table.concat(lines, '\n'), level)
end

return M
