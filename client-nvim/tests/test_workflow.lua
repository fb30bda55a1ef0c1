-- The workflow: todo_write's plan is a checklist at the top of the chat buffer, redrawn at each plan update
-- and when the session is reopened (agent/history's plan); a `task` subagent's tool calls are indented under
-- the task's line, in its fold, while the chat's own lines go on under them; `/` at the start of the input
-- area completes the server's commands (agent/commands: builtins and the user's command files) and skills
-- (agent/skills), and a `/name args` message is sent as typed (the server expands the command, or answers a
-- builtin).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('plan, subagents and slash commands', function()
  H.workspace({
    ['a.py'] = 'x = 1\n',
    ['.config/agent-lsp/commands/review.md'] = '---\ndescription: Review a file\nargument-hint: <file>\n---\n'
      .. 'Review $ARGUMENTS carefully.\n',
    ['.config/agent-lsp/skills/notes/SKILL.md'] = '---\nname: notes\ndescription: Write release notes\n---\n'
      .. 'Write the notes.\n',
  })
  vim.env.XDG_CONFIG_HOME = H.dir .. '/.config'  -- the server's user command files are here
  local function todos(a, b)
    return { type = 'tool_use', id = 'toolu_plan_' .. a .. b, name = 'todo_write', input = { todos = {
      { content = 'Read a.py', status = a, activeForm = 'Reading a.py' },
      { content = 'Answer', status = b } } } }
  end
  H.fake_api({
    { content = { todos('in_progress', 'pending') } },
    { content = { { type = 'tool_use', id = 'toolu_task', name = 'task',
      input = { description = 'Look at a.py', prompt = 'What is x in a.py?' } } } },
    -- the subagent's own model calls
    { content = { { type = 'tool_use', id = 'toolu_sub_read', name = 'read_file', input = { path = 'a.py' } } } },
    { content = { { type = 'text', text = 'x is 1.' } } },
    -- the chat again
    { content = { todos('completed', 'in_progress') } },
    { content = { { type = 'text', text = 'x is 1, says the subagent.' } } },
    -- /review a.py, expanded by the server
    { content = { { type = 'text', text = 'Reviewed.' } } },
  })
  H.setup()
  vim.cmd('edit a.py')
  local function omni(findstart, base)  -- through the option, as <C-x><C-o> calls it
    return vim.api.nvim_eval(vim.bo.omnifunc .. '(' .. findstart .. ', ' .. vim.fn.string(base) .. ')')
  end
  vim.cmd('AgentChat')
  H.eq(false, require('agent_lsp.client').running(), 'no server before the first completion or message')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/mem' })
  vim.api.nvim_win_set_cursor(0, { 1, 4 })
  -- A user's menu waits for the server's start at most commands.TIMEOUT (5 s) and then says "complete again in a
  -- moment"; a loaded machine starts it slower: the test waits up to the ceiling (until the server is up).
  local commands = require('agent_lsp.commands')
  local bound = commands.TIMEOUT
  commands.TIMEOUT = H.CEILING
  H.eq({ '/memory' }, vim.tbl_map(function(i) return i.word end, omni(0, '/mem')),
    'the first completion starts the server and lists its commands')
  commands.TIMEOUT = bound
  vim.api.nvim_buf_set_lines(0, 0, -1, false, {})
  vim.cmd('wincmd p')
  vim.cmd('AgentChat what is x?')
  local chats = require('agent_lsp.chat')
  local chat = chats.current()
  local buf = chat.view.buf

  -- The plan as shown right after each plan update.
  local on_update, plans = chats.on_update, {}
  chats.on_update = function(params)
    on_update(params)
    if params.update.kind == 'plan' then
      table.insert(plans, chat.view:header_lines())
    end
  end
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')
  chats.on_update = on_update
  H.eq({
    { 'Plan (0/2 done)', '- [~] Read a.py', '- [ ] Answer', '' },
    { 'Plan (1/2 done)', '- [x] Read a.py', '- [~] Answer', '' },
  }, plans, 'the plan after each update')
  H.eq({
    'Plan (1/2 done)',
    '- [x] Read a.py',
    '- [~] Answer',
    '',
    '> what is x?',
    '● Update the plan [completed]',
    '● Task: Look at a.py [completed]',
    '  ● Read a.py [completed]',
    '● Update the plan [completed]',
    'x is 1, says the subagent.',
    '-- done (4 turns, 3 tool calls)',
  }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'chat buffer: the task\'s read_file indented under it')

  local ns = vim.api.nvim_create_namespace('agent_lsp_hl')
  local groups = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    if m[2] < 3 then
      groups[m[2]] = m[4].hl_group
    end
  end
  H.eq({ [0] = 'AgentLspPlan', [1] = 'AgentLspPlanDone', [2] = 'AgentLspPlanActive' }, groups,
    'the plan\'s highlights')
  local win = vim.fn.win_findbuf(buf)[1]
  H.eq({ { 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0 }, 7 }, { H.fold_levels(chat), vim.api.nvim_win_call(win, function()
    return vim.fn.foldclosed(8)
  end) }, 'the subagent\'s call is in the task\'s closed fold')

  -- `/` completion in the input area, through the option as <C-x><C-o> calls it.
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.input)[1])
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/re' })
  vim.api.nvim_win_set_cursor(0, { 1, 3 })
  H.eq(0, omni(1, ''), 'the completion starts at the /')
  local items = omni(0, '/re')
  H.eq({ { word = '/review', abbr = '/review <file>', menu = '[user]', info = 'Review a file' } },
    vim.tbl_map(function(i) return { word = i.word, abbr = i.abbr, menu = i.menu, info = i.info } end, items),
    'the user\'s command, with its hint and description')
  local all = vim.tbl_map(function(i) return i.word end, omni(0, '/'))
  H.truthy(vim.tbl_contains(all, '/compact') and vim.tbl_contains(all, '/memory') and vim.tbl_contains(all, '/review'),
    'every command for a bare /: ' .. vim.inspect(all))
  H.eq({ { word = '/notes', abbr = '/notes', menu = '[user skill]', info = 'Write release notes' } },
    vim.tbl_map(function(i) return { word = i.word, abbr = i.abbr, menu = i.menu, info = i.info } end,
      omni(0, '/no')), 'the user\'s skill, beside the commands')
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'see /re' })
  vim.api.nvim_win_set_cursor(0, { 1, 7 })
  H.eq(-3, omni(1, ''), 'a / inside the message completes nothing')

  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { '/review a.py' })
  H.keys('<CR>')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'the command ran')
  local requests = H.requests()
  H.eq(7, #requests, 'model calls')
  local last = requests[7].messages[#requests[7].messages]
  H.truthy(vim.fn.json_encode(last.content):find('Review a.py carefully.', 1, true),
    'the model got the command\'s prompt: ' .. vim.fn.json_encode(last.content))
  local tail = vim.api.nvim_buf_get_lines(buf, 11, -1, false)
  H.eq({ '', '> /review a.py', 'Reviewed.', '-- done (1 turn, 0 tool calls)' }, tail, 'the command in the chat')

  -- Reopened from agent/history: the plan is drawn again at the top.
  local result = chat.result
  vim.cmd('bwipeout! ' .. buf)
  local done = false
  require('agent_lsp.client').request(require('agent_lsp.client').get(), 'agent/history',
    { sessionId = result.sessionId }, function(err, history)
      H.truthy(not err, 'agent/history')
      chats.open_session(result.sessionId, history.messages, history.plan)
      done = true
    end)
  H.wait(H.CEILING, function() return done end, 'agent/history')
  local reopened = chats.current()
  H.eq({ 'Plan (1/2 done)', '- [x] Read a.py', '- [~] Answer', '', '> what is x?' },
    vim.list_slice(reopened.view:lines(), 1, 5), 'the reopened session\'s plan')
end)
