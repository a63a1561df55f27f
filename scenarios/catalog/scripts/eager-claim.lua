-- eager-claim: no dedupe, and claims entries idle for only 50 ms, below
-- the processing time: a healthy but slow (stalled) worker and the claimer
-- both run the effect. Expected: duplicate.
--
-- The catalog protocol eager-claim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 50, 100, 2000

local function handle(w, e)
  if w:effect(e.fields.event_id, "external", {entry = e}) then ack(w, e.id) end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
