-- An old Watermill: every 5 s, XPENDING IDLE 60 s, XCLAIM one idle entry,
-- then XGROUP DELCONSUMER of its previous owner -- which drops the rest of
-- that owner's pending entries. Per-entry dedupe is correct (SQL
-- transaction), so the only loss is the deleted PEL. Expected: lost.
-- Shows: claiming with XPENDING + XCLAIM, at most N per interval, deleting
-- the previous owner after a claim, reading own pending periodically.

local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO processed VALUES (?)", e.fields.event_id)
  if mark.changes == 1 and not w:effect(e.fields.event_id, "sql", {entry = e}) then
    w:sql("ROLLBACK")
    return
  end
  if w:sql("COMMIT").ok then w:redis("XACK", w.stream, w.group, e.id) end
end

local function claim_one(w)
  local rows = w:redis("XPENDING", w.stream, w.group, "IDLE", 60000, "-", "+", 1)
  if xackly.is_error(rows) or #rows == 0 then return end
  local id, owner = rows[1][1], rows[1][2]
  for _, e in ipairs(xackly.entries(w:redis("XCLAIM", w.stream, w.group, w.consumer, 60000, id))) do
    handle(w, e)
  end
  if owner ~= w.consumer then w:redis("XGROUP", "DELCONSUMER", w.stream, w.group, owner) end
end

function consumer(w)
  local next_claim = w:now() + 5000
  while true do
    if w:now() >= next_claim then
      claim_one(w)
      for _, e in ipairs(w:read("0")) do handle(w, e) end  -- own pending, periodically
      next_claim = w:now() + 5000
    end
    for _, e in ipairs(w:read(">", {block_ms = math.max(1, next_claim - w:now())})) do handle(w, e) end
  end
end
