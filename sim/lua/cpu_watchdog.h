// The one timer in sim/: a CPU-time watchdog on each Lua step. Some script
// code runs where no instruction budget can reach it: a __gc finalizer
// (Lua runs finalizers with hooks off) or one C call such as
// string.find with a pattern that backtracks for hours. A thread that has
// spent more than a step's CPU limit inside one Lua step ends the whole
// xackly process with exit 2 (bad input) and a message naming the script
// and line; no case's result ever depends on the watchdog (it reads only
// CPU time, never the wall clock, and it never lets a run continue
// differently: it either does nothing or ends the process). README
// "Determinism" names this exception.
//
// How: a per-thread CPU-time timer (timer_create(CLOCK_THREAD_CPUTIME_ID))
// ticks a signal handler a few times per limit while the thread runs; the
// handler ends the process when the same step has been running for the
// whole limit. Marking a step costs two stores, no system call.
#pragma once

#include <cstdint>

struct lua_State;

namespace xackly {

// Marks one Lua step (a resume, a load, a result handed to the script) on
// the calling thread for its lifetime. Steps do not nest: an inner guard
// is a no-op. `cpu_ms_limit` <= 0: no watchdog for this step.
class CpuWatchdogStep {
 public:
  CpuWatchdogStep(lua_State* L, const char* script_path, int64_t cpu_ms_limit);
  ~CpuWatchdogStep();
  CpuWatchdogStep(const CpuWatchdogStep&) = delete;
  CpuWatchdogStep& operator=(const CpuWatchdogStep&) = delete;

 private:
  bool outer_ = false;
};

}  // namespace xackly
