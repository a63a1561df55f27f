-- The user's own server-side Lua: one EVAL checks the done key, records the
-- effect in the Redis ledger (w.effects_key) and XACKs, atomically. A
-- duplicate delivery finds the done key and only XACKs. Claims with
-- XPENDING + XCLAIM, at most 5 entries per interval, and at start-up.
-- Expected: ok.
-- Shows: EVAL with your own keys, an effect recorded inside EVAL, dedupe
-- keyed by the stream entry's payload field, XPENDING + XCLAIM claiming
-- at most N per interval, claiming at start-up.

local HANDLE = [[
if redis.call('SET', KEYS[1], '1', 'NX') then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
  return 1
end
redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
return 0
]]

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  local event = e.fields.event_id
  local record = table.concat({event, e.id, w.consumer, tostring(w:now())}, "|")
  w:redis("EVAL", HANDLE, 3, "done:" .. event, w.effects_key, w.stream, w.group, e.id, record)
end

local function claim(w, max)
  local rows = w:redis("XPENDING", w.stream, w.group, "IDLE", 30000, "-", "+", max)
  if xackly.is_error(rows) then return end
  for _, row in ipairs(rows) do
    local got = w:redis("XCLAIM", w.stream, w.group, w.consumer, 30000, row[1])
    for _, e in ipairs(xackly.entries(got)) do handle(w, e) end
  end
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  claim(w, 5)  -- at start-up
  local next_claim = w:now() + 5000
  while true do
    if w:now() >= next_claim then
      claim(w, 5)
      next_claim = w:now() + 5000
    end
    local mine = w:read("0")  -- own pending first (after a timeout or a crash)
    for _, e in ipairs(mine) do handle(w, e) end
    local batch = w:read(">", {block_ms = math.max(1, next_claim - w:now())})
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
