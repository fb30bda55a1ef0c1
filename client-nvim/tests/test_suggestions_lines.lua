-- A suggestion of several lines, from a scripted model: its first line shows after the cursor and the others as
-- virtual lines under it; <Tab> puts them all in the buffer, the cursor after the last. A slow answer overtaken by
-- moving on is never drawn (the plugin cancels it when it asks again, the server closes it) and the next answer
-- is. Every extmark drawn is recorded, so a stale suggestion shown for a moment would be seen. Neovim 0.12 draws
-- through its own vim.lsp.inline_completion.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local NATIVE = vim.lsp.inline_completion ~= nil
local ns = NATIVE and vim.api.nvim_create_namespace('nvim.lsp.inline_completion')
  or vim.api.nvim_create_namespace('agent_lsp_suggestion')

local function text(reply, delay)
  return { content = { { type = 'text', text = reply } }, delay = delay }
end

-- Each suggestion drawn: {first line's ghost text, virtual lines}.
local drawn = {}
local set_extmark = vim.api.nvim_buf_set_extmark
vim.api.nvim_buf_set_extmark = function(buf, id, row, col, opts)
  if id == ns then
    local lines = {}
    for _, chunks in ipairs(opts.virt_lines or {}) do
      table.insert(lines, chunks[1][1])
    end
    table.insert(drawn, { (opts.virt_text or { { '' } })[1][1], lines })
  end
  return set_extmark(buf, id, row, col, opts)
end

-- The requests the plugin cancelled ($/cancelRequest), 0.7-0.11.
local cancelled = {}

local function spy_cancel()
  local client = require('agent_lsp.client')
  local cancel = client.cancel
  client.cancel = function(c, id)
    table.insert(cancelled, id)
    return cancel(c, id)
  end
end

local function stats()
  local client = require('agent_lsp.client')
  return client.request_sync(client.get(), 'agent/completionStats', vim.empty_dict(), 5000)
end

local function lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

H.run_typing('a suggestion of several lines; a slow answer overtaken is never shown', function()
  H.workspace({ ['a.py'] = 'def total(items):\n' })
  vim.o.showmode = false
  spy_cancel()
  local script = H.dir .. '/.completions.json'
  vim.fn.writefile({ vim.fn.json_encode({
    text('s = 0\n    for i in items:\n        s += i\n    return s'),
    text(''),                         -- asked again after the accept: nothing
    text("print('STALE')", 30),       -- slow: overtaken
    text('  # the sum'),
  }) }, script)
  H.setup({ settings = { model = 'demo', completions = { model = 'script:' .. script } } })
  vim.cmd('edit a.py')
  local ready = false
  require('agent_lsp.client').when_ready(function() ready = true end)
  H.await(function() return ready end, 'the server')

  H.type('o    ')
  H.await(function() return #drawn > 0 end, 'the suggestion')
  H.eq({ { 's = 0', { '    for i in items:', '        s += i', '    return s' } } }, drawn,
    'the first line after the cursor, the others under it')
  local mark = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })[1]
  H.eq({ 1, 4 }, { mark[2], mark[3] }, 'drawn at the cursor')
  H.type('<Tab>')
  H.await(function() return #lines() == 5 end, 'the lines accepted')
  H.eq({ 'def total(items):', '    s = 0', '    for i in items:', '        s += i', '    return s' }, lines(),
    'a.py after the accept')
  H.eq({ 5, 12 }, vim.api.nvim_win_get_cursor(0), 'the cursor after the last line')
  H.await(function() return stats().modelCalls == 2 end, 'the request after the accept')

  -- A new line (indented as the last: 'autoindent'): the model is slow; going back to the start of the line
  -- before it answers asks again there, and only that answer shows.
  H.type('<CR>')
  H.await(function() return stats().modelCalls == 3 end, 'the slow request')
  H.eq({ 6, 4 }, vim.api.nvim_win_get_cursor(0), 'the cursor on the new line')
  H.type('<BS>')
  H.await(function() return #drawn == 2 end, 'the answer after going back')
  H.eq({ '  # the sum', {} }, drawn[2], 'the answer drawn after going back (and nothing in between)')
  mark = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })[1]
  H.eq({ 5, 0 }, { mark[2], mark[3] }, 'drawn at the cursor')
  H.eq({ 6, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor')
  local s = stats()
  H.eq({ 4, 1 }, { s.modelCalls, s.cancelled }, 'model calls; the slow request superseded')
  H.eq(NATIVE and 0 or 1, #cancelled, 'requests the plugin cancelled (0.12 sends no $/cancelRequest while typing)')
  H.type('<Esc>')
  H.await(function() return vim.api.nvim_get_mode().mode == 'n' end, 'Normal mode')
  H.eq(0, #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}), 'nothing drawn in Normal mode')
end)
