-- Fan-out: two consumer groups on one stream, each with its own consumer.
-- The run's own group ("workers") runs consumer(w): the order's effect and
-- its dedupe row commit in one SQL transaction, then XACK. A second group,
-- "search-indexer" ([[groups]] in the scenario), runs indexer(w): it calls
-- an external search service and then XACKs, keyed by an idempotency key
-- the service dedupes by (params.indexer_key = true), or not at all
-- (false: a crash between the call and the XACK indexes the event twice).
-- params.orders_dedupe = false drops the orders group's dedupe row instead
-- (a crash between its COMMIT and its XACK runs the order twice).
-- Each group's exactly-once is judged on its own.
-- Expected: ok (fan-out-groups), duplicate in group search-indexer
-- (fan-out-groups-unkeyed), duplicate in group workers
-- (fan-out-groups-orders-undeduped).
-- Shows: several consumer groups on one stream ([[groups]]), a group's own
-- function, effects judged per (group, event).

-- Reads own pending first, then new entries, claiming idle entries of the
-- group's dead workers every 5 s; `handle` does one entry.
local function serve(w, handle)
  for _, e in ipairs(w:read("0")) do handle(w, e) end
  local next_claim = w:now() + 5000
  while true do
    if w:now() >= next_claim then
      local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 30000, "0-0", "COUNT", 10)
      if not xackly.is_error(r) then
        for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
      end
      next_claim = w:now() + 5000
    end
    local batch = w:read(">")
    if #batch == 0 then w:park(math.min(2000, math.max(1, next_claim - w:now()))) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end

local function handle_order(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  if not w:sql("BEGIN").ok then return end
  local first = true  -- without the dedupe row (orders_dedupe = false), every delivery is the first
  if params.orders_dedupe ~= false then
    local mark = w:sql("INSERT OR IGNORE INTO orders_done(event_id) VALUES (?)", e.fields.event_id)
    if not mark.ok then return end
    first = mark.changes == 1
  end
  if first and not w:effect(e.fields.event_id, "sql", {entry = e}) then
    w:sql("ROLLBACK")
    return
  end
  if w:sql("COMMIT").ok then w:redis("XACK", w.stream, w.group, e.id) end
end

local function handle_index(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local opts = {entry = e}
  if params.indexer_key then opts.key = "idx:" .. e.fields.event_id end
  local outcome = w:effect(e.fields.event_id, "external", opts)
  if outcome then w:redis("XACK", w.stream, w.group, e.id) end   -- ran, or the key says it ran before
end

function consumer(w)
  while not w:sql("CREATE TABLE IF NOT EXISTS orders_done(event_id TEXT PRIMARY KEY)").ok do w:sleep(1000) end
  serve(w, handle_order)
end

function indexer(w)
  serve(w, handle_index)
end
