-- Shared by the library scripts in scenarios/library/ (each scenario names
-- it with `[protocol] include = ["../common.lua"]`): the USER's side of a
-- consumer -- what the application does with one entry -- which is not any
-- library's code, and one read the libraries share.

-- The user's handler, as [protocol.params] handler names it:
-- "plain": the external effect (a payment API call), no dedupe.
-- "idem": a processed row keyed by the event's business id and the effect in
--   one SQL transaction; a repeat finds the row and only commits.
-- opts.timeout_ms: the plain handler's call gives up after this long.
-- Returns ok (the handler returned normally; false: it raised) and, for a
-- failed effect, its outcome ("failed", "timeout", "unavailable").
function user_handler(w, e, handler, opts)
  local event = e.fields.event_id
  if handler ~= "idem" then
    return w:effect(event, "external", {entry = e, timeout_ms = opts and opts.timeout_ms})
  end
  if not w:sql("BEGIN").ok then return false end
  local mark = w:sql("INSERT OR IGNORE INTO processed VALUES (?)", event)
  if not mark.ok then
    w:sql("ROLLBACK")
    return false
  end
  if mark.changes == 1 then
    local ok, outcome = w:effect(event, "sql", {entry = e})
    if not ok then
      w:sql("ROLLBACK")
      return false, outcome
    end
  end
  return w:sql("COMMIT").ok
end

-- Waits until cond() holds, as a goroutine blocked on a channel: a lane of a
-- process ([workload] handlers) waiting on a table its other lanes fill. It
-- polls every 50 ms at first, backing off to 1 s (a goroutine would wake at
-- once: here up to 1 s later). No w: call between cond() and what the
-- caller does next, so no other lane runs in between.
function wait_until(w, cond)
  local ms = 50
  while not cond() do
    w:sleep(ms)
    ms = math.min(ms * 2, 1000)
  end
end

-- Takes the first entry of `queue` (a table the process's lanes share),
-- waiting while it is empty: a goroutine receiving from a channel.
function take(w, queue)
  wait_until(w, function() return #queue > 0 end)
  return table.remove(queue, 1)
end

-- XREADGROUP ... NOACK `>` (w:read has no NOACK option), without BLOCK on
-- the wire: an empty reply sleeps `poll_ms` instead. Returns entries, err.
function read_noack(w, count, poll_ms)
  local reply = w:redis("XREADGROUP", "GROUP", w.group, w.consumer, "COUNT", count, "NOACK",
                        "STREAMS", w.stream, ">")
  if xackly.is_error(reply) then return {}, reply.err end
  local batch = reply and xackly.entries(reply[1][2]) or {}
  if #batch == 0 then w:sleep(poll_ms) end
  return batch
end
