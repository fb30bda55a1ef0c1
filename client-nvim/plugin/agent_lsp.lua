-- The :Agent* commands. Nothing starts until one is used; require('agent_lsp').setup() sets options and
-- attaches the buffers opened later.
if vim.g.loaded_agent_lsp then
  return
end
vim.g.loaded_agent_lsp = true

local command = vim.api.nvim_create_user_command

command('AgentChat', function(o)
  require('agent_lsp').chat(o.args, o.bang, o.range > 0 and { o.line1, o.line2 } or nil)
end, { nargs = '*', bang = true, range = true, desc = 'agent-lsp: chat (! = new session)' })

command('AgentAttach', function(o)
  require('agent_lsp').attach(o.args)
end, { nargs = 1, complete = 'file', desc = 'agent-lsp: attach an image to the next message' })

command('AgentStop', function()
  require('agent_lsp').stop()
end, { desc = 'agent-lsp: stop the running chat' })

command('AgentMode', function(o)
  require('agent_lsp').mode(o.args)
end, {
  nargs = '?',
  complete = function()
    return require('agent_lsp').modes
  end,
  desc = 'agent-lsp: permission mode of the next chats',
})

command('AgentRevert', function(o)
  require('agent_lsp').revert(o.args)
end, { nargs = '?', desc = 'agent-lsp: undo the last chat\'s edits ([N]: those of the chats after the first N)' })

command('AgentSessions', function()
  require('agent_lsp').sessions()
end, { desc = 'agent-lsp: reopen an earlier session' })

command('AgentModel', function()
  require('agent_lsp').model()
end, { desc = 'agent-lsp: pick the model of the next chats' })

command('AgentFix', function()
  require('agent_lsp').fix()
end, { desc = 'agent-lsp: fix the diagnostic under the cursor with the agent (code action)' })

command('AgentMemory', function()
  require('agent_lsp').memory()
end, { desc = 'agent-lsp: open the project memory (AGENTS.md, or the private memory file)' })

command('AgentSuggestions', function(o)
  require('agent_lsp.suggestions').switch(o.args)
end, {
  nargs = '?',
  complete = function()
    return { 'on', 'off' }
  end,
  desc = 'agent-lsp: suggestions as you type on or off (no argument: switch)',
})

command('AgentNextEdits', function(o)
  require('agent_lsp.next_edits').switch(o.args)
end, {
  nargs = '?',
  complete = function()
    return { 'on', 'off' }
  end,
  desc = 'agent-lsp: next-edit suggestions on or off (no argument: switch)',
})

command('AgentInstall', function()
  require('agent_lsp.install').run()
end, { desc = 'agent-lsp: install the server into a virtual environment under stdpath("data")' })

command('AgentHealth', function()
  require('agent_lsp').health()
end, { desc = 'agent-lsp: check the setup' })

command('AgentLog', function()
  require('agent_lsp').log()
end, { desc = 'agent-lsp: open the log (the server\'s --log-file, else the LSP log)' })
