-- Redpanda Connect (Benthos) `redis_streams` input, one stream.
--
-- Release: redpanda-data/connect v4.106.0 (2b1d3c83),
-- internal/impl/redis/input_streams.go: redisStreamsInputConfig (defaults),
-- newRedisStreamsReader (backlog cursor "0" per stream), Connect (XGROUP
-- CREATE at 0, BUSYGROUP ignored), read (buffered messages first; XREADGROUP
-- COUNT limit BLOCK timeout with the backlog cursor while it lasts, `>`
-- after its first empty reply; an entry without the body field -- a deleted
-- entry too -- is skipped and gets no ack function), ReadBatch / addAsyncAcks
-- / sendAcks (acked ids queued in memory, XACKed together every
-- commit_period), loop (the commit timer), disconnect (flushes queued acks).
-- Research notes: docs/library-research/redpanda-connect-redis-streams.md.
--
-- Simplified:
-- * The pipeline and output collapse into the user's handler; a nack is
--   replayed in-process until it succeeds (auto_replay_nacks), after
--   100 ms here.
-- * The payload field `event_id` plays the role of `body_key` (an entry
--   without it is skipped exactly like one without `body`).
-- * The commit timer runs between reads (the read's BLOCK is cut at the
--   next commit), not on its own goroutine.
-- * A read error disconnects (flushing queued acks), backs off 1 s and
--   reconnects with XGROUP CREATE at 0; the backlog cursor is kept.
--
-- params (defaults are the library's, in ms): client_id "" (the default: one
-- consumer name shared by every instance) | "own" (the worker's own name;
-- restart_naming "same" keeps it across restarts, "fresh" does not),
-- limit 10, commit_period_ms 1000, timeout_ms 1000, handler "plain" | "idem" (user_handler in ../common.lua).

local LIMIT = params.limit or 10
local COMMIT_MS = params.commit_period_ms or 1000
local TIMEOUT_MS = params.timeout_ms or 1000

function consumer(w)
  local client_id = params.client_id == "own" and w.consumer or (params.client_id or "")
  local backlog = "0"  -- own pending entries first, once per process life
  local acks = {}      -- acked by the pipeline, not yet XACKed
  local function send_acks()
    if #acks == 0 then return end
    w:redis("XACK", w.stream, w.group, table.unpack(acks))
    acks = {}
  end
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local next_commit = w:now() + COMMIT_MS
  while true do
    if w:now() >= next_commit then
      send_acks()
      next_commit = w:now() + COMMIT_MS
    end
    local block = math.max(1, math.min(TIMEOUT_MS, next_commit - w:now()))
    local batch, err = w:read(backlog or ">", {count = LIMIT, block_ms = block, consumer = client_id})
    if err then
      send_acks()  -- disconnect flushes the queued acks
      w:sleep(1000)
      w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
    elseif backlog then
      backlog = #batch > 0 and batch[#batch].id or nil
    end
    if #batch > 0 then w:point("after-read") end
    for _, e in ipairs(batch) do
      if e.fields.event_id ~= nil then  -- no body: skipped, never acked
        while not user_handler(w, e, params.handler) do w:sleep(100) end
        w:point("after-commit")  -- written; its XACK waits for the commit timer
        acks[#acks + 1] = e.id
      end
    end
  end
end
