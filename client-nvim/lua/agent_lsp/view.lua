-- The chat buffer as text: appending lines, streaming text into the last line, and lines that are
-- rewritten in place later (tool calls). Knows nothing about the protocol.
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

function View.new(name)
  local buf = api.nvim_create_buf(true, true)  -- listed, scratch: nofile, no swap file
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].filetype = 'agent_lsp_chat'
  vim.bo[buf].modifiable = false  -- the chat is written by the plugin only
  return setmetatable({ buf = buf, empty = true, tail = nil }, View)
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

-- Append whole lines; returns the row of the first one.
function View:append(lines, group)
  local first = self.empty and 0 or api.nvim_buf_line_count(self.buf)
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
    self:append({ PREFIX[kind] }, HL[kind])
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
function View:append_marked(line, group)
  local row = self:append({ line }, group)
  return api.nvim_buf_set_extmark(self.buf, marks, row, 0, {})
end

function View:set(handle, line, group)
  local row = api.nvim_buf_get_extmark_by_id(self.buf, marks, handle, {})[1]
  local old = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1]
  -- set_text, not set_lines: the mark at column 0 stays on this row.
  self:_write(function()
    api.nvim_buf_set_text(self.buf, row, 0, row, #old, { line })
  end)
  api.nvim_buf_clear_namespace(self.buf, hls, row, row + 1)
  highlight(self.buf, group, row, row)
end

-- Show the buffer: focus a window of this tab that has it, else open one with `split` (an Ex command).
function View:show(split)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == self.buf then
      api.nvim_set_current_win(win)
      return
    end
  end
  vim.cmd(split)
  api.nvim_win_set_buf(0, self.buf)
  vim.wo.wrap, vim.wo.linebreak = true, true
  api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(self.buf), 0 })
end

return View
