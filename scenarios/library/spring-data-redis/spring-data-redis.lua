-- Spring Data Redis StreamMessageListenerContainer (and StreamReceiver),
-- consumer-group mode.
--
-- Release: spring-projects/spring-data-redis 4.1.1 (2ab177e1).
-- Follows src/main/java/org/springframework/data/redis/stream/:
-- StreamPollTask.doLoop / readRecords / deserializeAndEmitRecords (offset
-- advanced before the listener runs), DefaultStreamMessageListenerContainer.
-- getReadFunction (NOACK iff auto-acknowledge) and getStreamReadOptions
-- (BLOCK = pollTimeout 2 s, COUNT only with batchSize), ReadOffsetStrategy
-- (LastConsumed: `>` every time; NextMessage: the given id, then the last id
-- seen), StreamReadRequestBuilder (cancelSubscriptionOnError = t -> true).
-- The listener is the documented pattern: process, then
-- opsForStream().acknowledge (XACK). Nothing in the package ever reads
-- XPENDING, claims or re-reads own pending entries. Research notes:
-- docs/library-research/spring-data-redis.md.
--
-- Simplified:
-- * One subscription = one worker slot; a cancelled subscription is the
--   worker's function returning (the worker stops; not a crash).
-- * No batchSize means no COUNT; the model reads COUNT 100 then.
-- * StreamReceiver (params.api = "receiver") runs the same read/ack order;
--   its demand-driven overflow buffer is not modelled (it only matters when
--   the subscriber cancels with records buffered: more of the same loss).
-- * An explicit-id read loop (offset "0-0") really spins as fast as the
--   round trip; the model polls every 100 ms instead (the rate does not
--   change what is read, and it keeps the run inside the step guard).
-- * The group is created by the user (the library never does): XGROUP CREATE
--   at 0 once per process start, as the docs' examples do.
--
-- params: auto_ack false | true (receiveAutoAck, or the
-- StreamReadRequest.builder(...).consumer(c).build() default: NOACK),
-- offset "lastConsumed" | "0-0" (ReadOffset.from / StreamOffset.fromStart),
-- cancel_on_error true | false, batch_size (unset), poll_timeout_ms 2000,
-- handler "plain" | "idem" (user_handler in ../common.lua) (the user's listener), timeout_ms (the listener's
-- external call gives up after this; 0: never).

local AUTO_ACK = params.auto_ack == true
local OFFSET = params.offset or "lastConsumed"
local CANCEL_ON_ERROR = params.cancel_on_error ~= false
local COUNT = params.batch_size or 100
local POLL_MS = params.poll_timeout_ms or 2000
local SPIN_MS = 100  -- the model's pace of an explicit-id poll loop (see the header)

-- The user's listener (user_handler, ../common.lua): the documented pattern
-- XACKs at its end (unless auto-ack). True when it returned, false: it threw.
local function listener(w, e)
  local ok = user_handler(w, e, params.handler, {timeout_ms = params.timeout_ms})
  if ok then w:point("after-commit") end  -- the listener's work is done, its XACK not sent
  if ok and not AUTO_ACK then w:redis("XACK", w.stream, w.group, e.id) end
  return ok
end

-- `>` blocks (parked) for the poll timeout; an explicit id is answered at
-- once by Redis (BLOCK does not apply), so the library's poll loop spins.
local function read(w, offset)
  if offset == ">" then return w:read(">", {count = COUNT, block_ms = POLL_MS}) end
  local batch, err = w:read(offset, {count = COUNT})
  if #batch == 0 then w:sleep(SPIN_MS) end
  return batch, err
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")  -- the user's set-up
  local offset = OFFSET == "lastConsumed" and ">" or OFFSET
  while true do
    local batch, err
    if AUTO_ACK and offset == ">" then
      batch, err = read_noack(w, COUNT, POLL_MS)  -- the real read BLOCKs for the poll timeout
    else
      batch, err = read(w, offset)
    end
    if err and CANCEL_ON_ERROR then return end  -- the read error cancels the subscription
    if #batch > 0 then w:point("after-read") end
    for _, e in ipairs(batch) do
      if OFFSET ~= "lastConsumed" then offset = e.id end  -- NextMessage: the last id seen
      if not e.deleted and not listener(w, e) and CANCEL_ON_ERROR then
        return  -- the subscription is cancelled; the rest of the batch stays pending
      end
    end
  end
end
