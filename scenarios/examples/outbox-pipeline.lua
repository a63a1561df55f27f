-- A two-stage pipeline with a transactional outbox.
-- Stage 1 (stream events, group workers): transaction 1 records the event
-- as processed, runs the effect and writes an outbox row, all or nothing.
-- Transaction 2 publishes the outbox row to the stream notifications and
-- marks it sent. Then MULTI { XACK; XDEL } EXEC acks and deletes the entry.
-- A redelivery skips the effect but still publishes an unsent outbox row.
-- Stage 2 (stream notifications, group mailers, consumer name "mailer"
-- shared by all workers): one EVAL of our own sends each notification once
-- (a done key per notification id, a payload field), acks and deletes it.
-- Expected: ok.
-- Shows: more than one begin..commit, an outbox (XADD to another stream),
-- more than one stream and consumer group, MULTI/EXEC, the user's own EVAL
-- with its own keys, dedupe keyed by a payload field (stage 2), all
-- workers sharing one consumer name (stage 2).

local NOTIFY = [[
if redis.call('SET', KEYS[1], '1', 'NX') then redis.call('INCR', KEYS[2]) end
redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[3], ARGV[2])
return 1
]]

local function setup(w)
  -- The store may be down when the process starts: retry, as a service would.
  while not w:sql("CREATE TABLE IF NOT EXISTS outbox(event_id TEXT PRIMARY KEY, sent INTEGER)").ok do w:sleep(1000) end
  w:redis("XGROUP", "CREATE", "notifications", "mailers", "0", "MKSTREAM")
end

-- Transaction 2: publish the event's outbox row if it is not sent yet.
local function publish(w, event)
  if not w:sql("BEGIN").ok then return false end
  local row = w:sql("SELECT sent FROM outbox WHERE event_id = ?", event)
  if not row.ok then return false end
  if #row.rows == 1 and row.rows[1].sent == 0 then
    local id = w:redis("XADD", "notifications", "*", "notification_id", "mail:" .. event, "event_id", event)
    if xackly.is_error(id) then w:sql("ROLLBACK") return false end
    if not w:sql("UPDATE outbox SET sent = 1 WHERE event_id = ?", event).ok then return false end
  end
  return w:sql("COMMIT").ok
end

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local event = e.fields.event_id
  -- Transaction 1: processed row, effect and outbox row together.
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event)
  if not mark.ok then return end
  if mark.changes == 1 then
    if not w:effect(event, "sql", {entry = e}) then w:sql("ROLLBACK") return end
    if not w:sql("INSERT INTO outbox VALUES (?, 0)", event).ok then return end
    if not w:sql("COMMIT").ok then return end
    w:point("point:after-txn-1")
  else
    w:sql("ROLLBACK")  -- done before; its outbox row may still be unsent
  end
  if not publish(w, event) then return end
  w:redis("MULTI")
  w:redis("XACK", w.stream, w.group, e.id)
  w:redis("XDEL", w.stream, e.id)
  w:redis("EXEC")
end

-- Stage 2: a few notifications, own pending first.
local function notify(w)
  local mine = w:read("0", {stream = "notifications", group = "mailers", consumer = "mailer", count = 5})
  local batch = #mine > 0 and mine or
      w:read(">", {stream = "notifications", group = "mailers", consumer = "mailer", count = 5})
  for _, n in ipairs(batch) do
    local key = "sent:" .. (n.fields.notification_id or n.id)
    w:redis("EVAL", NOTIFY, 3, key, "mails_sent", "notifications", "mailers", n.id)
  end
end

function consumer(w)
  setup(w)
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
    notify(w)
    local batch = w:read(">")
    if #batch == 0 then w:park(math.min(2000, math.max(1, next_claim - w:now()))) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
