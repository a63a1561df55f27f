#include "sim/lua/script_actor.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <lua.hpp>

#include "sim/faults.h"
#include "sim/lua/cpu_watchdog.h"
#include "sim/lua/lua_values.h"
#include "sim/worker.h"

// Lua (built as C) leaves a C function by longjmp when it raises an error or
// yields: the w: methods below therefore keep no C++ object with a
// destructor on their own stack frame across a Lua call that may raise, and
// build the call in the actor's pending_ member instead.

namespace xackly {

namespace {

constexpr const char* kReadOptions = "count, block_ms, stream, group, consumer";
constexpr const char* kEffectOptions = "entry, key, key_ttl_ms, duration_ms, timeout_ms";

bool IsKnown(const char* key, const char* list) {
  size_t len = std::strlen(key);
  for (const char* p = list; (p = std::strstr(p, key)) != nullptr; p += len) {
    bool starts = p == list || p[-1] == ' ';
    bool ends = p[len] == ',' || p[len] == '\0';
    if (starts && ends) return true;
  }
  return false;
}

// Raises an error naming an unknown key of the options table at `idx`
// (the smallest, so the message does not depend on hash order).
void CheckOptions(lua_State* L, int idx, const char* method, const char* known) {
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx)) luaL_error(L, "w:%s: options must be a table, not a %s", method, luaL_typename(L, idx));
  idx = lua_absindex(L, idx);
  lua_pushnil(L);  // the smallest unknown key's text so far
  int worst = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && IsKnown(lua_tostring(L, -1), known)) continue;
    if (lua_type(L, -1) == LUA_TSTRING) {
      lua_pushvalue(L, -1);
    } else {
      lua_pushfstring(L, "(a %s key)", luaL_typename(L, -1));
    }
    if (lua_isnil(L, worst) || std::strcmp(lua_tostring(L, -1), lua_tostring(L, worst)) < 0) {
      lua_replace(L, worst);
    } else {
      lua_pop(L, 1);
    }
  }
  if (!lua_isnil(L, worst)) {
    luaL_error(L, "w:%s: unknown option '%s' (options: %s)", method, lua_tostring(L, worst), known);
  }
  lua_pop(L, 1);
}

// opts[name] as an integer >= min, or `fallback` when absent.
int64_t OptInteger(lua_State* L, int idx, const char* method, const char* name, int64_t fallback,
                   int64_t min) {
  if (!lua_istable(L, idx)) return fallback;
  lua_getfield(L, idx, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return fallback;
  }
  int is_int = 0;
  lua_Integer v = lua_tointegerx(L, -1, &is_int);
  if (!is_int || v < min) {
    luaL_error(L, "w:%s: option %s must be an integer >= %d", method, name, static_cast<int>(min));
  }
  lua_pop(L, 1);
  return v;
}

// Appends opts[name] (a string) to `out`, or `fallback` when absent.
void OptString(lua_State* L, int idx, const char* method, const char* name,
               const std::string& fallback, std::string* out) {
  if (lua_istable(L, idx)) {
    lua_getfield(L, idx, name);
    if (!lua_isnil(L, -1)) {
      if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "w:%s: option %s must be a string", method, name);
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      out->assign(s, len);
      lua_pop(L, 1);
      return;
    }
    lua_pop(L, 1);
  }
  *out = fallback;
}

void AssignString(lua_State* L, int idx, std::string* out) {
  size_t len = 0;
  const char* s = lua_tolstring(L, idx, &len);
  out->assign(s, len);
}

// w[name] (the actor object is argument 1) as a string into `out`.
void FieldString(lua_State* L, const char* method, const char* name, std::string* out) {
  lua_getfield(L, 1, name);
  if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "w:%s: w.%s must be a string", method, name);
  AssignString(L, -1, out);
  lua_pop(L, 1);
}


// The read of w:read: XREADGROUP without BLOCK; when nothing is new and the
// script asked to block, the actor parks (never a blocking command on the
// wire) and reads once more if new entries woke it.
Task<Reply> ReadWithPark(ScriptWorld& world, const ScriptCall& call) {
  Reply first = co_await world.Redis(call.argv);
  if (!first.is_nil() || call.block_ms <= 0 || !call.reads_new) co_return first;
  bool woken = co_await world.Park(call.block_ms);
  if (!woken) co_return first;
  Reply again = co_await world.Redis(call.argv);
  co_return again;
}

