-- Symfony Messenger, Redis transport (`messenger:consume` worker).
--
-- Release: symfony/symfony v7.1.5 (77c124d4),
-- src/Symfony/Component/Messenger/Bridge/Redis/Transport/:
-- Connection.php (DEFAULT_OPTIONS, setup: XGROUP CREATE at 0; get: the
-- claim step claimOldPendingMessages -- XPENDING - + 1, the single oldest
-- entry of the group; when its owner is this consumer name only the
-- couldHavePendingMessages flag is set and nextClaim is left alone; else
-- XCLAIM JUSTID when idle >= redeliver_timeout, then nextClaim += claim_interval;
-- XREADGROUP COUNT 1 BLOCK 1 with `0` while couldHavePendingMessages (true at
-- every process start), `>` after an empty own-pending read; ack: XACK then
-- XDEL when delete_after_ack), RedisReceiver.php (get: a deleted entry's
-- null data -> reject = XACK + XDEL), Worker.php (run, handleMessage: the
-- handler, then ack). Research notes: docs/library-research/symfony-messenger-redis.md.
--
-- Simplified:
-- * One `messenger:consume` process = one worker slot; `--sleep` (1 s) is a
--   virtual sleep after an empty get().
-- * The retry path (a failing handler's copy sent through the delayed
--   ZSET, ZPOPMIN + XADD) is NOT modelled: these files use handlers that do
--   not fail (verdicts Y5, Y6, Y9 of the research are not checked here).
-- * NOGROUP (Redis restarted without persistence) throws out of
--   Worker::run; a supervisor starting the process again is modelled as the
--   loop starting over (setup, couldHavePendingMessages = true).
-- * The "Could not acknowledge" TransportException of an ack whose XACK (or,
--   with delete_after_ack, XDEL) replies 0 -- the entry was acked already,
--   by another worker that took it too -- ends Worker::run like NOGROUP:
--   the supervisor starts the worker again, which re-reads its own pending.
--
-- params (defaults are the library's, in ms): consumer "consumer" (the
-- literal default shared by every worker) | "unique" (the worker's own name:
-- restart_naming decides whether it survives a restart),
-- redeliver_timeout_ms 3600000, claim_interval_ms 60000, sleep_ms 1000,
-- delete_after_ack true, handler "plain" | "idem" (user_handler in ../common.lua).

local REDELIVER_MS = params.redeliver_timeout_ms or 3600000
local CLAIM_INTERVAL_MS = params.claim_interval_ms or 60000
local SLEEP_MS = params.sleep_ms or 1000
local DELETE_AFTER_ACK = params.delete_after_ack ~= false

-- One process life; returns when the transport throws (NOGROUP).
local function run(w, name)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")  -- auto_setup, error ignored
  local next_claim, could_have_pending = 0, true

  local function claim_old_pending()
    local rows = w:redis("XPENDING", w.stream, w.group, "-", "+", 1)
    if not xackly.is_error(rows) and #rows == 1 then
      local id, owner, idle = rows[1][1], rows[1][2], rows[1][3]
      if owner == name then
        could_have_pending = true
        return  -- nextClaim is not moved on this path
      end
      if idle >= REDELIVER_MS then
        w:redis("XCLAIM", w.stream, w.group, name, REDELIVER_MS, id, "JUSTID")
        w:point("after-claim")
        could_have_pending = true
      end
    end
    next_claim = w:now() + CLAIM_INTERVAL_MS
  end

  -- Connection::get: one entry or nil; false after a transport error.
  local function get()
    while true do
      if not could_have_pending and next_claim <= w:now() then claim_old_pending() end
      local batch, err = w:read(could_have_pending and "0" or ">", {count = 1, block_ms = 1, consumer = name})
      if err then return false end
      if #batch > 0 then w:point("after-read") end
      if #batch > 0 or not could_have_pending then return batch[1] end
      could_have_pending = false  -- own pending drained: read new entries
    end
  end

  while true do
    local e = get()
    if e == false then return end
    if e == nil then
      w:sleep(SLEEP_MS)
    elseif e.deleted then  -- RedisReceiver::get: null data -> reject
      w:redis("XACK", w.stream, w.group, e.id)
      w:redis("XDEL", w.stream, e.id)
    elseif user_handler(w, e, params.handler) then  -- Worker::ack -> Connection::ack
      w:point("after-commit")
      local acked = w:redis("XACK", w.stream, w.group, e.id)
      if DELETE_AFTER_ACK then acked = w:redis("XDEL", w.stream, e.id) end
      if acked == 0 then return end  -- TransportException: the worker ends, the supervisor restarts it
    end
  end
end

function consumer(w)
  local name = params.consumer == "unique" and w.consumer or (params.consumer or "consumer")
  while true do
    run(w, name)
    w:sleep(SLEEP_MS)  -- the supervisor starts the worker again
  end
end
