-- dlq-after-3: correct dedupe (as txn-dedupe); a poison event (its effect
-- always fails) is dead-lettered after 3 deliveries, its payload saved
-- before the XACK. Expected: ok.
--
-- The catalog protocol dlq-after-3 (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000
local DEAD_LETTER_AFTER = 3

-- The payload is saved to events:dlq first; XACK only once it is there.
local function dead_letter(w, e)
  local saved = w:redis("XADD", "events:dlq", "*", "source_id", e.id, table.unpack(xackly.flatten(e.fields)))
  if not xackly.is_error(saved) then ack(w, e.id) end
end

-- A batch from a read or a claim. Redelivered entries (own pending, claims)
-- first have their delivery counts read; one delivered DEAD_LETTER_AFTER
-- times goes to the dead-letter stream instead. A deleted payload is acked.
local function handle_batch(w, entries, redelivered)
  local deliveries = {}
  if redelivered and #entries > 0 then
    local rows = w:redis("XPENDING", w.stream, w.group, entries[1].id, entries[#entries].id, #entries, w.consumer)
    if not xackly.is_error(rows) then
      for _, row in ipairs(rows) do deliveries[row[1]] = row[4] end
    end
  end
  for _, e in ipairs(entries) do
    if e.deleted then
      ack(w, e.id)
    elseif (deliveries[e.id] or 0) >= DEAD_LETTER_AFTER then
      dead_letter(w, e)
    else
      txn_dedupe_handle(w, e)
    end
  end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = handle_batch, min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
