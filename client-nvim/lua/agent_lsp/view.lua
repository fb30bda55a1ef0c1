-- The chat buffer as markdown text: a header at the top (the plan), appending lines, streaming text into the
-- last line, lines that are rewritten in place later (tool calls), lines inserted under an earlier one (a
-- subagent's calls under its task), and folds (thinking, a tool call's diff, a task's calls). Knows nothing
-- about the protocol.
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
  AgentLspPlan = 'Title',
  AgentLspPlanDone = 'Comment',
  AgentLspPlanActive = 'Special',
  AgentLspPlanPending = 'Normal',
}) do
  vim.cmd(string.format('highlight default link %s %s', group, target))
end

-- Streamed kinds and the prefix of each of their lines: thinking is set apart as well as dimmed.
local PREFIX = { text = '', thinking = '│ ' }
local HL = { thinking = 'AgentLspThinking' }
local FOLD = { thinking = 'start' }  -- thinking is folded away once the answer starts; the answer is not

-- Folds are manual, made once a block is complete (thinking when the answer starts; a tool call and its diff
-- when the next line comes; a task's calls as they come), in every window showing the chat: a fold
-- expression is not recomputed reliably when a buffer grows at its end while shown. A block is a pair of
-- extmarks, so that lines written above it (the plan, a task's calls) move it.
function _G.agent_lsp_foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format('%s  [+%d lines]', first, vim.v.foldend - vim.v.foldstart)
end

local function mark_row(buf, id)
  return api.nvim_buf_get_extmark_by_id(buf, marks, id, {})[1]
end

local function make_fold(win, buf, block)
  local first, last = mark_row(buf, block[1]), mark_row(buf, block[2])
  if first and last and last > first then
    api.nvim_win_call(win, function()
      vim.cmd(string.format('%d,%dfold', first + 1, last + 1))
    end)
  end
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
  -- blocks: the folded {first, last} marks; block: the mark of the first row of the block being written, if
  -- any; groups: key -> a block that grows (a task's calls); header: how many rows the header has.
  return setmetatable({ buf = buf, empty = true, tail = nil, blocks = {}, block = nil, groups = {}, header = 0 },
    View)
end

-- Set up a window that now shows the chat: wrapped text, the chat's folds (closed).
function View:setup_window(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak = true, true
  wo.foldmethod, wo.foldtext, wo.foldenable = 'manual', 'v:lua.agent_lsp_foldtext()', true
  api.nvim_win_call(win, function()
    vim.cmd('normal! zE')
  end)
  for _, block in ipairs(self.blocks) do
    make_fold(win, self.buf, block)
  end
end

-- Every window's folds again, after lines were written above some of them. Manual folds are not nested here
-- (a task's calls are one level), so making them all again, closed, is what the user saw.
function View:refold()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    self:setup_window(win)
  end
end

local function new_mark(buf, row)
  return api.nvim_buf_set_extmark(buf, marks, row, 0, {})
end

-- End the block being written at `last` (a row): a block of two lines or more becomes a fold.
function View:end_block(last)
  local first = self.block and mark_row(self.buf, self.block)
  self.block = nil
  last = last or self:last_row()
  if first and last > first then
    table.insert(self.blocks, { new_mark(self.buf, first), new_mark(self.buf, last) })
    for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
      make_fold(win, self.buf, self.blocks[#self.blocks])
    end
  end
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
  local first = self.empty and self.header or api.nvim_buf_line_count(self.buf)
  if fold ~= 'in' and self.block then
    self:end_block(first - 1)
  end
  self:_write(function()
    api.nvim_buf_set_lines(self.buf, first, self.empty and first + 1 or first, false, lines)
  end)
  if fold == 'start' then
    self.block = new_mark(self.buf, first)
  end
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
  return new_mark(self.buf, row)
end

function View:row(handle)
  return mark_row(self.buf, handle)
end

-- Insert a line under the group `key` (started at the line `handle` when new): after its last line, in its
-- fold. Returns the new line's handle.
function View:append_under(key, handle, line, group)
  local g = self.groups[key]
  if not g then
    if self.block and self:row(self.block) == self:row(handle) then
      self:end_block()  -- the block that the group's first line starts stops here: the group's fold is its own
    end
    g = { handle, handle }
    self.groups[key] = g
    table.insert(self.blocks, g)
  end
  local row = self:row(g[2]) + 1
  if row > self:last_row() then
    self.tail = nil  -- streamed text goes on in a new line, not in this one
  end
  self:_write(function()
    api.nvim_buf_set_lines(self.buf, row, row, false, { line })
  end)
  highlight(self.buf, group, row, row)
  g[2] = new_mark(self.buf, row)
  self:refold()
  return g[2]
end

-- The header: `lines` at the top of the buffer, in place of the previous header ({} removes it). The blocks
-- under it move with it.
function View:set_header(lines, groups)
  local old = self.header
  if #lines == old and vim.deep_equal(api.nvim_buf_get_lines(self.buf, 0, old, false), lines) then
    return
  end
  api.nvim_buf_clear_namespace(self.buf, hls, 0, old)
  self:_write(function()
    api.nvim_buf_set_lines(self.buf, 0, old, false, lines)
  end)
  self.header = #lines
  for i, group in ipairs(groups or {}) do
    highlight(self.buf, group, i - 1, i - 1)
  end
  if #lines ~= old then
    self:refold()
  end
end

-- The header's lines.
function View:header_lines()
  return api.nvim_buf_get_lines(self.buf, 0, self.header, false)
end

function View:set(handle, line, group)
  local row = self:row(handle)
  -- setbufline, not set_lines (the mark would leave the row) nor set_text (0.11 then drops the folds the row
  -- is in).
  self:_write(function()
    vim.fn.setbufline(self.buf, row + 1, line)
  end)
  api.nvim_buf_clear_namespace(self.buf, hls, row, row + 1)
  highlight(self.buf, group, row, row)
end

return View
