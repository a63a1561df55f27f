-- The worker loop every catalog script shares: the loop of the built-in
-- protocols (sim/worker.cc), step for step. Each catalog scenario runs this
-- file before its script (`[protocol] include = ["catalog_loop.lua"]`), so a
-- script holds only what makes its protocol what it is: how it handles one
-- entry (and a janitor, if it has one). To try a change to the loop itself,
-- copy this file next to your script and name the copy in your include.

-- XGROUP CREATE ... MKSTREAM (after a server restart lost the group).
function create_group(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
end

function ack(w, id)
  w:redis("XACK", w.stream, w.group, id)
end

-- The usual batch handler: an entry whose payload was deleted is only
-- acked; every other one goes to handle(w, e).
function each_entry(handle)
  return function(w, entries)
    for _, e in ipairs(entries) do
      if e.deleted then ack(w, e.id) else handle(w, e) end
    end
  end
end

-- The loop. `loop.handle_batch(w, entries, redelivered)` handles a batch
-- (`redelivered`: own pending or claimed, not new); `loop.block_ms` bounds
-- a park; `loop.min_idle_ms` and `loop.claim_every_ms` set the XAUTOCLAIM
-- rounds, and without them the worker never claims.
--   1. own pending first: what this consumer held before it crashed
--      (XREADGROUP 0, following the IDs until nothing is left);
--   2. then forever: an XAUTOCLAIM round when one is due (following the
--      cursor to its end), XREADGROUP >, and on an empty read a park until
--      new entries arrive, the next claim is due or block_ms pass.
function catalog_consumer(w, loop)
  local after = "0"
  while true do
    local batch, err = w:read(after)
    if err then create_group(w) break end
    if #batch == 0 then break end
    after = batch[#batch].id
    loop.handle_batch(w, batch, true)
  end
  local claims = loop.min_idle_ms ~= nil
  local next_claim = claims and w:now() + loop.claim_every_ms
  while true do
    if claims and w:now() >= next_claim then
      local cursor = "0-0"
      repeat
        local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, loop.min_idle_ms, cursor, "COUNT", 10)
        if xackly.is_error(r) then create_group(w) break end
        loop.handle_batch(w, xackly.entries(r[2]), true)
        cursor = r[1]
      until cursor == "0-0"
      next_claim = w:now() + loop.claim_every_ms
    end
    local batch, err = w:read(">")
    if err then
      create_group(w)
    elseif #batch == 0 then
      w:park(claims and math.min(loop.block_ms, math.max(1, next_claim - w:now())) or loop.block_ms)
    else
      loop.handle_batch(w, batch, false)
    end
  end
end
