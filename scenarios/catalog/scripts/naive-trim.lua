-- naive-trim: correct dedupe (as txn-dedupe); a janitor trims the stream
-- to its last 3 entries every second, whatever is still unread or pending.
-- Expected: lost (payload-deleted).
--
-- The catalog protocol naive-trim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

-- The janitor: retention every second, even while consumers are down.
function janitor(w)
  while true do
    w:sleep(1000)
    w:redis("XTRIM", w.stream, "MAXLEN", 3)
  end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
