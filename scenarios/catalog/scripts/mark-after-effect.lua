-- mark-after-effect: check done, run the effect, mark done, XACK: three
-- separate steps. A crash after the effect and before the mark: the
-- redelivery does not find the mark and runs the effect again.
-- Expected: duplicate (crash:after-effect).
--
-- The catalog protocol mark-after-effect (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function handle(w, e)
  local event = e.fields.event_id
  local seen = w:sql("SELECT 1 FROM processed WHERE event_id = ?", event)
  if not seen.ok then return end
  if #seen.rows > 0 then ack(w, e.id) return end  -- done before: skip, but XACK
  if not w:effect(event, "external", {entry = e}) then return end
  if not w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event).ok then return end
  ack(w, e.id)
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
