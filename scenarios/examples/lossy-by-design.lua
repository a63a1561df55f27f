-- Two ways to lose events on purpose. The producer turns retries off: it
-- takes each event number once (INCR in Redis, so a reconnect does not
-- start over) and sends it once; an XADD that never arrives is not sent
-- again. The consumer drops a failing event at once: XACK, no retry, no
-- dead letter. Expected: lost (never-produced, or acked-without-effect).
-- Shows: the producer as a script with retries off, dropping at once.

function producer(w)
  while true do
    local n = w:redis("INCR", "producer:next")
    if xackly.is_error(n) or n > w.events then return end
    w:redis("XADD", w.stream, "*", "event_id", "order:" .. n)  -- once, whatever happens
    w:sleep(5)
  end
end

function consumer(w)
  while true do
    for _, e in ipairs(w:read(">", {block_ms = 2000})) do
      if not e.deleted then
        w:effect(e.fields.event_id, "external", {entry = e})
      end
      w:redis("XACK", w.stream, w.group, e.id)  -- done or failed: dropped either way
    end
  end
end
