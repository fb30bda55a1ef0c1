-- :AgentModel: when the server lists `models` in its features, a picker of agent/models sets the model of the
-- next chats (the Messages API receives it); a server without it gets a warning, not a request it cannot answer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':AgentModel', function()
  H.workspace({ ['a.py'] = 'x = 1\n' })
  H.fake_api({
    { content = { { type = 'text', text = 'First.' } } },
    { content = { { type = 'text', text = 'Second.' } } },
  })
  H.setup()
  vim.cmd('edit a.py')
  vim.cmd('AgentChat hi')
  local chat = require('agent_lsp.chat').current()
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'the first chat')
  local client = require('agent_lsp.client')
  if client.has('models') then  -- the health check names the server's own default, not a copy of it
    local checks = require('agent_lsp.checks').results()
    H.truthy(checks[#checks].message:find(', chatting with claude%-sonnet%-5%-5; its log: :AgentLog$'),
      'the health check: ' .. vim.inspect(checks))
  end

  local labels
  local asked = H.stub_select({ function(items, opts)
    labels = vim.tbl_map(opts.format_item, items)
    for _, m in ipairs(items) do
      if m.id == 'claude-small-test' then
        return m
      end
    end
  end })
  local notes = H.stub_notify()
  vim.cmd('AgentModel')
  if not client.has('models') then
    H.wait(nil, function() return #notes > 0 end, 'the warning')
    H.eq({ { level = vim.log.levels.WARN, msg = 'agent-lsp: this server does not offer a model list (its features '
      .. 'lack `models`); set settings.model in setup(), or update agent-lsp' } }, notes, 'no `models` feature')
    H.eq({}, asked, 'no picker')
    return
  end
  H.wait(nil, function() return #notes > 0 end, 'the model to be picked')
  H.eq({ { level = vim.log.levels.INFO, msg = 'agent-lsp: model claude-small-test' } }, notes, 'the notification')
  H.truthy(vim.tbl_contains(labels, 'Claude Small Test (claude-small-test)'), 'the labels: ' .. vim.inspect(labels))
  vim.cmd('AgentChat again')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'the second chat')
  local requests = H.requests()
  H.eq('claude-small-test', requests[#requests].model, 'the model of the next chat')
end)
