#include "sim/lua/lua_process.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/format.h>
#include <lua.hpp>

#include "sim/lua/cpu_watchdog.h"

namespace xackly {

namespace {

// The budget is counted in slices: the count hook fires every kSlice
// instructions of any thread of the process.
constexpr int kSlice = 1000;

// --- deterministic key order -------------------------------------------------

// A table key as a plain value, so that keys can be sorted and pushed back.
// Lua normalises float keys with an integral value to integers, so a key is
// exactly one of these.
struct Key {
  int rank = 0;  // 0 number, 1 string, 2 boolean
  bool is_int = false;
  lua_Integer i = 0;
  lua_Number n = 0;
  std::string s;
  bool b = false;
};

bool KeyLess(const Key& a, const Key& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  switch (a.rank) {
    case 0: {
      if (a.is_int && b.is_int) return a.i < b.i;
      // Mixed or float keys: compare mathematically (no NaN key exists).
      lua_Number x = a.is_int ? static_cast<lua_Number>(a.i) : a.n;
      lua_Number y = b.is_int ? static_cast<lua_Number>(b.i) : b.n;
      if (x != y) return x < y;
      return a.is_int && !b.is_int;  // 2^53 vs 2^53.0 cannot both be keys; any tie-break
    }
    case 1: return a.s < b.s;
    default: return !a.b && b.b;
  }
}

// Reads the key at `idx`; raises a Lua error for a key with no total order.
Key ReadKey(lua_State* L, int idx, const char* fn) {
  Key k;
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      k.rank = 0;
      k.is_int = lua_isinteger(L, idx);
      if (k.is_int) {
        k.i = lua_tointeger(L, idx);
      } else {
        k.n = lua_tonumber(L, idx);
      }
      break;
    case LUA_TSTRING: {
      k.rank = 1;
      size_t len = 0;
      const char* s = lua_tolstring(L, idx, &len);
      k.s.assign(s, len);
      break;
    }
    case LUA_TBOOLEAN:
      k.rank = 2;
      k.b = lua_toboolean(L, idx);
      break;
    default:
      luaL_error(L,
                 "%s: a table key of type %s has no deterministic order (xackly iterates keys "
                 "in sorted order; use numbers, strings or booleans as keys)",
                 fn, luaL_typename(L, idx));
  }
  return k;
}

void PushKey(lua_State* L, const Key& k) {
  switch (k.rank) {
    case 0:
      if (k.is_int) {
        lua_pushinteger(L, k.i);
      } else {
        lua_pushnumber(L, k.n);
      }
      break;
    case 1: lua_pushlstring(L, k.s.data(), k.s.size()); break;
    default: lua_pushboolean(L, k.b); break;
  }
}

std::vector<Key> SortedKeys(lua_State* L, int table, const char* fn) {
  table = lua_absindex(L, table);
  std::vector<Key> keys;
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    lua_pop(L, 1);
    keys.push_back(ReadKey(L, -1, fn));
  }
  std::sort(keys.begin(), keys.end(), KeyLess);
  return keys;
}

// The state of one pairs() loop: the keys, sorted once, and the position.
struct KeyCursor {
  std::vector<Key> keys;
  size_t next = 0;
};

int KeyCursorGc(lua_State* L) {
  static_cast<KeyCursor*>(lua_touserdata(L, 1))->~KeyCursor();
  return 0;
}

// iterator(t, _): the next key (in sorted order) whose value is not nil.
int SortedPairsStep(lua_State* L) {
  auto* cursor = static_cast<KeyCursor*>(lua_touserdata(L, lua_upvalueindex(1)));
  while (cursor->next < cursor->keys.size()) {
    const Key& k = cursor->keys[cursor->next++];
    PushKey(L, k);
    lua_pushvalue(L, -1);
    lua_rawget(L, 1);
    if (!lua_isnil(L, -1)) return 2;
    lua_pop(L, 2);  // removed during the loop
  }
  lua_pushnil(L);
  return 1;
}

