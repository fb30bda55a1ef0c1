-- :AgentSessions: pick an earlier session of this workspace (agent/sessions {workspace}) and reopen it from its
-- agent/history. :AgentModel: pick the model of the next chats (agent/models, when the server offers it).
local client = require('agent_lsp.client')
local chat = require('agent_lsp.chat')

local M = {}

local METHOD_NOT_FOUND = -32601

local function failed(method, err)
  if err.code == METHOD_NOT_FOUND then
    vim.notify(string.format('agent-lsp: this server does not support %s; update agent-lsp to list sessions',
      method), vim.log.levels.WARN)
  else
    vim.notify(string.format('agent-lsp: %s failed: %s', method, err.message), vim.log.levels.ERROR)
  end
end

local function reopen(c, session)
  client.request(c, 'agent/history', { sessionId = session.sessionId }, function(err, history)
    if err then
      return failed('agent/history', err)
    end
    chat.open_session(session.sessionId, history.messages, history.plan)
  end)
end

function M.pick()
  client.when_ready(function(c)
    client.request(c, 'agent/sessions', { workspace = client.root_uri() }, function(err, result)
      if err then
        return failed('agent/sessions', err)
      end
      if #result.sessions == 0 then
        return vim.notify('agent-lsp: no sessions yet', vim.log.levels.INFO)
      end
      vim.ui.select(result.sessions, {
        prompt = 'agent-lsp sessions',
        kind = 'agent_lsp_session',
        format_item = function(s)
          return string.format('%s  (%s)', s.title, s.updatedAt)
        end,
      }, function(session)
        if session then
          reopen(c, session)
        end
      end)
    end)
  end)
end

-- What the picker shows for a model: its name, its id when different, and which one is in use.
local function model_label(m, current)
  local name = type(m.displayName) == 'string' and m.displayName ~= m.id and (m.displayName .. ' (' .. m.id .. ')')
    or m.id
  return name .. (m.id == current and '  [current]' or '')
end

function M.pick_model()
  client.when_ready(function(c)
    if not client.has('models') then
      return vim.notify('agent-lsp: this server does not offer a model list (its features lack `models`); '
        .. 'set settings.model in setup(), or update agent-lsp', vim.log.levels.WARN)
    end
    client.request(c, 'agent/models', vim.empty_dict(), function(err, result)
      if err then
        return failed('agent/models', err)
      end
      local current = chat.model or result.default
      vim.ui.select(result.models, {
        prompt = 'agent-lsp model',
        kind = 'agent_lsp_model',
        format_item = function(m) return model_label(m, current) end,
      }, function(m)
        if m then
          chat.model = m.id
          vim.notify('agent-lsp: model ' .. m.id, vim.log.levels.INFO)
        end
      end)
    end)
  end)
end

return M
