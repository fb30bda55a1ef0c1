-- The plugin's options: defaults merged with what setup() was given.
local M = {}

M.defaults = {
  -- The server command. A list, so paths with spaces need no quoting.
  cmd = { 'agent-lsp' },
  -- The `agentLsp` settings of the protocol (model, permissionMode, maxTurns, thinking, …). Sent both as
  -- initializationOptions and as the answer to workspace/configuration, so either way the server gets them.
  settings = {},
  -- Where the chat window opens: any command that makes a window ('botright vsplit', 'tabnew', …).
  split = 'botright vsplit',
  -- Height of the input area under the transcript.
  input_height = 5,
  -- How long the answer to the server's agent/languageFeature waits for your other language servers. nil:
  -- 80% of the server's own bound (settings.languageTimeout, 5 s by default), so the answers that came in time
  -- reach it before it gives up.
  language_timeout_ms = nil,
  -- Suggestions as you type (ghost text from the server's textDocument/inlineCompletion). Whether there are any
  -- is the server's setting `completions.enabled` (in `settings`, default true; :AgentSuggestions switches it);
  -- with it, the first Insert mode in a workspace file starts the server.
  suggestions = {
    -- 0.7-0.11: how long after the last keystroke or cursor move the plugin asks (Neovim 0.12's own: 200 ms).
    debounce_ms = 200,
    -- Insert-mode keys. false leaves one unmapped; a key already mapped in Insert mode is left alone (call
    -- require('agent_lsp.suggestions').accept() and the others from that mapping). Each does what the key does
    -- otherwise when there is no suggestion (accept also while the completion menu is visible).
    keys = {
      accept = '<Tab>',
      accept_word = '<M-Right>',
      next = '<M-]>',
      prev = '<M-[>',
      dismiss = '<C-]>',
    },
  },
  -- Next-edit suggestions (the server's textDocument/copilotInlineEdit): after a change, back in Normal mode, the
  -- edit that follows it (the other uses of a renamed name, …) shown beside the text. Whether there are any is the
  -- server's setting `nextEdits.enabled` (in `settings`, default true; :AgentNextEdits switches it).
  next_edits = {
    -- How long after the change (or leaving Insert mode) the plugin asks.
    debounce_ms = 300,
    -- Normal-mode keys. accept jumps to an edit away from the cursor, then applies it. false leaves one
    -- unmapped; a key already mapped in Normal mode is left alone (call require('agent_lsp.next_edits').accept()
    -- or .dismiss() from that mapping). Each does what the key does otherwise when no edit is shown.
    keys = {
      accept = '<Tab>',
      dismiss = '<Esc>',
    },
  },
}

M.options = vim.deepcopy(M.defaults)

-- The default command when `agent-lsp` is not on PATH but :AgentInstall installed it: the installed one.
function M.use_installed()
  if M.given_cmd or vim.fn.executable('agent-lsp') == 1 then
    return
  end
  local installed = require('agent_lsp.install').program()
  if installed then
    M.options.cmd = { installed }
  end
end

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  M.given_cmd = opts ~= nil and opts.cmd ~= nil
  M.use_installed()
end

-- The agent/languageFeature wait, in ms.
function M.language_timeout_ms()
  local seconds = tonumber(M.options.settings.languageTimeout) or 5
  return M.options.language_timeout_ms or math.floor(seconds * 800)
end

M.use_installed()

-- Whether suggestions are on: the server's `completions.enabled` as setup() or :AgentSuggestions set it.
function M.suggestions_enabled()
  local completions = M.options.settings.completions
  return not (type(completions) == 'table' and completions.enabled == false)
end

-- Whether next-edit suggestions are on: the server's `nextEdits.enabled` as setup() or :AgentNextEdits set it.
function M.next_edits_enabled()
  local next_edits = M.options.settings.nextEdits
  return not (type(next_edits) == 'table' and next_edits.enabled == false)
end

-- :AgentSuggestions / :AgentNextEdits [on|off]: the server's `<section>.enabled` set in the settings for this
-- Neovim (no argument: switched); returns it, or nil after saying that `arg` is not on or off.
function M.switch(section, arg, command)
  if arg ~= '' and arg ~= 'on' and arg ~= 'off' then
    vim.notify('agent-lsp: ' .. command .. ' takes on or off, not ' .. arg, vim.log.levels.ERROR)
    return nil
  end
  local settings = M.options.settings
  local now = type(settings[section]) == 'table' and settings[section] or {}
  local on = arg == 'on' or (arg == '' and now.enabled == false)
  settings[section] = vim.tbl_extend('force', now, { enabled = on })
  return on
end

-- The settings table as it must go on the wire: an empty Lua table would encode as a JSON array.
function M.wire_settings()
  if next(M.options.settings) == nil then
    return vim.empty_dict()
  end
  return M.options.settings
end

return M
