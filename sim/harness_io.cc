// Harness I/O of a run (see sim/run_internal.h): the server's clock page,
// the harness connection, the oracle's reads, scheduled faults (their trace
// line, then their injector) and the final reads the verdict is made from.
#include "sim/run_internal.h"

#include <charconv>

#include <fmt/format.h>

namespace xackly::run_internal {

std::vector<EffectRecord> ParseRedisEffects(const Reply& reply) {
  std::vector<EffectRecord> out;
  if (!reply.is_array()) return out;
  for (const Reply& r : reply.elements()) {
    if (!r.is_string()) continue;
    const std::string& s = r.str();
    size_t a = s.find('|');
    size_t b = a == std::string::npos ? a : s.find('|', a + 1);
    size_t c = b == std::string::npos ? b : s.find('|', b + 1);
    if (c == std::string::npos) continue;
    EffectRecord e;
    const char* t_end = s.data() + s.size();
    if (std::from_chars(s.data() + c + 1, t_end, e.t_ms).ptr != t_end) continue;  // not a record
    e.event_id = s.substr(0, a);
    e.stream_id = s.substr(a + 1, b - a - 1);
    e.consumer = s.substr(b + 1, c - b - 1);
    e.sink = "redis";
    out.push_back(std::move(e));
  }
  return out;
}

void Simulation::SetClock() {
  if (now_ != last_clock_written_) {
    server_->SetClockMs(kEpochMs + now_);
    last_clock_written_ = now_;
  }
}

Status Simulation::EnsureHarnessConnection() {
  if (harness_conn_ && harness_conn_->alive()) return Status::Ok();
  auto conn = server_->ConnectHarness();
  if (!conn.ok()) return conn.status();
  harness_conn_ = std::move(conn).value();
  return Status::Ok();
}

Result<Reply> Simulation::HarnessCall(std::vector<std::string> argv, const char* actor) {
  Status s = EnsureHarnessConnection();
  if (!s.ok()) return s;
  Result<Reply> r = Send(*harness_conn_, argv);
  ++harness_rtt_;
  if (!r.ok()) {
    return Status::Internal(fmt::format("{}: {} failed: {}", actor, argv[0], r.status().ToString()));
  }
  trace_.AddCommand(now_, actor, LineKind::kHarness, argv, *r, {.argv = &argv, .reply = &*r});
  return r;
}

Result<std::vector<Reply>> Simulation::OracleReads(const std::vector<std::vector<std::string>>& commands,
                                                   const char* actor) {
  Status s = EnsureHarnessConnection();
  if (!s.ok()) return s;
  SetClock();
  std::vector<std::vector<std::string_view>> views;
  for (const auto& argv : commands) views.emplace_back(argv.begin(), argv.end());
  Result<std::vector<Reply>> r = harness_conn_->CallAll(views);
  harness_rtt_ += static_cast<int64_t>(commands.size());
  if (!r.ok()) {
    return Status::Internal(fmt::format("{}: {} failed: {}", actor, commands[0][0], r.status().ToString()));
  }
  return r;
}

Result<std::vector<Reply>> Simulation::HarnessCalls(
    const std::vector<std::vector<std::string>>& commands, const char* actor) {
  Result<std::vector<Reply>> r = OracleReads(commands, actor);
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < commands.size(); ++i) {
    trace_.AddCommand(now_, actor, LineKind::kHarness, commands[i], (*r)[i],
                      {.argv = &commands[i], .reply = &(*r)[i]});
  }
  return r;
}

Result<std::optional<StreamId>> Simulation::ReadLastDelivered(const char* actor) {
  Result<Reply> groups = HarnessCall({"XINFO", "GROUPS", names_.stream}, actor);
  if (!groups.ok()) return groups.status();
  return GroupLastDeliveredId(*groups, names_.group);
}

Status Simulation::RestartServer() {
  Status s = server_->CrashAndRestart();
  if (!s.ok()) return s;
  replica_lags_until_ms_ = -1;  // the replica is seeded again from the primary
  ++generation_;  // every actor's connection is now dead
  harness_conn_.reset();
  last_clock_written_ = -1;
  return Status::Ok();
}

