-- The chat buffer as markdown text: appending lines, streaming text into the last line, lines that are
-- rewritten in place later (tool calls), and folds (thinking, a tool call's diff). Knows nothing about the
-- protocol.
local View = {}
View.__index = View

local api = vim.api
local marks = api.nvim_create_namespace('agent_lsp_marks')  -- where each rewritable line is
local hls = api.nvim_create_namespace('agent_lsp_hl')

-- `default` links: a colorscheme or the user can restyle them.
for group, target in pairs({
  AgentLspUser = 'Title',
  AgentLspThinking = 'Comment',
  AgentLspTool = 'Special',
  AgentLspToolDone = 'String',
  AgentLspToolFailed = 'WarningMsg',
  AgentLspNotice = 'WarningMsg',
  AgentLspEnd = 'NonText',
  AgentLspDiffAdd = 'DiffAdd',
  AgentLspDiffDelete = 'DiffDelete',
}) do
  vim.cmd(string.format('highlight default link %s %s', group, target))
end

-- Streamed kinds and the prefix of each of their lines: thinking is set apart as well as dimmed.
local PREFIX = { text = '', thinking = '│ ' }
local HL = { thinking = 'AgentLspThinking' }
local FOLD = { thinking = 'start' }  -- thinking is folded away; the answer is not

local views = {}  -- buffer -> View, for the fold expression

-- Folds come from `fold`, filled as lines are written: row (0-based) -> '>1' (a fold starts) or '1' (inside).
-- Rows never move: the chat only grows at its end, and rewrites lines in place.
function _G.agent_lsp_foldexpr(lnum)
  local view = views[api.nvim_get_current_buf()]
  return view and view.fold[lnum - 1] or '0'
end

function _G.agent_lsp_foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format('%s  [+%d lines]', first, vim.v.foldend - vim.v.foldstart)
end

function View.new(name)
  local buf = api.nvim_create_buf(true, true)  -- listed, scratch: nofile, no swap file
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].filetype = 'markdown'
  if vim.treesitter and vim.treesitter.start then  -- 0.9+: markdown's treesitter highlighting, when installed
    pcall(vim.treesitter.start, buf, 'markdown')
  end
  vim.bo[buf].modifiable = false  -- the chat is written by the plugin only
  local view = setmetatable({ buf = buf, empty = true, tail = nil, fold = {} }, View)
  views[buf] = view
  api.nvim_create_autocmd('BufWipeout', { buffer = buf, once = true, callback = function()
    views[buf] = nil
  end })
  return view
end

-- Window options of a window showing a chat: wrapped text, closed folds.
function View.setup_window(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak = true, true
  wo.foldmethod, wo.foldexpr = 'expr', 'v:lua.agent_lsp_foldexpr(v:lnum)'
  wo.foldtext, wo.foldlevel, wo.foldenable = 'v:lua.agent_lsp_foldtext()', 0, true
end

function View:valid()
  return api.nvim_buf_is_valid(self.buf)
end

function View:lines()
  return api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

-- Every write goes through here: it lifts 'modifiable' for the write, and keeps windows that were showing
-- the end of the chat following it.
function View:_write(fn)
  local last = api.nvim_buf_line_count(self.buf)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if api.nvim_win_get_cursor(win)[1] == last then
      table.insert(following, win)
    end
  end
  vim.bo[self.buf].modifiable = true
  fn()
  vim.bo[self.buf].modifiable = false
  local count = api.nvim_buf_line_count(self.buf)
  for _, win in ipairs(following) do
    api.nvim_win_set_cursor(win, { count, 0 })
  end
end

local function highlight(buf, group, first, last)
  if group then
    for row = first, last do
      api.nvim_buf_add_highlight(buf, hls, group, row, 0, -1)
    end
  end
end

-- The row of the last line.
function View:last_row()
  return api.nvim_buf_line_count(self.buf) - 1
end

-- Append whole lines; returns the row of the first one. `fold`: 'start' (the first line starts a fold, the
-- others are in it) or 'in' (all continue the fold above).
function View:append(lines, group, fold)
  local first = self.empty and 0 or api.nvim_buf_line_count(self.buf)
  for i = 1, #lines do
    self.fold[first + i - 1] = fold and ((fold == 'start' and i == 1) and '>1' or '1') or nil
  end
  self:_write(function()
    api.nvim_buf_set_lines(self.buf, first, self.empty and 1 or first, false, lines)
  end)
  self.empty, self.tail = false, nil
  highlight(self.buf, group, first, first + #lines - 1)
  return first
end

-- Append streamed text of a kind ('text' or 'thinking'): it continues the last line while the same kind goes
-- on, and starts a new line when the kind changes or something else was written in between.
function View:stream(kind, text)
  if self.tail ~= kind then
    self:append({ PREFIX[kind] }, HL[kind], FOLD[kind])
    self.tail = kind
  end
  local parts = vim.split(text, '\n', { plain = true })
  local row = api.nvim_buf_line_count(self.buf) - 1
  local col = #api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1]
  for i = 2, #parts do
    parts[i] = PREFIX[kind] .. parts[i]
    self.fold[row + i - 1] = FOLD[kind] and '1' or nil
  end
  -- Inserting at the end of the line keeps that line's highlight.
  self:_write(function()
    api.nvim_buf_set_text(self.buf, row, col, row, col, parts)
  end)
  highlight(self.buf, HL[kind], row + 1, row + #parts - 1)
end

-- Append a line that can be rewritten later with set(); returns its handle.
function View:append_marked(line, group, fold)
  local row = self:append({ line }, group, fold)
  return api.nvim_buf_set_extmark(self.buf, marks, row, 0, {})
end

function View:row(handle)
  return api.nvim_buf_get_extmark_by_id(self.buf, marks, handle, {})[1]
end

function View:set(handle, line, group)
  local row = self:row(handle)
  local old = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1]
  -- set_text, not set_lines: the mark at column 0 stays on this row.
  self:_write(function()
    api.nvim_buf_set_text(self.buf, row, 0, row, #old, { line })
  end)
  api.nvim_buf_clear_namespace(self.buf, hls, row, row + 1)
  highlight(self.buf, group, row, row)
end

return View
