#include "harness/case_executor.h"

namespace xackly {

CaseExecutor::CaseExecutor(RedisServerOptions options) : options_(std::move(options)) {
  if (!options_.pin) return;
  pin_ = std::make_unique<ThreadPin>(options_.cpu >= 0 ? options_.cpu : CurrentCpu());
  options_.cpu = pin_->pinned() ? pin_->cpu() : -1;
}

CaseExecutor::~CaseExecutor() {
  servers_.clear();  // the servers stop before the thread is unpinned
  pin_.reset();
}

Result<RedisServer*> CaseExecutor::Server(Persistence persistence) {
  auto it = servers_.find(persistence);
  if (it != servers_.end()) return it->second.get();
  RedisServerOptions options = options_;
  options.persistence = persistence;
  Result<std::unique_ptr<RedisServer>> started = RedisServer::Start(options);
  if (!started.ok()) return started.status();
  RedisServer* server = started->get();
  server_version_ = server->version().ToString();
  servers_[persistence] = std::move(started).value();
  return server;
}

Result<RunResult> CaseExecutor::Run(const RunConfig& config) {
  Result<RedisServer*> server = Server(config.persistence);
  if (!server.ok()) return server.status();
  return RunSimulation(config, *server);
}

}  // namespace xackly
