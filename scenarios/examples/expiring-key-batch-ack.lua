-- An external payment API with an idempotency key that it forgets after
-- 10 s, a 500 ms timeout on the call, per-event effect durations, and a
-- batch ack every 5 entries across reads (kept in a Lua table, lost with
-- the process). A crash before the batch ack redelivers entries after the
-- claim's 30 s idle time, when the service has forgotten the keys: the
-- payment runs twice. Expected: duplicate.
-- Shows: an idempotency key at the external service that expires, a
-- timeout on the external call, per-event effect durations, an ack every
-- N entries across reads, in-process retry with backoff, ack in a finally.

local unacked = {}

local function flush(w)
  if #unacked == 0 then return end
  w:redis("XACK", w.stream, w.group, table.unpack(unacked))
  unacked = {}
end

local function pay(w, e)
  local event = e.fields.event_id
  local n = tonumber(event:match("%d+")) or 1
  for attempt = 1, 3 do  -- in-process retry with backoff
    local ok, outcome = w:effect(event, "external",
      {entry = e, key = event, key_ttl_ms = 10000, duration_ms = 50 + 100 * (n % 3), timeout_ms = 500})
    if ok or outcome == "timeout" or outcome == "failed" then return end
    w:sleep(100 * attempt)
  end
end

local function handle(w, e)
  -- "finally": the entry joins the batch ack whatever the payment did
  local ok, err = pcall(pay, w, e)
  unacked[#unacked + 1] = e.id
  if #unacked >= 5 then flush(w) end
  if not ok then error(err) end
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
    if #batch == 0 then flush(w) end  -- idle: ack what is left
  end
end
