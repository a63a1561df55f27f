-- setnx-first: SET done-key NX, then the external effect, then XACK.
-- A crash after the SET and before the effect: the redelivery finds the key
-- and skips the effect. Expected: lost (acked-without-effect).
--
-- The catalog protocol setnx-first (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function handle(w, e)
  local event = e.fields.event_id
  local set = w:redis("SET", "done:" .. event, "1", "NX")
  if xackly.is_error(set) then return end
  if not set then ack(w, e.id) return end  -- done before: skip, but XACK
  if w:effect(event, "external", {entry = e}) then ack(w, e.id) end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
