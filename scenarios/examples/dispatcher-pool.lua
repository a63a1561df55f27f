-- A dispatcher pool, the shape of Dapr's redis pub/sub (one poller, a
-- queue, handler goroutines): in one consumer process, lane 1 polls new
-- entries (XREADGROUP) and, every params.claim_every_ms, reclaims entries
-- pending longer than params.claim_idle_ms (XAUTOCLAIM), and puts what it
-- gets in an in-memory queue; lanes 2..N take entries from that queue and
-- handle them (an external effect, then XACK). The queue is a Lua table the
-- process's lanes share ([workload] handlers: lanes share their process's
-- memory, as goroutines share a channel); a crash loses it with the process.
--
-- With params.key = false and more backlog than the handlers clear within
-- the claim threshold, the poller reclaims entries still waiting in its own
-- queue (an entry's idle time runs from its delivery, not from when a
-- handler took it) and queues them again: the effect runs twice with no
-- fault at all. With params.key = true the service's idempotency key
-- absorbs the second run.
-- Expected: duplicate (dispatcher-pool), ok (dispatcher-pool-keyed).
-- Shows: lanes sharing their process's memory (a queue between a poller
-- lane and handler lanes).

queue = {}  -- the process's: entries read or reclaimed, not yet taken by a handler

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local opts = {entry = e}
  if params.key then opts.key = "pay:" .. e.fields.event_id end
  if w:effect(e.fields.event_id, "external", opts) then
    w:redis("XACK", w.stream, w.group, e.id)
  end
end

local function poll(w)
  local next_claim = w:now() + params.claim_every_ms
  while true do
    if w:now() >= next_claim then
      local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, params.claim_idle_ms, "0-0", "COUNT", 10)
      if not xackly.is_error(r) then
        for _, e in ipairs(xackly.entries(r[2])) do queue[#queue + 1] = e end
      end
      next_claim = w:now() + params.claim_every_ms
    end
    local batch = w:read(">", {count = 10, block_ms = math.max(1, next_claim - w:now())})
    for _, e in ipairs(batch) do queue[#queue + 1] = e end
  end
end

function consumer(w)
  if w.lane == 1 then
    w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
    poll(w)
  end
  while true do
    local e = table.remove(queue, 1)
    if e then handle(w, e) else w:sleep(100) end
  end
end
