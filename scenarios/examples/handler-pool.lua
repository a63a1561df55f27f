-- A handler pool: one consumer process runs several handler lanes
-- ([workload] handlers), as a library runs handler goroutines or tasks
-- (Dapr's redis pub/sub: 10 per subscription by default). Every lane reads
-- new entries under the process's one consumer name (w.consumer) and
-- handles them; the process's first lane (w.lane == 1) also reclaims,
-- every 2 s, entries pending longer than params.claim_idle_ms, to itself,
-- and handles them again. Its effect is a call to an external service that
-- takes [timing] effect_ms, then XACK.
--
-- With params.key = false and a claim threshold shorter than the handling
-- time, the first lane reclaims an entry another lane of the same process
-- is still handling: the effect runs twice. One lane at a time could never
-- race itself; a pool does. With params.key = true the service's
-- idempotency key absorbs the second run.
-- Expected: duplicate (handler-pool), ok (handler-pool-keyed).
-- Shows: handler lanes (w.lane, w.lanes), one consumer name per process,
-- a process that dies whole.

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local opts = {entry = e}
  if params.key then opts.key = "pay:" .. e.fields.event_id end
  if w:effect(e.fields.event_id, "external", opts) then
    w:redis("XACK", w.stream, w.group, e.id)
  end
end

local function reclaim(w)
  local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, params.claim_idle_ms, "0-0", "COUNT", 10)
  if xackly.is_error(r) then return end
  for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local next_claim = w:now() + 2000
  while true do
    if w.lane == 1 and w:now() >= next_claim then
      reclaim(w)
      next_claim = w:now() + 2000
    end
    local batch = w:read(">", {count = 1})
    if #batch == 0 then w:park(w.lane == 1 and math.max(1, next_claim - w:now()) or 2000) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
