-- Chats: one per chat buffer, each bound to one server session. Sends agent/chat, draws the agent/update
-- stream into its View, answers confirmations, stops.
local View = require('agent_lsp.view')
local client = require('agent_lsp.client')
local confirm = require('agent_lsp.confirm')
local config = require('agent_lsp.config')

local M = {}

local by_buf = {}      -- chat buffer -> Chat
local by_session = {}  -- sessionId -> Chat
local last             -- the chat :AgentChat and :AgentStop use outside a chat buffer
local count = 0        -- for unique buffer names
M.mode = nil           -- permission mode sent with every chat; nil leaves it to the server's settings

local Chat = {}
Chat.__index = Chat

local function new_chat(session_id)
  repeat  -- a reloaded plugin starts counting again
    count = count + 1
  until vim.fn.bufexists('agent-lsp://chat/' .. count) == 0
  local chat = setmetatable({ view = View.new('agent-lsp://chat/' .. count), tools = {} }, Chat)
  by_buf[chat.view.buf] = chat
  if session_id then
    chat.session_id = session_id
    by_session[session_id] = chat
  end
  vim.keymap.set('n', '<CR>', '<Cmd>AgentChat<CR>', { buffer = chat.view.buf, desc = 'agent-lsp: ask' })
  vim.keymap.set('n', '<C-c>', '<Cmd>AgentStop<CR>', { buffer = chat.view.buf, desc = 'agent-lsp: stop' })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = chat.view.buf,
    once = true,
    callback = function()
      chat:stop()  -- nobody would see the rest of it
      by_buf[chat.view.buf] = nil
      if chat.session_id then
        by_session[chat.session_id] = nil
      end
    end,
  })
  last = chat
  return chat
end

local function plural(n, word)
  return string.format('%d %s%s', n, word, n == 1 and '' or 's')
end

local STOP_LABELS = {
  end_turn = 'done',
  aborted = 'stopped',
  max_turns = 'turn limit reached',
  max_tokens = 'token limit reached',
  refusal = 'refused by the model',
  disabled = 'chat disabled (maxTurns is 0)',
}

local TOOL_GROUPS = {
  completed = 'AgentLspToolDone',
  failed = 'AgentLspToolFailed',
  rejected = 'AgentLspToolFailed',
  cancelled = 'AgentLspToolFailed',
}

local function tool_line(tool)
  local status = tool.status:gsub('_', ' ')
  if tool.status == 'failed' and tool.error then  -- a rejection's error only repeats that it was rejected
    status = status .. ': ' .. vim.split(tool.error, '\n', { plain = true })[1]
  end
  return string.format('● %s [%s]', tool.title, status), TOOL_GROUPS[tool.status] or 'AgentLspTool'
end

function Chat:_bind(session_id)
  self.session_id = session_id
  by_session[session_id] = self
end

function Chat:_add_user(message)
  if not self.view.empty then
    self.view:append({ '' })
  end
  local lines = vim.split(message, '\n', { plain = true })
  for i, line in ipairs(lines) do
    lines[i] = '> ' .. line
  end
  self.view:append(lines, 'AgentLspUser')
end

function Chat:_add_tool(id, title, status)
  local tool = { title = title, status = status }
  tool.mark = self.view:append_marked(tool_line(tool))
  self.tools[id] = tool
end

function Chat:_add_diff(diff)
  local lines = vim.split(diff:gsub('\n$', ''), '\n', { plain = true })
  local first = self.view:append(lines)
  for i, line in ipairs(lines) do
    local group = line:match('^%+') and not line:match('^%+%+%+') and 'AgentLspDiffAdd'
      or line:match('^%-') and not line:match('^%-%-%-') and 'AgentLspDiffDelete'
    if group then
      vim.api.nvim_buf_add_highlight(self.view.buf, -1, group, first + i - 1, 0, -1)
    end
  end
end

function Chat:_confirm(u)
  if u.diff then
    self:_add_diff(u.diff)  -- what is being approved, right under its tool call
  end
  -- Scheduled: a picker may block, and the stream's other updates must not wait behind it.
  vim.schedule(function()
    confirm.ask(u, function(decision)
      local params = { sessionId = self.session_id, toolCallId = u.toolCallId, decision = decision }
      client.request(self.client, 'agent/confirmTool', params, function(err)
        if err and self.running then  -- after a stop the server has dropped the question: not an error
          vim.notify('agent-lsp: agent/confirmTool failed: ' .. err.message, vim.log.levels.WARN)
        end
      end)
    end)
  end)
end

