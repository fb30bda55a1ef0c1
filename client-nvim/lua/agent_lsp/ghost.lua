-- The plugin's own ghost text, for Neovim 0.7-0.11 (0.12 has vim.lsp.inline_completion): in Insert mode, after
-- a pause, it asks agent-lsp for textDocument/inlineCompletion (a newer request cancels the older), shows the
-- first item as extmarks, keeps it while the user types what it offers, accepts it whole or a word at a time,
-- cycles the items, dismisses it; an answer that no longer fits the buffer is never shown.
local config = require('agent_lsp.config')
local client = require('agent_lsp.client')
local positions = require('agent_lsp.positions')

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace('agent_lsp_suggestion')
-- Ghost text must never look like text: the link is made again after a colorscheme clears the highlights.
local function link()
  vim.cmd('highlight default link AgentLspSuggestion Comment')
end
link()
api.nvim_create_autocmd('ColorScheme', { group = api.nvim_create_augroup('agent_lsp_ghost', { clear = true }),
  callback = link })

local INLINE = vim.fn.has('nvim-0.10') == 1  -- virt_text_pos = 'inline' (older: 'overlay')
local INVOKED, AUTOMATIC = 1, 2  -- InlineCompletionTriggerKind

local paced = require('agent_lsp.paced').new()  -- the request in flight: {id, client, buf, tick, row, col, line}
local shown = nil     -- what is on screen: {buf, entries, index, announced = {[entry] = true}}

-- A suggestion, as shown and applied. Applying it replaces bytes [start, stop) of row `row` (as the line read
-- `line` when the cursor was at byte `anchor`) with `text` (split into `lines`); typing what it offers shifts the
-- replaced range by what was typed. `item` is the server's item, `done` the part of its insertText already in
-- the buffer before `text` (after a word was accepted onto a new line).

-- The agent-lsp client when it serves `buf`.
local function agent_client(buf)
  local c = client.get()
  if c and vim.lsp.buf_is_attached(buf, c.id) then
    return c
  end
end

local function cursor()
  local pos = api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function line_at(buf, row)
  return api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
end

local function changed_event()
  -- For statuslines: what is on screen changed (M.current() says what it is now).
  vim.cmd('doautocmd <nomodeline> User AgentLspSuggestion')
end

local function split(text)
  return vim.split(text, '\r?\n')
end