// pairs(t): honours __pairs, else iterates keys in sorted order.
int SortedPairs(lua_State* L) {
  luaL_checkany(L, 1);
  if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {
    lua_pushvalue(L, 1);
    lua_call(L, 1, 3);
    return 3;
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  std::vector<Key> keys = SortedKeys(L, 1, "pairs");
  void* mem = lua_newuserdatauv(L, sizeof(KeyCursor), 0);
  auto* cursor = new (mem) KeyCursor{std::move(keys), 0};
  (void)cursor;
  if (luaL_newmetatable(L, "xackly.KeyCursor")) {
    lua_pushcfunction(L, KeyCursorGc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_pushcclosure(L, SortedPairsStep, 1);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// next(t, k): the key after k in sorted order (sorts on every call: prefer
// pairs in loops).
int SortedNext(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  std::vector<Key> keys = SortedKeys(L, 1, "next");
  size_t pos = 0;
  if (!lua_isnil(L, 2)) {
    Key k = ReadKey(L, 2, "next");
    auto it = std::lower_bound(keys.begin(), keys.end(), k, KeyLess);
    if (it == keys.end() || KeyLess(k, *it)) return luaL_error(L, "invalid key to 'next'");
    pos = static_cast<size_t>(it - keys.begin()) + 1;
  }
  for (; pos < keys.size(); ++pos) {
    PushKey(L, keys[pos]);
    lua_pushvalue(L, -1);
    lua_rawget(L, 1);
    if (!lua_isnil(L, -1)) return 2;
    lua_pop(L, 2);
  }
  lua_pushnil(L);
  return 1;
}

// --- no addresses in text ----------------------------------------------------

bool ShowsAddress(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TTABLE:
    case LUA_TFUNCTION:
    case LUA_TTHREAD:
    case LUA_TUSERDATA:
    case LUA_TLIGHTUSERDATA:
      break;
    default:
      return false;
  }
  if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

// Pushes the text of the value at `idx`: luaL_tolstring's, but "table"
// (or its __name) instead of "table: 0x55d0...".
void PushText(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (!ShowsAddress(L, idx)) {
    luaL_tolstring(L, idx, nullptr);
    return;
  }
  int name = luaL_getmetafield(L, idx, "__name");
  if (name == LUA_TSTRING) return;
  if (name != LUA_TNIL) lua_pop(L, 1);
  lua_pushstring(L, luaL_typename(L, idx));
}

int SafeToString(lua_State* L) {
  luaL_checkany(L, 1);
  PushText(L, 1);
  return 1;
}

// string.format without addresses: "%p" is refused, and %s of a table or
// function shows its type, not its address.
int SafeFormat(lua_State* L) {
  size_t len = 0;
  const char* f = luaL_checklstring(L, 1, &len);
  for (size_t i = 0; i < len; ++i) {
    if (f[i] != '%') continue;
    ++i;
    if (i < len && f[i] == '%') continue;
    while (i < len && std::strchr("-+ #0123456789.", f[i]) != nullptr) ++i;
    if (i < len && f[i] == 'p') {
      return luaL_error(L, "string.format: '%%p' shows an address, which differs per process");
    }
  }
  int n = lua_gettop(L);
  for (int i = 2; i <= n; ++i) {
    if (ShowsAddress(L, i)) {
      PushText(L, i);
      lua_replace(L, i);
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, 1);
  return 1;
}

// load(chunk [, name [, mode [, env]]]) for text only.
int TextLoad(lua_State* L) {
  int n = lua_gettop(L);
  if (n >= 3 && !lua_isnil(L, 3)) {
    const char* mode = luaL_checkstring(L, 3);
    if (std::strcmp(mode, "t") != 0) {
      return luaL_error(L, "load: only text chunks can be loaded (mode \"t\"), not \"%s\"", mode);
    }
  }
  lua_settop(L, std::max(n, 3));
  lua_pushstring(L, "t");
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// --- a deterministic table.sort ------------------------------------------------

// Whether the value at absolute index `a` sorts before the one at `b`:
// comp(a, b) when the sort has a comparator (argument 2), else a < b.
bool SortsBefore(lua_State* L, int a, int b) {
  if (lua_isnil(L, 2)) return lua_compare(L, a, b, LUA_OPLT) != 0;
  lua_pushvalue(L, 2);
  lua_pushvalue(L, a);
  lua_pushvalue(L, b);
  lua_call(L, 2, 1);
  const bool before = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return before;
}

// table.sort(t [, comp]) as a stable bottom-up merge sort: the same order
// on every machine and every run (Lua 5.4's quicksort takes a pivot from
// clock() and time() on large inputs it finds unbalanced), n log n
// comparisons at most, each one a call the instruction budget counts.
int StableSort(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const lua_Integer n = luaL_len(L, 1);
  if (n < 2) return 0;
  luaL_argcheck(L, n < INT_MAX, 1, "array too big");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_createtable(L, static_cast<int>(n), 0);  // 3: the other half of each merge
  int from = 1;
  int to = 3;
  for (lua_Integer width = 1; width < n; width *= 2) {
    for (lua_Integer lo = 1; lo <= n; lo += 2 * width) {
      const lua_Integer mid = std::min(lo + width, n + 1);
      const lua_Integer hi = std::min(lo + 2 * width, n + 1);
      lua_Integer i = lo;
      lua_Integer j = mid;
      lua_Integer k = lo;
      while (i < mid && j < hi) {
        lua_geti(L, from, i);
        lua_geti(L, from, j);
        const int top = lua_gettop(L);
        if (SortsBefore(L, top, top - 1)) {  // only a strictly smaller right one goes first
          lua_seti(L, to, k++);
          lua_pop(L, 1);
          ++j;
        } else {
          lua_pop(L, 1);
          lua_seti(L, to, k++);
          ++i;
        }
      }
      for (; i < mid; ++i) {
        lua_geti(L, from, i);
        lua_seti(L, to, k++);
      }
      for (; j < hi; ++j) {
        lua_geti(L, from, j);
        lua_seti(L, to, k++);
      }
    }
    std::swap(from, to);
  }
  if (from != 1) {
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, 3, i);
      lua_seti(L, 1, i);
    }
  }
  return 0;
}

// Helpers every script can use (pure functions, no step).
constexpr const char* kPrelude = R"lua(
local xackly = {}
-- true when `v` is an error reply ({err = "..."}).
function xackly.is_error(v)
  return type(v) == "table" and type(v.err) == "string"
end
-- {k1 = v1, ...} from a flat reply [k1, v1, k2, v2, ...] (XINFO records).
function xackly.map(flat)
  local m = {}
  for i = 1, #flat, 2 do m[flat[i]] = flat[i + 1] end
  return m
end
-- A flat list k1, v1, ... of a map, keys in sorted order (for XADD fields).
function xackly.flatten(map)
  local out = {}
  for k, v in pairs(map) do out[#out + 1] = k; out[#out + 1] = v end
  return out
end
-- Entries {id =, fields = {...}} from a reply [[id, [f, v, ...]]...]
-- (XRANGE, XCLAIM, the second element of XAUTOCLAIM). A nil payload (a
-- deleted entry) gives {id =, fields = {}, deleted = true}.
function xackly.entries(reply)
  local out = {}
  if type(reply) ~= "table" or reply.err then return out end
  for _, row in ipairs(reply) do
    if type(row) == "table" then
      local e = {id = row[1], fields = {}}
      if type(row[2]) == "table" then e.fields = xackly.map(row[2]) else e.deleted = true end
      out[#out + 1] = e
    end
  end
  return out
end
return xackly
)lua";

// Whether `message` starts with a position "chunk:line:" (before its first
// space), as Lua's own messages do.
bool HasPosition(const std::string& message) {
  size_t end = message.find(' ');
  if (end == std::string::npos) end = message.size();
  for (size_t colon = message.find(':'); colon < end; colon = message.find(':', colon + 1)) {
    size_t digits = colon + 1;
    while (digits < end && message[digits] >= '0' && message[digits] <= '9') ++digits;
    if (digits > colon + 1 && digits < message.size() && message[digits] == ':') return true;
  }
  return false;
}

// A compile error quotes the token it stopped at ("... near 'token'"). A
// file that is not Lua could have a secret there; a long token is named by
// its length only.
std::string WithoutLongToken(std::string message) {
  constexpr size_t kMaxQuotedToken = 20;
  const size_t open = message.rfind(" near '");
  const size_t close = message.rfind('\'');
  if (open == std::string::npos || close <= open + 7) return message;
  const size_t length = close - (open + 7);
  if (length <= kMaxQuotedToken) return message;
  return message.substr(0, open) + fmt::format(" near a token of {} characters (not shown)", length) +
         message.substr(close + 1);
}

}  // namespace

std::string LuaWhere(lua_State* L) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Sl", &ar) != 0 && ar.currentline > 0) {
      return fmt::format("{}:{}", ar.short_src, ar.currentline);
    }
  }
  return "";
}

namespace {
// The memory of every Lua process made on this thread (sim/lua/lua_process.h).
thread_local std::shared_ptr<size_t> t_thread_memory = std::make_shared<size_t>(0);
}  // namespace

LuaProcess::LuaProcess(ProcessEnv env) : env_(std::move(env)), thread_memory_used_(t_thread_memory) {}

LuaProcess::~LuaProcess() {
  if (L_ != nullptr) lua_close(L_);
}

LuaProcess* LuaProcess::Of(lua_State* L) { return *static_cast<LuaProcess**>(lua_getextraspace(L)); }

void* LuaProcess::Alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* self = static_cast<LuaProcess*>(ud);
  size_t& thread_used = *self->thread_memory_used_;
  if (ptr == nullptr) old_size = 0;  // old_size is then the object's type
  if (new_size == 0) {
    std::free(ptr);
    self->memory_used_ -= old_size;
    thread_used -= old_size;
    return nullptr;
  }
  if (new_size > old_size) {
    const bool over_own = self->memory_used_ - old_size + new_size > self->env_.limits.memory_bytes;
    const bool over_thread = thread_used - old_size + new_size > self->env_.limits.memory_bytes_per_thread;
    if (over_own || over_thread) {
      self->refused_by_thread_limit_ = !over_own;
      return nullptr;  // Lua raises "not enough memory"
    }
  }
  void* p = std::realloc(ptr, new_size);
  if (p != nullptr) {
    self->memory_used_ = self->memory_used_ - old_size + new_size;
    thread_used = thread_used - old_size + new_size;
  }
  return p;
}

