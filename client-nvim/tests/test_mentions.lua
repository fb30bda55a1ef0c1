-- @file in the input area: its 'omnifunc' completes workspace files (open buffers first), and a message's @path
-- words go as context.mentions, which the server expands into the user message the model gets.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('@file completes workspace files and sends them as mentions', function()
  H.workspace({ ['a.py'] = 'x = 1\n', ['b.py'] = 'y = 2\n', ['sub/c.py'] = 'TOKEN = "c"\n' })
  H.fake_api({ { content = { { type = 'text', text = 'It defines TOKEN.' } } } })
  H.setup()
  vim.cmd('edit b.py')
  vim.cmd('AgentChat')
  local chat = require('agent_lsp.chat').current()
  H.eq(chat.input, vim.api.nvim_get_current_buf(), 'the cursor is in the input area')

  local function omni(findstart, base)  -- through the option, as <C-x><C-o> calls it
    return vim.api.nvim_eval(vim.bo.omnifunc .. '(' .. findstart .. ', ' .. vim.fn.string(base) .. ')')
  end
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'what is in @su' })
  vim.api.nvim_win_set_cursor(0, { 1, 14 })
  H.eq(11, omni(1, ''), 'the completion starts at the @')
  local words = function(items) return vim.tbl_map(function(i) return i.word end, items) end
  H.eq({ '@sub/c.py' }, words(omni(0, '@su')), 'files starting with the word')
  H.eq({ '@b.py', '@a.py', '@sub/c.py' }, words(omni(0, '@')), 'the open buffer first')
  H.eq({ '@sub/c.py' }, words(omni(0, '@c.p')), 'files containing the word')
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'no mention here' })
  vim.api.nvim_win_set_cursor(0, { 1, 15 })
  H.eq(-3, omni(1, ''), 'no @ before the cursor: no completion')

  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'what is in @sub/c.py? not @nothere.py' })
  H.keys('<CR>')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')
  local sent = vim.fn.json_encode(H.requests()[1].messages[1].content)
  H.truthy(sent:find('@file sub/c.py:', 1, true) and sent:find('TOKEN = \\"c\\"', 1, true),
    'the server expanded the mention: ' .. sent)
  H.truthy(not sent:find('@file nothere.py', 1, true), 'a word naming no file is not a mention')
end)
