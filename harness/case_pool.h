// Runs batches of simulation cases on N threads, each with its own
// CaseExecutor (own redis-servers, own sockets and clock pages). Results come
// back in the order of the batch, so a caller that walks them in order sees
// exactly what one thread would have seen: parallelism changes the speed,
// never the result.
//
// Each worker thread creates, uses and destroys its executor itself: a server
// dies with the thread that started it (PR_SET_PDEATHSIG), and these threads
// live as long as the pool.
//
// Placement: with options.pin (the default) worker i and its servers are
// bound to one CPU, distinct CPUs for distinct workers as far as the
// creating thread's allowed CPU set goes (starting with the CPU it runs on,
// wrapping around when there are more workers than CPUs).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/case_executor.h"

namespace xackly {

class CasePool {
 public:
  // Starts `threads` workers (>= 1). Servers start lazily, on first use.
  CasePool(int threads, RedisServerOptions options);
  // Stops every worker (and with it every server) before returning.
  ~CasePool();
  CasePool(const CasePool&) = delete;
  CasePool& operator=(const CasePool&) = delete;

  // Runs every config, in parallel, and returns their results in order.
  // Several threads may call it at once: their jobs share the workers.
  std::vector<Result<RunResult>> RunAll(const std::vector<RunConfig>& configs);

  // Starts a server on one worker and returns its version ("redis 7.0.15"),
  // or the reason no server starts.
  Result<std::string> ServerVersion();

  int threads() const { return static_cast<int>(workers_.size()); }
  // The CPU each worker is bound to, by worker; -1 for unpinned.
  const std::vector<int>& cpus() const { return cpus_; }

 private:
  using Job = std::function<void(CaseExecutor&)>;
  void WorkerLoop(RedisServerOptions options);

  std::vector<int> cpus_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace xackly
