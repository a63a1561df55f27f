// Redis replies, stream entries and SQL results as Lua values, and back.
//
// Reply -> Lua follows Redis's own Lua scripting where it can, so that a
// user's EVAL knowledge carries over:
//   nil (bulk or array)  false         (never a hole in an array)
//   integer              integer
//   status (+OK)         string "OK"   (Redis gives {ok="OK"}; a plain string reads better)
//   bulk string          string (binary safe)
//   error (-ERR x)       {err = "ERR x"}   an error is a value, never raised
//   array                {v1, v2, ...}
// Lua -> Reply is the inverse: false/nil -> nil, true -> 1, {err=} -> error,
// {ok=} -> status, a string -> bulk string, an integer (or a float with an
// integral value) -> integer, a sequence -> array; anything else is an error.
#pragma once

#include <string>

#include "sim/reply.h"
#include "sim/script_world.h"
#include "sim/status.h"

struct lua_State;

namespace xackly {

void PushReply(lua_State* L, const Reply& reply);
// The value at `idx` as a reply; InvalidArgument names what cannot convert.
Result<Reply> ToReply(lua_State* L, int idx);

// Pushes the entries of an XREADGROUP/XREAD reply as a sequence of
// {id = "1-0", stream = "events", fields = {event_id = "order:1"}}; an entry
// whose payload is gone is {id =, stream =, fields = {}, deleted = true}.
// A nil reply is an empty sequence. Pushes a second value: nil, or the text
// of an error reply ("NOGROUP ..."), whose entries are then empty. A read
// that was only queued (+QUEUED: the script's MULTI is open) raises a Lua
// error: call it where an error is caught (LuaProcess::PushUnderLimits).
void PushReadResult(lua_State* L, const Reply& reply);

// Pushes {ok = bool, changes = n, rows = {{col = value}...}, err = "..."}
// (err only when the statement failed; SQL NULL columns are absent).
void PushSqlResult(lua_State* L, const SqlResult& result);

}  // namespace xackly
