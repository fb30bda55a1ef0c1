-- :AgentSessions: pick an earlier session (agent/sessions) and reopen it from its agent/history.
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
    chat.open_session(session.sessionId, history.messages)
  end)
end

function M.pick()
  client.when_ready(function(c)
    client.request(c, 'agent/sessions', vim.empty_dict(), function(err, result)
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

return M
