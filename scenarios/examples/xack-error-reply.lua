-- An XACK answered with an error: during a failover (-READONLY), a restart
-- (-LOADING) or a busy script (-BUSY) the server refuses the XACK and it
-- never runs. Per-entry dedupe is a SQL transaction; each worker reads its
-- own pending entries once at start (again until that read is not refused:
-- a refused one would leave them unread), then only new ones, and nobody
-- claims.
-- params.retry_ack = false: the XACK's reply is not looked at, so a
-- refused XACK leaves the entry pending with a live consumer that never
-- reads it again (pel-leak). true: the XACK is sent again until it runs.
-- Expected: pel-leak (xack-error-ignored), ok (xack-error-retried).
-- Shows: an error reply to a protocol's own command (`error-reply` in the
-- fault kinds; `[schedule] faults` names one), xackly.is_error.

local function ack(w, e)
  local reply = w:redis("XACK", w.stream, w.group, e.id)
  while params.retry_ack and xackly.is_error(reply) do
    w:sleep(100)
    reply = w:redis("XACK", w.stream, w.group, e.id)
  end
end

local function handle(w, e)
  if e.deleted then ack(w, e) return end
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO done(event_id) VALUES (?)", e.fields.event_id)
  if not mark.ok then w:sql("ROLLBACK") return end
  if mark.changes == 1 and not w:effect(e.fields.event_id, "sql", {entry = e}) then
    w:sql("ROLLBACK")
    return
  end
  if w:sql("COMMIT").ok then ack(w, e) end
end

-- This consumer's own pending entries (at most 100: the example's events).
local function own_pending(w)
  while true do
    local entries, err = w:read("0", {count = 100})
    if not err then return entries end
    w:sleep(100)
  end
end

function consumer(w)
  while not w:sql("CREATE TABLE IF NOT EXISTS done(event_id TEXT PRIMARY KEY)").ok do w:sleep(1000) end
  for _, e in ipairs(own_pending(w)) do handle(w, e) end
  while true do
    local batch = w:read(">")
    if #batch == 0 then w:park(2000) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
