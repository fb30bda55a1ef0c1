-- :AgentInstall without a usable Python says what to install, at once, and installs nothing; with one, it picks
-- the first Python 3.11+ (g:agent_lsp_python first). The install itself: tests/install_test.lua (0.11.4 only).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentInstall finds Python or says what to install', function()
  H.workspace()
  H.eq(2, vim.fn.exists(':AgentInstall'), ':AgentInstall is defined')
  local install = require('agent_lsp.install')
  local python = vim.fn.exepath('python3')
  vim.g.agent_lsp_python = python
  H.eq(python, (install.find_python()), 'g:agent_lsp_python first')

  vim.g.agent_lsp_python = nil
  local path = vim.env.PATH
  vim.env.PATH = H.dir  -- no Python at all
  vim.env.XDG_DATA_HOME = H.dir .. '/data'
  local notes = H.stub_notify()
  local done
  install.run(function(ok, message) done = { ok, message } end)
  H.wait(H.CEILING, function() return done ~= nil end, ':AgentInstall to answer')
  vim.env.PATH = path
  local expected = 'Python 3.11 or newer is needed (no python3 on PATH): install it (e.g. apt install python3.11, '
    .. 'or from python.org), or set vim.g.agent_lsp_python to its path, then run :AgentInstall again'
  H.eq({ false, expected }, done, 'the answer')
  H.eq({ { msg = 'agent-lsp: ' .. expected, level = vim.log.levels.ERROR } }, notes, 'one error notification')
  H.eq(0, vim.fn.isdirectory(H.dir .. '/data/nvim/agent-lsp'), 'nothing was made')
end)
