// The coroutine bridge between a protocol script and the simulator.
//
// Each actor (a consumer worker, the producer, the janitor) runs its script
// function -- consumer(w), producer(w) or janitor(w) -- as a Lua coroutine
// in its own LuaProcess. Every call to the world (w:redis, w:read, w:sql,
// w:effect, w:point, w:sleep, w:park) yields one ScriptCall; RunScriptActor, a
// C++ Task, performs it as awaited ScriptWorld calls (each one simulator
// Step) and resumes the coroutine with the result. Destroying the Task
// (a crash) destroys the Lua process with it, mid-call.
//
// The script API is documented in docs/scripts.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lua/lua_process.h"
#include "sim/script_world.h"
#include "sim/status.h"
#include "sim/task.h"

namespace xackly {

// One request a script made: what it yields to the driver.
struct ScriptCall {
  enum class Kind : uint8_t { kRedis, kRead, kSql, kEffect, kPoint, kSleep, kPark };
  Kind kind = Kind::kRedis;
  std::vector<std::string> argv;   // kRedis: the command; kRead: its XREADGROUP
  bool reads_new = false;          // kRead: the id is ">"
  int64_t block_ms = 0;            // kRead: park this long when nothing is new
  std::string statement;           // kSql
  std::vector<SqlValue> params;    // kSql
  EffectCall effect;               // kEffect
  std::string name;                // kPoint
  int64_t ms = 0;                  // kSleep; kPark: the longest wait
};

// The memory of one simulated process: its Lua state, shared by the
// process's handler lanes (each a ScriptActor, a thread of it), and the
// world of the lane running now (print and os.time go through it).
struct ProcessMemory {
  std::unique_ptr<LuaProcess> lua;
  ScriptWorld* running = nullptr;
};

// One actor's coroutine in its process. Not copyable; keeps the process
// alive (with the process's other lanes).
class ScriptActor {
 public:
  // Prepares `info.role`'s function with a fresh `w` as its argument. When
  // the actor ends, its `w` stops working: a call through it from another
  // lane of the process raises an error instead of reaching a dead actor.
  // REQUIRES: process->HasFunction(ScriptFunctionName(info.role))
  ScriptActor(std::shared_ptr<LuaProcess> process, const ScriptActorInfo& info);
  ~ScriptActor();
  ScriptActor(const ScriptActor&) = delete;
  ScriptActor& operator=(const ScriptActor&) = delete;

  struct Event {
    enum class Kind : uint8_t { kCall, kReturned, kError };
    Kind kind = Kind::kReturned;
    ScriptCall call;      // kCall
    std::string error;    // kError: "path:line: message"
  };
  // Runs the coroutine until its next call, its return or its error, with
  // the `nargs` values on top of thread() as the previous call's results
  // (nothing for the first resume). A fresh instruction budget each time.
  // REQUIRES: the previous Event was kCall (or this is the first resume)
  Event Resume(int nargs);

  // Hands a call's results to the coroutine (`push` pushes them) under the
  // process's memory limits; returns how many. A result that does not fit
  // pushes nothing, and the next Resume ends the script with the error at
  // the line of its call.
  int Deliver(const std::function<void(lua_State*)>& push);
  lua_State* thread() const { return thread_; }
  LuaProcess& process() { return *process_; }

 private:
  // The w: methods. Each validates its arguments (raising a Lua error that
  // names the caller's file:line) and yields one call.
  static int Redis(lua_State* L);
  static int Read(lua_State* L);
  static int Sql(lua_State* L);
  static int Effect(lua_State* L);
  static int Point(lua_State* L);
  static int Sleep(lua_State* L);
  static int Park(lua_State* L);
  static int Now(lua_State* L);
  // Starts pending_ for a call from `L`; raises when `L` is not the actor's
  // own coroutine (a yield from a nested coroutine would land in the
  // script's own resume, not in the simulator).
  static ScriptActor& Begin(lua_State* L, const char* method, ScriptCall::Kind kind);
  void PushActorObject(const ScriptActorInfo& info);

  std::shared_ptr<LuaProcess> process_;
  lua_State* thread_ = nullptr;
  int thread_ref_ = 0;
  ScriptActor** self_box_ = nullptr;  // the w methods' upvalue (a userdata); null once the actor ends
  int self_box_ref_ = 0;
  int events_ = 0;  // w.events: the run's events are order:1 .. order:events_
  bool started_ = false;
  std::optional<ScriptCall> pending_;
  std::optional<std::string> delivery_error_;
};

// Runs one actor's script to its end: performs every call on `world` and
// resumes the script with the result. Returns Ok when the function returns;
// InvalidArgument "path:line: message (actor w1, step 57)" when the script
// fails (a runtime error, an exhausted budget, a bad argument to a w: call).
// `world` must outlive the task.
Task<Status> RunScriptActor(std::shared_ptr<ProcessMemory> memory, ScriptActorInfo info,
                            ScriptWorld& world);

// A loaded protocol script: its text, checked once. Nothing of a script that
// fails to load ever runs; each actor start gets a fresh LuaProcess.
class LuaScript : public ProtocolScript {
 public:
  // Compiles `source` and runs its top-level code once, in a throwaway
  // process; requires a consumer(w) function. Errors (InvalidArgument):
  // "path:line: message".
  static Result<std::shared_ptr<const LuaScript>> Load(ScriptSource source, ProcessLimits limits = {});

  const ScriptSource& source() const { return source_; }
  const ProcessLimits& limits() const { return limits_; }
  const std::string& path() const override { return source_.path; }
  bool Defines(ScriptRole role) const override;
  bool DefinesFunction(std::string_view name) const override;

  // Starts the role's function in a fresh process (math.random seeded from
  // info.seed, os.time from info.epoch_ms and the world's clock, print to
  // the world) and runs it to its end like RunScriptActor.
  // REQUIRES: Defines(info.role)
  Task<Status> Run(ScriptActorInfo info, ScriptWorld& world) const override;

 private:
  LuaScript(ScriptSource source, ProcessLimits limits) : source_(std::move(source)), limits_(limits) {}
  ScriptSource source_;
  ProcessLimits limits_;
  bool defines_[3] = {false, false, false};
  std::set<std::string, std::less<>> functions_;  // every global function its top level defined
};

}  // namespace xackly
