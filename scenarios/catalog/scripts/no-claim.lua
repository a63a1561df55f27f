-- no-claim: correct dedupe (as txn-dedupe), but never claims, and a
-- restarted worker takes a new consumer name: what a crashed worker held
-- stays pending under its old name forever. Expected: lost (stranded).
--
-- The catalog protocol no-claim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local BLOCK_MS = 2000

-- Dedupe row and effect in one SQL transaction; XACK only after COMMIT.
local function handle(w, e)
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
  catalog_consumer(w, {handle_batch = each_entry(handle), block_ms = BLOCK_MS})  -- never claims
end
