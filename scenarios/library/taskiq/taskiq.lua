-- taskiq-redis RedisStreamBroker with the taskiq worker's receiver.
--
-- Release: taskiq-python/taskiq-redis 1.2.2 (374c7897) with taskiq 0.12.4
-- (442621dc). Follows taskiq_redis/redis_broker.py: RedisStreamBroker
-- __init__ (defaults: a uuid4 consumer name per broker instance, idle_timeout
-- 600 000 ms, xread_count 100, xread_block 2000, unacknowledged_lock_timeout
-- None), listen (XREADGROUP `>`; after each read round a redis-py Lock on
-- autoclaim:<group>:<stream> -- SET NX, no expiry by default -- and, holding
-- it, XAUTOCLAIM ... <idle_timeout> 0-0 COUNT 100, the claimed entries handed
-- out while the lock is still held, then the lock's release), _ack_generator
-- (XACK); and taskiq/receiver/receiver.py (ack_time WHEN_SAVED by default: the
-- XACK after the result is saved, also when the task raised; WHEN_RECEIVED:
-- before the task). Research notes: docs/library-research/taskiq-redis.md.
--
-- Simplified:
-- * One worker process = one worker slot of `[workload] handlers` lanes
--   sharing its memory: lane 1 runs listen() and the receiver's prefetcher
--   (every message it yields goes to the prefetch queue, a table of the
--   process), lanes 2..N are the tasks running at once (taskiq's
--   --max-async-tasks, default 100; the files use 10: handlers = 11). The
--   claimed entries are queued while the lock is held, so the lock is held
--   only for that short while, as in the library when task slots are free.
--   The queue is unbounded: the library's prefetcher takes a message only
--   when a task slot is free (max_prefetch 0), so with every slot busy its
--   claim generator waits holding the lock; not modelled.
-- * redis-py's Lock blocks by default (the library checks lock.locked()
--   first); here a taken lock skips the round. The key is
--   autoclaim:{group}:{stream} in the library; one key either way.
-- * The result backend is the task's own commit (the idem handler's row);
--   "saved" = the handler returned.
-- * The lock release is redis-py's compare-and-delete, as an EVAL.
-- * The group is created by the harness at 0 before any worker starts (the
--   library's default `$` start cannot be modelled: see docs/libraries.md).
--
-- params (defaults are the library's, in ms): idle_timeout_ms 600000, xread_block_ms 2000,
-- lock_timeout_ms 0 (None: the lock never expires), ack_type "when_saved" |
-- "when_received", handler "plain" | "idem" (user_handler in ../common.lua).

local IDLE_MS = params.idle_timeout_ms or 600000
local LOCK_TIMEOUT_MS = params.lock_timeout_ms or 0
local ACK_FIRST = params.ack_type == "when_received"
local LOCK_KEY = "autoclaim:taskiq:" .. "workers"
local BLOCK_MS = params.xread_block_ms or 2000

-- The receiver: ack when received, or after the result is saved (success or not).
local function receive(w, e)
  if e.deleted then return end
  if ACK_FIRST then
    w:redis("XACK", w.stream, w.group, e.id)
    w:point("after-ack")
  end
  local ok = user_handler(w, e, params.handler)
  if ok then w:point("after-commit") end
  if not ACK_FIRST then w:redis("XACK", w.stream, w.group, e.id) end
end

prefetch = {}  -- the receiver's prefetch queue, shared by the listener and the task lanes

-- Lane 1: listen() and the prefetcher.
local function listener(w)
  local token = w.consumer .. ":" .. w.incarnation  -- redis-py Lock's token (a uuid)
  while true do
    local batch = w:read(">", {count = 100, block_ms = BLOCK_MS})
    if #batch > 0 then w:point("after-read") end
    for _, e in ipairs(batch) do prefetch[#prefetch + 1] = e end
    local set = LOCK_TIMEOUT_MS > 0 and w:redis("SET", LOCK_KEY, token, "NX", "PX", LOCK_TIMEOUT_MS)
                or w:redis("SET", LOCK_KEY, token, "NX")
    if set == "OK" then  -- locked by someone else: skip the claim this round
      local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, IDLE_MS, "0-0", "COUNT", 100)
      if not xackly.is_error(r) then
        local claimed = xackly.entries(r[2])
        if #claimed > 0 then w:point("after-claim") end
        for _, e in ipairs(claimed) do prefetch[#prefetch + 1] = e end  -- yielded while the lock is held
      end
      w:redis("EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
              1, LOCK_KEY, token)
    end
  end
end

-- Lanes 2..N: the tasks, each one message at a time from the prefetch queue.
local function task(w)
  while true do
    receive(w, take(w, prefetch))
  end
end

function consumer(w)
  if w.lanes < 2 then
    error("taskiq.lua models a worker as a listener lane and task lanes: set [workload] handlers = 11")
  end
  if w.lane == 1 then listener(w) else task(w) end
end
