-- Neovim 0.12+ only (tests/run.sh runs it there). A client nobody here wrote: Neovim's own inline completion
-- (vim.lsp.inline_completion), with agent-lsp configured as any language server is (vim.lsp.config and
-- vim.lsp.enable) and none of the plugin's code loaded, shows agent-lsp's suggestion while the user types and
-- accepts it with the <Tab> mapping of Neovim's own documentation; the item's command (agent.completionAccepted)
-- runs after it, which Neovim does only for commands the server lists. The model is the offline demo.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local ns = vim.api.nvim_create_namespace('nvim.lsp.inline_completion')

local function ghost()
  local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
  return marks[1] and marks[1][4].virt_text[1][1]
end

local function line(n)
  return vim.api.nvim_buf_get_lines(0, n - 1, n, false)[1]
end

H.run_typing('Neovim\'s own inline completion shows and accepts agent-lsp\'s suggestion', function()
  H.truthy(vim.lsp.inline_completion, 'Neovim 0.12+ (vim.lsp.inline_completion): ' .. tostring(vim.version()))
  H.workspace({ ['a.py'] = 'import os\nprint(\'hello world\')\n', ['pyproject.toml'] = '' }, false)
  H.eq({}, vim.api.nvim_get_runtime_file('lua/agent_lsp/init.lua', true), 'the plugin is not on the runtimepath')
  vim.o.showmode = false
  vim.cmd('filetype on')

  -- As a user's config would have it (docs/neovim.md "Without the plugin").
  vim.lsp.config('agent-lsp', {
    cmd = { 'agent-lsp', '--data-dir', H.dir .. '/.data' },
    filetypes = { 'python' },
    root_markers = { '.git', 'pyproject.toml' },
    init_options = { model = 'demo' },
  })
  vim.lsp.enable('agent-lsp')
  vim.lsp.inline_completion.enable()
  vim.keymap.set('i', '<Tab>', function()
    if not vim.lsp.inline_completion.get() then
      return '<Tab>'
    end
  end, { expr = true, desc = 'Accept the current inline completion' })

  vim.cmd('edit a.py')
  local client
  H.await(function()
    client = vim.lsp.get_clients({ bufnr = 0, name = 'agent-lsp' })[1]
    return client and client.initialized
  end, 'agent-lsp to start')
  H.eq(true, client.server_capabilities.inlineCompletionProvider, 'the capability')
  H.truthy(vim.tbl_contains(client.server_capabilities.executeCommandProvider.commands, 'agent.completionAccepted'),
    'the accept command is listed')

  H.type('Gopri')
  H.await(function() return ghost() == "nt('hello world')" end, 'the ghost text')
  H.eq('pri', line(3), 'the buffer holds what was typed only')
  H.type('<Tab>')
  H.await(function() return line(3) == "print('hello world')" end, 'the accepted line')
  H.eq({ 3, 20 }, vim.api.nvim_win_get_cursor(0), 'the cursor after the accepted text')
  H.await(function()
    local stats = client:request_sync('agent/completionStats', vim.empty_dict(), 5000)
    return stats and stats.result and stats.result.accepted == 1
  end, 'the item\'s command to run')

  -- Typing on: a fresh suggestion each time; with nothing to suggest the answer is [] and nothing stays shown.
  H.type('<CR>import')
  H.await(function() return ghost() == ' os' end, 'the next suggestion')
  H.type(' sys')
  H.await(function() return ghost() == nil end, 'no suggestion where there is none')
  H.type('<Esc>')
  H.await(function() return vim.api.nvim_get_mode().mode == 'n' end, 'Normal mode')
  H.eq({ 'import os', "print('hello world')", "print('hello world')", 'import sys' },
    vim.api.nvim_buf_get_lines(0, 0, -1, false), 'a.py in the buffer')
end)
