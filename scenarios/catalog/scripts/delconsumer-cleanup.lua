-- delconsumer-cleanup: correct dedupe (as txn-dedupe; restarted workers
-- take new names); a janitor deletes consumers idle for 10 s without
-- checking their pending count. Expected: lost (consumer-deleted).
--
-- The catalog protocol delconsumer-cleanup (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

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
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
