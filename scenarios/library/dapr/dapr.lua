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
--   memory: lane 1 is the poller and the reclaimer (in Dapr two goroutines;
--   here the poller's blocking read ends when a reclaim pass is due), lanes
--   2..N are the `concurrency` handler goroutines (Dapr's default 10:
--   handlers = 11). The queue is a table of the process (Dapr's channel of
--   queueDepth); the poller reads at most what fits in it and waits while
--   it is full; an idle handler lane waits for it (take, ../common.lua:
--   up to 1 s later than a goroutine would, against a 60 s deadline).
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
local function poller(w)
  local name = w.group  -- consumerID: the group and the consumer name of every replica
  local function create_group() w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM") end

  local function reclaim()
    while true do
      local rows = w:redis("XPENDING", w.stream, w.group, "-", "+", 100)
      if xackly.is_error(rows) then return end
      local ids = {}
      for _, row in ipairs(rows) do
        if row[3] >= PROCESSING_MS then ids[#ids + 1] = row[1] end
      end
      if #ids == 0 then return end
      local claimed = w:redis("XCLAIM", w.stream, w.group, name, PROCESSING_MS, table.unpack(ids))
      if xackly.is_error(claimed) then return end
      for _, e in ipairs(xackly.entries(claimed)) do queue[#queue + 1] = e end
      if claimed and #claimed > 0 then w:point("after-claim") end
    end
  end

  create_group()
  if RECLAIM then reclaim() end
  local next_reclaim = w:now() + REDELIVER_MS
  while true do
    if RECLAIM and w:now() >= next_reclaim then
      reclaim()
      next_reclaim = w:now() + REDELIVER_MS
    end
    local until_reclaim = RECLAIM and math.max(1, next_reclaim - w:now()) or 2000
    if #queue < QUEUE_DEPTH then
      local batch, err = w:read(">", {count = QUEUE_DEPTH - #queue, block_ms = until_reclaim, consumer = name})
      if err then create_group() end
      for _, e in ipairs(batch) do queue[#queue + 1] = e end
      if #batch > 0 then w:point("after-read") end
    else
      w:sleep(math.min(until_reclaim, 100))  -- the channel is full: enqueueing blocks
    end
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
  if w.lanes < 2 then
    error("dapr.lua models a sidecar as a poller lane and handler lanes: set [workload] handlers = 11 "
          .. "(Dapr's concurrency 10, plus the poller)")
  end
  if w.lane == 1 then poller(w) else handler(w) end
end
