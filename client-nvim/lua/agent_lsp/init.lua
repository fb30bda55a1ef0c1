-- require('agent_lsp').setup(opts) and the commands' entry points (plugin/agent_lsp.lua defines the commands).
local config = require('agent_lsp.config')
local client = require('agent_lsp.client')
local chat = require('agent_lsp.chat')

local M = {}

M.modes = { 'default', 'acceptEdits', 'plan', 'bypassPermissions' }

local last_file  -- the file buffer the user was in last: the chat's activeUri

local function is_file(buf)
  return vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= ''
end

function M.setup(opts)
  config.set(opts)
  local group = vim.api.nvim_create_augroup('agent_lsp', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
    group = group,
    callback = function(args)
      if is_file(args.buf) then
        last_file = args.buf
        client.attach(args.buf)  -- only once the server runs; starting it attaches every loaded buffer
      end
    end,
  })
  require('agent_lsp.suggestions').setup(group)
  require('agent_lsp.next_edits').setup(group)
  require('agent_lsp.index_status').setup(group)
end

-- For a statusline: the index state of the agent's last language answer ("index: loading"), '' before one;
-- `User AgentLspIndex` fires when it changes.
function M.statusline()
  return require('agent_lsp.index_status').statusline()
end

-- What the editor shows, for the model: the active file, and the lines of a range given to :AgentChat.
function M.context(range)
  local current = vim.api.nvim_get_current_buf()
  local buf = is_file(current) and current or last_file
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return nil
  end
  local ctx = { activeUri = vim.uri_from_bufnr(buf) }
  if range and buf == current then
    ctx.selection = { start = { line = range[1] - 1, character = 0 }, ['end'] = { line = range[2], character = 0 } }
  end
  return ctx
end

-- :AgentChat[!] [message]: `!` starts a new session; no message puts the cursor in the input area.
function M.chat(message, new, range)
  local ctx = M.context(range)  -- before the chat window takes the focus
  local c = chat.open(new)
  if message ~= '' then
    c:send(message, ctx)
  end
  return c
end

function M.stop()
  chat.stop()
end

-- :AgentAttach {path}: an image for the next message of the current chat (one is opened when there is none).
function M.attach(path)
  if path == '' then
    return vim.notify('agent-lsp: :AgentAttach {path} (a png, jpg, gif or webp image)', vim.log.levels.ERROR)
  end
  local c = chat.current()
  if not c then
    c = chat.open()
  elseif not vim.api.nvim_buf_is_valid(c.input) then
    chat.show(c)  -- the user wiped the input area: a fresh one, where the image's line goes
  end
  return c:attach(path)
end

-- :AgentMode [mode]: the permission mode of the next chats; no argument picks one.
function M.mode(mode)
  local function set(m)
    chat.mode = m
    vim.notify('agent-lsp: permission mode ' .. m, vim.log.levels.INFO)
  end
  if mode == '' then
    return vim.ui.select(M.modes, { prompt = 'agent-lsp permission mode (now ' .. (chat.mode or 'the server\'s') .. ')' },
      function(m)
        if m then
          set(m)
        end
      end)
  end
  if not vim.tbl_contains(M.modes, mode) then
    return vim.notify('agent-lsp: unknown mode ' .. mode .. '; one of ' .. table.concat(M.modes, ', '),
      vim.log.levels.ERROR)
  end
  set(mode)
end

-- :AgentRevert [N]: undo the last chat's edits in the current chat's session, or those of every chat after
-- the first N.
function M.revert(arg)
  local c = chat.current()
  if not c then
    return vim.notify('agent-lsp: nothing to revert (no chat yet)', vim.log.levels.WARN)
  end
  local n = arg ~= '' and tonumber(arg) or nil
  if arg ~= '' and not (n and n >= 0 and n == math.floor(n)) then
    return vim.notify('agent-lsp: :AgentRevert takes a number of chats to keep, not ' .. arg, vim.log.levels.ERROR)
  end
  c:revert(n)
end

function M.sessions()
  require('agent_lsp.sessions').pick()
end

function M.model()
  require('agent_lsp.sessions').pick_model()
end

-- :AgentLog: the server's own log when the command gives --log-file, else Neovim's LSP log (where the
-- server's stderr goes).
function M.log_path()
  local cmd = config.options.cmd
  for i, arg in ipairs(cmd) do
    local inline = arg:match('^%-%-log%-file=(.+)$')
    if inline or (arg == '--log-file' and cmd[i + 1]) then
      return vim.fn.fnamemodify(inline or cmd[i + 1], ':p')
    end
  end
  return vim.lsp.get_log_path()
end

-- :AgentMemory: open the project memory where the server keeps it (its agent/memoryFile answer: AGENTS.md, whose
-- "## Memory" section `remember` appends to, or the private memory file, as the memoryFile setting in force
-- says); say where it is when there is nothing yet.
function M.memory()
  client.when_ready(function(c)
    client.request(c, 'agent/memoryFile', vim.empty_dict(), function(err, where)
      if err or type(where) ~= 'table' then
        return vim.notify('agent-lsp: agent/memoryFile failed: ' .. (err and err.message or 'no answer'),
          vim.log.levels.WARN)
      end
      if type(where.uri) ~= 'string' then
        return vim.notify('agent-lsp: this project has no memory file (no data directory)', vim.log.levels.INFO)
      end
      local path = vim.uri_to_fname(where.uri)
      if vim.fn.filereadable(path) == 0 then
        local what = where.private and 'the private memory file ' or ''
        vim.notify('agent-lsp: ' .. what .. vim.fn.fnamemodify(path, ':~:.') .. ' does not exist yet; '
          .. 'the agent\'s remember tool creates it', vim.log.levels.INFO)
        if where.private then
          return
        end
      end
      vim.cmd('split ' .. vim.fn.fnameescape(path))
    end)
  end)
end

function M.log()
  vim.cmd('botright split ' .. vim.fn.fnameescape(M.log_path()))
  vim.bo.autoread = true
  vim.cmd('normal! G')
end

-- The context for vim.lsp.buf.code_action() that carries every diagnostic of the cursor's line.
function M.code_action_context()
  return { diagnostics = require('agent_lsp.diagnostics').at_cursor(client.get()) }
end

-- :AgentFix: the server's "Fix with agent" code action on the cursor's diagnostic, run at once (Neovim 0.8+
-- picks it by its title; 0.7's vim.lsp.buf.code_action() has no filter, so it lists the actions to pick from).
function M.fix()
  local ctx = M.code_action_context()
  if #ctx.diagnostics == 0 then
    return vim.notify('agent-lsp: no diagnostic on this line', vim.log.levels.INFO)
  end
  local buf = vim.api.nvim_get_current_buf()
  client.when_ready(function()
    client.attach(buf)
    if vim.fn.has('nvim-0.8') == 1 then
      vim.lsp.buf.code_action({ context = ctx, apply = true, filter = function(action)
        return type(action.title) == 'string' and action.title:find('^Fix with agent') ~= nil
      end })
    else
      ctx.only = { 'quickfix' }
      vim.lsp.buf.code_action(ctx)
    end
  end)
end

function M.health()
  require('agent_lsp.checks').notify()
end

return M
