-- Watermill `watermill-redisstream` subscriber, consumer-group mode.
--
-- Release: ThreeDotsLabs/watermill-redisstream v1.4.3 (b9bac80e), and the
-- DELCONSUMER-after-claim behaviour of v0.3.0 .. v1.1.0 (params.release = "1.1.0").
-- Follows pkg/redisstream/subscriber.go: consumeMessages (XGROUP CREATE at
-- OldestId 0), consumeStreams / read (XREADGROUP COUNT 1, BLOCK 0 until the
-- first entry, then BlockTime), claim (XPENDING IDLE MaxIdleTime over the
-- whole group, XCLAIM each row to itself; at start-up, then every
-- ClaimInterval), messageHandler.processMessage (Ack -> XACK, Nack -> resend
-- the same message in-process). Research notes: docs/library-research/watermill-redisstream.md.
--
-- Simplified (stated, not hidden):
-- * The subscriber is one process of three lanes sharing its memory
--   ([workload] handlers = 3): lane 1 is the read goroutine (the start-up
--   claim pass, then reads), lane 2 the background claim goroutine (a pass
--   every ClaimInterval), lane 3 the handler goroutine. Both the reader and
--   the claimer hand entries to the handler through readChannel (a buffer
--   of 1) and wait while it is full (wait_until, ../common.lua). So at most
--   3 entries are read but unacked -- the one in the handler, the channel's
--   buffer, the one the reader holds -- as in the library, and the claim
--   pass runs while the handler is busy.
-- * The consumer check (XINFO CONSUMERS every 300 s, DELCONSUMER of consumers
--   idle >= 600 s with 0 pending) is left out: it deletes only empty consumers.
-- * A Nack (handler error) resends after params.nack_resend_sleep_ms
--   (default 100 ms; the library's default is no sleep, which in a
--   step-driven model is the same order with more steps).
-- * XACK is sent once (the library retries it every 100 ms until it
--   succeeds; a lost reply here restarts the worker instead).
-- * A new random consumer name per process start = restart_naming "fresh".
--
-- params (defaults are the library's): max_idle_ms 60000, claim_interval_ms
-- 5000, block_ms 100, claim_batch_size 100, release "1.4.3" | "1.1.0",
-- handler "plain" | "idem" (user_handler in ../common.lua) (the user's handler, not the library's).

local MAX_IDLE_MS = params.max_idle_ms or 60000
local CLAIM_EVERY_MS = params.claim_interval_ms or 5000
local BLOCK_MS = params.block_ms or 100
local CLAIM_BATCH = params.claim_batch_size or 100
local DELCONSUMER_AFTER_CLAIM = params.release == "1.1.0"
local NACK_SLEEP_MS = params.nack_resend_sleep_ms or 100

read_channel = {}  -- the process's readChannel (buffer 1): reader and claimer to handler

-- Sends `e` on readChannel: waits while the buffer is full.
local function send(w, e)
  wait_until(w, function() return #read_channel == 0 end)
  read_channel[1] = e
end

-- processMessage: hand the message out until it is acked, then XACK.
local function process(w, e)
  while not user_handler(w, e, params.handler) do w:sleep(NACK_SLEEP_MS) end
  w:point("after-commit")  -- the handler is done, the library has not acked yet
  w:redis("XACK", w.stream, w.group, e.id)
end

-- claim: XPENDING IDLE over every consumer (this one too), XCLAIM each row.
local function claim_pass(w)
  while true do
    local rows = w:redis("XPENDING", w.stream, w.group, "IDLE", MAX_IDLE_MS, "0", "+", CLAIM_BATCH)
    if xackly.is_error(rows) then return end
    for _, row in ipairs(rows) do
      local id, owner = row[1], row[2]
      local claimed = w:redis("XCLAIM", w.stream, w.group, w.consumer, MAX_IDLE_MS, id)
      if xackly.is_error(claimed) then return end  -- `continue OUTER_LOOP`: the pass ends
      if claimed and #claimed > 0 then w:point("after-claim") end
      -- v1.1.0: the row's owner is deleted, whoever it is (this consumer
      -- too, with every entry it holds), before the claimed entry goes on
      if DELCONSUMER_AFTER_CLAIM and
         xackly.is_error(w:redis("XGROUP", "DELCONSUMER", w.stream, w.group, owner)) then
        return
      end
      for _, e in ipairs(xackly.entries(claimed)) do
        if e.deleted then w:redis("XACK", w.stream, w.group, e.id) else send(w, e) end
      end
    end
    if #rows < CLAIM_BATCH then return end
  end
end

-- Lane 1: consumeMessages and the read goroutine.
local function reader(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")  -- BUSYGROUP ignored
  claim_pass(w)                                                     -- start-up pass
  -- BLOCK 0 (forever) until the first entry arrives: a park that new data
  -- ends, renewed every ClaimInterval here (a longer timer would stretch the
  -- run's quiet window past the library's own timers).
  local block = CLAIM_EVERY_MS
  while true do
    local batch, err = w:read(">", {count = 1, block_ms = block})
    if err then
      w:sleep(500)  -- read errors (NOGROUP too) are logged and retried forever
    end
    for _, e in ipairs(batch) do
      block = BLOCK_MS
      w:point("after-read")
      send(w, e)
    end
  end
end

-- Lane 2: the background claim goroutine.
local function claimer(w)
  while true do
    w:sleep(CLAIM_EVERY_MS)
    claim_pass(w)
  end
end

-- Lane 3: the handler goroutine.
local function handler(w)
  while true do
    process(w, take(w, read_channel))
  end
end

function consumer(w)
  if w.lanes ~= 3 then
    error("watermill.lua models a subscriber as three lanes (reader, claimer, handler): set [workload] handlers = 3")
  end
  if w.lane == 1 then reader(w) elseif w.lane == 2 then claimer(w) else handler(w) end
end
