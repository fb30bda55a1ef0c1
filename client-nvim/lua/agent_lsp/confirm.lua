-- Asks the user about a `confirmation_request` through vim.ui.select, so whatever picker the user set up
-- (telescope, dressing, fzf-lua, or the built-in list) is the one that asks.
local M = {}

-- What the user sees, and the agent/confirmTool decision it stands for.
M.choices = {
  { label = 'Allow once', decision = 'allow_once' },
  { label = 'Allow always', decision = 'allow_always' },
  { label = 'Reject', decision = 'reject_once' },
}

-- on_decision(decision) is called exactly once; dismissing the picker rejects, as the protocol's null
-- answer does.
function M.ask(request, on_decision)
  local labels, by_label = {}, {}
  for _, choice in ipairs(M.choices) do
    if vim.tbl_contains(request.options, choice.decision) then
      table.insert(labels, choice.label)
      by_label[choice.label] = choice.decision
    end
  end
  vim.ui.select(labels, { prompt = 'agent-lsp: ' .. request.title .. '?', kind = 'agent_lsp_confirm' },
    function(label)
      on_decision(label and by_label[label] or 'reject_once')
    end)
end

return M
