-- batch-ack-no-dedupe: the effects of a whole batch, then one XACK for
-- all of them (seed 002's batch ack). A crash mid-batch redelivers the
-- whole batch: the effects that ran run again. Expected: duplicate.
--
-- The catalog protocol batch-ack-no-dedupe (sim/catalog.cc) written as a protocol
-- script; tests/sim/catalog_scripts_test.cc keeps the two forms equal.
-- The worker loop around handle() is catalog_loop.lua (the scenario's include).

local MIN_IDLE_MS, CLAIM_EVERY_MS, BLOCK_MS = 30000, 5000, 2000

local function handle(w, e)
  return w:effect(e.fields.event_id, "external", {entry = e})
end

-- A batch from a read or a claim: the effects one by one ("mid-batch" is a
-- crash point between two of them), then one XACK for those that ran; a
-- deleted payload is acked at once.
local function handle_batch(w, entries)
  local done = {}
  for i, e in ipairs(entries) do
    if i > 1 then w:point("mid-batch") end
    if e.deleted then
      ack(w, e.id)
    elseif handle(w, e) then
      done[#done + 1] = e.id
    end
  end
  if #done > 0 then w:redis("XACK", w.stream, w.group, table.unpack(done)) end
end

function consumer(w)
  catalog_consumer(w, {handle_batch = handle_batch, min_idle_ms = MIN_IDLE_MS, claim_every_ms = CLAIM_EVERY_MS,
                       block_ms = BLOCK_MS})
end
