-- Suggestions as you type, from the real server's demo model (the line typed so far completed as another line of
-- an open buffer continues), typed in Insert mode: after the pause the ghost text shows; <Tab> accepts it and its
-- command runs (agent.completionAccepted); <M-Right> accepts a word (didPartiallyAcceptCompletion) and the rest
-- stays; typing what it offers keeps it; <C-]> dismisses it, moving away and <Esc> clear it; <Tab> with no
-- suggestion is a Tab. The server counts what was shown and accepted. On 0.7-0.11 the plugin draws it (inline
-- on 0.10+, over the line before); on 0.12 the same keys go through Neovim's own vim.lsp.inline_completion, and
-- nothing of the plugin's draws.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local NATIVE = vim.lsp.inline_completion ~= nil
local ours = vim.api.nvim_create_namespace('agent_lsp_suggestion')
local native = vim.api.nvim_create_namespace('nvim.lsp.inline_completion')

-- The suggestion on screen, as the extmarks of `ns` draw it: the text after the cursor, and the virtual lines.
local function on_screen(ns)
  local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
  if #marks == 0 then
    return nil
  end
  local text = ''
  for _, chunk in ipairs(marks[1][4].virt_text or {}) do
    if chunk[2] == 'AgentLspSuggestion' or chunk[2] == 'ComplHint' then
      text = text .. chunk[1]
    end
  end
  return text
end

local function ghost()
  return on_screen(NATIVE and native or ours)
end

local function line(n)
  return vim.api.nvim_buf_get_lines(0, n - 1, n, false)[1]
end

local function stats()
  local client = require('agent_lsp.client')
  return client.request_sync(client.get(), 'agent/completionStats', vim.empty_dict(), 5000)
end

H.run_typing('suggestions as you type: show, accept, accept a word, type through, dismiss, leave', function()
  H.workspace({ ['a.py'] = 'import os\nprint(\'hello world\')\n' })
  vim.o.showmode = false
  H.setup({ settings = { model = 'demo' } })
  vim.cmd('edit a.py')
  H.eq('<Tab>', vim.fn.maparg('<Tab>', 'i', false, true).lhs, '<Tab> is mapped in Insert mode')

  -- The first Insert mode starts the server; the pause after typing asks for a suggestion.
  H.type('Gopri')
  H.await(function() return ghost() == "nt('hello world')" end, 'the ghost text')
  H.eq('pri', line(3), 'the buffer holds what was typed only')
  local marks = vim.api.nvim_buf_get_extmarks(0, NATIVE and native or ours, 0, -1, { details = true })
  H.eq({ 2, 3 }, { marks[1][2], marks[1][3] }, 'the ghost text is at the cursor')
  local pos = (NATIVE or vim.fn.has('nvim-0.10') == 1) and 'inline' or 'overlay'
  H.eq(pos, marks[1][4].virt_text_pos, 'how the ghost text is drawn')
  H.eq(0, #vim.api.nvim_buf_get_extmarks(0, NATIVE and ours or native, 0, -1, {}), 'the other drawer draws nothing')

  H.type('<Tab>')
  H.await(function() return line(3) == "print('hello world')" end, 'the accepted line')
  H.eq({ 3, #"print('hello world')" }, vim.api.nvim_win_get_cursor(0), 'the cursor after the accepted text')
  H.eq('i', vim.api.nvim_get_mode().mode, 'still in Insert mode')
  H.await(function() return stats().accepted == 1 end, 'the accepted command to reach the server')

  -- A word at a time; typing what it offers keeps the rest shown.
  H.type('<CR>pri')
  H.await(function() return ghost() == "nt('hello world')" end, 'the ghost text on line 4')
  H.type('<M-Right>')
  H.await(function() return line(4) == 'print' end, 'the first word accepted')
  H.await(function() return ghost() == "('hello world')" end, 'the rest of the suggestion')
  H.type('<M-Right>')
  H.await(function() return line(4) == "print('" end, 'the next word accepted')
  H.await(function() return ghost() == "hello world')" end, 'the rest after the second word')
  H.type('hel')
  H.await(function() return line(4) == "print('hel" end, 'typed through')
  H.await(function() return ghost() == "lo world')" end, 'what is left after typing through')
  H.type('<Tab>')
  H.await(function() return line(4) == "print('hello world')" end, 'the rest accepted')
  H.await(function()
    local s = stats()
    return s.partiallyAccepted == 2 and s.accepted == 2
  end, 'two partial acceptances and the second acceptance counted')

  -- <C-]> dismisses; the buffer keeps what was typed.
  H.type('<CR>pri')
  H.await(function() return ghost() == "nt('hello world')" end, 'the ghost text on line 5')
  H.type('<C-]>')
  H.await(function() return ghost() == nil end, 'the ghost text dismissed')
  H.eq('pri', line(5), 'line 5 after dismissing')

  -- Moving away clears it (0.7-0.11: at once; 0.12 keeps showing it where it was until its next answer);
  -- leaving Insert mode clears it.
  H.type('n')
  H.await(function() return ghost() == "t('hello world')" end, 'the ghost text after typing on')
  if not NATIVE then
    local seen = {}
    vim.api.nvim_create_autocmd('User', { pattern = 'AgentLspSuggestion', callback = function()
      table.insert(seen, ghost() or 'none')
    end })
    H.type('<Left>')
    H.await(function() return seen[1] ~= nil end, 'what is shown to change')
    H.eq('none', seen[1], 'the ghost text once the cursor moved away')
  end
  H.type('<Esc>')
  H.await(function() return vim.api.nvim_get_mode().mode == 'n' end, 'Normal mode')
  H.eq(nil, ghost(), 'no ghost text in Normal mode')
  H.eq('prin', line(5), 'line 5 after <Esc>')

  -- With no suggestion, <Tab> is a Tab.
  H.type('o<Tab>x<Esc>')
  H.await(function() return line(6) == '\tx' end, 'a Tab typed with <Tab>')

  local s = stats()
  H.eq({ 2, 2 }, { s.accepted, s.partiallyAccepted }, 'acceptances counted by the server')
  if not NATIVE then  -- 0.12 sends no didShowCompletion
    H.truthy(s.shown >= 4, 'the server was told of each suggestion shown: ' .. vim.inspect(s))
  end
  H.eq({ 'import os', "print('hello world')", "print('hello world')", "print('hello world')", 'prin', '\tx' },
    vim.api.nvim_buf_get_lines(0, 0, -1, false), 'a.py in the buffer')
end)
