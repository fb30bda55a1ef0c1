-- How far language servers have indexed, both ways (PROTOCOL §11). To agent-lsp: the work-done progress
-- ($/progress) of the editor's other language servers, sent as `agent/languageStatus {server, state}` whenever
-- it changes ("loading" while one has progress begun and not ended, "ready" once all that reported progress
-- ended it; nothing while none reported any: agent-lsp then says "unknown"). From agent-lsp: the `index:`
-- line ending the agent's last language answer, for a statusline (M.statusline(); `User AgentLspIndex` fires
-- when it changes).
local M = {}

M.index = nil      -- {state, why} of the agent's last language answer; nil before one
local reported = {}  -- client id -> name: the editor's language servers that reported progress
local sent = nil     -- "state\0server" last sent to the running agent-lsp server

local STATES = { ready = true, loading = true, stale = true, unknown = true }
local OWN = 'agent-lsp'  -- the plugin's own client (client.lua): its progress is the agent's, not an index's
local language = require('agent_lsp.language')  -- the editor's other language servers

-- Whether client `c` has work-done progress begun and not ended: Neovim keeps that itself (0.10+:
-- client.progress.pending, token -> title; 0.7-0.9: client.messages.progress, token -> {title, done}).
local function busy(c)
  if type(c.progress) == 'table' and type(c.progress.pending) == 'table' then
    return next(c.progress.pending) ~= nil
  end
  for _, p in pairs(c.messages and c.messages.progress or {}) do
    if type(p) == 'table' and p.title and not p.done then
      return true
    end
  end
  return false
end

-- What the editor knows now: {state, server}, or nil when none of its language servers reported progress.
function M.editor_state()
  local live = {}
  for _, c in ipairs(language.all_clients()) do
    if reported[c.id] and not language.stopped(c) then
      table.insert(live, c)
    end
  end
  table.sort(live, function(a, b) return a.id < b.id end)
  if #live == 0 then
    return nil
  end
  for _, c in ipairs(live) do
    if busy(c) then
      return { state = 'loading', server = c.name }
    end
  end
  return { state = 'ready', server = table.concat(vim.tbl_map(function(c) return c.name end, live), ', ') }
end

-- Send the editor's state to the running agent-lsp server when it differs from what it was last told.
function M.tell()
  local client = require('agent_lsp.client')
  local c = client.get()
  local now = M.editor_state()
  if not (c and now) then
    return
  end
  local key = now.state .. '\0' .. now.server
  if key ~= sent then
    sent = key
    client.notify(c, 'agent/languageStatus', now)
  end
end

-- A (re)started agent-lsp server knows nothing yet: tell it what the editor knows.
function M.connected()
  sent = nil
  M.tell()
end

-- The agent-lsp server exited: its last answer's index line is no longer shown.
function M.disconnected()
  sent = nil
  if M.index then
    M.index = nil
    vim.cmd('doautocmd <nomodeline> User AgentLspIndex')
  end
end

-- A language server's progress, as the event says (0.10+: LspProgress with the client and the params).
local function on_progress(client_id)
  local c = vim.lsp.get_client_by_id(client_id)
  if c and c.name ~= OWN then
    reported[c.id] = c.name
  end
  M.tell()
end

-- 0.7-0.9: `User LspProgressUpdate` says nothing of which client: every client with progress has reported.
local function on_progress_update()
  for _, c in ipairs(language.all_clients()) do
    if c.name ~= OWN then
      for _, p in pairs(c.messages and c.messages.progress or {}) do
        if type(p) == 'table' and p.title then
          reported[c.id] = c.name
        end
      end
    end
  end
  M.tell()
end

function M.setup(group)
  if vim.fn.exists('##LspProgress') == 1 then
    vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = function(ev)
      on_progress(type(ev.data) == 'table' and ev.data.client_id)
    end })
  else
    vim.api.nvim_create_autocmd('User', { group = group, pattern = 'LspProgressUpdate', callback = on_progress_update })
  end
  if vim.fn.exists('##LspDetach') == 1 then  -- a language server that stops ends its progress
    vim.api.nvim_create_autocmd('LspDetach', { group = group, callback = function()
      vim.schedule(M.tell)
    end })
  end
end

-- The `index:` line ending a language answer ("index: loading — `pyright` reports work under way"), parsed.
function M.parse(output)
  local last = tostring(output or ''):gsub('%s+$', ''):match('[^\n]*$')
  local state, why = last:match('^index: (%a+) — (.+)$')
  return state and STATES[state] and { state = state, why = why } or nil
end

-- An agent/update: a completed language answer says how much the index of agent-lsp's language server knew.
function M.observe(update)
  if type(update) ~= 'table' or update.kind ~= 'tool_call_update' or update.status ~= 'completed' then
    return
  end
  local index = M.parse(type(update.output) == 'string' and update.output or nil)
  if index and not (M.index and M.index.state == index.state and M.index.why == index.why) then
    M.index = index
    vim.cmd('doautocmd <nomodeline> User AgentLspIndex')
  end
end

-- For a statusline: "index: loading" once a language answer said so; '' before.
function M.statusline()
  return M.index and ('index: ' .. M.index.state) or ''
end

return M
