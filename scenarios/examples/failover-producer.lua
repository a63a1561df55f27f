-- A producer of its own that tells its caller an event is published (a row
-- in its own `published` table, in the business store, which a failover
-- does not touch) after XADD, and then goes on to the next event. `wait`:
--   "confirmed"  it first asks WAIT <asked> 500 whether replicas have the
--                XADD, and adds the event again when fewer answer (the
--                replica lagged past the timeout) or cannot come (a
--                failover in between cuts its connection, and its function
--                starts again from the last published row): the consumer's
--                dedupe absorbs a second entry.
--   "ignored"    it asks WAIT 1 500 but tells its caller whatever the
--                answer: a lagging replica's 0 is taken as a yes.
--   nil          no WAIT.
-- `asked`: how many replicas WAIT asks for (1 when left out).
-- Without a confirmed WAIT, a failover that drops the XADD loses an event
-- its caller was told was published. Used by failover-waited-producer.toml
-- (ok), failover-wait-ignored-producer.toml and
-- failover-unwaited-producer.toml (both lost:failover), and with two
-- replicas by failover-wait-one-of-two.toml (lost:failover: the lagging
-- replica can be promoted) and failover-wait-all-producer.toml (ok).

-- A statement, until the store answers it (an outage fails it).
local function sql_until_ok(w, statement)
  local result = w:sql(statement)
  while not result.ok do
    w:sleep(100)
    result = w:sql(statement)
  end
  return result
end

function publish_all(w, wait, asked)
  asked = asked or 1
  sql_until_ok(w, "CREATE TABLE IF NOT EXISTS published (n INTEGER PRIMARY KEY)")
  local last = sql_until_ok(w, "SELECT MAX(n) AS n FROM published")
  local i = (last.rows[1].n or 0) + 1
  while i <= w.events do
    local id = w:redis("XADD", w.stream, "*", "event_id", "order:" .. i)
    local replicated = not xackly.is_error(id)
    if replicated and wait then
      local acks = w:redis("WAIT", tostring(asked), "500")
      replicated = wait == "ignored" and not xackly.is_error(acks) or
                   (not xackly.is_error(acks) and acks >= asked)
    end
    if replicated and w:sql("INSERT OR IGNORE INTO published VALUES (?)", i).ok then
      i = i + 1
      w:sleep(200)
    else
      w:sleep(100)  -- not told yet: add it again
    end
  end
end
