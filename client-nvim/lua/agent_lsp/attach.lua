-- :AgentAttach {path}: an image for the next message of a chat. Checked before anything is sent (one of the
-- four types by its extension, at most 5 MiB), read and base64-encoded once, shown as a line of the input area;
-- deleting that line drops it. Sent as agent/chat `images`.
local M = {}

M.MAX_BYTES = 5 * 1024 * 1024
M.TYPES = { png = 'image/png', jpg = 'image/jpeg', jpeg = 'image/jpeg', gif = 'image/gif', webp = 'image/webp' }

local ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

-- Base64 of a string: vim.base64 (0.10+), else in Lua (0.7).
function M.base64(data)
  if vim.base64 then
    return vim.base64.encode(data)
  end
  local bit = require('bit')
  local chars = {}
  for i = 1, 64 do
    chars[i - 1] = ALPHABET:sub(i, i)
  end
  local out, n = {}, #data
  for i = 1, n - 2, 3 do
    local a, b, c = data:byte(i, i + 2)
    local v = bit.bor(bit.lshift(a, 16), bit.lshift(b, 8), c)
    out[#out + 1] = chars[bit.rshift(v, 18)] .. chars[bit.band(bit.rshift(v, 12), 63)]
      .. chars[bit.band(bit.rshift(v, 6), 63)] .. chars[bit.band(v, 63)]
  end
  local rest = n % 3
  if rest > 0 then
    local a, b = data:byte(n - rest + 1, n)
    local v = bit.bor(bit.lshift(a, 16), bit.lshift(b or 0, 8))
    out[#out + 1] = chars[bit.rshift(v, 18)] .. chars[bit.band(bit.rshift(v, 12), 63)]
      .. (rest == 2 and chars[bit.band(bit.rshift(v, 6), 63)] or '=') .. '='
  end
  return table.concat(out)
end

local function size_label(bytes)
  if bytes >= 1024 * 1024 then
    return string.format('%.1f MiB', bytes / 1024 / 1024)
  end
  return string.format('%d KiB', math.max(1, math.floor(bytes / 1024 + 0.5)))
end

-- The image at `path` as {path, mimeType, data, line}, or nil and why not.
function M.load(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  local ext = (full:match('%.([%w]+)$') or ''):lower()
  local mime = M.TYPES[ext]
  if not mime then
    return nil, string.format('%s is not an image agent-lsp can send (png, jpg, jpeg, gif or webp)', path)
  end
  local size = vim.fn.getfsize(full)
  if size < 0 or vim.fn.isdirectory(full) == 1 then
    return nil, string.format('%s: no such file', path)
  elseif size > M.MAX_BYTES then
    return nil, string.format('%s is %s; an image can be at most 5 MiB', path, size_label(size))
  end
  local f = io.open(full, 'rb')
  if not f then
    return nil, string.format('%s cannot be read', path)
  end
  local data = f:read('*a')
  f:close()
  local name = vim.fn.fnamemodify(full, ':~:.')
  return { path = full, mimeType = mime, data = M.base64(data),
    line = string.format('[image: %s, %s]', name, size_label(#data)) }
end

return M
