-- @file mentions in the input area: completion of workspace files (open buffers first) with the input buffer's
-- 'omnifunc' (<C-x><C-o> after `@`), and the `context.mentions` entries a message's @path words become.
local client = require('agent_lsp.client')

local M = {}

local function root()
  return client.root_dir() or vim.loop.cwd()
end

local function relative(path, dir)
  return path:sub(1, #dir + 1) == dir .. '/' and path:sub(#dir + 2) or nil
end

-- Workspace files relative to the root: open buffers first, then what git lists (tracked and not ignored), or
-- every file under the root outside git.
function M.files()
  local dir = root()
  local seen, files = {}, {}
  local function add(path)
    if path and path ~= '' and not seen[path] then
      seen[path] = true
      table.insert(files, path)
    end
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      add(relative(vim.api.nvim_buf_get_name(buf), dir))
    end
  end
  local listed = vim.fn.systemlist({ 'git', '-C', dir, 'ls-files', '--cached', '--others', '--exclude-standard' })
  if vim.v.shell_error ~= 0 then
    listed = {}
    for _, path in ipairs(vim.fn.globpath(dir, '**/*', false, true)) do
      if vim.fn.isdirectory(path) == 0 then
        table.insert(listed, relative(path, dir))
      end
    end
    table.sort(listed)
  end
  for _, path in ipairs(listed) do
    add(path)
  end
  return files
end

-- 'omnifunc': completes the `@word` before the cursor with `@path` items (paths that start with the word first,
-- then those that contain it).
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
    local at = line:match('()@%S*$')
    return at and at - 1 or -3  -- -3: no completion, leave the menu closed
  end
  local word = base:sub(2)
  local first, then_ = {}, {}
  for _, path in ipairs(M.files()) do
    local item = { word = '@' .. path, menu = '[file]' }
    if path:sub(1, #word) == word then
      table.insert(first, item)
    elseif path:find(word, 1, true) then
      table.insert(then_, item)
    end
  end
  return vim.list_extend(first, then_)
end

M.OMNIFUNC = "v:lua.require'agent_lsp.mentions'.omnifunc"

-- The `context.mentions` of a message: one {kind = 'file', uri} per @path word naming a file of the workspace.
function M.extract(message)
  local dir = root()
  local mentions, seen = {}, {}
  for word in (' ' .. message):gmatch('%s@(%S+)') do
    word = word:gsub('[%.,;:!?%)]+$', '')  -- "see @a.py." ends a sentence
    local path = vim.fn.fnamemodify(dir .. '/' .. word, ':p')
    if not seen[path] and relative(path, dir) and vim.fn.filereadable(path) == 1 then
      seen[path] = true
      table.insert(mentions, { kind = 'file', uri = vim.uri_from_fname(path) })
    end
  end
  return mentions
end

return M
