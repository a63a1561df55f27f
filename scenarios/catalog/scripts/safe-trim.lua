-- safe-trim: correct dedupe (as txn-dedupe, claiming after 1 s); a busy
-- janitor trims every 10 ms, but in one EVAL that keeps whatever a group
-- still needs. Expected: ok.
--
-- The catalog protocol safe-trim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 1000, 1000, 2000

local function create_group(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
end

local function ack(w, id)
  w:redis("XACK", w.stream, w.group, id)
end

-- Dedupe row and effect in one SQL transaction; XACK only after COMMIT.
local function handle(w, e)
  local event = e.fields.event_id
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", event)
  if not mark.ok then return end  -- the store is down: it rolled back already
  if mark.changes == 0 then  -- done before: roll back, but still XACK
    w:sql("ROLLBACK")
    ack(w, e.id)
    return
  end
  local ran, outcome = w:effect(event, "sql", {entry = e})
  if not ran then
    if outcome == "failed" then w:sql("ROLLBACK") end  -- (an outage rolled back already)
    return
  end
  if not w:sql("COMMIT").ok then return end
  ack(w, e.id)
end

-- A batch from a read or a claim: a deleted payload is only acked.
local function handle_batch(w, entries)
  for _, e in ipairs(entries) do
    if e.deleted then ack(w, e.id) else handle(w, e) end
  end
end

-- One EVAL reads what every group still needs (its oldest pending entry
-- and everything after its last-delivered ID) and trims only below that:
-- no delivery can fall between the read and the trim.
local SAFE_TRIM = "\n" .. [==[
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then return am < bm end
  return as < bs
end
local keep = nil
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local f = {}
  for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
  local ms, seq = parse(f['last-delivered-id'])
  local need = string.format('%d-%d', ms, seq + 1)
  local pending = redis.call('XPENDING', KEYS[1], f['name'])
  if pending[1] > 0 and less(pending[2], need) then need = pending[2] end
  if keep == nil or less(need, keep) then keep = need end
end
if keep == nil then return {0, ''} end
return {redis.call('XTRIM', KEYS[1], 'MINID', keep), keep}
]==]

function janitor(w)
  while true do
    w:sleep(10)
    w:redis("EVAL", SAFE_TRIM, 1, w.stream)
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
