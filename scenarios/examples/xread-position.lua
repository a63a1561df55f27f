-- A position-based reader: plain XREAD (no consumer group, no PEL, no
-- XACK) from a position the consumer keeps in its own store. One reader
-- (workers = 1): several would each read every entry.
--
-- params.save_position says when the position moves:
--   "with-effect" (default): the effect, a processed row (the producer may
--     retry an XADD whose reply was lost, so one event can sit in two
--     entries) and the new position commit in one transaction; a crash
--     anywhere reads the entry again from the old position, and the
--     processed row absorbs a second entry of the event. Expected: ok.
--   "before-effect": saved first, then the effect: a crash, lost reply or
--     failed effect in between loses the event, the restarted reader
--     starting past it (xread-position-first.toml).
--   "after-effect": the effect, then the position in a statement of its
--     own, no processed row: a crash or a store outage in between reads
--     the entry again and repeats the effect (xread-position-last.toml).
-- Shows: XREAD readers are judged like group readers (docs/scripts.md,
-- "Position-based readers").

local SAVE = params.save_position or "with-effect"

local function position(w)
  local r = w:sql("SELECT id FROM position WHERE name = 'events'")
  if not r.ok then return nil end
  return #r.rows == 1 and r.rows[1].id or "0"
end

local function save(w, e)
  return w:sql("INSERT OR REPLACE INTO position(name, id) VALUES ('events', ?)", e.id).ok
end

-- Whether the entry is done and the loop may go on to the next one.
local function handle(w, e)
  if SAVE == "before-effect" then
    if not save(w, e) then return false end
    w:effect(e.fields.event_id, "external", {entry = e})
    return true
  elseif SAVE == "after-effect" then
    return w:effect(e.fields.event_id, "external", {entry = e}) and save(w, e)
  end
  local ok = w:sql("BEGIN").ok
  local mark = ok and w:sql("INSERT OR IGNORE INTO processed(event_id) VALUES (?)", e.fields.event_id)
  ok = mark and mark.ok and (mark.changes == 0 or w:effect(e.fields.event_id, "sql", {entry = e})) and
      save(w, e) and w:sql("COMMIT").ok
  if not ok then w:sql("ROLLBACK") end  -- an aborted transaction must be rolled back
  return ok
end

function consumer(w)
  while not w:sql("CREATE TABLE IF NOT EXISTS position(name TEXT PRIMARY KEY, id TEXT)").ok do w:sleep(1000) end
  while true do
    local from = position(w)
    local r = from and w:redis("XREAD", "COUNT", 10, "STREAMS", w.stream, from)
    local batch = (r and not xackly.is_error(r)) and xackly.entries(r[1] and r[1][2] or {}) or {}
    if #batch == 0 then w:sleep(500) end
    for _, e in ipairs(batch) do
      if not handle(w, e) then break end
    end
  end
end
