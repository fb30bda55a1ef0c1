-- The checks of `:checkhealth agent` (lua/agent/health.lua) and of :AgentHealth.
local config = require('agent_lsp.config')

local M = {}

-- The checks as {level = 'ok' | 'error', message}.
function M.results()
  local cmd = config.options.cmd
  local settings = config.options.settings
  local results = {}
  local function add(level, message)
    table.insert(results, { level = level, message = message })
  end

  -- Identity, not just presence: another program may be installed under the same name.
  local ok, said = require('agent_lsp.identity').check_version(cmd)
  if ok then
    add('ok', string.format('`%s` is %s (%s)', cmd[1], vim.fn.exepath(cmd[1]), said))
  else
    add('error', said)
  end

  local cmd_model = table.concat(cmd, ' '):match('%-%-model[ =](%S+)')
  local model = settings.model or cmd_model or vim.env.AGENT_LSP_MODEL
  local provider = settings.provider or vim.env.AGENT_LSP_PROVIDER
  local base_url = settings.baseUrl or vim.env.OPENAI_BASE_URL
  if base_url == '' then base_url = nil end
  if model == 'demo' or provider == 'demo' then
    add('ok', 'the offline demo model is configured')
  elseif provider == 'openai' and not model then
    add('error', 'provider "openai" needs a model: setup({ settings = { model = "..." } }) (see docs/providers.md)')
  elseif provider == 'openai' and not base_url and (vim.env.OPENAI_API_KEY or '') == '' then
    add('error', 'provider "openai" needs OPENAI_API_KEY, or settings.baseUrl for a local server (see docs/providers.md)')
  elseif provider == 'openai' then
    add('ok', 'provider openai: model ' .. model .. ' at ' .. (base_url or 'https://api.openai.com/v1'))
  elseif vim.env.ANTHROPIC_API_KEY and vim.env.ANTHROPIC_API_KEY ~= '' then
    add('ok', 'ANTHROPIC_API_KEY is set' .. (model and ' (model ' .. model .. ')' or ''))
  elseif cmd_model then
    add('ok', 'the server command chooses the model: ' .. cmd_model)
  else
    add('error', 'no model: export ANTHROPIC_API_KEY before starting Neovim, or use the offline demo with '
      .. 'setup({ settings = { model = "demo" } })')
  end

  local client = require('agent_lsp.client')
  local running = client.get()
  if not running then
    add('ok', 'the server is not running yet: it starts with the first :AgentChat')
    return results
  end
  -- Which model chats use is the server's to decide (its default lives in one place): ask it, never guess.
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
  for _, r in ipairs(M.results()) do
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
