-- Next-edit suggestions from the real server's demo model (a word renamed on a line, the same rename offered on
-- the next line of the window that still has the old word), in Normal mode: after the rename and the pause the
-- edit shows — the old text highlighted, the new text beside it, a sign while the cursor is away; <Tab> jumps to
-- it, <Tab> again applies it (its command reaches the server) and the next one comes; <Esc> dismisses it; Insert
-- mode clears it; :AgentNextEdits off clears it and keeps it off. Skipped while the server does not list
-- `nextEdits` in its features.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local NAME = 'next edits: shown after a rename, jump, apply, the next one, dismiss, cleared by Insert mode, off'
local TALLY = 'count = 0\nfor item in range(3):\n    count += item\nprint(count)\n'

-- Whether extmarks report their sign (0.7's details leave it out).
local SIGNS = (function()
  local buf, ns = vim.api.nvim_create_buf(false, true), vim.api.nvim_create_namespace('probe')
  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { sign_text = '>' })
  local sign = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })[1][4].sign_text ~= nil
  vim.api.nvim_buf_delete(buf, { force = true })
  return sign
end)()

local function line(n)
  return vim.api.nvim_buf_get_lines(0, n - 1, n, false)[1]
end

-- The extmarks of the next edit: {old = {row, col, end_row, end_col}, new = virtual text, sign = its text}.
local function drawn()
  local ns = require('agent_lsp.next_edits').ns
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
    local d = m[4]
    if d.hl_group == 'AgentLspNextEditOld' then
      out.old = { m[2], m[3], d.end_row, d.end_col }
    end
    for _, chunk in ipairs(d.virt_text or {}) do
      if chunk[2] == 'AgentLspNextEditNew' then
        out.new = chunk[1]
      end
    end
    if d.sign_text then
      out.sign = vim.trim(d.sign_text)
    end
  end
  return out
end

local function stats()
  local client = require('agent_lsp.client')
  return client.request_sync(client.get(), 'agent/completionStats', vim.empty_dict(), 5000)
end

H.run_typing(NAME, function()
  H.workspace({ ['tally.py'] = TALLY })
  vim.o.showmode = false
  H.setup({ settings = { model = 'demo' } })
  vim.cmd('edit tally.py')
  local client = require('agent_lsp.client')
  local next_edits = require('agent_lsp.next_edits')
  client.when_ready(function() end)
  H.await(function() return client.get() ~= nil end, 'the server to start')
  if not client.has('nextEdits') then
    return H.skip(NAME, 'the server does not list nextEdits in its features (PROTOCOL §11)')
  end
  H.eq('agent-lsp: jump to the next edit, or apply it', vim.fn.maparg('<Tab>', 'n', false, true).desc, '<Tab> in Normal mode')

  -- The rename on line 1; back in Normal mode, after the pause, the same rename offered on line 3.
  H.type('gg0ciwtally<Esc>')
  H.await(function() return next_edits.current() ~= nil end, 'the next edit')
  H.eq('tally = 0', line(1), 'line 1 renamed')
  local shown = next_edits.current()
  H.eq({ { start = { line = 2, character = 4 }, ['end'] = { line = 2, character = 9 } }, 'tally', true },
    { shown.range, shown.text, shown.away }, 'the edit offered')
  H.eq({ old = { 2, 4, 2, 9 }, new = 'tally', sign = SIGNS and '→' or nil }, drawn(),
    'drawn: old text, new beside it, a sign (where extmarks report it)')
  H.eq('    count += item', line(3), 'nothing applied yet')

  -- <Tab> jumps (the sign goes), <Tab> again applies.
  H.type('<Tab>')
  H.await(function() return next_edits.current() and not next_edits.current().away end, 'the jump')
  H.eq({ 3, 4 }, vim.api.nvim_win_get_cursor(0), 'the cursor at the edit')
  H.eq({ old = { 2, 4, 2, 9 }, new = 'tally' }, drawn(), 'no sign at the edit')
  H.type('<Tab>')
  H.await(function() return line(3) == '    tally += item' end, 'the edit applied')
  H.eq({ 3, 8 }, vim.api.nvim_win_get_cursor(0), 'the cursor on the last character of the new text')

  -- The applied edit is the latest change: the rename carried on to line 4; <Esc> dismisses it.
  H.await(function()
    local s = next_edits.current()
    return s and s.range.start.line == 3
  end, 'the next edit on line 4')
  H.eq({ old = { 3, 6, 3, 11 }, new = 'tally', sign = SIGNS and '→' or nil }, drawn(), 'the second edit drawn')
  H.type('<Esc>')
  H.await(function() return next_edits.current() == nil end, 'the edit dismissed')
  H.eq({}, drawn(), 'nothing drawn')
  H.eq('print(count)', line(4), 'dismissing changed nothing')
  H.await(function()
    local s = stats()
    return s and type(s.nextEdits) == 'table' and s.nextEdits.accepted == 1
  end, 'the acceptance counted by the server')
  H.truthy(stats().nextEdits.shown >= 2, 'the server told of each edit shown: ' .. vim.inspect(stats().nextEdits))

  -- Insert mode clears a shown edit.
  H.type('gg0ciwtotal<Esc>')
  H.await(function() return next_edits.current() ~= nil end, 'an edit after the second rename')
  -- tally -> total share their first letter: the edit is minimal (PROTOCOL §11), "ally" replaced by "otal".
  local second = next_edits.current()
  H.eq({ { start = { line = 2, character = 5 }, ['end'] = { line = 2, character = 9 } }, 'otal' },
    { second.range, second.text }, 'the second rename carried on, its common prefix left out')
  H.eq({ old = { 2, 5, 2, 9 }, new = 'otal', sign = SIGNS and '→' or nil }, drawn(), 'the minimal edit drawn')
  H.type('A')
  H.await(function() return vim.api.nvim_get_mode().mode == 'i' end, 'Insert mode')
  H.eq(nil, next_edits.current(), 'cleared in Insert mode')
  H.eq({}, drawn(), 'nothing drawn in Insert mode')
  H.type('<Esc>')
  H.await(function() return vim.api.nvim_get_mode().mode == 'n' end, 'Normal mode')

  -- Off: the setting goes to the server (a change then asks nothing: next_edits.changed returns at once).
  local notes = H.stub_notify()
  vim.cmd('AgentNextEdits off')
  H.eq(false, require('agent_lsp.config').options.settings.nextEdits.enabled, 'the setting')
  H.eq('agent-lsp: next edits off', notes[1].msg, 'said')
  H.eq({ 'total = 0', 'for item in range(3):', '    tally += item', 'print(count)' },
    vim.api.nvim_buf_get_lines(0, 0, -1, false), 'tally.py in the buffer')
end)
