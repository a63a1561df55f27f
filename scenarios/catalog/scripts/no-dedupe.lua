-- no-dedupe: run the effect, then XACK; no dedupe.
-- A crash between the effect and XACK redelivers the entry: the effect runs
-- again. Expected: duplicate (crash:after-effect).
--
-- The catalog protocol no-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function create_group(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
end

local function ack(w, id)
  w:redis("XACK", w.stream, w.group, id)
end

local function handle(w, e)
  if w:effect(e.fields.event_id, "external", {entry = e}) then ack(w, e.id) end
end

-- A batch from a read or a claim: a deleted payload is only acked.
local function handle_batch(w, entries)
  for _, e in ipairs(entries) do
    if e.deleted then ack(w, e.id) else handle(w, e) end
  end
end

function consumer(w)
  local after = "0"  -- own pending first: what this consumer held before it crashed
  while true do
    local batch, err = w:read(after)
    if err then create_group(w) break end
    if #batch == 0 then break end
    after = batch[#batch].id
    handle_batch(w, batch)
  end
  local next_claim = w:now() + CLAIM_EVERY_MS
  while true do
    if w:now() >= next_claim then  -- XAUTOCLAIM, following the cursor to its end
      local cursor = "0-0"
      repeat
        local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, MIN_IDLE_MS, cursor, "COUNT", 10)
        if xackly.is_error(r) then create_group(w) break end
        handle_batch(w, xackly.entries(r[2]))
        cursor = r[1]
      until cursor == "0-0"
      next_claim = w:now() + CLAIM_EVERY_MS
    end
    local batch, err = w:read(">")
    if err then
      create_group(w)
    elseif #batch == 0 then  -- nothing new: wait for new entries, the next claim or BLOCK_MS
      w:park(math.min(BLOCK_MS, math.max(1, next_claim - w:now())))
    else
      handle_batch(w, batch)
    end
  end
end
