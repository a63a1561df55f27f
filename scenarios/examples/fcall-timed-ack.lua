-- A Redis Function of our own (FUNCTION LOAD + FCALL) handles each entry
-- atomically: if its done key is new, it records the effect in the Redis
-- ledger. The XACKs are timed: handled IDs collect in a Lua table and are
-- acked together at most every 500 ms (or when the worker is idle). A crash
-- before the timed XACK redelivers entries whose effect is done; the done
-- key makes the second FCALL a no-op. Expected: ok.
-- Shows: the user's own server-side Lua as a Redis Function (FCALL) with
-- its own keys, a timed ack across reads.

local LIBRARY = [[#!lua name=orders
redis.register_function('handle_order', function(keys, args)
  if redis.call('SET', keys[1], '1', 'NX') then
    redis.call('RPUSH', keys[2], args[1])
    return 1
  end
  return 0
end)
]]
local ACK_EVERY_MS = 500

local handled, last_ack = {}, 0

local function ack_due(w, now_anyway)
  if #handled == 0 or (not now_anyway and w:now() - last_ack < ACK_EVERY_MS) then return end
  w:redis("XACK", w.stream, w.group, table.unpack(handled))
  handled, last_ack = {}, w:now()
end

local function handle(w, e)
  if not e.deleted then
    local record = table.concat({e.fields.event_id, e.id, w.consumer, w:now()}, "|")
    local r = w:redis("FCALL", "handle_order", 2, "done:" .. e.fields.event_id, w.effects_key, record)
    if xackly.is_error(r) then return end  -- not handled: stays pending
  end
  handled[#handled + 1] = e.id
  ack_due(w, false)
end

function consumer(w)
  w:redis("FUNCTION", "LOAD", "REPLACE", LIBRARY)
  last_ack = w:now()
  for _, e in ipairs(w:read("0")) do handle(w, e) end
  local next_claim = w:now() + 5000
  while true do
    if w:now() >= next_claim then
      local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 30000, "0-0", "COUNT", 10)
      if not xackly.is_error(r) then
        for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
      end
      next_claim = w:now() + 5000
    end
    local batch = w:read(">")
    if #batch == 0 then
      ack_due(w, true)  -- idle: ack what is left
      w:park(math.min(2000, math.max(1, next_claim - w:now())))
    end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
