-- no-dedupe: run the effect, then XACK; no dedupe.
-- A crash between the effect and XACK redelivers the entry: the effect runs
-- again. Expected: duplicate (crash:after-effect).
--
-- The catalog protocol no-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function handle(w, e)
  if w:effect(e.fields.event_id, "external", {entry = e}) then ack(w, e.id) end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