void LuaProcess::Hook(lua_State* L, lua_Debug* ar) {
  LuaProcess* self = Of(L);
  self->used_ += kSlice;
  if (!self->exhausted_ && self->used_ <= self->env_.limits.instructions_per_step) return;
  if (!self->exhausted_) {
    self->exhausted_ = true;
    lua_getinfo(L, "Sl", ar);
    std::string where = ar->currentline > 0 ? fmt::format("{}:{}", ar->short_src, ar->currentline)
                                            : LuaWhere(L);
    self->budget_error_ = fmt::format(
        "{}: instruction budget exhausted: more than {} Lua instructions in one step without a "
        "call to the world (an endless loop? a loop that waits for another lane must call w:sleep or "
        "w:park)",
        where.empty() ? self->path_ : where, self->env_.limits.instructions_per_step);
  }
  // Yielding cannot be caught by pcall: the actor's driver sees the yield,
  // finds the budget exhausted and ends the script.
  if (lua_isyieldable(L)) {
    lua_yield(L, 0);
    return;
  }
  luaL_error(L, "%s", self->budget_error_.c_str());
}

int LuaProcess::Random(lua_State* L) {
  Rng& rng = Of(L)->env_.rng;
  lua_Integer lo = 1;
  lua_Integer hi = 0;
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, static_cast<lua_Number>(rng.Next() >> 11) * 0x1.0p-53);
      return 1;
    case 1:
      hi = luaL_checkinteger(L, 1);
      if (hi == 0) {  // math.random(0): a whole random integer
        lua_pushinteger(L, static_cast<lua_Integer>(rng.Next()));
        return 1;
      }
      break;
    case 2:
      lo = luaL_checkinteger(L, 1);
      hi = luaL_checkinteger(L, 2);
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'random'");
  }
  luaL_argcheck(L, lo <= hi, lua_gettop(L), "interval is empty");
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t r = span == UINT64_MAX ? rng.Next() : rng.Below(span + 1);
  lua_pushinteger(L, static_cast<lua_Integer>(static_cast<uint64_t>(lo) + r));
  return 1;
}

