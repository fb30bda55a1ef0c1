-- Confirmations: the server asks (default mode); an edit's diff is on screen (a floating window, and folded
-- under its tool call in the chat) before vim.ui.select offers Allow once / Allow always / Reject; the answer
-- reaches the server as agent/confirmTool: a rejected edit is not made, an allowed command runs.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('confirmations go through vim.ui.select', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'tool_use', id = 'toolu_edit', name = 'edit_file',
      input = { path = 'a.py', old_string = 'x = 1', new_string = 'x = 2' } } } },
    { content = { { type = 'tool_use', id = 'toolu_run', name = 'run_command',
      input = { command = 'echo confirmed' } } } },
    { content = { { type = 'text', text = 'All done.' } } },
  })
  H.setup()
  local DIFF = { '--- a/a.py', '+++ b/a.py', '@@ -1 +1 @@', '-x = 1', '+x = 2' }
  -- What is on screen when each question is asked: the floating windows' lines and the chat's lines.
  local seen = {}
  local function screen()
    local floats = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        local fbuf = vim.api.nvim_win_get_buf(win)
        table.insert(floats, { filetype = vim.bo[fbuf].filetype,
          lines = vim.api.nvim_buf_get_lines(fbuf, 0, -1, false) })
      end
    end
    local chat = require('agent_lsp.chat').current()
    table.insert(seen, { floats = floats, diff_in_chat = table.concat(chat.view:lines(), '\n')
      :find(table.concat(DIFF, '\n'), 1, true) ~= nil })
  end
  local asked = H.stub_select({
    function() screen(); return 'Reject' end,
    function() screen(); return 'Allow once' end,
  })
  vim.cmd('edit a.py')
  vim.cmd('AgentChat change x, then run echo')
  local chat = require('agent_lsp.chat').current()
  local result = H.wait_chat(chat)
  H.eq('end_turn', result.stopReason, 'stopReason')

  local choices = { 'Allow once', 'Allow always', 'Reject' }
  H.eq({ { items = choices, prompt = 'agent-lsp: Edit a.py?' },
    { items = choices, prompt = 'agent-lsp: Run `echo confirmed`?' } }, asked, 'the questions')
  H.eq({
    '> change x, then run echo',
    '● Edit a.py [rejected]',
    '```diff',
    '--- a/a.py',
    '+++ b/a.py',
    '@@ -1 +1 @@',
    '-x = 1',
    '+x = 2',
    '```',
    '● Run `echo confirmed` [completed]',
    'All done.',
    '-- done (3 turns, 2 tool calls)',
  }, chat.view:lines(), 'chat buffer')
  H.eq({
    { floats = { { filetype = 'diff', lines = DIFF } }, diff_in_chat = true },  -- the edit: its diff first
    { floats = {}, diff_in_chat = true },  -- the command: no diff; the edit's float has closed
  }, seen, 'on screen at each question')
  H.eq({ 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 }, H.fold_levels(chat), 'the diff is folded under its tool call')
  H.eq({ 'x = 1' }, vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.py'), 0, -1, false), 'a.py after the rejection')

  -- What the model was told: the edit was declined, the command ran.
  local requests = H.requests()
  H.eq(3, #requests, 'model calls')
  local edit = requests[2].messages[#requests[2].messages].content[1]
  H.eq({ 'toolu_edit', true }, { edit.tool_use_id, edit.is_error }, 'the edit\'s tool result')
  H.truthy(vim.fn.json_encode(edit.content):find('declined'), 'the model is told the user declined: '
    .. vim.inspect(edit))
  local run = requests[3].messages[#requests[3].messages].content[1]
  H.eq({ 'toolu_run', false }, { run.tool_use_id, run.is_error or false }, 'the command\'s tool result')
  H.truthy(vim.fn.json_encode(run.content):find('confirmed'), 'the command\'s output reaches the model: '
    .. vim.inspect(run))
end)
