-- Chats: one per chat buffer, each bound to one server session. Sends agent/chat, draws the agent/update
-- stream into its View, shows an edit's diff and answers confirmations, stops. A chat is shown as its
-- transcript with an input area under it, in one window pair per tab.
local View = require('agent_lsp.view')
local client = require('agent_lsp.client')
local confirm = require('agent_lsp.confirm')
local config = require('agent_lsp.config')

local M = {}

local by_buf = {}      -- transcript buffer -> Chat
local by_input = {}    -- input buffer -> Chat
local by_session = {}  -- sessionId -> Chat
local last             -- the chat :AgentChat and :AgentStop use outside a chat buffer
local count = 0        -- for unique buffer names
M.mode = nil           -- permission mode sent with every chat; nil leaves it to the server's settings
M.model = nil          -- model sent with every chat (:AgentModel); nil leaves it to the server's settings

local Chat = {}
Chat.__index = Chat

-- The input area: a scratch buffer under the transcript; <CR> in normal mode sends what it holds.
local function new_input(chat)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, 'agent-lsp://input/' .. chat.number)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].omnifunc = require('agent_lsp.commands').OMNIFUNC  -- <C-x><C-o>: /commands, @files
  by_input[buf] = chat
  vim.keymap.set('n', '<CR>', function() chat:send_input() end, { buffer = buf, desc = 'agent-lsp: send' })
  vim.keymap.set({ 'n', 'i' }, '<C-c>', function() chat:stop() end, { buffer = buf, desc = 'agent-lsp: stop' })
  return buf
end

local function new_chat(session_id)
  repeat  -- a reloaded plugin starts counting again
    count = count + 1
  until vim.fn.bufexists('agent-lsp://chat/' .. count) == 0
  local chat = setmetatable({ view = View.new('agent-lsp://chat/' .. count), tools = {}, number = count }, Chat)
  chat.input = new_input(chat)
  by_buf[chat.view.buf] = chat
  if session_id then
    chat.session_id = session_id
    by_session[session_id] = chat
  end
  vim.keymap.set('n', '<CR>', function() M.show(chat) end, { buffer = chat.view.buf, desc = 'agent-lsp: input' })
  vim.keymap.set('n', '<C-c>', function() chat:stop() end, { buffer = chat.view.buf, desc = 'agent-lsp: stop' })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = chat.view.buf,
    once = true,
    callback = function()
      chat:stop()  -- nobody would see the rest of it
      by_buf[chat.view.buf], by_input[chat.input] = nil, nil
      if chat.session_id then
        by_session[chat.session_id] = nil
      end
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(chat.input) then
          vim.api.nvim_buf_delete(chat.input, { force = true })
        end
      end)
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

-- A subagent's call (`nested`) is indented under its task.
local function tool_line(tool)
  local status = tool.status:gsub('_', ' ')
  if tool.status == 'failed' and tool.error then  -- a rejection's error only repeats that it was rejected
    status = status .. ': ' .. vim.split(tool.error, '\n', { plain = true })[1]
  end
  return string.format('%s● %s [%s]', tool.nested and '  ' or '', tool.title, status),
    TOOL_GROUPS[tool.status] or 'AgentLspTool'
end

local PLAN_BOXES = { completed = '[x]', in_progress = '[~]', pending = '[ ]' }
local PLAN_GROUPS = { completed = 'AgentLspPlanDone', in_progress = 'AgentLspPlanActive',
  pending = 'AgentLspPlanPending' }

local function text(value)  -- a JSON string field that may be null or absent
  return type(value) == 'string' and value or nil
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

-- A tool call's line starts a fold: its diff, when it has one, is folded under it.
function Chat:_add_tool(id, title, status)
  local tool = { title = title, status = status }
  tool.mark = self.view:append_marked(tool_line(tool), nil, 'start')
  self.tools[id] = tool
  return tool
end

-- An edit's diff as a fenced block, in the fold of its tool call (or in a fold of its own when other lines
-- came in between).
function Chat:_add_diff(diff, tool)
  local lines = vim.split(diff:gsub('\n$', ''), '\n', { plain = true })
  local under = tool ~= nil and self.view:row(tool.mark) == self.view:last_row()
  table.insert(lines, 1, '```diff')
  table.insert(lines, '```')
  local first = self.view:append(lines, nil, under and 'in' or 'start')
  for i, line in ipairs(lines) do
    local group = line:match('^%+') and not line:match('^%+%+%+') and 'AgentLspDiffAdd'
      or line:match('^%-') and not line:match('^%-%-%-') and 'AgentLspDiffDelete'
    if group then
      vim.api.nvim_buf_add_highlight(self.view.buf, -1, group, first + i - 1, 0, -1)
    end
  end
