-- txn-dedupe: the correct protocol. The dedupe row (processed.event_id is
-- the primary key) and the effect commit in one SQL transaction; XACK only
-- after COMMIT; a redelivery finds the row, skips the effect and still
-- XACKs; XAUTOCLAIM recovers a dead worker's entries.
-- Expected: ok (also run against a Redis that restarts: txn-dedupe-restart-*).
--
-- The catalog protocol txn-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function create_group(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
end

local function ack(w, id)
  w:redis("XACK", w.stream, w.group, id)
end

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

-- A batch from a read or a claim: a deleted payload is only acked.
local function handle_batch(w, entries)
  for _, e in ipairs(entries) do
    if e.deleted then ack(w, e.id) else handle(w, e) end
  end
end

function consumer(w)
  local after = "0"  -- own pending first: what this consumer held before it crashed
  while true do
    local batch, err = w:read(after)
    if err then create_group(w) break end
    if #batch == 0 then break end
    after = batch[#batch].id
    handle_batch(w, batch)
  end
  local next_claim = w:now() + CLAIM_EVERY_MS
  while true do
    if w:now() >= next_claim then  -- XAUTOCLAIM, following the cursor to its end
      local cursor = "0-0"
      repeat
        local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, MIN_IDLE_MS, cursor, "COUNT", 10)
        if xackly.is_error(r) then create_group(w) break end
        handle_batch(w, xackly.entries(r[2]))
        cursor = r[1]
      until cursor == "0-0"
      next_claim = w:now() + CLAIM_EVERY_MS
    end
    local batch, err = w:read(">")
    if err then
      create_group(w)
    elseif #batch == 0 then  -- nothing new: wait for new entries, the next claim or BLOCK_MS
      w:park(math.min(BLOCK_MS, math.max(1, next_claim - w:now())))
    else
      handle_batch(w, batch)
    end
  end
end
