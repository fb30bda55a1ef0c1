-- :AgentInstall from the release archive, as a lazy.nvim user gets it: `python -m release` builds the archive,
-- the plugin is loaded from its extracted tree with agent-lsp absent from PATH and a fresh stdpath('data');
-- :AgentInstall makes the venv and installs the archive's wheel (its dependencies from the package index or pip's
-- cache), the default command becomes the installed server, and :checkhealth agent_lsp passes naming the Python and
-- the keys set (never their values). Run on Neovim 0.11.4 only (tests/run.sh): it installs a whole venv.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentInstall from the release archive', function()
  local tmp = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(tmp, 'p')
  vim.cmd('cd ' .. vim.fn.fnameescape(H.repo))  -- `python -m release` runs from the checkout
  local python = vim.fn.exepath('python3')  -- the test venv's: it has `build` for the release
  local out = vim.fn.system({ python, '-m', 'release', '--skip-vsix', '--out', tmp .. '/dist' })
  H.truthy(vim.v.shell_error == 0, 'python -m release: ' .. out)
  local version = out:match('agent%-lsp (%S+): 3 artifacts')
  H.truthy(version, 'the release says its version: ' .. out)
  vim.fn.system({ 'tar', 'xzf', tmp .. '/dist/agent-lsp-nvim-' .. version .. '.tar.gz', '-C', tmp })
  H.truthy(vim.v.shell_error == 0, 'the archive extracts')
  local plugin = tmp .. '/agent-lsp.nvim'

  -- No agent-lsp on PATH; a fresh data directory; the plugin as a plugin manager loads it.
  local dirs = vim.tbl_filter(function(d) return vim.fn.executable(d .. '/agent-lsp') ~= 1 end,
    vim.split(vim.env.PATH, ':', { plain = true }))
  vim.env.PATH = table.concat(dirs, ':')
  H.eq(0, vim.fn.executable('agent-lsp'), 'agent-lsp is not on PATH')
  vim.env.XDG_DATA_HOME = tmp .. '/data'
  H.eq(tmp .. '/data/nvim', vim.fn.stdpath('data'), 'stdpath data follows XDG_DATA_HOME')
  vim.g.agent_lsp_python = python
  vim.env.ANTHROPIC_API_KEY = 'sk-ant-install-secret'
  vim.env.AGENT_LSP_OFFLINE = nil  -- tests/run.sh's: with it, the health check's `agent-lsp model` refuses the real API
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd('runtime plugin/agent_lsp.lua')
  H.eq(plugin .. '/lua/agent_lsp/install.lua', vim.api.nvim_get_runtime_file('lua/agent_lsp/install.lua', false)[1],
    'the plugin is the archive\'s')

  local notes = H.stub_notify()
  local done
  require('agent_lsp.install').run(function(ok, message) done = { ok = ok, message = message } end)
  H.wait(600000, function() return done ~= nil end, ':AgentInstall to finish')
  local venv = tmp .. '/data/nvim/agent-lsp/venv'
  local pyversion = vim.trim(vim.fn.system({ python, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])' }))
  local said = 'agent-lsp-server ' .. version .. ' (protocol 1)'
  H.eq({ ok = true, message = 'installed ' .. said .. ' in ' .. venv .. '; :checkhealth agent_lsp checks it' }, done, 'done')
  H.eq({
    'agent-lsp: [1/3] making a virtual environment with ' .. python .. ' (Python ' .. pyversion .. ') in ' .. venv,
    'agent-lsp: [2/3] installing agent_lsp_server-' .. version .. '-py3-none-any.whl (from the plugin)',
    'agent-lsp: [3/3] checking the server',
    'agent-lsp: ' .. done.message,
  }, vim.tbl_map(function(n) return n.msg end, notes), 'the progress, step by step')
  H.eq({ venv .. '/bin/agent-lsp' }, require('agent_lsp.config').options.cmd, 'the default command is the installed server')

  vim.cmd('checkhealth agent_lsp')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.truthy(report:find('OK:? `' .. vim.pesc(venv) .. '/bin/agent%-lsp` is ' .. vim.pesc(venv) .. '/bin/agent%-lsp %('
    .. vim.pesc(said) .. '%)'), report)
  H.truthy(report:find('OK:? the server runs on Python ' .. vim.pesc(pyversion) .. '%.%d+ at ' .. vim.pesc(venv)
    .. '/bin/python3?; agent_lsp from ' .. vim.pesc(venv) .. '/lib/python' .. vim.pesc(pyversion)
    .. '/site%-packages/agent_lsp'), report)
  H.truthy(report:find('OK:? provider keys set: ANTHROPIC_API_KEY\n'), report)
  H.truthy(not report:find('ERROR') and not report:find('sk%-ant%-install%-secret'), 'no error, no key value: ' .. report)
end)
