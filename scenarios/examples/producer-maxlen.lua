-- A producer of its own that caps the stream with XADD MAXLEN 3 and never
-- retries, and consumers that all share one consumer name. The cap trims
-- entries nobody has read yet: their payload is gone. Expected: lost.
-- Shows: the producer as a script, XADD MAXLEN on the producer, producer
-- retries off, all workers sharing one consumer name, a ack-then-XDEL-free
-- simple consumer.

function producer(w)
  for i = 1, w.events do
    w:redis("XADD", w.stream, "MAXLEN", "3", "*", "event_id", "order:" .. i)
    w:sleep(2)
  end
end

function consumer(w)
  while true do
    local batch = w:read(">", {count = 2, block_ms = 2000, consumer = "shared"})
    for _, e in ipairs(batch) do
      if not e.deleted then w:effect(e.fields.event_id, "external", {entry = e}) end
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
