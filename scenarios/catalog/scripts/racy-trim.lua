-- racy-trim: correct dedupe (as txn-dedupe, claiming after 1 s); the
-- janitor reads XPENDING, then XINFO GROUPS, then trims with MINID: three
-- requests, not a snapshot. Expected: lost (payload-deleted).
--
-- The catalog protocol racy-trim (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop is catalog_loop.lua and the handler txn-dedupe's
-- (txn_dedupe_handle): the scenario includes both files.

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 1000, 1000, 2000

-- "ms-seq" as two numbers, and the order of stream IDs.
local function parse(id)
  local ms, seq = id:match("^(%d+)-(%d+)$")
  return tonumber(ms), tonumber(seq)
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then return am < bm end
  return as < bs
end

-- The janitor keeps what the group may still need (its oldest pending
-- entry, everything after its last-delivered ID), but reads them with two
-- requests before the trim: an entry delivered in between is pending, yet
-- below the MINID.
function janitor(w)
  while true do
    w:sleep(1)
    local pending = w:redis("XPENDING", w.stream, w.group)
    local groups = w:redis("XINFO", "GROUPS", w.stream)
    local keep = nil
    if not xackly.is_error(groups) then
      for _, g in ipairs(groups) do
        local f = xackly.map(g)
        if f.name == w.group then
          local ms, seq = parse(f["last-delivered-id"])
          keep = ms .. "-" .. (seq + 1)
        end
      end
    end
    if not xackly.is_error(pending) and pending[1] > 0 and (keep == nil or less(pending[2], keep)) then
      keep = pending[2]
    end
    if keep then w:redis("XTRIM", w.stream, "MINID", keep) end
  end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = each_entry(txn_dedupe_handle), min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
