-- FastStream Redis Streams subscriber (consumer group).
--
-- Release: ag2ai/faststream 0.7.4 (f080d353).
-- Follows faststream/redis/subscriber/usecases/stream_subscriber.py: start
-- (XGROUP CREATE at `$` when last_id is ">", the default; "already exists"
-- ignored; the read callable is XREADGROUP ... BLOCK polling_interval `>`,
-- or -- when min_idle_time is set -- XAUTOCLAIM COUNT 1 following the
-- cursor INSTEAD of XREADGROUP), _consume (NOGROUP -> StreamGroupNotFoundError:
-- the subscriber stops); faststream/redis/message.py (ack = XACK; nack and
-- reject send nothing); the acknowledgement middleware (ack_policy
-- REJECT_ON_ERROR by default: XACK after success, reject on an exception;
-- ACK_FIRST: XACK before the handler; ACK: XACK even on error);
-- schemas/stream_sub.py (no_ack is passed to XREADGROUP as NOACK, despite
-- the warning that it "has no effect with consumer group").
-- docs/docs/en/redis/streams/claiming.md "Pattern 1" (readers plus one
-- dedicated claimer) and "Pattern 2" (min_idle_time on every subscriber).
-- Research notes: docs/library-research/faststream-redis.md.
--
-- Simplified:
-- * One application process = one worker slot. Pattern 1 = every process
--   runs both subscribers, the plain reader and the claimer
--   (min_idle_time), taking turns: one read, then one XAUTOCLAIM step.
--   (A claimer in only one process would leave a 1-worker case without a
--   claimer, or without a reader.)
-- * `max_records` unset means no COUNT; the model reads COUNT 10.
-- * After a stopped subscriber the application is not restarted (its
--   restart would re-create the group at `$`, skipping what was added).
-- * xackly creates the group at 0 before any worker starts, so the
--   subscriber's own XGROUP CREATE (at `$` by default) answers BUSYGROUP:
--   events published before the first subscriber starts are NOT skipped
--   here, as they would be in a fresh deployment (docs/libraries.md).
--
-- params: pattern "reader" (default: no min_idle_time anywhere) |
-- "claimer-only" (Pattern 2: min_idle_time on every subscriber) |
-- "reader+claimer" (Pattern 1), min_idle_time_ms 60000 (the docs' value),
-- group_start "$" (the default) | "0" (created by the user at deploy time),
-- ack_policy "reject_on_error" | "ack_first" | "ack", no_ack false,
-- polling_interval_ms 100, handler "plain" | "idem" (user_handler in ../common.lua).

local PATTERN = params.pattern or "reader"
local MIN_IDLE_MS = params.min_idle_time_ms or 60000
local ACK_POLICY = params.ack_policy or "reject_on_error"
local POLL_MS = params.polling_interval_ms or 100

local function consume(w, e)
  if e.deleted then return end
  if ACK_POLICY == "ack_first" then
    w:redis("XACK", w.stream, w.group, e.id)
    w:point("after-ack")
  end
  local ok = user_handler(w, e, params.handler)
  if ok then w:point("after-commit") end
  if ACK_POLICY == "ack" or (ACK_POLICY == "reject_on_error" and ok) then
    w:redis("XACK", w.stream, w.group, e.id)
  end  -- reject (on error): no command; the entry stays pending
end

-- One read of the plain subscriber; false when the subscriber stops.
local function read_step(w)
  local batch, err
  if params.no_ack then
    batch, err = read_noack(w, 10, POLL_MS)  -- the real read BLOCKs for polling_interval
  else
    batch, err = w:read(">", {count = 10, block_ms = POLL_MS})
  end
  if err then return false end  -- StreamGroupNotFoundError: the subscriber stops
  if #batch > 0 then w:point("after-read") end
  for _, e in ipairs(batch) do consume(w, e) end
  return true
end

-- One XAUTOCLAIM of the claimer subscriber (COUNT 1, following the cursor);
-- returns the next cursor, or nil when the subscriber stops.
local function claim_step(w, cursor, sleep_when_idle)
  local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, MIN_IDLE_MS, cursor, "COUNT", 1)
  if xackly.is_error(r) then return nil end
  local entries = xackly.entries(r[2])
  if #entries > 0 then w:point("after-claim") end
  for _, e in ipairs(entries) do consume(w, e) end
  if sleep_when_idle and r[1] == "0-0" and #entries == 0 then w:sleep(POLL_MS) end
  return r[1]
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, params.group_start or "$", "MKSTREAM")
  local cursor = "0-0"
  while cursor do
    if PATTERN == "claimer-only" then
      cursor = claim_step(w, cursor, true)
    elseif read_step(w) then
      if PATTERN == "reader+claimer" then cursor = claim_step(w, cursor, false) end
    else
      return
    end
  end
end
