-- Dedupe keyed by a payload field (payment_id, which our own producer puts
-- in every entry and keeps when it retries), in a SQL table whose rows
-- expire after 10 s: every transaction first deletes the expired ones. The
-- row and the effect commit together; XACK follows. A crash after COMMIT
-- leaves the entry pending until it is claimed after 30 s, when its row has
-- expired: the payment runs again. Expected: duplicate.
-- Shows: dedupe keyed by a payload field, an expiry on a SQL dedupe store,
-- the producer as a script (with retries).

local TTL_MS = 10000

function producer(w)
  local n = 1
  while n <= w.events do
    local id = w:redis("XADD", w.stream, "*", "event_id", "order:" .. n, "payment_id", "pay-" .. n)
    if not xackly.is_error(id) then n = n + 1 end  -- an error reply: send the same again
    w:sleep(5)
  end
end

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local key = e.fields.payment_id
  if not w:sql("BEGIN").ok then return end
  local ok = w:sql("DELETE FROM payments_seen WHERE expires_at_ms <= ?", w:now()).ok
  local mark = ok and w:sql("INSERT OR IGNORE INTO payments_seen VALUES (?, ?)", key, w:now() + TTL_MS)
  if not (mark and mark.ok) then w:sql("ROLLBACK") return end
  if mark.changes == 1 and not w:effect(e.fields.event_id, "sql", {entry = e}) then
    w:sql("ROLLBACK")
    return
  end
  if w:sql("COMMIT").ok then w:redis("XACK", w.stream, w.group, e.id) end
end

function consumer(w)
  -- The store may be down when the process starts: retry, as a service would.
  while not w:sql("CREATE TABLE IF NOT EXISTS payments_seen(payment_id TEXT PRIMARY KEY, expires_at_ms INTEGER)").ok do
    w:sleep(1000)
  end
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
