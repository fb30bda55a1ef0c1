-- :AgentAttach {path}: an image for the next message. A missing file, another type or more than 5 MiB is one
-- error and nothing is attached; an attached image is a line of the input area (deleting the line drops it),
-- a line under the message in the chat, and an entry of agent/chat `images` ({mimeType, data: base64}) that
-- reaches the model as an image block.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local function bytes(n)
  local t = {}
  for i = 1, n do
    t[i] = string.char((i * 7) % 256)
  end
  return table.concat(t)
end

local function write(path, data)
  local f = assert(io.open(path, 'wb'))
  f:write(data)
  f:close()
end

H.run(':AgentAttach sends an image with the next message', function()
  H.workspace({ ['notes.txt'] = 'not an image\n' })
  write(H.dir .. '/shot.png', bytes(1001))
  write(H.dir .. '/photo.JPG', bytes(2000))
  write(H.dir .. '/big.webp', bytes(5 * 1024 * 1024 + 1))
  H.fake_api({ { content = { { type = 'text', text = 'A picture.' } } } })
  H.setup()

  -- Base64 as coreutils writes it, for every length of padding.
  local attach = require('agent_lsp.attach')
  for _, n in ipairs({ 0, 1, 2, 3, 4, 5, 1001 }) do
    write(H.dir .. '/.b64', bytes(n))
    H.eq(vim.fn.system({ 'base64', '-w0', H.dir .. '/.b64' }), attach.base64(bytes(n)), 'base64 of ' .. n .. ' bytes')
  end

  vim.cmd('AgentChat')
  local chat = require('agent_lsp.chat').current()
  local notes = H.stub_notify()
  vim.cmd('AgentAttach missing.png')
  vim.cmd('AgentAttach notes.txt')
  vim.cmd('AgentAttach big.webp')
  H.eq({
    { msg = 'agent-lsp: missing.png: no such file', level = vim.log.levels.ERROR },
    { msg = 'agent-lsp: notes.txt is not an image agent-lsp can send (png, jpg, jpeg, gif or webp)',
      level = vim.log.levels.ERROR },
    { msg = 'agent-lsp: big.webp is 5.0 MiB; an image can be at most 5 MiB', level = vim.log.levels.ERROR },
  }, notes, 'what cannot be attached')
  H.eq({ '' }, vim.api.nvim_buf_get_lines(chat.input, 0, -1, false), 'nothing attached')

  vim.cmd('AgentAttach shot.png')
  vim.cmd('AgentAttach photo.JPG')
  H.eq({ '[image: shot.png, 1 KiB]', '[image: photo.JPG, 2 KiB]' }, vim.api.nvim_buf_get_lines(chat.input, 0, -1, false),
    'each image a line of the input area')
  H.keys('<CR>')
  H.eq({ 'agent-lsp: write a message to go with the image' }, vim.tbl_map(function(n) return n.msg end,
    vim.list_slice(notes, 4)), 'an image alone is not sent')

  -- What goes on the wire: the agent/chat params, seen at Neovim's LSP client.
  local c = require('agent_lsp.client')
  c.when_ready(function() end)
  H.wait(H.CEILING, function() return c.get() ~= nil end, 'the server to start')
  local lsp = c.get()
  local sent
  local request = lsp.request
  lsp.request = function(...)
    local args = { ... }
    for i, a in ipairs(args) do
      if a == 'agent/chat' then
        sent = args[i + 1]
      end
    end
    return request(...)
  end

  -- The photo's line deleted: only the screenshot goes.
  vim.api.nvim_buf_set_lines(chat.input, 0, -1, false, { 'what is in this picture?', '[image: shot.png, 1 KiB]' })
  H.keys('<CR>')
  H.eq('end_turn', H.wait_chat(chat).stopReason, 'stopReason')
  H.eq({ 'what is in this picture?', { { mimeType = 'image/png',
    data = vim.fn.system({ 'base64', '-w0', H.dir .. '/shot.png' }) } } }, { sent.message, sent.images },
    'agent/chat message and images')
  local images = vim.tbl_filter(function(part) return part.type == 'image' end, H.requests()[1].messages[1].content)
  H.eq({ { type = 'image', source = { type = 'base64', media_type = 'image/png', data = sent.images[1].data } } },
    images, 'the model got the image')
  H.eq({ '> what is in this picture?', '> [image: shot.png, 1 KiB]', 'A picture.', '-- done (1 turn, 0 tool calls)' },
    chat.view:lines(), 'the chat')
  H.eq({ '' }, vim.api.nvim_buf_get_lines(chat.input, 0, -1, false), 'the input area after sending')
  H.eq(nil, chat.attachments, 'nothing left for the next message')
end)
