-- `:checkhealth agent`, the check's name before it took the plugin's: it points to `:checkhealth agent_lsp` (running
-- the checks here too would run them twice in a plain `:checkhealth`).
return {
  check = function()
    local h = vim.health or require('health')  -- vim.health since 0.8; the `health` module before
    ;(h.start or h.report_start)('agent-lsp')
    ;(h.info or h.report_info)('the checks of agent-lsp are `:checkhealth agent_lsp` now')
  end,
}
