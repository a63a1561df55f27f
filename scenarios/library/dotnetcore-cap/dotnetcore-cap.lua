-- DotNetCore.CAP, Redis Streams transport (one CAP group, one topic).
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
-- one consumer), and src/DotNetCore.CAP/Internal/IConsumerRegister.Default.cs
-- (store the received message, run the subscriber, then commit; an exception
-- -> reject). No XPENDING, XCLAIM or XAUTOCLAIM anywhere. Research notes:
-- docs/library-research/dotnetcore-cap-redis.md.
--
-- Simplified:
-- * CAP's received-message table and dispatcher collapse into the user's
--   subscriber (the handler); CAP's own database retries act after the XACK
--   and are left out.
-- * GroupConcurrent 0 (sequential), the default.
-- * xackly creates the group at 0 before any worker starts (CAP creates it
--   at `$`).
--
-- params: stream_entries_count 10, handler "plain" | "idem" (user_handler in ../common.lua).

local COUNT = params.stream_entries_count or 10

local function consume(w, batch)
  if #batch > 0 then w:point("after-read") end
  for _, e in ipairs(batch) do
    -- no fields: RedisMessage.Create throws -> OnConsumeError, no commit, no reject
    if not e.deleted and e.fields.event_id ~= nil and user_handler(w, e, params.handler) then
      w:point("after-commit")
      w:redis("XACK", w.stream, w.group, e.id)  -- CommitAsync
    end
  end
end

function consumer(w)
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
