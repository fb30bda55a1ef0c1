-- :help agent opens the plugin's help (the shipped doc/tags, no :helptags needed), its tags lead to the
-- commands, and doc/tags is what :helptags makes of doc/agent.txt.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.run(':help agent', function()
  H.workspace()
  for _, tag in ipairs({ 'agent', ':AgentChat', ':AgentLog', 'agent-confirm' }) do
    vim.cmd('help ' .. tag)
    local buf = vim.api.nvim_get_current_buf()
    H.eq({ 'help', H.plugin .. '/doc/agent.txt' }, { vim.bo[buf].buftype, vim.api.nvim_buf_get_name(buf) },
      ':help ' .. tag)
    local line = vim.api.nvim_get_current_line()
    H.truthy(line:find('*' .. tag .. '*', 1, true), ':help ' .. tag .. ' lands on its tag: ' .. line)
    vim.cmd('helpclose')
  end

  -- The shipped tags are the ones :helptags makes from the shipped text.
  local fresh = H.dir .. '/doc'
  vim.fn.mkdir(fresh, 'p')
  vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/agent.txt', 'b'), fresh .. '/agent.txt', 'b')
  vim.cmd('helptags ' .. vim.fn.fnameescape(fresh))
  H.eq(vim.fn.readfile(fresh .. '/tags'), vim.fn.readfile(H.plugin .. '/doc/tags'),
    'doc/tags is up to date (regenerate: nvim --headless -c "helptags client-nvim/doc" -c q)')
end)
