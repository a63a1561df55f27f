-- A producer of its own that tells its caller an event is published (a row
-- in its own `published` table, in the business store, which a failover
-- does not touch) after XADD, and then goes on to the next event. With
-- `wait`, it first asks WAIT 1 0 whether a replica has the XADD, and adds
-- the event again when it cannot tell (a failover in between cuts its
-- connection, and its function starts again from the last published row):
-- the consumer's dedupe absorbs a second entry. Without `wait`, a failover
-- that drops the XADD loses an event its caller was told was published.
-- Used by failover-waited-producer.toml (ok) and
-- failover-unwaited-producer.toml (lost:failover).

-- A statement, until the store answers it (an outage fails it).
local function sql_until_ok(w, statement)
  local result = w:sql(statement)
  while not result.ok do
    w:sleep(100)
    result = w:sql(statement)
  end
  return result
end

function publish_all(w, wait)
  sql_until_ok(w, "CREATE TABLE IF NOT EXISTS published (n INTEGER PRIMARY KEY)")
  local last = sql_until_ok(w, "SELECT MAX(n) AS n FROM published")
  local i = (last.rows[1].n or 0) + 1
  while i <= w.events do
    local id = w:redis("XADD", w.stream, "*", "event_id", "order:" .. i)
    local replicated = not xackly.is_error(id) and (not wait or w:redis("WAIT", "1", "0") == 1)
    if replicated and w:sql("INSERT OR IGNORE INTO published VALUES (?)", i).ok then
      i = i + 1
      w:sleep(200)
    else
      w:sleep(100)  -- not told yet: add it again
    end
  end
end