-- Whether `s` still fits the buffer with the cursor at (row, col): only what it offers was typed since it was
-- asked for, and something of it is left.
local function fits(s, line, row, col)
  if row ~= s.row or col < s.anchor then
    return false
  end
  local typed = col - s.start  -- bytes of the suggestion's first line that are in the buffer
  return typed <= #s.lines[1]
    and (#s.lines > 1 or typed < #s.lines[1])
    and line:sub(1, s.start) == s.line:sub(1, s.start)
    and line:sub(s.start + 1, col) == s.lines[1]:sub(1, typed)
    and line:sub(col + 1) == s.line:sub(s.anchor + 1)
end

-- The suggestion on screen when it still fits the cursor's buffer and position; else nil.
local function fitting()
  if not shown or shown.buf ~= api.nvim_get_current_buf() then
    return nil
  end
  local s = shown.entries[shown.index]
  local row, col = cursor()
  if fits(s, line_at(shown.buf, row), row, col) then
    return s
  end
end

local function clear()
  if shown then
    if api.nvim_buf_is_valid(shown.buf) then
      api.nvim_buf_clear_namespace(shown.buf, M.ns, 0, -1)
    end
    shown = nil
    changed_event()
  end
end

local function display(text)
  return (text:gsub('\t', string.rep(' ', vim.bo.tabstop)))
end

-- Draw `s` for the cursor at byte `col` of `line`: the rest of its first line after the cursor, its other lines
-- as virtual lines under it; the text the user sees after the cursor is what the line will read once accepted.
local function draw(buf, s, line, col)
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local hl = 'AgentLspSuggestion'
  local first = display(s.lines[1]:sub(col - s.start + 1))
  local after = line:sub(col + 1)        -- on screen after the cursor
  local tail = s.line:sub(s.stop + 1)    -- what follows the replaced text: after the last line once accepted
  local multi = #s.lines > 1
  local shows = multi and '' or tail     -- what the cursor's line shows after the suggestion's text
  local opts = { hl_mode = 'combine' }
  if first ~= '' or after ~= shows then
    if INLINE and after == shows then  -- only an insertion: the text after the cursor moves right
      opts.virt_text, opts.virt_text_pos = { { first, hl } }, 'inline'
    else  -- the line as it will read, over what is there (padded to hide what the suggestion replaces)
      local chunks = { { first, hl } }
      if shows ~= '' then
        table.insert(chunks, { display(shows) })
      end
      local pad = vim.fn.strdisplaywidth(display(after)) - vim.fn.strdisplaywidth(first .. display(shows))
      if pad > 0 then
        table.insert(chunks, { string.rep(' ', pad) })
      end
      opts.virt_text, opts.virt_text_pos = chunks, 'overlay'
    end
  end
  if multi then
    opts.virt_lines = {}
    for i = 2, #s.lines do
      local chunks = { { display(s.lines[i]), hl } }
      if i == #s.lines and tail ~= '' then
        table.insert(chunks, { display(tail) })
      end
      table.insert(opts.virt_lines, chunks)
    end
  end
  api.nvim_buf_set_extmark(buf, M.ns, s.row, col, opts)
end

local function redraw()
  local s = fitting()
  if not s then
    return clear()
  end
  local row, col = cursor()
  draw(shown.buf, s, line_at(shown.buf, row), col)
  if not shown.announced[s] then  -- textDocument/didShowCompletion, once per item shown
    shown.announced[s] = true
    client.notify(s.client, 'textDocument/didShowCompletion', { item = s.item })
  end
  changed_event()
end

-- The item as a suggestion at the request's position; nil when it is not one this plugin can apply (a snippet,
-- a range off the cursor's line or not around the cursor, or text before the cursor it would re-type wrongly).
local function entry(item, req)
  if type(item) ~= 'table' or type(item.insertText) ~= 'string' or item.insertText == '' then
    return nil
  end
  local start, stop = req.col, req.col
  local range = item.range
  if type(range) == 'table' then
    if type(range.start) ~= 'table' or type(range['end']) ~= 'table' or range.start.line ~= req.row
      or range['end'].line ~= req.row then
      return nil
    end
    local encoding = req.client.offset_encoding or 'utf-16'
    start = positions.to_bytes(req.line, range.start.character, encoding)
    stop = positions.to_bytes(req.line, range['end'].character, encoding)
    if start > req.col or stop < req.col then
      return nil
    end
  end
  local retyped = req.line:sub(start + 1, req.col)
  if item.insertText:sub(1, #retyped) ~= retyped then
    return nil
  end
  return { item = item, text = item.insertText, lines = split(item.insertText), row = req.row, start = start,
           stop = stop, anchor = req.col, line = req.line, client = req.client, done = '' }
end

local function answered(req, err, result, after)
  if not paced:answered(req) then  -- a newer request, or leaving Insert mode, dropped it
    return
  end
  if err or type(result) ~= 'table' or api.nvim_get_current_buf() ~= req.buf
    or not api.nvim_get_mode().mode:find('^i') then
    return
  end
  local entries = {}
  for _, item in ipairs(result.items or result) do
    local e = entry(item, req)
    if e then
      table.insert(entries, e)
    end
  end
  -- Typed or moved on meanwhile: only the suggestions that agree with what was typed (the rest is stale).
  local row, col = cursor()
  local line = line_at(req.buf, row)
  entries = vim.tbl_filter(function(e) return fits(e, line, row, col) end, entries)
  if #entries == 0 then
    if api.nvim_buf_get_changedtick(req.buf) == req.tick and row == req.row and col == req.col then
      clear()  -- nothing to suggest here
    end
    return  -- else the next request answers for the text as it is now
  end
  local index = 1
  if after and #entries > 1 and entries[1].text == after then  -- `next` asked again: go past the one shown
    index = 2
  end
  api.nvim_buf_clear_namespace(req.buf, M.ns, 0, -1)
  shown = { buf = req.buf, entries = entries, index = index, announced = {} }
  redraw()
end

-- Ask for the suggestions at the cursor of `buf` (the current buffer). `after`: the text of the suggestion shown
-- when `next` asked, to show another one.
local function request(buf, kind, after)
  local c = agent_client(buf)
  if not c then
    return false
  end
  paced:cancel()
  local row, col = cursor()
  local line = line_at(buf, row)
  local req = { client = c, buf = buf, tick = api.nvim_buf_get_changedtick(buf), row = row, col = col, line = line }
  local version = vim.lsp.util.buf_versions[buf]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf), version = type(version) == 'number' and version or nil },
    position = { line = row, character = positions.from_bytes(line, col, c.offset_encoding or 'utf-16') },
    context = { triggerKind = kind },
  }
  req.id = client.request(c, 'textDocument/inlineCompletion', params, function(err, result)
    answered(req, err, result, after)
  end, buf)
  paced.pending = req.id and req or nil
  return true
