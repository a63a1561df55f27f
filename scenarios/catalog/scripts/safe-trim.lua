-- safe-trim: correct dedupe (as txn-dedupe, claiming after 1 s); a busy
-- janitor trims every 10 ms, but in one EVAL that keeps whatever a group
-- still needs. Expected: ok.
--
-- The catalog protocol safe-trim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 1000, 1000, 2000

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
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
