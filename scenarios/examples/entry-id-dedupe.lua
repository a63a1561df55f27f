-- Dedupe keyed by the stream entry ID instead of the event: the dedupe row
-- and the effect commit in one SQL transaction, as in txn-ack-xdel, but the
-- row's key is e.id. The producer retries an XADD whose reply it lost, so
-- one event can sit in two entries with two IDs: both run the effect.
-- Expected: duplicate (producer-retry).
-- Shows: dedupe keyed by something other than the event id (the entry ID),
-- your own SQL table.

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO seen_entries(entry_id) VALUES (?)", e.id)
  if not mark.ok then return end
  if mark.changes == 1 and not w:effect(e.fields.event_id, "sql", {entry = e}) then
    w:sql("ROLLBACK")
    return
  end
  if w:sql("COMMIT").ok then w:redis("XACK", w.stream, w.group, e.id) end
end

function consumer(w)
  -- The store may be down when the process starts: retry, as a service would.
  while not w:sql("CREATE TABLE IF NOT EXISTS seen_entries(entry_id TEXT PRIMARY KEY)").ok do w:sleep(1000) end
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
