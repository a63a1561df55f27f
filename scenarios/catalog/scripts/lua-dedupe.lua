-- lua-dedupe: one EVAL checks done, applies the effect (in Redis),
-- records done and XACKs. Expected: ok.
--
-- The catalog protocol lua-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

-- One EVAL checks the done key, records the effect in the Redis ledger
-- (KEYS[2], w.effects_key), sets the done key and XACKs: all or nothing.
-- A redelivery finds the key and only XACKs.
local HANDLE = [[
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('SET', KEYS[1], '1')
end
redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
return 1
]]

local function handle(w, e)
  local event = e.fields.event_id
  local record = table.concat({event, e.id, w.consumer, w:now()}, "|")
  w:redis("EVAL", HANDLE, 3, "done:" .. event, w.effects_key, w.stream, w.group, e.id, record)
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
