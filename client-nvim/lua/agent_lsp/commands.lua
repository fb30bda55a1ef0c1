-- Slash commands in the input area: the input buffer's 'omnifunc' (<C-x><C-o>) completes `/name` at the start of
-- the message from the server's agent/commands and its skills (agent/skills; a skill a command's name takes is
-- left out), and `@path` elsewhere (mentions.lua). A message starting with `/name args` is sent as typed: the
-- server runs the command, or else the skill.
local client = require('agent_lsp.client')
local mentions = require('agent_lsp.mentions')

local M = {}

M.TIMEOUT = 5000  -- ms: a completion menu waits for agent/commands at most this long

-- The answer's `key` list of one agent/* request, waited for; {} when it fails (the user is told why).
local function ask(c, method, key)
  local done, found = false, {}
  client.request(c, method, vim.empty_dict(), function(err, result)
    done = true
    if err then
      vim.notify('agent-lsp: ' .. method .. ' failed: ' .. err.message, vim.log.levels.WARN)
    elseif type(result) == 'table' and type(result[key]) == 'table' then
      found = result[key]
    end
  end)
  vim.wait(M.TIMEOUT, function() return done end, 10)
  return found
end

-- The server's commands ({name, description, argumentHint?, source}), then its skills ({name, description,
-- source, skill = true}) that no command's name takes, asked now and waited for (the server started first when
-- it is not running yet); {} when it cannot start or fails (the user is told why).
function M.list()
  if not client.get() and client.when_ready(function() end) then
    vim.wait(M.TIMEOUT, function() return client.get() ~= nil or not client.running() end, 10)
  end
  local c = client.get()
  if not c then
    if client.running() then  -- not failed (that was said already), only slow
      vim.notify('agent-lsp: the server is still starting; complete again in a moment', vim.log.levels.INFO)
    end
    return {}
  end
  local commands = ask(c, 'agent/commands', 'commands')
  if client.has('skills') then
    local taken = {}
    for _, command in ipairs(commands) do
      taken[command.name] = true
    end
    for _, skill in ipairs(ask(c, 'agent/skills', 'skills')) do
      if type(skill) == 'table' and not taken[skill.name] then
        table.insert(commands, vim.tbl_extend('force', skill, { skill = true }))
      end
    end
  end
  return commands
end

-- The `/word` the cursor is in: only at the very start of the message (the first line, first column).
local function slash_start()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local before = vim.api.nvim_get_current_line():sub(1, col)
  return row == 1 and before:match('^/%S*$') ~= nil
end

local function text(value)
  return type(value) == 'string' and value ~= '' and value or nil
end

-- 'omnifunc': `/name` items (names that start with the word first, then those that contain it), each with
-- its argument hint and description; else the @file completion.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    return slash_start() and 0 or mentions.omnifunc(1, base)
  end
  if base:sub(1, 1) ~= '/' then
    return mentions.omnifunc(0, base)
  end
  local word = base:sub(2)
  local first, then_ = {}, {}
  for _, command in ipairs(M.list()) do
    local name = text(command.name)
    if name then
      local hint = text(command.argumentHint)
      local source = text(command.source) or 'command'
      local item = { word = '/' .. name, abbr = '/' .. name .. (hint and ' ' .. hint or ''),
        menu = '[' .. (command.skill and source .. ' skill' or source) .. ']', info = text(command.description) or '' }
      if name:sub(1, #word) == word then
        table.insert(first, item)
      elseif name:find(word, 1, true) then
        table.insert(then_, item)
      end
    end
  end
  return vim.list_extend(first, then_)
end

M.OMNIFUNC = "v:lua.require'agent_lsp.commands'.omnifunc"

return M
