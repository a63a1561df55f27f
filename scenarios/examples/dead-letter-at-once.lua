-- Dead-letters at once: an event whose effect fails (a poison event) is
-- not retried; its payload and the error go to the dead-letter stream, and
-- only then is the entry acked. Per-entry dedupe is a SQL transaction.
-- Expected: ok (the poison event is dead-lettered, every other event's
-- effect runs once).
-- Shows: dead-lettering at once, with fields of one's own (the error).
-- The dead-letter stream is events:dlq: the oracle does not yet watch a
-- stream of your choice (docs/scripts.md, "What the oracle sees").

local DEAD_LETTERS = "events:dlq"

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local event = e.fields.event_id
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event)
  if not mark.ok then return end  -- the store is down: try again later
  if mark.changes == 1 then
    local ran, outcome = w:effect(event, "sql", {entry = e})
    if not ran then
      w:sql("ROLLBACK")
      if outcome ~= "failed" then return end  -- unavailable: try again later
      local saved = w:redis("XADD", DEAD_LETTERS, "*", "source_id", e.id, "event_id", event, "error", outcome)
      if xackly.is_error(saved) then return end
      w:redis("XACK", w.stream, w.group, e.id)
      return
    end
    if not w:sql("COMMIT").ok then return end
  else
    w:sql("ROLLBACK")  -- done before: only ack
  end
  w:redis("XACK", w.stream, w.group, e.id)
end

function consumer(w)
  for _, e in ipairs(w:read("0")) do handle(w, e) end  -- own pending at start-up
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
