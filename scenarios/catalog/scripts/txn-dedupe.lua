-- txn-dedupe: the correct protocol. The dedupe row (processed.event_id is
-- the primary key) and the effect commit in one SQL transaction; XACK only
-- after COMMIT; a redelivery finds the row, skips the effect and still
-- XACKs; XAUTOCLAIM recovers a dead worker's entries.
-- Expected: ok (also run against a Redis that restarts: txn-dedupe-restart-*).
--
-- The catalog protocol txn-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

-- Dedupe row and effect in one SQL transaction; XACK only after COMMIT.
-- (Global: the catalog scripts built on txn-dedupe include this file for it.)
function txn_dedupe_handle(w, e)
  local event = e.fields.event_id
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event)
  if not mark.ok then return end  -- the store is down: it rolled back already
  if mark.changes == 0 then  -- done before: roll back, but still XACK
    w:sql("ROLLBACK")
    ack(w, e.id)
    return
  end
  local ran, outcome = w:effect(event, "sql", {entry = e})
  if not ran then
    if outcome == "failed" then w:sql("ROLLBACK") end  -- (an outage rolled back already)
    return
  end
  if not w:sql("COMMIT").ok then return end
  ack(w, e.id)
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