Result<FailoverOutcome> Simulation::FailoverServer(int lag, bool to_lagging) {
  Result<FailoverOutcome> out = server_->Failover(lag, to_lagging);
  if (!out.ok()) return out.status();
  replica_lags_until_ms_ = -1;  // the old primary comes back as a replica that has caught up
  ++generation_;  // every actor's connection is now dead
  harness_conn_.reset();
  last_clock_written_ = -1;
  // A WAIT still waiting for the lagging replica was in flight: it fails
  // with the connection rather than answer at its end (0 after a timeout,
  // or the count once the replica caught up; its caller's next steps,
  // decided on that answer, are discarded with its loop).
  for (auto& actor : actors_) {
    Actor& a = *actor;
    if (a.lagging_wait_until_ms <= now_ || a.state != ActorState::kReady || a.pending == nullptr) continue;
    a.lagging_wait_until_ms = -1;
    trace_.Add(now_, a.name, LineKind::kRedis, "WAIT (waiting for the lagging replica)",
               "!io-error (the failover cut it: the connection died with the server)",
               {.event = LineEvent::kIoError});
    Reset(a, "connection lost");
  }
  return out;
}

Status Simulation::InjectScheduled(const FaultSpec& f) {
  plan_->RecordFired(f);
  trace_.Add(now_, kFaultActor, LineKind::kFault, "!" + f.ToString(), "",
             {.event = LineEvent::kScheduledFault, .fault = FaultKindName(f.kind), .brought_by = f.brought_by,
              .duration_ms = f.duration_ms});
  SetOracleLine(trace_.size() - 1);
  return InjectorOf(f.kind)(*this, f);
}

Status Simulation::FinalReads(Oracle::FinalState* fs) {
  const std::string& st = names_.stream;
  std::vector<std::vector<std::string>> reads = {
      {"XPENDING", st, names_.group, "-", "+", "100000"},
      {"XRANGE", st, "-", "+"},
      {"XRANGE", names_.dead_letters, "-", "+"}};
  // A script may write Redis effects (w:effect or its own EVAL): the ledger
  // list is the truth for them.
  const bool redis_effects = RedisEffects();
  if (redis_effects) reads.push_back({"LRANGE", names_.effects, "0", "-1"});
  const size_t first_parking = reads.size();
  const std::set<std::string> parking = ParkingStreams();
  for (const std::string& key : parking) reads.push_back({"XRANGE", key, "-", "+"});
  const size_t first_group = reads.size();  // further groups' PELs, in the same round trip
  for (const auto& g : group_judges_) reads.push_back({"XPENDING", st, g->names.group, "-", "+", "100000"});
  auto replies = HarnessCalls(reads, kOracleActor);
  if (!replies.ok()) return replies.status();
  const std::vector<Reply>& r = *replies;
  if (auto rows = ParsePendingRows(r[0])) fs->pending = std::move(*rows);
  if (auto e = ParseRangeReply(r[1])) {
    for (const auto& entry : *e) fs->stream_ids.push_back(entry.id);
  }
  if (auto e = ParseRangeReply(r[2])) common_dead_letters_ = std::move(*e);
  if (redis_effects) fs->redis_effects = ParseRedisEffects(r[3]);
  for (size_t k = 0; k < group_judges_.size(); ++k) {
    if (auto rows = ParsePendingRows(r[first_group + k])) group_judges_[k]->final_pending = std::move(*rows);
  }
  size_t i = first_parking;  // dead letters in streams of the script's choice
  for (const std::string& key : parking) {
    if (auto e = ParseRangeReply(r[i])) parked_[key] = std::move(*e);
    ++i;
  }
  fs->dead_letters = DeadLettersOf(feed_);  // the run's own group; JudgeGroup sets each other group's
  for (const auto& a : actors_) {
    if (a->kind != ActorKind::kWorker || a->state == ActorState::kDone) continue;
    fs->live_consumers.insert(a->name);
    fs->live_consumers.insert(a->consumer);
    auto names = consumer_names_.find(a->owner_id);
    if (names != consumer_names_.end()) fs->live_consumers.insert(names->second.begin(), names->second.end());
  }
  return Status::Ok();
}

}  // namespace xackly::run_internal
