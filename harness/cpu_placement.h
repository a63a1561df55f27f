// Where a case thread and the redis-server it drives run. A simulation
// alternates strictly between client and server, so every round trip is
// two wake-ups; on one CPU a blocking PING costs ~5 us, across CPUs ~64 us
// (each cross-CPU wake-up ~30 us on a small VM). So, by default, each case
// thread and its servers are bound to one CPU, and parallel case threads to
// distinct CPUs of the process's allowed set (sched_getaffinity). The
// opt-out (--no-pin) leaves both where the kernel puts them.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace xackly {

// The CPUs this process may run on (sched_getaffinity of the calling
// thread's process), ascending; never empty (falls back to {0}).
std::vector<int> AllowedCpus();
// The CPUs in `set`, ascending; {0} when `set` is null (the affinity could
// not be read: more CPUs than a cpu_set_t holds) or empty.
std::vector<int> CpusIn(const cpu_set_t* set);

// The CPU the calling thread runs on right now (sched_getcpu), or the first
// allowed CPU when that is unknown.
int CurrentCpu();

// The CPU for case thread `index` of a set that starts at `first_cpu`:
// distinct allowed CPUs in ascending order, starting at `first_cpu` (or the
// next allowed one after it), wrapping around when there are more threads
// than CPUs. REQUIRES: index >= 0; `allowed` ascending and non-empty.
int CpuForThread(const std::vector<int>& allowed, int first_cpu, int index);

// Binds the calling thread to `cpu` alone while it lives, and gives the
// thread back the CPU set it had when destroyed. Create and destroy it on
// the same thread. When the kernel refuses (a CPU outside the allowed set),
// nothing changes and pinned() is false.
class ThreadPin {
 public:
  explicit ThreadPin(int cpu);
  ~ThreadPin();
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;

  bool pinned() const { return pinned_; }
  int cpu() const { return cpu_; }

 private:
  int cpu_;
  bool pinned_ = false;
  std::vector<int> previous_;  // the thread's CPU set before
};

// The value of the Cpus_allowed_list line of /proc/ID/status ("0",
// "0-1") of a process, or of a thread of this process (ID = gettid()).
// Empty when it cannot be read.
std::string CpusAllowedList(pid_t id);

// "CPU 1" or "CPUs 0-1": the calling thread's allowed list, for the
// placement lines commands and benchmarks print.
std::string DescribeCallingThreadPlacement();

}  // namespace xackly
