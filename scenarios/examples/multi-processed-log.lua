-- Seed 002's consumer: run the external effect, then XACK and XADD to a
-- processed-log stream inside one MULTI/EXEC. The MULTI is atomic in Redis,
-- but the effect is outside it: a crash after the effect and before EXEC
-- redelivers the entry and the effect runs again. Expected: duplicate.
-- Shows: MULTI/EXEC blocks, XADD to another stream, XAUTOCLAIM recovery.

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  w:effect(e.fields.event_id, "external", {entry = e})
  w:redis("MULTI")
  w:redis("XACK", w.stream, w.group, e.id)
  w:redis("XADD", "processed_log", "*", "event_id", e.fields.event_id, "source_id", e.id)
  w:redis("EXEC")
end

function consumer(w)
  local next_claim = w:now() + 5000
  while true do
    if w:now() >= next_claim then
      local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 30000, "0-0", "COUNT", 10)
      if not xackly.is_error(r) then
        for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
      end
      next_claim = w:now() + 5000
    end
    local batch = w:read(">", {block_ms = math.max(1, next_claim - w:now())})
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
