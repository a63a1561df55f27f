#include "harness/case_executor.h"

#include <fmt/format.h>

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

Result<RunResult> CaseExecutor::Run(const RunConfig& config, std::vector<TraceLine>* trace_at_failure) {
  // Every server this executor started must still run, used by this case
  // or not: one that died was ended from outside, and that is news.
  for (auto& [persistence, started] : servers_) {
    if (Status s = started->CheckRunning(); !s.ok()) return s;
  }
  Result<RedisServer*> server = Server(config.persistence);
  if (!server.ok()) return server.status();
  Result<RunResult> run = RunSimulation(config, *server, trace_at_failure);
  if (run.ok() && (*server)->clock_out_of_range()) {
    return Status::HarnessLimit(fmt::format(
        "the run moved the virtual clock past {} ms since the epoch (the year 2262), the most "
        "the server's clock page holds, so its result is not reported: a harness limit, not a "
        "verdict. Lower the timing values or timing.max_steps",
        kMaxClockEpochMs));
  }
  return run;
}

}  // namespace xackly