int LuaProcess::OsTime(lua_State* L) {
  if (!lua_isnoneornil(L, 1)) {
    return luaL_error(L, "os.time(table) is not available in a protocol script; os.time() is the virtual clock");
  }
  LuaProcess* self = Of(L);
  lua_pushinteger(L, (self->env_.epoch_ms + self->NowMs()) / 1000);
  return 1;
}

int LuaProcess::OsClock(lua_State* L) {
  lua_pushnumber(L, static_cast<lua_Number>(Of(L)->NowMs()) / 1000.0);
  return 1;
}

int LuaProcess::Print(lua_State* L) {
  int n = lua_gettop(L);
  std::string line;
  for (int i = 1; i <= n; ++i) {
    if (i > 1) line += '\t';
    PushText(L, i);
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    line.append(s, len);
    lua_pop(L, 1);
  }
  LuaProcess* self = Of(L);
  if (self->env_.print) self->env_.print(line);
  return 0;
}

void LuaProcess::InstallSandbox() {
  lua_State* L = L_;
  static const luaL_Reg kLibs[] = {
      {LUA_GNAME, luaopen_base},         {LUA_COLIBNAME, luaopen_coroutine},
      {LUA_TABLIBNAME, luaopen_table},   {LUA_STRLIBNAME, luaopen_string},
      {LUA_MATHLIBNAME, luaopen_math},   {LUA_UTF8LIBNAME, luaopen_utf8},
  };
  for (const luaL_Reg& lib : kLibs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  for (const char* name : {"dofile", "loadfile", "collectgarbage", "warn", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, SortedPairs);
  lua_setglobal(L, "pairs");
  lua_pushcfunction(L, SortedNext);
  lua_setglobal(L, "next");
  lua_pushcfunction(L, SafeToString);
  lua_setglobal(L, "tostring");
  lua_pushcfunction(L, Print);
  lua_setglobal(L, "print");
  lua_getglobal(L, "load");
  lua_pushcclosure(L, TextLoad, 1);
  lua_setglobal(L, "load");

  lua_getglobal(L, LUA_STRLIBNAME);
  lua_getfield(L, -1, "format");
  lua_pushcclosure(L, SafeFormat, 1);
  lua_setfield(L, -2, "format");
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);

  lua_getglobal(L, LUA_TABLIBNAME);
  lua_pushcfunction(L, StableSort);
  lua_setfield(L, -2, "sort");
  lua_pop(L, 1);

  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_pushcfunction(L, Random);
  lua_setfield(L, -2, "random");
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, OsTime);
  lua_setfield(L, -2, "time");
  lua_pushcfunction(L, OsClock);
  lua_setfield(L, -2, "clock");
  lua_setglobal(L, "os");

  // The prelude is our own code: it must load and run.
  XACKLY_CHECK(luaL_loadbufferx(L, kPrelude, std::strlen(kPrelude), "=xackly", "t") == LUA_OK);
  XACKLY_CHECK(lua_pcall(L, 0, 1, 0) == LUA_OK);
  lua_setglobal(L, "xackly");
}

