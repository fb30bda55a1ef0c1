-- `:checkhealth agent_lsp`: Neovim finds a plugin's health check by this path; the checks are in agent_lsp.checks.
return {
  check = function()
    require('agent_lsp.checks').check()
  end,
}
