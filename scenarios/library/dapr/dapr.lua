-- Dapr pubsub.redis component (components-contrib), one topic, in a sidecar.
--
-- Release: dapr/components-contrib v1.18.4 (58a79245); the error path of
-- v1.16.13 (edbe0418) with params.version = "1.16".
-- Follows pubsub/redis/redis.go: Subscribe / CreateConsumerGroup (XGROUP
-- CREATE at 0), pollNewMessagesLoop (XREADGROUP GROUP <consumerID>
-- <consumerID> COUNT queueDepth ... `>`: the group name is also the consumer
-- name, shared by every replica; NOGROUP -> create the group again),
-- enqueueMessages (an in-memory queue of queueDepth), worker / processMessage
-- (the handler under a processingTimeout deadline; success -> XACK; an error
-- before the deadline -> XACK from v1.17.0 on, no XACK before; the deadline
-- -> no XACK), reclaimPendingMessagesLoop / reclaimPendingMessages (at start,
-- then every redeliverInterval: XPENDING - + 100 over the whole group, XCLAIM
-- the ids idle >= processingTimeout and enqueue them AGAIN into the same
-- queue), and common/component/redis/redis.go ParseClientFromProperties (the
-- code's defaults: processingTimeout 60 s, redeliverInterval 15 s -- the
-- documented ones in metadata.yaml are swapped). Research notes:
-- docs/library-research/dapr-pubsub-redis.md.
--
-- Simplified:
-- * The sidecar is one process of `[workload] handlers` lanes sharing its
--   memory: lane 1 is the poller, lane 2 the reclaimer (two goroutines in
--   Dapr too), lanes 3..N are the `concurrency` handler goroutines (Dapr's
--   default 10: handlers = 12). The queue is a table of the process (Dapr's
--   channel of queueDepth). As in enqueueMessages, the poller always reads
--   COUNT queueDepth and the reclaimer claims up to queueDepth; each
--   enqueues one entry at a time and waits while the queue is full,
--   holding the rest of what it read or claimed (already delivered: their
--   idle time runs). Waits poll (wait_until, ../common.lua): up to 1 s
--   later than a goroutine would, against a 60 s deadline.
-- * The poller's BLOCK 0 (readTimeout 0) is a BLOCK of redeliverInterval,
--   renewed: new data ends either at once.
-- * The Dapr runtime (HTTP call to the app, resiliency retries, dead-letter
--   topics) collapses into the handler's outcome: ok, error (the external
--   call failed: a poison event), or the deadline (the call is still
--   running at processingTimeout).
--
-- params (defaults: the code's, in ms): processing_timeout_ms 60000,
-- redeliver_interval_ms 15000, queue_depth 100, version "1.18" | "1.16",
-- handler "plain" | "idem" (user_handler in ../common.lua).

local PROCESSING_MS = params.processing_timeout_ms or 60000
local REDELIVER_MS = params.redeliver_interval_ms or 15000
local QUEUE_DEPTH = params.queue_depth or 100
local ACK_ON_ERROR = params.version ~= "1.16"
local RECLAIM = PROCESSING_MS > 0 and REDELIVER_MS > 0

queue = {}  -- the sidecar's message queue, shared by its poller and handler lanes

-- The app's handler (user_handler, ../common.lua) under the deadline.
-- Returns "ok", "error" or "deadline".
local function app(w, e)
  local ok, outcome = user_handler(w, e, params.handler, {timeout_ms = RECLAIM and PROCESSING_MS or nil})
  return ok and "ok" or (outcome == "timeout" and "deadline" or "error")
end

-- Lane 1: pollNewMessagesLoop and reclaimPendingMessagesLoop.
-- enqueueMessages: `r.queue <- msg` for each, blocking while the channel
-- holds queueDepth.
local function enqueue(w, entries)
  for _, e in ipairs(entries) do
    wait_until(w, function() return #queue < QUEUE_DEPTH end)
    queue[#queue + 1] = e
  end
end

local function create_group(w) w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM") end

-- Lane 1: pollNewMessagesLoop.
local function poller(w)
  local name = w.group  -- consumerID: the group and the consumer name of every replica
  create_group(w)
  while true do
    local batch, err = w:read(">", {count = QUEUE_DEPTH, block_ms = RECLAIM and REDELIVER_MS or 2000,
                                    consumer = name})
    if err then create_group(w) end
    if #batch > 0 then w:point("after-read") end
    enqueue(w, batch)
  end
end

-- Lane 2: reclaimPendingMessagesLoop: a pass at start, then every
-- redeliverInterval (a ticker: a pass that ran long is followed at once).
local function reclaimer(w)
  local name = w.group
  local function reclaim()
    while true do
      local rows = w:redis("XPENDING", w.stream, w.group, "-", "+", QUEUE_DEPTH)
      if xackly.is_error(rows) then return end
      local ids = {}
      for _, row in ipairs(rows) do
        if row[3] >= PROCESSING_MS then ids[#ids + 1] = row[1] end
      end
      if #ids == 0 then return end
      local claimed = w:redis("XCLAIM", w.stream, w.group, name, PROCESSING_MS, table.unpack(ids))
      if xackly.is_error(claimed) then return end
      if claimed and #claimed > 0 then w:point("after-claim") end
      enqueue(w, xackly.entries(claimed))
    end
  end
  if not RECLAIM then return end  -- processingTimeout or redeliverInterval 0: no reclaim goroutine
  reclaim()
  local next_tick = w:now() + REDELIVER_MS
  while true do
    w:sleep(math.max(1, next_tick - w:now()))
    reclaim()
    next_tick = next_tick + REDELIVER_MS
    if next_tick <= w:now() then next_tick = w:now() + REDELIVER_MS end  -- ticks dropped while busy
  end
end

-- Lanes 2..N: the worker goroutines, processMessage.
local function handler(w)
  while true do
    local e = take(w, queue)
    if not e.deleted then
      local outcome = app(w, e)
      if outcome == "ok" then w:point("after-commit") end
      if outcome == "ok" or (outcome == "error" and ACK_ON_ERROR) then
        w:redis("XACK", w.stream, w.group, e.id)
      end
    end
  end
end

function consumer(w)
  if w.lanes < 3 then
    error("dapr.lua models a sidecar as a poller lane, a reclaimer lane and handler lanes: set "
          .. "[workload] handlers = 12 (Dapr's concurrency 10, plus the poller and the reclaimer)")
  end
  if w.lane == 1 then poller(w) elseif w.lane == 2 then reclaimer(w) else handler(w) end
end