std::string LuaProcess::ErrorMessage(lua_State* co, int status) const {
  std::string where = LuaWhere(co);
  std::string message;
  if (status == LUA_ERRMEM) {
    message = MemoryLimitMessage();
  } else if (lua_type(co, -1) == LUA_TSTRING) {
    size_t len = 0;
    const char* s = lua_tolstring(co, -1, &len);
    message.assign(s, len);
  } else {
    message = fmt::format("(error object is a {} value)", luaL_typename(co, -1));
  }
  // Messages from error("...") and the VM already start with "path:line:".
  if (HasPosition(message)) return message;
  if (where.empty()) where = path_;
  return where + ": " + message;
}

Status LuaProcess::Open(const ScriptSource& source) {
  path_ = source.path;
  L_ = lua_newstate(&LuaProcess::Alloc, this);
  if (L_ == nullptr) return Status::Internal("cannot create a Lua state");
  *static_cast<LuaProcess**>(lua_getextraspace(L_)) = this;
  InstallSandbox();
  // Every thread made after this inherits the hook.
  lua_sethook(L_, &LuaProcess::Hook, LUA_MASKCOUNT, kSlice);

  std::string chunkname = "@" + (source.chunk_name.empty() ? source.path : source.chunk_name);
  int loaded = luaL_loadbufferx(L_, source.text.data(), source.text.size(), chunkname.c_str(), "t");
  if (loaded != LUA_OK) {
    std::string message = WithoutLongToken(lua_tostring(L_, -1) != nullptr ? lua_tostring(L_, -1) : "cannot load");
    if (!HasPosition(message)) message = path_ + ": " + message;
    return Status::InvalidArgument(message);
  }
  // Top-level code runs in a thread so that the budget hook can stop it.
  lua_State* co = lua_newthread(L_);
  lua_insert(L_, -2);
  lua_xmove(L_, co, 1);
  ResetBudget();
  int nres = 0;
  int status = 0;
  {
    CpuWatchdogStep step(co, path_.c_str(), env_.limits.cpu_ms_per_step);
    status = lua_resume(co, L_, 0, &nres);
  }
  if (status == LUA_OK) {
    lua_pop(L_, 1);  // the thread
    return Status::Ok();
  }
  std::string message;
  if (exhausted_) {
    message = budget_error_;
  } else if (status == LUA_YIELD) {
    message = LuaWhere(co) + ": top-level code must not yield (call w: functions inside consumer, producer or janitor)";
  } else {
    message = WithoutLongToken(ErrorMessage(co, status));  // an include's compile error too
  }
  lua_pop(L_, 1);
  return Status::InvalidArgument(message);
}

