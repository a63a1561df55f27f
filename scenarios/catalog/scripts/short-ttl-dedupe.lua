-- short-ttl-dedupe: one EVAL checks and records done with a 10 s TTL,
-- then XACK; claims after 30 s. A redelivery after the TTL runs the effect
-- again. Expected: duplicate (dedupe-expired).
--
-- The catalog protocol short-ttl-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

-- One EVAL checks the done key, records the effect in the Redis ledger
-- (KEYS[2], w.effects_key) and sets the done key with a 10 s TTL; XACK
-- afterwards. Entries are claimed only after 30 s: by then the key is gone.
local HANDLE = [[
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
return 1
]]

local function handle(w, e)
  local event = e.fields.event_id
  local record = table.concat({event, e.id, w.consumer, w:now()}, "|")
  local r = w:redis("EVAL", HANDLE, 2, "done:" .. event, w.effects_key, record, 10000)
  if not xackly.is_error(r) then ack(w, e.id) end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
