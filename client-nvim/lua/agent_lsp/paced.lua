-- Asking the server after a pause, one request at a time (the plugin's ghost text and next edits): a timer that a
-- newer start replaces (a callback already queued by the one before does nothing), and the request in flight,
-- cancelled ($/cancelRequest) by a newer one or a reset.
local client = require('agent_lsp.client')

local Paced = {}
Paced.__index = Paced

function Paced.new()
  return setmetatable({ timer = vim.loop.new_timer(), ticks = 0, pending = nil }, Paced)
end

-- Call fn (on the main loop) after ms, unless started again or stopped before.
function Paced:after(ms, fn)
  self:stop()
  local mine = self.ticks
  self.timer:start(ms, 0, vim.schedule_wrap(function()
    if mine == self.ticks then
      fn()
    end
  end))
end

function Paced:stop()
  self.ticks = self.ticks + 1
  self.timer:stop()
end

-- The request in flight ({client, id, …}), cancelled.
function Paced:cancel()
  if self.pending then
    client.cancel(self.pending.client, self.pending.id)
    self.pending = nil
  end
end

-- Whether req's answer is the one awaited (req is no longer in flight after this); false when a newer request or
-- a reset dropped it.
function Paced:answered(req)
  if self.pending ~= req then
    return false
  end
  self.pending = nil
  return true
end

return Paced
