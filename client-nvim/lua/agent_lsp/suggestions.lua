-- Suggestions as you type (LSP 3.18 textDocument/inlineCompletion, PROTOCOL §10): on Neovim 0.12+ Neovim's own
-- vim.lsp.inline_completion, enabled for the agent-lsp client; on 0.7-0.11 the plugin's ghost text (ghost.lua).
-- Here: the Insert-mode keys on both, :AgentSuggestions, and starting the server at the first Insert mode.
local config = require('agent_lsp.config')
local client = require('agent_lsp.client')
local positions = require('agent_lsp.positions')

local api = vim.api
local M = {}

-- Neovim 0.12+ draws and accepts the suggestions itself.
M.native = vim.lsp.inline_completion ~= nil

M.unmapped = {}  -- {action = key}: keys left alone because something else maps them in Insert mode

local mapped = {}      -- keys this plugin mapped: {key = the mapping it replaced (maparg's dict; {} for none)}
local started = false  -- the first Insert mode started the server (once: a missing server is said once)

local function ghost()
  return require('agent_lsp.ghost')
end

-- Neovim 0.12's inline completion for agent-lsp in `buf`. With bufnr and client_id both given it touches no
-- other client: copilot's or another server's inline completion stays as the user set it. In the buffer being
-- typed in (the first Insert mode started the server), it asks at once, as after a cursor move.
local function enable_native(c, buf)
  vim.lsp.inline_completion.enable(true, { bufnr = buf, client_id = c.id })
  if buf == api.nvim_get_current_buf() and api.nvim_get_mode().mode:find('^i') then
    api.nvim_exec_autocmds('CursorMovedI', { buffer = buf, modeline = false })
  end
end

-- Called as the client attaches a buffer; the enable waits for the attach to finish (until then the client
-- does not list the buffer).
function M.on_attach(c, buf)
  if M.native and config.suggestions_enabled() then
    vim.schedule(function()
      if api.nvim_buf_is_valid(buf) then
        enable_native(c, buf)
      end
    end)
  end
end

-- ---- Neovim 0.12: the keys through vim.lsp.inline_completion ----------------------------------------------

local native_ns = M.native and api.nvim_create_namespace('nvim.lsp.inline_completion')

local function native_shown()
  return #api.nvim_buf_get_extmarks(0, native_ns, 0, -1, { limit = 1 }) > 0
end

-- Of agent-lsp's item (0.12's vim.lsp.inline_completion.Item): its text, and how many of its bytes are in the
-- buffer before the cursor. Neovim shows an item while the user types on, until the next answer comes, and
-- accepts it at the range it was asked for; with an empty range (where agent-lsp's items start at the cursor),
-- the bytes typed since must not be inserted again. nil: another server's item, or a snippet.
local function native_item(item)
  local c = client.get()
  if not c or item.client_id ~= c.id or type(item.insert_text) ~= 'string' then
    return nil
  end
  local text, typed = item.insert_text, 0
  if item.range then
    local row, col, end_row, end_col = item.range:to_extmark()
    local pos = api.nvim_win_get_cursor(0)
    if row == end_row and col == end_col and pos[1] - 1 == row and pos[2] > col then
      local line = api.nvim_get_current_line()
      if text:sub(1, pos[2] - col) == line:sub(col + 1, pos[2]) then
        typed = pos[2] - col
      end
    end
  end
  return c, text, typed
end

-- 0.12's accept, given as on_accept: the item, less what was typed of it since it was asked for.
local function native_accept(item)
  local c, text, typed = native_item(item)
  if not c or typed == 0 then
    return item
  end
  return { client_id = item.client_id, insert_text = text:sub(typed + 1), command = item.command }  -- at the cursor
end

-- The same, for the next word only: inserted at the cursor, said with didPartiallyAcceptCompletion (no command).
local function native_accept_word(item)
  local c, text, typed = native_item(item)
  if not c then
    return item
  end
  local word = positions.next_word(text:sub(typed + 1))
  local accepted = text:sub(1, typed + #word)
  client.notify(c, 'textDocument/didPartiallyAcceptCompletion', {
    item = { insertText = text, command = item.command },
    acceptedLength = positions.from_bytes(accepted, #accepted, 'utf-16'),
  })
  return { client_id = item.client_id, insert_text = word }
end

local native_actions = {
  accept = function()
    return vim.fn.pumvisible() == 0 and vim.lsp.inline_completion.get({ on_accept = native_accept })
  end,
  accept_word = function()
    return vim.lsp.inline_completion.get({ on_accept = native_accept_word })
  end,
  next = function()
    if not native_shown() then
      return false
    end
    vim.lsp.inline_completion.select({ count = 1 })
    return true
  end,
  prev = function()
    if not native_shown() then
      return false
    end
    vim.lsp.inline_completion.select({ count = -1 })
    return true
  end,
  dismiss = function()
    return vim.lsp.inline_completion.get({ on_accept = function() return nil end })
  end,
}

local ghost_actions = {
  accept = function() return ghost().accept() end,
  accept_word = function() return ghost().accept_word() end,
  next = function() return ghost().next(1) end,
  prev = function() return ghost().next(-1) end,
  dismiss = function() return ghost().dismiss() end,
}

-- ---- what the keys (and a user's own mappings) call --------------------------------------------------------

-- Each returns true when it did something, false when there was nothing to do (the key then does what it does
-- otherwise), so a mapping of your own can fall back: `if not require('agent_lsp.suggestions').accept() then …`.
local function action(name)
  return function()
    return (M.native and native_actions or ghost_actions)[name]() and true or false
  end
end

M.accept = action('accept')            -- the whole suggestion (not while the completion menu is visible)
M.accept_word = action('accept_word')  -- its next word
M.next = action('next')                -- the next one (0.7-0.11: with none shown, ask now)
M.prev = action('prev')
M.dismiss = action('dismiss')

local DESC = {
  accept = 'agent-lsp: accept the suggestion',
  accept_word = 'agent-lsp: accept the next word of the suggestion',
  next = 'agent-lsp: next suggestion',
  prev = 'agent-lsp: previous suggestion',
  dismiss = 'agent-lsp: dismiss the suggestion',
}

-- Neovim's own Insert-mode mappings (0.11+: <Tab> and <S-Tab> jump in a snippet): the plugin's key runs them
-- when there is no suggestion.
local function neovims_own(map)
  return type(map.desc) == 'string' and map.desc:find('^vim%.snippet%.jump') ~= nil and map.callback ~= nil
end

-- What `key` does without a suggestion: Neovim's own mapping `before` (an expr callback), else the key itself.
local function otherwise(key, before)
  local keys = key
  if before.callback then
    keys = before.callback()
    if before.expr ~= 1 or type(keys) ~= 'string' then
      return
    end
  end
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), 'ni', false)
end

local function map_keys()
  for key, before in pairs(mapped) do  -- setup() again: the keys as they were
    pcall(vim.keymap.del, 'i', key)
    if before.callback then
      vim.keymap.set('i', key, before.callback, { expr = before.expr == 1, silent = before.silent == 1,
        desc = before.desc })
    end
  end
  mapped, M.unmapped = {}, {}
  for name, key in pairs(config.options.suggestions.keys or {}) do
    if DESC[name] and type(key) == 'string' and key ~= '' then
      local before = vim.fn.maparg(key, 'i', false, true)
      if next(before) and not neovims_own(before) then
        M.unmapped[name] = key  -- someone else's: left alone (:checkhealth agent_lsp says so)
      else
        local run = M[name]
        vim.keymap.set('i', key, function()
          if not run() then
            otherwise(key, before)
          end
        end, { desc = DESC[name] })
        mapped[key] = before
      end
    end
  end
end

-- ---- starting, switching -----------------------------------------------------------------------------------

-- The first Insert mode in a workspace file starts the server (when suggestions are on); later ones find it.
local function insert_enter(buf)
  if started or client.running() or not config.suggestions_enabled() or not client.in_workspace(buf) then
    return
  end
  started = true
  client.when_ready(function()
    if not M.native and api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode:find('^i') then
      ghost().changed(buf)
    end
  end)
end

function M.setup(group)
  map_keys()
  vim.api.nvim_create_autocmd('InsertEnter', {
    group = group,
    callback = function(args)
      insert_enter(args.buf)
    end,
  })
  if M.native then
    return
  end
  vim.api.nvim_create_autocmd({ 'InsertEnter', 'CursorMovedI', 'TextChangedI', 'TextChangedP' }, {
    group = group,
    callback = function(args)
      ghost().changed(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave', 'WinLeave' }, {
    group = group,
    callback = function()
      ghost().reset()
    end,
  })
end

-- :AgentSuggestions [on|off]: the server's completions.enabled, for this Neovim (no argument: switch it).
-- The running server is told at once (workspace/didChangeConfiguration).
function M.switch(arg)
  local on = config.switch('completions', arg, ':AgentSuggestions')
  if on == nil then
    return
  end
  client.push_settings()
  local c = client.get()
  if M.native and on and c then
    for _, buf in ipairs(api.nvim_list_bufs()) do
      if vim.lsp.buf_is_attached(buf, c.id) then
        enable_native(c, buf)
      end
    end
  elseif not M.native and not on then
    ghost().reset()
  end
  vim.notify('agent-lsp: suggestions ' .. (on and 'on' or 'off'), vim.log.levels.INFO)
end

return M
