-- no-claim: correct dedupe (as txn-dedupe), but never claims, and a
-- restarted worker takes a new consumer name: what a crashed worker held
-- stays pending under its old name forever. Expected: lost (stranded).
--
-- The catalog protocol no-claim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local BLOCK_MS = 2000

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), block_ms = BLOCK_MS})  -- never claims
end
