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
-- * The read, handler, claim and consumer-check goroutines are one worker
--   slot with timers: the claim pass runs between two handled messages, and
--   its claimed entries are handled at once (the real pass waits on the
--   unbuffered handler channel). The reader reads ahead (COUNT 1 each) until
--   3 entries are delivered but unacked -- the one in the handler, the
--   channel's buffer of 1, the one the reader holds -- as the library does.
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
local INFLIGHT = 3  -- one entry in the handler, one in the channel's buffer, one held by the reader

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
      for _, e in ipairs(xackly.entries(claimed)) do
        if e.deleted then w:redis("XACK", w.stream, w.group, e.id) else process(w, e) end
      end
      if DELCONSUMER_AFTER_CLAIM and owner ~= w.consumer then
        w:redis("XGROUP", "DELCONSUMER", w.stream, w.group, owner)
      end
    end
    if #rows < CLAIM_BATCH then return end
  end
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")  -- BUSYGROUP ignored
  claim_pass(w)                                                     -- start-up pass
  local next_claim = w:now() + CLAIM_EVERY_MS
  local first_read = true  -- BLOCK 0 (forever) until the first entry arrives
  local inflight = {}      -- read, not yet handled: the reader's entry + the channel's buffer
  while true do
    if w:now() >= next_claim then
      claim_pass(w)
      next_claim = w:now() + CLAIM_EVERY_MS
    end
    while #inflight < INFLIGHT do  -- the reader runs ahead of the handler
      local until_claim = math.max(1, next_claim - w:now())
      local block = #inflight > 0 and 0 or first_read and until_claim or math.min(BLOCK_MS, until_claim)
      local batch, err = w:read(">", {count = 1, block_ms = block})
      if err then
        w:sleep(500)  -- read errors (NOGROUP too) are logged and retried forever
      end
      for _, e in ipairs(batch) do
        first_read = false
        inflight[#inflight + 1] = e
      end
      if #batch == 0 then break end
      w:point("after-read")
    end
    local e = table.remove(inflight, 1)
    if e ~= nil then process(w, e) end
  end
end
