-- DotNetCore.CAP, Redis Streams transport (one CAP group, one topic), with
-- CAP's received-message inbox and its retry processor.
--
-- Release: dotnetcore/CAP v10.0.1 (649c9c49). Follows
-- src/DotNetCore.CAP.RedisStreams/: IConsumerClient.Redis.cs
-- (ListeningForMessagesAsync, ConsumeMessages: an entry without fields fails
-- to parse and gets neither commit nor reject; CommitAsync = XACK;
-- RejectAsync = nothing on Redis), IRedisStream.Manager.Default.cs
-- (PollStreamsPendingMessagesAsync: XREADGROUP ... COUNT 10 from `0` at start,
-- again after a 1 s pause while a batch came back full;
-- PollStreamsLatestMessagesAsync: `>` every 1 s; TryReadConsumerGroupAsync:
-- the consumer name IS the group name, so every instance of the service is
-- one consumer). No XPENDING, XCLAIM or XAUTOCLAIM anywhere.
-- src/DotNetCore.CAP/:
-- * Internal/IConsumerRegister.Default.cs RegisterMessageProcessor: store
--   the received message (a new row, Scheduled, every time: nothing is keyed
--   by the message id), EnqueueToExecute, then CommitAsync (XACK) -- whether
--   the subscriber succeeded or not. An exception storing the row ->
--   RejectAsync (nothing on Redis: the entry stays pending).
-- * Processor/IDispatcher.Default.cs EnqueueToExecute: without
--   EnableSubscriberParallelExecute (default false) the subscriber runs
--   inline; its exceptions are logged, never rethrown.
-- * Internal/ISubscribeExector.Default.cs ExecuteAsync: run the subscriber;
--   Succeeded on success; on an exception Retries + 1 and Failed, and again
--   at once while Retries < min(FailedRetryCount, 3). A failed status
--   update ends the execution (the dispatcher logs it).
-- * Processor/IProcessor.NeedRetry.cs (MessageNeedToRetryProcessor, in every
--   instance; UseStorageLock false by default): every FailedRetryInterval
--   (60 s) it re-executes received rows with Retries < FailedRetryCount (50),
--   Added older than FallbackWindowLookbackSeconds (240 s) and status Failed
--   or Scheduled (IDataStorage.PostgreSql.cs GetMessagesOfNeedRetryAsync),
--   so a row left Scheduled by a crash runs again, in any instance.
-- Research notes: docs/library-research/dotnetcore-cap-redis.md.
--
-- Lanes ([workload] handlers = 2): lane 1 is the consumer client, lane 2 the
-- retry processor; they share the instance's fate.
-- Simplified:
-- * GroupConcurrent 0 (sequential) and EnableSubscriberParallelExecute
--   false, the defaults.
-- * The received table lives in the business store (w:sql), beside the
--   user's own tables, as CAP's does in the application's database.
-- * One retry pass at a time per instance (CAP starts a pass every 60 s
--   even while the last one runs), in id order (CAP's query has no ORDER
--   BY).
-- * xackly creates the group at 0 before any worker starts (CAP creates it
--   at `$`).
--
-- params: stream_entries_count 10, handler "plain" | "idem" (user_handler
-- in ../common.lua), failed_retry_interval_s 60, failed_retry_count 50,
-- fallback_window_lookback_s 240.

local COUNT = params.stream_entries_count or 10
local RETRY_INTERVAL_MS = (params.failed_retry_interval_s or 60) * 1000
local RETRY_COUNT = params.failed_retry_count or 50
local LOOKBACK_MS = (params.fallback_window_lookback_s or 240) * 1000

-- ISubscribeExecutor.ExecuteAsync on one received row.
local function execute(w, row)
  local entry = {id = row.entry_id, fields = {event_id = row.event_id}}
  while true do
    if user_handler(w, entry, params.handler) then
      -- SetSuccessfulState; if it throws, the catch sets the failed state
      if w:sql("UPDATE cap_received SET status = 'Succeeded' WHERE id = ?", row.id).ok then
        return true
      end
    end
    row.retries = row.retries + 1  -- UpdateMessageForRetry
    if not w:sql("UPDATE cap_received SET status = 'Failed', retries = ? WHERE id = ?",
                 row.retries, row.id).ok then
      return false  -- SetFailedState threw: out of ExecuteAsync, logged by the dispatcher
    end
    if row.retries >= math.min(RETRY_COUNT, 3) then return false end
  end
end

-- OnMessageCallback for one entry.
local function receive(w, e)
  -- no fields: RedisMessage.Create throws -> OnConsumeError, no commit, no reject
  if e.deleted or e.fields.event_id == nil then return end
  local stored = w:sql("INSERT INTO cap_received (event_id, entry_id, retries, added, status) " ..
                       "VALUES (?, ?, 0, ?, 'Scheduled') RETURNING id",
                       e.fields.event_id, e.id, w:now())
  if not stored.ok then return end  -- RejectAsync: nothing on Redis
  execute(w, {id = stored.rows[1].id, entry_id = e.id, event_id = e.fields.event_id, retries = 0})
  w:point("after-commit")  -- the row's state is written; the XACK is next
  w:redis("XACK", w.stream, w.group, e.id)  -- CommitAsync, also after a failed subscriber
end

local function consume(w, batch)
  if #batch > 0 then w:point("after-read") end
  for _, e in ipairs(batch) do receive(w, e) end
end

local function consumer_client(w)
  local name = w.group  -- the consumer name is the CAP group name, in every instance
  while true do       -- start-up: own pending from 0, while batches come back full
    local batch = w:read("0", {count = COUNT, consumer = name})
    consume(w, batch)
    if #batch < COUNT then break end
    w:sleep(1000)
  end
  while true do       -- new messages: a poll every second, no BLOCK
    local batch = w:read(">", {count = COUNT, consumer = name})
    consume(w, batch)
    w:sleep(1000)
  end
end

-- MessageNeedToRetryProcessor.ProcessReceivedAsync, then wait the interval.
local function retry_processor(w)
  while true do
    local due = w:sql("SELECT id, event_id, entry_id, retries FROM cap_received " ..
                      "WHERE retries < ? AND added < ? AND status IN ('Failed', 'Scheduled') " ..
                      "ORDER BY id LIMIT 200", RETRY_COUNT, w:now() - LOOKBACK_MS)
    if due.ok then
      for _, row in ipairs(due.rows) do execute(w, row) end
    end
    w:sleep(RETRY_INTERVAL_MS)
  end
end

function consumer(w)
  w:sql("CREATE TABLE IF NOT EXISTS cap_received (id INTEGER PRIMARY KEY AUTOINCREMENT, " ..
        "event_id TEXT, entry_id TEXT, retries INTEGER, added INTEGER, status TEXT)")
  if w.lane == 2 then retry_processor(w) else consumer_client(w) end
end
