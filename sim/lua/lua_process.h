// One sandboxed Lua 5.4 interpreter: the memory of one simulated process (an
// actor incarnation) running a protocol script. A crash destroys it; the
// replacement starts from a fresh LuaProcess, so nothing survives in globals.
//
// The sandbox makes a script a pure function of the run (same seed, same
// trace, in any process, with ASLR on):
//   - no io, os (but os.time/os.clock), package, require, debug, dofile,
//     loadfile, collectgarbage, warn, string.dump; load() takes text only;
//   - os.time() and os.clock() read the run's virtual clock;
//   - math.random draws from the run's seeded stream (sim/rng.h);
//     math.randomseed is gone;
//   - pairs and next visit keys in a total order (numbers ascending, then
//     strings bytewise, then false, true). Plain Lua 5.4 seeds its string
//     hash from the time and heap addresses, so its order differs per
//     process. Keys that have no such order (tables, functions...) are an
//     error, not a silent nondeterminism;
//   - tostring, print and string.format("%s") never show an address
//     ("table", not "table: 0x55d0..."); "%p" is an error;
//   - table.sort is a stable merge sort (Lua's own quicksort takes its pivot
//     from the real clock on some inputs);
//   - an instruction budget per step: more than `instructions_per_step`
//     instructions between two resumptions end the script with
//     "file:line: instruction budget exhausted ...", even inside pcall;
//   - a CPU-time watchdog per step for what the budget cannot interrupt
//     (sim/lua/cpu_watchdog.h);
//   - a memory limit per process, and one for all the processes of a run
//     (every process of one run lives on one thread), replies included.
// Errors are values: Load returns "file:line: message" and runs nothing of a
// script that does not compile.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/rng.h"
#include "sim/status.h"

struct lua_State;
struct lua_Debug;

namespace xackly {

// A script's text and the names errors use for it.
struct ScriptSource {
  std::string path;        // for messages without a Lua position
  std::string text;
  // The chunk name Lua puts in positions ("name:line:"), which a script can
  // see (pcall's message) and so must not depend on where xackly runs:
  // empty means `path`.
  std::string chunk_name;
};

struct ProcessLimits {
  int64_t instructions_per_step = 5'000'000;
  size_t memory_bytes = size_t{64} << 20;
  // All the Lua processes alive on one thread at once: every actor of a run.
  size_t memory_bytes_per_thread = size_t{256} << 20;
  // CPU time one step may use before the watchdog ends xackly (exit 2).
  int64_t cpu_ms_per_step = 10'000;
};

struct ProcessEnv {
  explicit ProcessEnv(Rng r) : rng(r) {}
  Rng rng;                              // math.random's stream
  std::function<int64_t()> now_ms;      // virtual ms since the run started; null: 0
  int64_t epoch_ms = 0;                 // Unix ms at virtual time 0 (os.time)
  ProcessLimits limits;
  std::function<void(const std::string&)> print;  // print()'s line; null: discarded
};

class LuaProcess {
 public:
  // Creates the sandbox and runs the script's top-level code (which defines
  // its functions) under the instruction budget.
  // Errors (InvalidArgument): "path:line: message" for a syntax error, a
  // runtime error in top-level code, an exhausted budget or a binary chunk.
  static Result<std::unique_ptr<LuaProcess>> Load(const ScriptSource& source, ProcessEnv env);
  ~LuaProcess();
  LuaProcess(const LuaProcess&) = delete;
  LuaProcess& operator=(const LuaProcess&) = delete;

  // The main state. Threads made from it share the sandbox and the budget.
  lua_State* state() const { return L_; }
  const std::string& path() const { return path_; }
  // Whether the script defines a global function `name`.
  bool HasFunction(const char* name) const;
  // The names of every global that is a function, in name order.
  std::vector<std::string> GlobalFunctions() const;
  int64_t NowMs() const { return env_.now_ms ? env_.now_ms() : 0; }

  // Starts a new step's budget (call before every resume).
  void ResetBudget() { used_ = 0; }
  // Set once the budget ran out; the message names file:line.
  bool budget_exhausted() const { return exhausted_; }
  const std::string& budget_error() const { return budget_error_; }

  // Runs `push` on the main state under the memory limits and the CPU
  // watchdog, then moves what it pushed onto `co` (a suspended thread of
  // this process); returns how many values. On a failure (a reply larger
  // than the memory left) pushes nothing and returns the error:
  // "memory limit of N bytes exceeded ...".
  Result<int> PushUnderLimits(lua_State* co, const std::function<void(lua_State*)>& push);
  const ProcessLimits& limits() const { return env_.limits; }

  // The message of the error object on top of `co` after a failed resume
  // (or call), as "path:line: message": a message without a position gets
  // the innermost Lua frame's. Pops nothing.
  std::string ErrorMessage(lua_State* co, int status) const;

  // The LuaProcess that owns `L` (any of its threads).
  static LuaProcess* Of(lua_State* L);

 private:
  explicit LuaProcess(ProcessEnv env);
  Status Open(const ScriptSource& source);
  void InstallSandbox();
  static void* Alloc(void* ud, void* ptr, size_t old_size, size_t new_size);
  static void Hook(lua_State* L, lua_Debug* ar);
  static int Random(lua_State* L);
  static int OsTime(lua_State* L);
  static int OsClock(lua_State* L);
  static int Print(lua_State* L);
  // "memory limit of N bytes exceeded": this process's, or the one of all
  // the processes on the thread when that one refused the last allocation.
  std::string MemoryLimitMessage() const;

  ProcessEnv env_;
  lua_State* L_ = nullptr;
  std::string path_;
  size_t memory_used_ = 0;
  // Every process on the thread that made this one (a run's actors).
  std::shared_ptr<size_t> thread_memory_used_;
  bool refused_by_thread_limit_ = false;  // which limit refused the last allocation
  int64_t used_ = 0;
  bool exhausted_ = false;
  std::string budget_error_;
};

// Where `L` is running: "path:line" of the innermost Lua frame, or "" when
// no Lua frame has a line.
std::string LuaWhere(lua_State* L);

}  // namespace xackly