// Performs one call on the world and pushes its results onto the actor's
// coroutine; returns how many.
Task<int> Perform(ScriptActor& actor, ScriptWorld& world, ScriptCall call) {
  switch (call.kind) {
    case ScriptCall::Kind::kRedis: {
      Reply r = co_await world.Redis(std::move(call.argv));
      co_return actor.Deliver([&r](lua_State* L) { PushReply(L, r); });
    }
    case ScriptCall::Kind::kRead: {
      Reply r = co_await ReadWithPark(world, call);
      co_return actor.Deliver([&r](lua_State* L) { PushReadResult(L, r); });
    }
    case ScriptCall::Kind::kSql: {
      SqlResult r = co_await world.Sql(std::move(call.statement), std::move(call.params));
      co_return actor.Deliver([&r](lua_State* L) { PushSqlResult(L, r); });
    }
    case ScriptCall::Kind::kEffect: {
      EffectOutcome o = co_await world.Effect(std::move(call.effect));
      co_return actor.Deliver([o](lua_State* L) {
        lua_pushboolean(L, o == EffectOutcome::kOk || o == EffectOutcome::kDuplicate);
        lua_pushstring(L, EffectOutcomeName(o));
      });
    }
    case ScriptCall::Kind::kPoint:
      co_await world.Point(std::move(call.name));
      co_return 0;
    case ScriptCall::Kind::kSleep:
      co_await world.Sleep(call.ms);
      co_return 0;
    case ScriptCall::Kind::kPark: {
      bool woken = co_await world.Park(call.ms);
      co_return actor.Deliver([woken](lua_State* L) { lua_pushboolean(L, woken); });
    }
  }
  co_return 0;
}

}  // namespace

ScriptActor::ScriptActor(std::shared_ptr<LuaProcess> process, const ScriptActorInfo& info)
    : process_(std::move(process)), events_(info.events) {
  lua_State* L = process_->state();
  thread_ = lua_newthread(L);
  thread_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  const std::string function = info.function.empty() ? ScriptFunctionName(info.role) : info.function;
  XACKLY_CHECK(lua_getglobal(thread_, function.c_str()) == LUA_TFUNCTION);
  PushActorObject(info);
}

ScriptActor::~ScriptActor() {
  *self_box_ = nullptr;  // its w may live on in the memory the process's other lanes share
  luaL_unref(process_->state(), LUA_REGISTRYINDEX, self_box_ref_);
  luaL_unref(process_->state(), LUA_REGISTRYINDEX, thread_ref_);
}

