// Runs simulation cases against real servers that it owns: one redis-server
// per persistence mode, started on first use and reset (not restarted)
// between cases. Not thread-safe: give each thread its own executor, created
// and destroyed on that thread (the servers die with the thread that started
// them, see harness/redis_server.h).
//
// Placement: with options.pin (the default), the executor binds the thread
// that creates it, and every server it starts, to one CPU: options.cpu, or
// when that is -1 the CPU the thread runs on at construction. A client and
// server on one CPU hand the CPU to each other on every round trip instead
// of waking each other across CPUs (harness/cpu_placement.h). The thread
// gets its previous CPU set back when the executor is destroyed.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "harness/cpu_placement.h"
#include "harness/redis_server.h"
#include "harness/replicated_server.h"
#include "sim/simulation.h"

namespace xackly {

class CaseExecutor {
 public:
  // `options.persistence` is ignored: each case picks its own.
  explicit CaseExecutor(RedisServerOptions options);
  ~CaseExecutor();
  CaseExecutor(const CaseExecutor&) = delete;
  CaseExecutor& operator=(const CaseExecutor&) = delete;

  // Runs one case on the server for `config.persistence` (a primary with a
  // replica, harness/replicated_server.h, when config.replicas > 0). Fails with the
  // server's start error (kNotFound, kInternal...) or RunSimulation's.
  // `trace_at_failure`: as for RunSimulation.
  // REQUIRES: ValidateRunConfig(config).ok()
  Result<RunResult> Run(const RunConfig& config, std::vector<TraceLine>* trace_at_failure = nullptr);

  // The server for `persistence`, started if needed.
  Result<RedisServer*> Server(Persistence persistence);
  // The primary-and-replica pair for `persistence`, started if needed.
  Result<ReplicatedServer*> Replicated(Persistence persistence);

  // "redis 7.0.15" once a server has started (Server() starts one).
  std::string server_version() const { return server_version_; }

  // The CPU the thread and its servers are bound to, or -1 when unpinned
  // (options.pin false, or the kernel refused the CPU).
  int cpu() const { return options_.cpu; }

 private:
  RedisServerOptions options_;
  std::unique_ptr<ThreadPin> pin_;  // while pinned
  std::map<Persistence, std::unique_ptr<RedisServer>> servers_;
  std::map<Persistence, std::unique_ptr<ReplicatedServer>> replicated_;
  std::string server_version_;
};

}  // namespace xackly
