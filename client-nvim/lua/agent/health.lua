-- `:checkhealth agent`: Neovim finds health checks by this path; the checks are in agent_lsp.checks.
return {
  check = function()
    require('agent_lsp.checks').check()
  end,
}
