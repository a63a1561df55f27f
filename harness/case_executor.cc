#include "harness/case_executor.h"

#include <fmt/format.h>

namespace xackly {

CaseExecutor::CaseExecutor(RedisServerOptions options) : options_(std::move(options)) {
  if (!options_.pin) return;
  pin_ = std::make_unique<ThreadPin>(options_.cpu >= 0 ? options_.cpu : CurrentCpu());
  options_.cpu = pin_->pinned() ? pin_->cpu() : -1;
}

CaseExecutor::~CaseExecutor() {
  servers_.clear();
  replicated_.clear();  // the servers stop before the thread is unpinned
  pin_.reset();
}

namespace {

// The server of `servers` for `persistence`, started with `options` (that
// persistence) if there is none yet; `version` gets its version.
template <typename ServerT>
Result<ServerT*> StartedFor(std::map<Persistence, std::unique_ptr<ServerT>>& servers, Persistence persistence,
                            RedisServerOptions options, std::string* version) {
  auto it = servers.find(persistence);
  if (it != servers.end()) return it->second.get();
  options.persistence = persistence;
  Result<std::unique_ptr<ServerT>> started = ServerT::Start(options);
  if (!started.ok()) return started.status();
  ServerT* server = started->get();
  *version = server->version().ToString();
  servers[persistence] = std::move(started).value();
  return server;
}

}  // namespace

Result<RedisServer*> CaseExecutor::Server(Persistence persistence) {
  return StartedFor(servers_, persistence, options_, &server_version_);
}

Result<ReplicatedServer*> CaseExecutor::Replicated(Persistence persistence) {
  return StartedFor(replicated_, persistence, options_, &server_version_);
}

Result<RunResult> CaseExecutor::Run(const RunConfig& config, std::vector<TraceLine>* trace_at_failure) {
  // Every server this executor started must still run, used by this case
  // or not: one that died was ended from outside, and that is news.
  for (auto& [persistence, started] : servers_) {
    if (Status s = started->CheckRunning(); !s.ok()) return s;
  }
  for (auto& [persistence, started] : replicated_) {
    if (Status s = started->CheckRunning(); !s.ok()) return s;
  }
  ReplicatedServer* replicated = nullptr;  // with config.replicas
  RedisServer* single = nullptr;           // without
  if (config.replicas > 0) {
    Result<ReplicatedServer*> started = Replicated(config.persistence);
    if (!started.ok()) return started.status();
    replicated = *started;
    replicated->SetReplicaCount(config.replicas);
  } else {
    Result<RedisServer*> started = Server(config.persistence);
    if (!started.ok()) return started.status();
    single = *started;
  }
  Result<RunResult> run =
      RunSimulation(config, replicated ? static_cast<ServerControl*>(replicated) : single, trace_at_failure);
  if (replicated) {
    if (Status link = replicated->TakeWaitFailure(); !link.ok()) {
      return Status::Internal("the replication link failed while xackly answered a WAIT, so this case has no "
                              "verdict: " + link.ToString());
    }
    // The replica, caught up, must hold what the primary holds: a
    // difference is the servers' finding, and the case gets no verdict.
    if (run.ok()) {
      Result<std::string> diverged = replicated->Divergence();
      if (!diverged.ok()) {
        return Status::Internal("comparing the primary with its replica after the run failed, so this case has "
                                "no verdict: " + diverged.status().ToString());
      }
      if (!diverged->empty()) {
        return Status::Internal(
            "a server finding, not the protocol's verdict: after the replica caught up with every write the "
            "primary propagated, the two hold different data, so this case has no verdict:\n" + *diverged);
      }
    }
  }
  const bool out_of_range = replicated ? replicated->clock_out_of_range() : single->clock_out_of_range();
  if (run.ok() && out_of_range) {
    return Status::HarnessLimit(fmt::format(
        "the run moved the virtual clock past {} ms since the epoch (the year 2262), the most "
        "the server's clock page holds, so its result is not reported: a harness limit, not a "
        "verdict. Lower the timing values or timing.max_steps",
        kMaxClockEpochMs));
  }
  return run;
}

}  // namespace xackly
