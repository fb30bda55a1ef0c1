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
local FOLD = { thinking = 'start' }  -- thinking is folded away once the answer starts; the answer is not

-- Folds are manual, made once a block is complete (thinking when the answer starts; a tool call and its diff
-- when the next line comes), in every window showing the chat: a fold expression is not recomputed reliably
-- when a buffer grows at its end while shown.
function _G.agent_lsp_foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format('%s  [+%d lines]', first, vim.v.foldend - vim.v.foldstart)
end

local function make_fold(win, block)
  api.nvim_win_call(win, function()
    vim.cmd(string.format('%d,%dfold', block[1] + 1, block[2] + 1))
  end)
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
  -- blocks: the folded {first, last} rows; block: the first row of the block being written, if any.
  return setmetatable({ buf = buf, empty = true, tail = nil, blocks = {}, block = nil }, View)
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
    make_fold(win, block)
  end
end

-- End the block being written at `last` (a row): a block of two lines or more becomes a fold.
function View:end_block(last)
  local first = self.block
  self.block = nil
  last = last or self:last_row()
  if first and last > first then
    table.insert(self.blocks, { first, last })
    for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
      make_fold(win, self.blocks[#self.blocks])
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
  local first = self.empty and 0 or api.nvim_buf_line_count(self.buf)
  if fold ~= 'in' and self.block then
    self:end_block(first - 1)
  end
  if fold == 'start' then
    self.block = first
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