end

-- A floating window with the diff, open while the question is asked.
local function diff_float(diff, title)
  local lines = vim.split(diff:gsub('\n$', ''), '\n', { plain = true })
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = 'diff'
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 1, vim.o.columns - 4)
  local opts = { relative = 'editor', row = 1, col = math.floor((vim.o.columns - width) / 2), width = width,
    height = math.max(1, math.min(#lines, vim.o.lines - 8)), style = 'minimal', border = 'rounded',
    focusable = false }
  if vim.fn.has('nvim-0.9') == 1 then
    opts.title = ' ' .. title .. ' '
  end
  local win = vim.api.nvim_open_win(buf, false, opts)
  vim.cmd('redraw')  -- on screen before a picker that blocks (0.7's inputlist) asks
  return win
end

local function close_float(win)
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

function Chat:_confirm(u)
  local diff = text(u.diff)
  if diff then
    self:_add_diff(diff, self.tools[u.toolCallId])  -- what is being approved, under its tool call
  end
  -- Scheduled: a picker may block, and the stream's other updates must not wait behind it.
  vim.schedule(function()
    if not self.running then
      return  -- stopped meanwhile: the server has dropped the question
    end
    self.float = diff and diff_float(diff, u.title) or nil  -- the diff first, then the question
    confirm.ask(u, function(decision)
      close_float(self.float)
      self.float = nil
      local params = { sessionId = self.session_id, toolCallId = u.toolCallId, decision = decision }
      client.request(self.client, 'agent/confirmTool', params, function(err)
        if err and self.running then  -- after a stop the server has dropped the question: not an error
          vim.notify('agent-lsp: agent/confirmTool failed: ' .. err.message, vim.log.levels.WARN)
        end
      end)
    end)
  end)
end

-- The plan (todo_write's list) as a checklist at the top of the chat buffer, in place of the previous one.
function Chat:_plan(entries)
  local lines, groups, done = { '' }, { 'AgentLspPlan' }, 0
  for _, e in ipairs(type(entries) == 'table' and entries or {}) do
    local status = PLAN_BOXES[e.status] and e.status or 'pending'
    done = done + (status == 'completed' and 1 or 0)
    table.insert(lines, string.format('- %s %s', PLAN_BOXES[status],
      (text(e.content) or ''):gsub('%s*\n%s*', ' ')))
    table.insert(groups, PLAN_GROUPS[status])
  end
  if #lines == 1 then
    return self.view:set_header({})
  end
  lines[1] = string.format('Plan (%d/%d done)', done, #lines - 1)
  table.insert(lines, '')
  self.view:set_header(lines, groups)
end

-- An update of a subagent (it names its task's call): its tool calls go under the task's line, in the task's
-- fold; its text is the task's result, not the chat's, and is not drawn.
function Chat:_nested(u, parent)
  if u.kind == 'tool_call' then
    local tool = { title = u.title, status = 'pending', nested = true }
    local line, group = tool_line(tool)
    tool.mark = self.view:append_under(u.parentToolCallId, parent.mark, line, group)
    self.tools[u.toolCallId] = tool
  elseif u.kind == 'tool_call_update' then
    local tool = self.tools[u.toolCallId]
    if tool then
      tool.status, tool.error = u.status, text(u.error)
      self.view:set(tool.mark, tool_line(tool))
    end
  elseif u.kind == 'confirmation_request' then
    self:_confirm(u)
  end
end

function Chat:_update(u)
  if text(u.parentToolCallId) then
    local parent = self.tools[u.parentToolCallId]
    return parent and self:_nested(u, parent)
  end
  if u.kind == 'plan' then
    self:_plan(u.entries)
  elseif u.kind == 'text_delta' or u.kind == 'thinking_delta' then
    self.view:stream(u.kind == 'text_delta' and 'text' or 'thinking', u.text)
  elseif u.kind == 'tool_call' then
    self:_add_tool(u.toolCallId, u.title, 'pending')
  elseif u.kind == 'tool_call_update' then
    local tool = self.tools[u.toolCallId]
    if tool then
      tool.status, tool.error = u.status, text(u.error)
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
  self.running, self.request_id, self.external = false, nil, nil
  self.view:end_block()
  close_float(self.float)
  self.float = nil
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

-- `images`: {path, mimeType, data, line} of attach.lua, sent as agent/chat `images` and shown under the message.
function Chat:send(message, context, images)
  if self.running then
    vim.notify('agent-lsp: a chat is already running here; <C-c> or :AgentStop stops it', vim.log.levels.WARN)
    return false
  end
  local mentions = require('agent_lsp.mentions').extract(message)
  if #mentions > 0 then
    context = vim.tbl_extend('force', context or {}, { mentions = mentions })
  end
  self:_add_user(message)
  local sent
  if images and #images > 0 then
    sent = {}
    for _, image in ipairs(images) do
      table.insert(sent, { mimeType = image.mimeType, data = image.data })
      self.view:append({ '> ' .. image.line }, 'AgentLspUser')
    end
  end
  self.running, self.tools = true, {}
  local params = { sessionId = self.session_id, message = message, context = context, permissionMode = M.mode,
    model = M.model, images = sent }
  local function chat(c)
    params.sessionId = self.session_id
    self.request_id = client.request(c, 'agent/chat', params, function(err, result)
      if self.running then
        self:_finish(err, result)
      end
    end)
  end
  local started = client.when_ready(function(c)
    if not self.running then
      return  -- stopped, or the server died, before it was ready
    end
    self.client = c
    if self.session_id or not client.has('newSession') then
      return chat(c)
    end
    -- The session's id before the chat: a stop right after sending is an agent/abort like any other.
    self.creating = true
    self.request_id = client.request(c, 'agent/newSession', vim.empty_dict(), function(err, result)
      self.creating = false
      if not self.running then
        return
      elseif err then
        return self:_finish(err)
      end
      self:_bind(result.sessionId)
      chat(c)
    end)
  end)
  if not started then
    self:_finish({ message = 'the server is not running' }, nil, true)
  end
  return true
end

-- :AgentAttach: the image goes with the next message, shown as a line of the input area (appended).
function Chat:attach(path)
  local image, why = require('agent_lsp.attach').load(path)
  if not image then
    return vim.notify('agent-lsp: ' .. why, vim.log.levels.ERROR)
  end
  self.attachments = self.attachments or {}
  table.insert(self.attachments, image)
  local lines = vim.api.nvim_buf_get_lines(self.input, 0, -1, false)
  local at = (#lines == 1 and lines[1] == '') and 0 or #lines
  vim.api.nvim_buf_set_lines(self.input, at, -1, false, { image.line })
  return image
end

-- Send what the input area holds, and empty it (kept while a chat runs, so nothing typed is lost). The lines
-- of attached images are their images, not text; an image whose line was deleted is not sent.
function Chat:send_input()
  local text_lines, images, pending = {}, {}, {}
  for _, image in ipairs(self.attachments or {}) do
    pending[image.line] = pending[image.line] or {}
    table.insert(pending[image.line], image)
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(self.input, 0, -1, false)) do
    local image = pending[line] and table.remove(pending[line], 1)
    if image then
      table.insert(images, image)
    else
      table.insert(text_lines, line)
    end
  end
  local message = vim.trim(table.concat(text_lines, '\n'))
  if message == '' and #images > 0 then
    return vim.notify('agent-lsp: write a message to go with the image', vim.log.levels.WARN)
  end
  if message ~= '' and self:send(message, require('agent_lsp').context(), images) then
    vim.api.nvim_buf_set_lines(self.input, 0, -1, false, {})
    self.attachments = nil
  end
end

function Chat:stop()
  if not self.running then
    return false
  end
  if not self.request_id or self.creating then
    -- Not sent yet (the server is still starting, or making the session): nothing to stop on the server.
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

-- agent/revert: undo the edits of this session's last chat, or of every chat after the first `to_chat`. What was
-- reverted and what was refused (a file changed since) goes in the transcript and in a notification.
function Chat:revert(to_chat)
  if self.running then
    return vim.notify('agent-lsp: a chat is running here; stop it first (<C-c> or :AgentStop)', vim.log.levels.WARN)
  end
  local c = client.get()
  if not (c and self.session_id) then
    return vim.notify('agent-lsp: nothing to revert (no chat in this session yet)', vim.log.levels.WARN)
  end
  local function name(uri)
    return vim.fn.fnamemodify(vim.uri_to_fname(uri), ':.')
  end
  client.request(c, 'agent/revert', { sessionId = self.session_id, toChat = to_chat }, function(err, result)
    if err then
      return vim.notify('agent-lsp: revert: ' .. err.message, vim.log.levels.WARN)
    end
    local lines, level = {}, vim.log.levels.INFO
    local reverted = vim.tbl_map(name, result.reverted or {})
    table.insert(lines, '-- reverted: ' .. (#reverted > 0 and table.concat(reverted, ', ') or 'nothing'))
    for _, r in ipairs(result.refused or {}) do
      table.insert(lines, string.format('-- not reverted: %s (%s)', name(r.uri), r.reason))
      level = vim.log.levels.WARN
    end
    self.view:append(lines, 'AgentLspEnd')
    vim.notify('agent-lsp: ' .. table.concat(lines, '; '):gsub('%-%- ', ''), level)
  end)
end

-- The chat for the current buffer (its transcript or its input), else the last one used, if it still exists.
function M.current()
  local buf = vim.api.nvim_get_current_buf()
  return by_buf[buf] or by_input[buf] or (last and last.view:valid() and last or nil)
end

-- Show a chat in this tab's chat window: the transcript in the window that already shows a chat (else one
-- opened with the `split` option), the input area in a small window under it; never a second pair. The
-- cursor goes to the input area.
function M.show(chat)
  if not vim.api.nvim_buf_is_valid(chat.input) then  -- the user wiped it: a fresh one
    by_input[chat.input] = nil
    chat.input = new_input(chat)
  end
  local tw, iw
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    tw = tw or (by_buf[buf] and win) or nil
    iw = iw or (by_input[buf] and win) or nil
  end
  if not tw then
    if iw then
      vim.api.nvim_set_current_win(iw)
      vim.cmd('aboveleft split')
    else
      vim.cmd(config.options.split)
    end
    tw = vim.api.nvim_get_current_win()
  end
  if vim.api.nvim_win_get_buf(tw) ~= chat.view.buf then
    vim.api.nvim_win_set_buf(tw, chat.view.buf)
    chat.view:setup_window(tw)
  end
  vim.api.nvim_win_set_cursor(tw, { vim.api.nvim_buf_line_count(chat.view.buf), 0 })
  if not iw then
    vim.api.nvim_set_current_win(tw)
    vim.cmd('belowright ' .. config.options.input_height .. 'split')
    iw = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_buf(iw, chat.input)
  vim.wo[iw].winfixheight, vim.wo[iw].wrap = true, true
  vim.api.nvim_set_current_win(iw)
  last = chat
end

-- Show a chat (a new one when `new` or when there is none) and return it.
function M.open(new)
  local chat = not new and M.current() or new_chat()
  M.show(chat)
  return chat
end

-- A chat for an earlier session, drawn from its agent/history (its plan, tool calls with their diffs, and how
-- each chat ended when it did not simply finish).
function M.open_session(session_id, messages, plan)
  local chat = by_session[session_id] or new_chat(session_id)
  if type(plan) == 'table' then
    chat:_plan(plan)
  end
  if chat.view.empty then
    for _, msg in ipairs(messages) do
      if msg.role == 'user' then
        chat:_add_user(msg.content)
      else
        if msg.content ~= '' then
          chat.view:append(vim.split(msg.content, '\n', { plain = true }))
        end
        for _, call in ipairs(type(msg.toolCalls) == 'table' and msg.toolCalls or {}) do
          local tool = chat:_add_tool(call.toolCallId, call.title, call.status)
          if text(call.diff) then
            chat:_add_diff(call.diff, tool)
          end
        end
        local reason = text(msg.stopReason)
        if reason and reason ~= 'end_turn' then
          chat.view:append({ '-- ' .. (STOP_LABELS[reason] or reason) }, 'AgentLspEnd')
        end
      end
    end
  end
  M.show(chat)
  return chat
end

function M.stop()
  local chat = M.current()
  if not (chat and chat:stop()) then
    vim.notify('agent-lsp: no chat is running', vim.log.levels.INFO)
  end
end

-- A chat this plugin did not send (a code action's workspace/executeCommand): shown like any other, in the
-- session's chat buffer (a new one for a session not shown yet), without taking the cursor.
local function start_external(session_id)
  local chat = by_session[session_id]
  if not chat then
    chat = new_chat(session_id)
    local win = vim.api.nvim_get_current_win()
    M.show(chat)
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_set_current_win(win)
    end
  end
  if not chat.view.empty then
    chat.view:append({ '' })
  end
  chat.view:append({ '> (a code action)' }, 'AgentLspUser')
  chat.running, chat.external, chat.tools, chat.client = true, true, {}, client.get()
  chat.request_id = true  -- already sent: a stop is an agent/abort
  return chat
end

function M.on_update(params)
  require('agent_lsp.index_status').observe(params.update)
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
  if not (chat and chat.running) then
    chat = start_external(params.sessionId)
  end
  chat:_update(params.update)
end

-- The answer to a workspace/executeCommand (a code action's chat): the same result object as agent/chat.
function M.on_command_result(err, result)
  for _, chat in pairs(by_buf) do
    if chat.running and chat.external and (err or (type(result) == 'table' and chat.session_id == result.sessionId)) then
      chat:_finish(err, result)
    end
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
