-- A correct consumer written as a script: dedupe row and effect in one SQL
-- transaction, then ack as XACK followed by XDEL (Symfony Messenger's ack).
-- Own pending at start-up, XAUTOCLAIM recovery following the cursor.
-- Expected verdict: ok, under crashes at every point, stalls, lost requests
-- and replies, clock jumps and store outages.

local CLAIM_EVERY_MS, MIN_IDLE_MS = 5000, 30000

-- One live entry. Returns nothing: an entry that could not be handled stays
-- pending and comes back through own-pending or a claim.
local function handle(w, e)
  if e.deleted then  -- payload gone (XDEL/XTRIM): nothing to do but ack
    w:redis("XACK", w.stream, w.group, e.id)
    return
  end
  local event = e.fields.event_id
  if not w:sql("BEGIN").ok then return end  -- store down: retry later
  local mark = w:sql("INSERT OR IGNORE INTO processed VALUES (?)", event)
  if not mark.ok then w:sql("ROLLBACK") return end
  if mark.changes == 1 then  -- new: the effect commits with the row
    if not w:effect(event, "sql", {entry = e}) then w:sql("ROLLBACK") return end
  end
  if not w:sql("COMMIT").ok then return end
  w:redis("XACK", w.stream, w.group, e.id)
  w:redis("XDEL", w.stream, e.id)
end

local function create_group(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
end

function consumer(w)
  local after = "0"  -- own pending first: what a previous incarnation held
  while true do
    local batch, err = w:read(after)
    if err then create_group(w) break end
    if #batch == 0 then break end
    for _, e in ipairs(batch) do handle(w, e) end
    after = batch[#batch].id
  end
  local next_claim = w:now() + CLAIM_EVERY_MS
  while true do
    if w:now() >= next_claim then
      local cursor = "0-0"
      repeat
        local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, MIN_IDLE_MS, cursor, "COUNT", 10)
        if xackly.is_error(r) then create_group(w) break end
        for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
        cursor = r[1]
      until cursor == "0-0"
      next_claim = w:now() + CLAIM_EVERY_MS
    end
    local wait_ms = math.max(1, math.min(2000, next_claim - w:now()))
    local batch, err = w:read(">", {count = 10, block_ms = wait_ms})
    if err then create_group(w) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end
