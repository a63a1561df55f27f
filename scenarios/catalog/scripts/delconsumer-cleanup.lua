-- delconsumer-cleanup: correct dedupe (as txn-dedupe; restarted workers
-- take new names); a janitor deletes consumers idle for 10 s without
-- checking their pending count. Expected: lost (consumer-deleted).
--
-- The catalog protocol delconsumer-cleanup (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

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

-- The janitor deletes every consumer idle for 10 s, without looking at its
-- pending count: a crashed consumer's pending entries go with it.
function janitor(w)
  while true do
    w:sleep(1000)
    local consumers = w:redis("XINFO", "CONSUMERS", w.stream, w.group)
    if not xackly.is_error(consumers) then
      for _, c in ipairs(consumers) do
        local info = xackly.map(c)
        if info.idle >= 10000 then
          w:redis("XGROUP", "DELCONSUMER", w.stream, w.group, info.name)
        end
      end
    end
  end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