end

-- Something changed in Insert mode (typed, moved, entered): keep the suggestion if the user typed what it
-- offers, else clear it; ask again after the pause.
function M.changed(buf)
  if not config.suggestions_enabled() or not agent_client(buf) then
    return
  end
  if shown then
    redraw()
  end
  paced:after(config.options.suggestions.debounce_ms, function()
    if api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode:find('^i') then
      request(buf, AUTOMATIC)
    end
  end)
end

-- Leaving Insert mode, the buffer or the window: nothing shown, nothing asked.
function M.reset()
  paced:stop()
  paced:cancel()
  clear()
end

-- The suggestion shown and fitting the cursor, as {text (what accepting inserts from the cursor), item}; or nil.
function M.current()
  local s = fitting()
  if s then
    local _, col = cursor()
    return { text = s.text:sub(col - s.start + 1), item = s.item }
  end
end

local function run_command(s)
  local command = s.item.command
  if type(command) == 'table' and command.command then
    client.request(s.client, 'workspace/executeCommand', { command = command.command, arguments = command.arguments },
      function() end)
  end
end

-- Accept the suggestion: its range replaced by its text, the cursor after it, then its command.
function M.accept()
  local s = fitting()
  if not s or vim.fn.pumvisible() == 1 then
    return false
  end
  local buf = shown.buf
  local _, col = cursor()
  api.nvim_buf_set_text(buf, s.row, s.start, s.row, s.stop + col - s.anchor, s.lines)
  api.nvim_win_set_cursor(0, { s.row + #s.lines, (#s.lines == 1 and s.start or 0) + #s.lines[#s.lines] })
  clear()
  run_command(s)
  return true
end

-- Accept the suggestion's next word (textDocument/didPartiallyAcceptCompletion); the rest stays shown.
function M.accept_word()
  local s = fitting()
  if not s then
    return false
  end
  local buf = shown.buf
  local row, col = cursor()
  local typed = col - s.start
  local rest = s.text:sub(typed + 1)
  local word = positions.next_word(rest)
  local words = split(word)
  api.nvim_buf_set_text(buf, row, col, row, col, words)
  local new_row, new_col = row + #words - 1, (#words == 1 and col or 0) + #words[#words]
  api.nvim_win_set_cursor(0, { new_row + 1, new_col })
  local accepted = s.done .. s.text:sub(1, typed + #word)
  client.notify(s.client, 'textDocument/didPartiallyAcceptCompletion',
    { item = s.item, acceptedLength = positions.from_bytes(accepted, #accepted, 'utf-16') })
  if #word == #rest then  -- the last word: the whole suggestion is in
    clear()
    run_command(s)
  elseif #words > 1 then  -- onto a new line: the rest is a suggestion at the new cursor
    local left = rest:sub(#word + 1)
    local moved = vim.tbl_extend('force', s, { text = left, lines = split(left), row = new_row, start = new_col,
      anchor = new_col, stop = new_col + s.stop - s.anchor, line = line_at(buf, new_row), done = accepted })
    shown.entries, shown.index = { moved }, 1
    shown.announced[moved] = true
    redraw()
  else
    redraw()
  end
  return true
end

-- Show the next (step 1) or previous (-1) suggestion of those that fit; with one, ask for more (Invoked); with
-- none shown, ask now.
function M.next(step)
  local buf = api.nvim_get_current_buf()
  local s = fitting()
  if not s then
    if not config.suggestions_enabled() then
      return false
    end
    paced:stop()
    return request(buf, INVOKED)
  end
  local row, col = cursor()
  local line = line_at(buf, row)
  local n = #shown.entries
  for i = 1, n - 1 do
    local index = (shown.index - 1 + i * step) % n + 1
    if fits(shown.entries[index], line, row, col) then
      shown.index = index
      redraw()
      return true
    end
  end
  paced:stop()
  return request(buf, INVOKED, s.text)
end

-- Dismiss the suggestion shown (and what was being asked).
function M.dismiss()
  if not fitting() then
    return false
  end
  M.reset()
  return true
end

return M
