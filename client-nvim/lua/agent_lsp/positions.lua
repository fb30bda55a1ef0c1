-- Offsets in text: columns in LSP position encodings (utf-8, utf-16, utf-32) and byte columns of a line, both ways
-- (written out rather than taken from vim.str_byteindex / vim.str_utfindex, whose signatures differ between 0.7
-- and 0.11); where the next word of a text ends (accepting a suggestion a word at a time).
local M = {}

local function char_len(c)
  return c >= 0xF0 and 4 or c >= 0xE0 and 3 or c >= 0xC0 and 2 or 1
end

-- The byte offset of `index` units of `encoding` into `line` (at most the line's length).
function M.to_bytes(line, index, encoding)
  if encoding == 'utf-8' then
    return math.min(index, #line)
  end
  local units, b = 0, 1
  while b <= #line and units < index do
    local len = char_len(line:byte(b))
    units = units + ((encoding == 'utf-16' and len == 4) and 2 or 1)
    b = b + len
  end
  return math.min(b - 1, #line)
end

-- The units of `encoding` in the first `bytes` bytes of `line`.
function M.from_bytes(line, bytes, encoding)
  if encoding == 'utf-8' then
    return bytes
  end
  local units, b = 0, 1
  while b <= bytes and b <= #line do
    local len = char_len(line:byte(b))
    units = units + ((encoding == 'utf-16' and len == 4) and 2 or 1)
    b = b + len
  end
  return units
end

-- The next word of `text`: white space, then a run of word characters (letters, digits, _, any non-ASCII) or else
-- of other characters; all of `text` when it is only white space.
function M.next_word(text)
  return text:match('^%s*[%w_\128-\255]+') or text:match('^%s*[^%w_\128-\255%s]+') or text
end

return M
