// Runs simulation cases against real servers that it owns: one redis-server
// per persistence mode, started on first use and reset (not restarted)
// between cases. Not thread-safe: give each thread its own executor, created
// and destroyed on that thread (the servers die with the thread that started
// them, see harness/redis_server.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "harness/redis_server.h"
#include "sim/simulation.h"

namespace xackly {

class CaseExecutor {
 public:
  // `options.persistence` is ignored: each case picks its own.
  explicit CaseExecutor(RedisServerOptions options) : options_(std::move(options)) {}

  // Runs one case on the server for `config.persistence`. Fails with the
  // server's start error (kNotFound, kInternal...) or RunSimulation's.
  // REQUIRES: ValidateRunConfig(config).ok()
  Result<RunResult> Run(const RunConfig& config);

  // The server for `persistence`, started if needed.
  Result<RedisServer*> Server(Persistence persistence);

  // "redis 7.0.15" once a server has started (Server() starts one).
  std::string server_version() const { return server_version_; }

 private:
  RedisServerOptions options_;
  std::map<Persistence, std::unique_ptr<RedisServer>> servers_;
  std::string server_version_;
};

}  // namespace xackly