Result<std::unique_ptr<LuaProcess>> LuaProcess::Load(const ScriptSource& source, ProcessEnv env) {
  std::unique_ptr<LuaProcess> p(new LuaProcess(std::move(env)));
  Status s = p->Open(source);
  if (!s.ok()) return s;
  return p;
}

std::string LuaProcess::MemoryLimitMessage() const {
  if (refused_by_thread_limit_) {
    return fmt::format("memory limit of {} bytes for all the script's processes together exceeded",
                       env_.limits.memory_bytes_per_thread);
  }
  return fmt::format("memory limit of {} bytes exceeded", env_.limits.memory_bytes);
}

namespace {
// Calls the std::function<void(lua_State*)> passed as light userdata.
int CallPush(lua_State* L) {
  const auto* push = static_cast<const std::function<void(lua_State*)>*>(lua_touserdata(L, 1));
  lua_pop(L, 1);
  (*push)(L);
  return lua_gettop(L);
}
}  // namespace

Result<int> LuaProcess::PushUnderLimits(lua_State* co, const std::function<void(lua_State*)>& push) {
  const int base = lua_gettop(L_);
  lua_pushcfunction(L_, CallPush);
  lua_pushlightuserdata(L_, const_cast<std::function<void(lua_State*)>*>(&push));
  int status = 0;
  {
    CpuWatchdogStep step(L_, path_.c_str(), env_.limits.cpu_ms_per_step);
    status = lua_pcall(L_, 1, LUA_MULTRET, 0);
  }
  if (status != LUA_OK) {
    // No Lua frame ran: the message is the error object alone.
    std::string message = status == LUA_ERRMEM         ? MemoryLimitMessage()
                          : lua_type(L_, -1) == LUA_TSTRING ? lua_tostring(L_, -1)
                                                            : "error while handing over the result";
    lua_settop(L_, base);
    return Status::InvalidArgument(message + " (while handing the call's result to the script)");
  }
  const int n = lua_gettop(L_) - base;
  lua_xmove(L_, co, n);
  return n;
}

std::vector<std::string> LuaProcess::GlobalFunctions() const {
  std::vector<std::string> names;
  lua_pushglobaltable(L_);
  lua_pushnil(L_);
  while (lua_next(L_, -2) != 0) {  // key at -2, value at -1
    if (lua_type(L_, -2) == LUA_TSTRING && lua_type(L_, -1) == LUA_TFUNCTION) {
      size_t len = 0;
      const char* s = lua_tolstring(L_, -2, &len);
      names.emplace_back(s, len);
    }
    lua_pop(L_, 1);
  }
  lua_pop(L_, 1);
  std::sort(names.begin(), names.end());
  return names;
}

bool LuaProcess::HasFunction(const char* name) const {
  int t = lua_getglobal(L_, name);
  lua_pop(L_, 1);
  return t == LUA_TFUNCTION;
}

}  // namespace xackly
