#include "sim/lua/lua_values.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <lua.hpp>

namespace xackly {

namespace {

void PushString(lua_State* L, const std::string& s) { lua_pushlstring(L, s.data(), s.size()); }

// {f1 = v1, ...} from a flat [f1, v1, ...] array of strings.
void PushFieldMap(lua_State* L, const Reply& flat) {
  lua_createtable(L, 0, static_cast<int>(flat.size() / 2));
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    if (!flat[i].is_string()) continue;
    PushString(L, flat[i].str());
    PushReply(L, flat[i + 1]);
    lua_rawset(L, -3);
  }
}

void PushSqlValue(lua_State* L, const SqlValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    lua_pushinteger(L, *i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    lua_pushnumber(L, *d);
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    PushString(L, *s);
  } else {
    lua_pushnil(L);
  }
}

}  // namespace

void PushReply(lua_State* L, const Reply& reply) {
  luaL_checkstack(L, 4, "reply too deeply nested");
  switch (reply.type()) {
    case Reply::Type::kNil: lua_pushboolean(L, 0); break;
    case Reply::Type::kInteger: lua_pushinteger(L, reply.integer()); break;
    case Reply::Type::kStatus:
    case Reply::Type::kString: PushString(L, reply.str()); break;
    case Reply::Type::kError:
      lua_createtable(L, 0, 1);
      PushString(L, reply.str());
      lua_setfield(L, -2, "err");
      break;
    case Reply::Type::kArray:
      lua_createtable(L, static_cast<int>(reply.size()), 0);
      for (size_t i = 0; i < reply.size(); ++i) {
        PushReply(L, reply[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      break;
  }
}

Result<Reply> ToReply(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TNONE: return Reply::Nil();
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? Reply::Integer(1) : Reply::Nil();
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) return Reply::Integer(lua_tointeger(L, idx));
      lua_Number n = lua_tonumber(L, idx);
      lua_Integer i = 0;
      if (lua_numbertointeger(n, &i) && static_cast<lua_Number>(i) == n) return Reply::Integer(i);
      return Status::InvalidArgument(fmt::format("the number {} has no Redis reply form (not an integer)", n));
    }
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, idx, &len);
      return Reply::String(std::string(s, len));
    }
    case LUA_TTABLE: {
      if (lua_getfield(L, idx, "err") == LUA_TSTRING) {
        Reply r = Reply::Error(lua_tostring(L, -1));
        lua_pop(L, 1);
        return r;
      }
      lua_pop(L, 1);
      if (lua_getfield(L, idx, "ok") == LUA_TSTRING) {
        Reply r = Reply::StatusText(lua_tostring(L, -1));
        lua_pop(L, 1);
        return r;
      }
      lua_pop(L, 1);
      lua_Integer n = luaL_len(L, idx);
      // Only a sequence converts: every key must be one of 1..n.
      lua_Integer keys = 0;
      lua_pushnil(L);
      while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        ++keys;
      }
      if (keys != n) {
        return Status::InvalidArgument("a table with keys other than 1..n has no Redis reply form");
      }
      std::vector<Reply> elements;
      elements.reserve(static_cast<size_t>(n));
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, i);
        Result<Reply> e = ToReply(L, -1);
        lua_pop(L, 1);
        if (!e.ok()) return e.status();
        elements.push_back(std::move(e).value());
      }
      return Reply::Array(std::move(elements));
    }
    default:
      return Status::InvalidArgument(
          fmt::format("a {} value has no Redis reply form", luaL_typename(L, idx)));
  }
}

void PushReadResult(lua_State* L, const Reply& reply) {
  if (reply.is_status() && reply.str() == "QUEUED") {  // the script's own MULTI is still open
    luaL_error(L, "w:read inside MULTI: the read was only queued (EXEC or DISCARD the transaction first)");
  }
  lua_newtable(L);
  if (reply.is_error()) {
    PushString(L, reply.str());
    return;
  }
  lua_Integer n = 0;
  if (reply.is_array()) {
    for (const Reply& stream : reply.elements()) {
      if (!stream.is_array() || stream.size() != 2 || !stream[1].is_array()) continue;
      for (const Reply& row : stream[1].elements()) {
        if (!row.is_array() || row.size() != 2 || !row[0].is_string()) continue;
        lua_createtable(L, 0, 4);
        PushString(L, row[0].str());
        lua_setfield(L, -2, "id");
        PushReply(L, stream[0]);
        lua_setfield(L, -2, "stream");
        if (row[1].is_array()) {
          PushFieldMap(L, row[1]);
        } else {
          lua_newtable(L);
          lua_pushboolean(L, 1);
          lua_setfield(L, -3, "deleted");
        }
        lua_setfield(L, -2, "fields");
        lua_rawseti(L, -2, ++n);
      }
    }
  }
  lua_pushnil(L);
}

void PushSqlResult(lua_State* L, const SqlResult& result) {
  lua_createtable(L, 0, 4);
  lua_pushboolean(L, result.error.empty());
  lua_setfield(L, -2, "ok");
  lua_pushinteger(L, result.changes);
  lua_setfield(L, -2, "changes");
  lua_createtable(L, static_cast<int>(result.rows.size()), 0);
  for (size_t r = 0; r < result.rows.size(); ++r) {
    const std::vector<SqlValue>& row = result.rows[r];
    lua_createtable(L, 0, static_cast<int>(row.size()));
    for (size_t c = 0; c < row.size() && c < result.columns.size(); ++c) {
      PushSqlValue(L, row[c]);
      lua_setfield(L, -2, result.columns[c].c_str());
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(r + 1));
  }
  lua_setfield(L, -2, "rows");
  if (!result.error.empty()) {
    PushString(L, result.error);
    lua_setfield(L, -2, "err");
  }
}

}  // namespace xackly
