-- :AgentHealth and :checkhealth agent_lsp say whether agent-lsp is on PATH and whether a key or the demo
-- model is configured.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run('health checks', function()
  H.workspace()
  for _, name in ipairs({ 'ANTHROPIC_API_KEY', 'AGENT_LSP_MODEL', 'AGENT_LSP_PROVIDER', 'OPENAI_API_KEY',
                          'OPENAI_BASE_URL' }) do
    vim.env[name] = nil
  end
  local version = vim.trim(vim.fn.system({ 'agent-lsp', '--version' }))
  local path = vim.fn.exepath('agent-lsp')

  local notes = H.stub_notify()
  H.setup({ cmd = { 'agent-lsp' }, settings = { model = 'demo' } })
  vim.cmd('AgentHealth')
  H.eq({ { level = vim.log.levels.INFO, msg = table.concat({
    'agent-lsp health',
    'OK: `agent-lsp` is ' .. path .. ' (' .. version .. ')',
    'OK: the offline demo model is configured',
    'OK: the server is not running yet: it starts with the first :AgentChat',
  }, '\n') } }, notes, 'demo model')

  notes = H.stub_notify()
  H.setup({ cmd = { 'no-such-agent-lsp' } })
  vim.cmd('AgentHealth')
  H.eq(vim.log.levels.ERROR, notes[1].level, 'nothing configured: level')
  local lines = vim.split(notes[1].msg, '\n')
  H.truthy(lines[2]:find('^ERROR: `no%-such%-agent%-lsp` is not on PATH'), lines[2])
  H.truthy(lines[3]:find('^ERROR: no model: export ANTHROPIC_API_KEY'), lines[3])

  local function model_line(settings)
    notes = H.stub_notify()
    H.setup({ cmd = { 'agent-lsp' }, settings = settings })
    vim.cmd('AgentHealth')
    return vim.split(notes[1].msg, '\n')[3]
  end
  H.eq('OK: provider openai: model qwen2.5-coder:7b at http://127.0.0.1:11434/v1',
    model_line({ provider = 'openai', model = 'qwen2.5-coder:7b', baseUrl = 'http://127.0.0.1:11434/v1' }), 'ollama')
  H.truthy(model_line({ provider = 'openai' }):find('^ERROR: provider "openai" needs a model'), 'openai, no model')
  H.truthy(model_line({ provider = 'openai', model = 'gpt-4.1' }):find('^ERROR: provider "openai" needs OPENAI_API_KEY'),
    'openai, no key and no base URL')

  vim.env.ANTHROPIC_API_KEY = 'sk-test'
  H.setup({ cmd = { 'agent-lsp' }, settings = { model = 'claude-sonnet-4-5' } })
  vim.cmd('checkhealth agent_lsp')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.truthy(report:find('OK:? ANTHROPIC_API_KEY is set %(model claude%-sonnet%-4%-5%)'), 'checkhealth: ' .. report)
  H.truthy(not report:find('ERROR'), 'checkhealth has no error: ' .. report)
end)
