-- Loaded by screenshot.sh inside a terminal (tmux): the plugin as a user has it, then one chat that edits.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ':h'))
vim.cmd('filetype plugin on | syntax on | runtime plugin/agent_lsp.lua')
vim.o.laststatus, vim.o.ruler, vim.o.showmode = 2, false, false
require('agent_lsp').setup({ cmd = { 'agent-lsp', '--data-dir', vim.fn.getcwd() .. '/.data' } })
vim.cmd('edit shop.py')
vim.cmd('AgentChat add a docstring to total()')