void ScriptActor::PushActorObject(const ScriptActorInfo& info) {
  lua_State* L = thread_;
  lua_createtable(L, 0, 8);
  auto set = [&](const char* key, const std::string& value) {
    lua_pushlstring(L, value.data(), value.size());
    lua_setfield(L, -2, key);
  };
  set("role", ScriptFunctionName(info.role));
  set("slot", info.slot);
  set("consumer", info.name);
  set("name", info.name);
  set("stream", info.stream);
  set("group", info.group);
  set("effects_key", info.effects_key);
  lua_pushinteger(L, info.incarnation);
  lua_setfield(L, -2, "incarnation");
  lua_pushinteger(L, info.lane);
  lua_setfield(L, -2, "lane");
  lua_pushinteger(L, info.lanes);
  lua_setfield(L, -2, "lanes");
  lua_pushinteger(L, info.events);
  lua_setfield(L, -2, "events");

  static const luaL_Reg kMethods[] = {
      {"redis", &ScriptActor::Redis}, {"read", &ScriptActor::Read},
      {"sql", &ScriptActor::Sql},     {"effect", &ScriptActor::Effect},
      {"point", &ScriptActor::Point}, {"sleep", &ScriptActor::Sleep},
      {"now", &ScriptActor::Now},     {"park", &ScriptActor::Park},
      {nullptr, nullptr},
  };
  lua_createtable(L, 0, 1);  // metatable
  lua_createtable(L, 0, 8);  // methods
  self_box_ = static_cast<ScriptActor**>(lua_newuserdatauv(L, sizeof(ScriptActor*), 0));
  *self_box_ = this;
  lua_pushvalue(L, -1);
  self_box_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  luaL_setfuncs(L, kMethods, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

ScriptActor& ScriptActor::Begin(lua_State* L, const char* method, ScriptCall::Kind kind) {
  auto* self = *static_cast<ScriptActor**>(lua_touserdata(L, lua_upvalueindex(1)));
  if (!lua_istable(L, 1)) luaL_error(L, "call w:%s(...) with a colon", method);
  if (self == nullptr) {
    luaL_error(L, "w:%s: this w belongs to a lane of the process that has ended; each lane calls the world "
               "with its own w", method);
  }
  if (L != self->thread_) {
    luaL_error(L,
               "w:%s was called from a coroutine the script created or from another lane; only the "
               "function a w was given to can call the world with it",
               method);
  }
  self->pending_.emplace();
  self->pending_->kind = kind;
  return *self;
}

int ScriptActor::Redis(lua_State* L) {
  ScriptActor& self = Begin(L, "redis", ScriptCall::Kind::kRedis);
  int n = lua_gettop(L);
  if (n < 2) return luaL_error(L, "w:redis: no command given");
  for (int i = 2; i <= n; ++i) {
    int t = lua_type(L, i);
    if (t != LUA_TSTRING && t != LUA_TNUMBER) {
      return luaL_error(L, "w:redis: argument %d is a %s; commands take strings and numbers", i - 1,
                        luaL_typename(L, i));
    }
    self.pending_->argv.emplace_back();
    AssignString(L, i, &self.pending_->argv.back());
  }
  return lua_yield(L, 0);
}

int ScriptActor::Read(lua_State* L) {
  ScriptActor& self = Begin(L, "read", ScriptCall::Kind::kRead);
  luaL_checkstring(L, 2);
  CheckOptions(L, 3, "read", kReadOptions);
  ScriptCall& c = *self.pending_;
  int64_t count = OptInteger(L, 3, "read", "count", 10, 1);
  c.block_ms = OptInteger(L, 3, "read", "block_ms", 0, 0);
  c.reads_new = std::strcmp(lua_tostring(L, 2), ">") == 0;
  c.argv.resize(9);
  c.argv[0] = "XREADGROUP";
  c.argv[1] = "GROUP";
  std::string* group = &c.argv[2];
  std::string* consumer = &c.argv[3];
  std::string* stream = &c.argv[7];
  FieldString(L, "read", "group", group);
  FieldString(L, "read", "consumer", consumer);
  FieldString(L, "read", "stream", stream);
  OptString(L, 3, "read", "group", c.argv[2], group);
  OptString(L, 3, "read", "consumer", c.argv[3], consumer);
  OptString(L, 3, "read", "stream", c.argv[7], stream);
  c.argv[4] = "COUNT";
  c.argv[5] = std::to_string(count);
  c.argv[6] = "STREAMS";
  AssignString(L, 2, &c.argv[8]);
  return lua_yield(L, 0);
}

int ScriptActor::Sql(lua_State* L) {
  ScriptActor& self = Begin(L, "sql", ScriptCall::Kind::kSql);
  luaL_checkstring(L, 2);
  AssignString(L, 2, &self.pending_->statement);
  int n = lua_gettop(L);
  for (int i = 3; i <= n; ++i) {
    std::vector<SqlValue>& params = self.pending_->params;
    switch (lua_type(L, i)) {
      case LUA_TNIL: params.emplace_back(std::monostate{}); break;
      case LUA_TBOOLEAN: params.emplace_back(int64_t{lua_toboolean(L, i)}); break;
      case LUA_TNUMBER:
        if (lua_isinteger(L, i)) {
          params.emplace_back(int64_t{lua_tointeger(L, i)});
        } else {
          params.emplace_back(double{lua_tonumber(L, i)});
        }
        break;
      case LUA_TSTRING:
        params.emplace_back(std::string());
        AssignString(L, i, &std::get<std::string>(params.back()));
        break;
      default:
        return luaL_error(L, "w:sql: parameter %d is a %s; SQL takes nil, booleans, numbers and strings",
                          i - 2, luaL_typename(L, i));
    }
  }
  return lua_yield(L, 0);
}

int ScriptActor::Effect(lua_State* L) {
  ScriptActor& self = Begin(L, "effect", ScriptCall::Kind::kEffect);
  if (lua_type(L, 2) != LUA_TSTRING || lua_rawlen(L, 2) == 0) {
    return luaL_error(L, "w:effect: the first argument must be the event id (a non-empty string)");
  }
  EffectCall& e = self.pending_->effect;
  AssignString(L, 2, &e.event_id);
  // The oracle judges the run's events only: an effect under another name
  // (a prefix of the script's own, an entry ID) would never be counted.
  const int event = EventNumber(e.event_id);
  if (event < 1 || event > self.events_) {
    return luaL_error(L,
                      "w:effect: '%s' names no event of this run (its events are order:1 .. order:%d, an "
                      "entry's fields.event_id): an effect under another name would never be checked",
                      e.event_id.c_str(), self.events_);
  }
  e.origin = LuaWhere(L);
  const char* sink = luaL_optstring(L, 3, "external");
  if (std::strcmp(sink, "external") == 0) {
    e.sink = ScriptSink::kExternal;
  } else if (std::strcmp(sink, "sql") == 0) {
    e.sink = ScriptSink::kSql;
  } else if (std::strcmp(sink, "redis") == 0) {
    e.sink = ScriptSink::kRedis;
  } else {
    return luaL_error(L, "w:effect: unknown sink '%s' (external, sql, redis)", sink);
  }
  CheckOptions(L, 4, "effect", kEffectOptions);
  if (lua_istable(L, 4)) {
    lua_getfield(L, 4, "entry");  // an entry id, or an entry table with .id
    if (lua_istable(L, -1)) lua_getfield(L, -1, "id");
    if (lua_type(L, -1) == LUA_TSTRING) AssignString(L, -1, &e.stream_id);
    lua_settop(L, 4);
  }
  OptString(L, 4, "effect", "key", "", &e.key);
  e.key_ttl_ms = OptInteger(L, 4, "effect", "key_ttl_ms", 0, 0);
  e.duration_ms = OptInteger(L, 4, "effect", "duration_ms", -1, 0);
  e.timeout_ms = OptInteger(L, 4, "effect", "timeout_ms", 0, 0);
  if (e.sink != ScriptSink::kExternal && (!e.key.empty() || e.timeout_ms > 0)) {
    return luaL_error(L, "w:effect: key and timeout_ms apply to the external sink only");
  }
  return lua_yield(L, 0);
}

int ScriptActor::Point(lua_State* L) {
  ScriptActor& self = Begin(L, "point", ScriptCall::Kind::kPoint);
  const char* name = luaL_checkstring(L, 2);
  if (!IsPointName(name)) {
    return luaL_error(L, "w:point: '%s' is not a point name (a built-in one such as after-commit, or point:<lowercase name>)", name);
  }
  self.pending_->name = name;
  return lua_yield(L, 0);
}

int ScriptActor::Sleep(lua_State* L) {
  ScriptActor& self = Begin(L, "sleep", ScriptCall::Kind::kSleep);
  lua_Integer ms = luaL_checkinteger(L, 2);
  if (ms < 0) return luaL_error(L, "w:sleep: milliseconds must be >= 0");
  self.pending_->ms = ms;
  return lua_yield(L, 0);
}

// w:park(max_ms): what a BLOCK read does between its empty answer and its
// next one, as its own call: waits until new entries arrive (true) or
// max_ms pass (false). Lets a loop decide how long to wait after its read.
int ScriptActor::Park(lua_State* L) {
  ScriptActor& self = Begin(L, "park", ScriptCall::Kind::kPark);
  lua_Integer ms = luaL_checkinteger(L, 2);
  if (ms < 1) return luaL_error(L, "w:park: milliseconds must be >= 1");
  self.pending_->ms = ms;
  return lua_yield(L, 0);
}

int ScriptActor::Now(lua_State* L) {
  lua_pushinteger(L, LuaProcess::Of(L)->NowMs());
  return 1;
}

int ScriptActor::Deliver(const std::function<void(lua_State*)>& push) {
  Result<int> pushed = process_->PushUnderLimits(thread_, push);
  if (pushed.ok()) return *pushed;
  delivery_error_ = pushed.status().message();
  return 0;
}

ScriptActor::Event ScriptActor::Resume(int nargs) {
  process_->ResetBudget();
  pending_.reset();
  Event ev;
  if (delivery_error_) {  // the call's result did not fit: the script ends at that call
    ev.kind = Event::Kind::kError;
    std::string where = LuaWhere(thread_);
    ev.error = (where.empty() ? process_->path() : where) + ": " + *delivery_error_;
    return ev;
  }
  if (!started_) {
    started_ = true;
    nargs = 1;  // w
  }
  int nres = 0;
  int status = 0;
  {
    CpuWatchdogStep step(thread_, process_->path().c_str(), process_->limits().cpu_ms_per_step);
    status = lua_resume(thread_, nullptr, nargs, &nres);
  }
  if (process_->budget_exhausted()) {
    ev.kind = Event::Kind::kError;
    ev.error = process_->budget_error();
    return ev;
  }
  if (status == LUA_YIELD) {
    lua_pop(thread_, nres);
    if (pending_) {
      ev.kind = Event::Kind::kCall;
      ev.call = std::move(*pending_);
      pending_.reset();
      return ev;
    }
    ev.kind = Event::Kind::kError;
    ev.error = LuaWhere(thread_) +
               ": coroutine.yield() in the actor's own function: only w: calls suspend an actor";
    return ev;
  }
  if (status == LUA_OK) {
    ev.kind = Event::Kind::kReturned;
    return ev;
  }
  ev.kind = Event::Kind::kError;
  ev.error = process_->ErrorMessage(thread_, status);
  return ev;
}

Task<Status> RunScriptActor(std::shared_ptr<ProcessMemory> memory, ScriptActorInfo info,
                            ScriptWorld& world) {
  ScriptActor actor(std::shared_ptr<LuaProcess>(memory, memory->lua.get()), info);
  memory->running = &world;
  // The world ends with this lane (a crash destroys it mid-call); the memory
  // may outlive it (a finalizer run when it closes sees no world).
  struct Leaving {
    ProcessMemory* m;
    ScriptWorld* w;
    ~Leaving() {
      if (m->running == w) m->running = nullptr;
    }
  } leaving{memory.get(), &world};
  ScriptActor::Event ev = actor.Resume(0);
  for (;;) {
    if (ev.kind == ScriptActor::Event::Kind::kReturned) co_return Status::Ok();
    if (ev.kind == ScriptActor::Event::Kind::kError) {
      co_return Status::InvalidArgument(ev.error + " (" + world.Where() + ")");
    }
    int results = co_await Perform(actor, world, std::move(ev.call));
    memory->running = &world;  // another lane of the process may have run meanwhile
    ev = actor.Resume(results);
  }
}

Result<std::shared_ptr<const LuaScript>> LuaScript::Load(ScriptSource source, ProcessLimits limits) {
  ProcessEnv env(Rng(0));
  env.limits = limits;
  Result<std::unique_ptr<LuaProcess>> p = LuaProcess::Load(source, std::move(env));
  if (!p.ok()) return p.status();
  if (!(*p)->HasFunction("consumer")) {
    return Status::InvalidArgument(source.path + ": defines no function consumer(w)");
  }
  std::shared_ptr<LuaScript> script(new LuaScript(std::move(source), limits));
  for (ScriptRole role : {ScriptRole::kConsumer, ScriptRole::kProducer, ScriptRole::kJanitor}) {
    script->defines_[static_cast<int>(role)] = (*p)->HasFunction(ScriptFunctionName(role));
  }
  for (std::string& name : (*p)->GlobalFunctions()) script->functions_.insert(std::move(name));
  return std::shared_ptr<const LuaScript>(std::move(script));
}

bool LuaScript::Defines(ScriptRole role) const { return defines_[static_cast<int>(role)]; }

bool LuaScript::DefinesFunction(std::string_view name) const { return functions_.count(name) != 0; }

Task<Status> LuaScript::Run(ScriptActorInfo info, ScriptWorld& world) const {
  // A lane of a process that is running already runs in its memory (only
  // LuaScript::Run stores a ProcessMemory there).
  std::shared_ptr<ProcessMemory> memory =
      info.process_memory != nullptr ? std::static_pointer_cast<ProcessMemory>(*info.process_memory) : nullptr;
  if (memory == nullptr) {
    memory = std::make_shared<ProcessMemory>();
    ProcessMemory* m = memory.get();  // owns the process whose functions call back here
    ProcessEnv env{Rng(info.seed)};
    env.now_ms = [m] { return m->running != nullptr ? m->running->NowMs() : 0; };
    env.epoch_ms = info.epoch_ms;
    env.print = [m](const std::string& line) {
      if (m->running != nullptr) m->running->Print(line);
    };
    env.limits = limits_;
    memory->running = &world;
    Result<std::unique_ptr<LuaProcess>> p = LuaProcess::Load(source_, std::move(env));
    if (!p.ok()) co_return Status::InvalidArgument(p.status().message() + " (" + world.Where() + ")");
    memory->lua = std::move(p).value();
    if (info.process_memory != nullptr) *info.process_memory = memory;
  }
  Status s = co_await RunScriptActor(std::move(memory), std::move(info), world);
  co_return s;
}

}  // namespace xackly