function Chat:_update(u)
  if u.kind == 'text_delta' or u.kind == 'thinking_delta' then
    self.view:stream(u.kind == 'text_delta' and 'text' or 'thinking', u.text)
  elseif u.kind == 'tool_call' then
    self:_add_tool(u.toolCallId, u.title, 'pending')
  elseif u.kind == 'tool_call_update' then
    local tool = self.tools[u.toolCallId]
    if tool then
      tool.status, tool.error = u.status, u.error ~= vim.NIL and u.error or nil
      self.view:set(tool.mark, tool_line(tool))
    end
  elseif u.kind == 'confirmation_request' then
    self:_confirm(u)
  elseif u.kind == 'notice' then
    self.view:append({ '! ' .. u.message }, 'AgentLspNotice')
  end
  -- turn_start and usage: the server's $/progress and the closing line already say it.
end

-- `quiet`: the user has already been told why (the server is missing, not agent-lsp, or exited).
function Chat:_finish(err, result, quiet)
  self.running, self.request_id = false, nil
  self.result = result
  if err then
    self.view:append({ '-- request failed: ' .. err.message }, 'AgentLspEnd')
    if not quiet then
      vim.notify('agent-lsp: agent/chat failed: ' .. err.message, vim.log.levels.ERROR)
    end
    return
  end
  if not self.session_id then
    self:_bind(result.sessionId)
  end
  if result.stopReason == 'error' then
    self.view:append({ '-- error: ' .. result.error.message }, 'AgentLspEnd')
    vim.notify('agent-lsp: ' .. result.error.message, vim.log.levels.ERROR)
    return
  end
  local m = result.metadata
  self.view:append({ string.format('-- %s (%s, %s)', STOP_LABELS[result.stopReason] or result.stopReason,
    plural(m.turnsCount, 'turn'), plural(m.toolCallsCount, 'tool call')) }, 'AgentLspEnd')
end

function Chat:send(message, context)
  if self.running then
    vim.notify('agent-lsp: a chat is already running here; :AgentStop stops it', vim.log.levels.WARN)
    return
  end
  self:_add_user(message)
  self.running, self.tools = true, {}
  local params = { sessionId = self.session_id, message = message, context = context, permissionMode = M.mode }
  local started = client.when_ready(function(c)
    if not self.running then
      return  -- stopped, or the server died, before it was ready
    end
    self.client = c
    self.request_id = client.request(c, 'agent/chat', params, function(err, result)
      if self.running then
        self:_finish(err, result)
      end
    end)
  end)
  if not started then
    self:_finish({ message = 'the server is not running' }, nil, true)
  end
end

function Chat:stop()
  if not self.running then
    return false
  end
  if not self.request_id then
    -- Not sent yet (the server is still starting): nothing to tell the server.
    self.running = false
    self.view:append({ '-- stopped' }, 'AgentLspEnd')
  elseif self.session_id then
    client.request(self.client, 'agent/abort', { sessionId = self.session_id }, function() end)
  else
    -- A new session's id comes with its first update; before that, cancelling the request means the same.
    client.cancel(self.client, self.request_id)
  end
  return true
end

-- The chat for the current buffer, else the last one used (if its buffer still exists).
function M.current()
  return by_buf[vim.api.nvim_get_current_buf()] or (last and last.view:valid() and last or nil)
end

-- Show a chat (a new one when `new` or when there is none) and return it.
function M.open(new)
  local chat = not new and M.current() or new_chat()
  last = chat
  chat.view:show(config.options.split)
  return chat
end

-- A chat buffer for an earlier session, drawn from its agent/history.
function M.open_session(session_id, messages)
  local chat = by_session[session_id] or new_chat(session_id)
  if chat.view.empty then
    for _, msg in ipairs(messages) do
      if msg.role == 'user' then
        chat:_add_user(msg.content)
      else
        if msg.content ~= '' then
          chat.view:append(vim.split(msg.content, '\n', { plain = true }))
        end
        for _, call in ipairs(msg.toolCalls ~= vim.NIL and msg.toolCalls or {}) do
          chat:_add_tool(call.toolCallId, call.title, call.status)
        end
      end
    end
  end
  last = chat
  chat.view:show(config.options.split)
  return chat
end

function M.stop()
  local chat = M.current()
  if not (chat and chat:stop()) then
    vim.notify('agent-lsp: no chat is running', vim.log.levels.INFO)
  end
end

function M.on_update(params)
  local chat = by_session[params.sessionId]
  if not chat then
    -- A new session's id arrives with its first update: it belongs to the chat still waiting for one.
    for _, c in pairs(by_buf) do
      if c.running and not c.session_id then
        chat = c
        chat:_bind(params.sessionId)
        break
      end
    end
  end
  if chat and chat.running then
    chat:_update(params.update)
  end
end

function M.on_server_exit(what)
  for _, chat in pairs(by_buf) do
    if chat.running then
      chat:_finish({ message = what }, nil, true)
    end
  end
end

return M
