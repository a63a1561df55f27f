// One actor step (see sim/run_internal.h): the request goes to Redis
// (through LossyConnection: lost requests and replies), the business store
// or stays local; point faults fire at its crash points and sites; what
// Redis replied is fed to the oracle.
#include "sim/run_internal.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "sim/commands.h"
#include "sim/lossy_connection.h"
#include "sim/script_steps.h"
#include "sim/sites.h"

namespace xackly::run_internal {

namespace {

// The ids a business-store step's line mentions, as its statement shows them.
LineFacts BusinessFacts(const Step& s) {
  LineFacts facts;
  switch (s.op) {
    case Op::kSqlEffect:
    case Op::kCommittedEffect: facts.stream_id = s.stream_id; [[fallthrough]];
    case Op::kSqlCheckDone:
    case Op::kSqlMarkDone:
    case Op::kExternalEffect: facts.event_id = s.event_id; break;
    default: break;
  }
  return facts;
}

}  // namespace

void Simulation::ObserveBusiness(Actor& a, const Step& s, const std::string& result) {
  // A script's idempotency key that expires is a done-record with a TTL: a
  // duplicate after it is blamed on the expiry (dedupe-expired).
  if (s.op == Op::kExternalEffect && script() && s.outcome == BusinessOutcome::kOk && !s.label.empty() &&
      s.duration_ms > 0) {
    OracleOf(a).DedupeRecord(now_, a.name, s.event_id, s.duration_ms);
  }
  // An SQL write naming an event (an inbox row) saved work a relay may still owe.
  if (s.op == Op::kSqlStatement && s.sql.error.empty() && SiteChangesState(StatementVerb(s.label))) {
    OracleOf(a).WorkSavedIn(s.label);
    for (const SqlValue& p : s.params) {
      if (const std::string* text = std::get_if<std::string>(&p)) OracleOf(a).WorkSavedIn(*text);
    }
  }
  a.in_transaction = store_.InTransaction(a.owner_id);
  if ((s.op == Op::kSqlEffect || s.op == Op::kExternalEffect) &&
      (s.outcome == BusinessOutcome::kFailed || s.outcome == BusinessOutcome::kUnavailable)) {
    OracleOf(a).EffectFailed(now_, a.name, s.event_id, s.stream_id, result);
  }
  ForEachFeed([](OracleFeed& f) { f.ForwardNewEffects(); });
}

bool Simulation::ExecuteBusiness(Actor& a, Step& s) {
  const std::string site = RequestSite(s);
  const std::optional<FaultSpec> fault = RequestFault(a, site, {});
  const PointEffect loss = fault ? InfoOf(fault->kind).effect : PointEffect::kNone;
  // How long the statement waited for another's transaction (NoteStoreWait); -1: it did not.
  const int64_t waited_ms = a.store_wait_since_ms >= 0 ? now_ - a.store_wait_since_ms : -1;
  a.store_wait_since_ms = -1;
  const BusinessCall call{a.owner_id, now_, a.name, plan_->IsPoison(EventNumber(s.event_id)), script(),
                          config_.protocol.idempotency_key};
  const bool sql = InfoOf(s.op).channel == Channel::kSql;
  if (s.op != Op::kCommittedEffect) ++business_requests_;
  SetOracleLine(trace_.size());
  business_.LoseNext(loss);
  Result<BusinessReply> r = business_.Call(call, s);
  StartBusy(a, s);
  if (loss == PointEffect::kLoseRequest) {
    trace_.Add(now_, a.name, LineKind::kFault, (sql ? "sql " : "ext ") + site, "!lost-request (never reached the store)",
               {.event = LineEvent::kLostRequest, .site = site});
    TimeOut(a, HistoryKind::kLostRequest, site, {});
    return true;
  }
  const BusinessReply& reply = r.ok() ? *r : *business_.hidden_reply();
  ObserveBusiness(a, s, reply.result);
  const std::string request = (sql ? "sql " : "ext ") + reply.request;
  LineFacts facts = BusinessFacts(s);
  if (waited_ms >= 0) {
    facts.waited_for = a.store_wait_for;
    facts.duration_ms = waited_ms;
  }
  if (loss == PointEffect::kLoseReply) {
    facts.event = LineEvent::kLostReply;
    facts.site = site;
    trace_.Add(now_, a.name, LineKind::kFault, request, reply.result + " !lost-reply (executed; the caller times out)",
               facts);
    TimeOut(a, HistoryKind::kLostReply, site, {});
    return true;
  }
  trace_.Add(now_, a.name, sql ? LineKind::kSql : LineKind::kExternal, request, reply.result, facts);
  return false;
}

void Simulation::StartBusy(Actor& a, Step& s) {
  if (s.op == Op::kExternalEffect && s.outcome == BusinessOutcome::kAlreadyDone) s.busy_ms = 0;
  if (s.timeout_ms > 0 && s.busy_ms > s.timeout_ms) {
    s.busy_ms = s.timeout_ms;
    s.timed_out = true;
  }
  a.ready_at_ms = now_ + s.busy_ms;
  if (quiet_.IsLongWork(s.busy_ms) && a.kind == ActorKind::kWorker) {
    long_work_ends_ms_ = std::max(long_work_ends_ms_, now_ + s.busy_ms);
  }
}

std::optional<FaultSpec> Simulation::RequestFault(Actor& a, const std::string& site, VisitCan can) {
  if (site.empty()) return std::nullopt;
  return plan_->AtPoint(a.process, site, SiteFamily::kRequest, now_, can);
}

Status Simulation::ObserveRedis(Actor& a, const Step& s, bool reply_lost) {
  const CommandInfo& command = s.argv.empty() ? UnknownCommand() : CommandOf(s.argv);
  // A BLOCK after a read of new entries has seen every XADD made so far;
  // so has a position reader's XREAD of the run's stream that found
  // nothing after its position (a nil reply: XREAD BLOCK would wait from
  // there). An empty XREAD of another stream says nothing about this one.
  const bool caught_up_xread =
      s.op == Op::kCommand && !s.argv.empty() && s.reply.is_nil() && VerbOf(s.argv[0]) == "XREAD" &&
      std::find(s.argv.begin() + 1, s.argv.end(), names_.stream) != s.argv.end();
  if (s.op == Op::kReadNew || caught_up_xread ||
      (s.op == Op::kCommand && command.category == ReportCategory::kRead && s.argv.back() == ">")) {
    a.produced_seen = produced_;
  }
  Result<OracleFeed::Observed> seen = feed_.Redis(now_, {a.slot, a.name, a.group == 0}, s, reply_lost);
  if (!seen.ok()) return seen.status();
  for (size_t k = 0; k < group_judges_.size(); ++k) {  // the further groups' feeds see it too
    Result<OracleFeed::Observed> also =
        group_judges_[k]->feed->Redis(now_, {a.slot, a.name, a.group == static_cast<int>(k) + 1}, s, reply_lost);
    if (!also.ok()) return also.status();
  }
  for (int i = 0; i < seen->produced; ++i) {
    ++produced_;
    WakeOneParkedWorker();
  }
  // A script may read or claim under a name that is not its actor's (one
  // name shared by every worker): while this incarnation lives, so does
  // that consumer (FinalReads' live_consumers).
  const std::vector<std::string>& argv = s.argv;
  const bool takes_entries =
      command.category == ReportCategory::kRead || command.category == ReportCategory::kClaim;
  if (s.op == Op::kCommand && takes_entries && command.consumer_at < argv.size() &&
      argv[command.group_at] == (a.group_name.empty() ? names_.group : a.group_name) && (command.first_key == 0 || argv[command.first_key] == names_.stream)) {
    consumer_names_[a.owner_id].insert(argv[command.consumer_at]);
  }
  return Status::Ok();
}

bool Simulation::BeforeCommandFaults(Actor& a, const Step& s) {
  if (a.kind != ActorKind::kWorker) return false;
  return FirePointFault(a, s, PointBefore(s)) != PointFault::kNone;
}

Status Simulation::ExecuteRedis(Actor& a, Step& s, bool* handled) {
  *handled = false;
  if (s.op == Op::kProduce) {
    // Virtual time, above every ID the stream has had: after a script's
    // `XADD *` (the server's clock) the next ID above its entry.
    StreamId id = std::max({StreamId{static_cast<uint64_t>(now_), 0}, last_id_.Next(), feed_.stream_top().Next()});
    last_id_ = id;
    s.argv[2] = id.ToString();
  }
  if (s.op == Op::kCommand) {
    std::string why = RefusedCommand(s.argv, names_, server_->replicas(), feed_.InMulti(a.slot));
    if (!why.empty()) {
      s.reply = Reply::Error("ERR xackly: " + why);
      trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "(not sent) " + ReplyText(s.reply),
                 {.event = LineEvent::kNotSent, .argv = &s.argv, .reply = &s.reply});
      return Status::Ok();
    }
  }

  if (s.op == Op::kRedisEffect && plan_->IsPoison(EventNumber(s.event_id))) {
    s.outcome = BusinessOutcome::kFailed;
    trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "(not sent: the poison event's effect fails)",
               {.event = LineEvent::kNotSent, .argv = &s.argv});
    OracleOf(a).EffectFailed(now_, a.name, s.event_id, s.stream_id, "poison");
    return Status::Ok();
  }
  if (a.conn_generation != generation_ || !a.conn || !a.conn->alive()) {
    trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "!io-error (connection died with the server)",
               {.event = LineEvent::kIoError, .argv = &s.argv});
    Reset(a, "connection lost");
    *handled = true;
    return Status::Ok();
  }
  // A janitor is the operator's, not the protocol's: no faults on its requests.
  const std::string site = a.kind != ActorKind::kJanitor ? RequestSite(s) : "";
  // In a run with replicas the harness answers WAIT (ReplicatedServer);
  // the simulator decides how long it keeps its caller. A WAIT queued in a
  // MULTI is the server's to answer at EXEC, at once: it holds nobody, so
  // no replica-lag is drawn there (nor at a malformed WAIT, which the
  // server refuses).
  const std::optional<WaitRequest> wait =
      server_->replicas() > 0 && !feed_.InMulti(a.slot) ? ParseWait(s.argv) : std::nullopt;
  // Only a protocol's own commands can get an error reply: the built-in
  // loop's steps do not model how they would handle one.
  const std::optional<FaultSpec> fault =
      RequestFault(a, site, {.error_reply = s.op == Op::kCommand, .replica_lag = wait.has_value()});
  if (fault && fault->kind == FaultKind::kErrorReply) return AnswerWithError(a, s, *fault);  // the actor goes on
  if (fault && fault->kind == FaultKind::kReplicaLag && wait) return AnswerLagging(a, s, &*fault, *wait);
  if (wait && now_ < replica_lags_until_ms_) return AnswerLagging(a, s, nullptr, *wait);
  // Only lost requests and replies are the connection's to inject.
  const PointEffect effect = fault ? InfoOf(fault->kind).effect : PointEffect::kNone;
  const PointEffect loss =
      effect == PointEffect::kLoseRequest || effect == PointEffect::kLoseReply ? effect : PointEffect::kNone;
  // The connection wrapper injects what the plan drew.
  a.conn->LoseNext(loss);
  Result<Reply> r = Send(*a.conn, s.argv);
  if (loss == PointEffect::kLoseRequest) {
    trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv), "!lost-request (never reached the server)",
               {.event = LineEvent::kLostRequest, .argv = &s.argv, .site = site});
    SetOracleLine(trace_.size() - 1);
    std::vector<std::string> events = EventsOf(s);
    if (s.op == Op::kProduce) {
      ForEachOracle([&](Oracle& o) { o.Produced(now_, a.name, s.event_id, s.argv[2], Oracle::ProduceOutcome::kNotSent); });
      events.clear();  // the event's history has it as its lost XADD: one fault, one item
    }
    TimeOut(a, HistoryKind::kLostRequest, site, events);
    *handled = true;
    return Status::Ok();
  }
  ++protocol_rtt_;
  const bool reply_lost = loss == PointEffect::kLoseReply;
  if (reply_lost && a.conn->hidden_reply()) r = *a.conn->hidden_reply();  // the oracle sees what really happened
  if (!r.ok()) {
    return Status::Internal(fmt::format("{}: {} failed unexpectedly: {}", a.name, s.argv[0],
                                        r.status().ToString()));
  }
  s.reply = std::move(r).value();
  if (reply_lost) {  // executed, but the caller times out
    trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv),
               ReplyText(s.reply) + " !lost-reply (executed; the caller times out)",
               {.event = LineEvent::kLostReply, .argv = &s.argv, .reply = &s.reply, .site = site});
  } else {
    trace_.AddCommand(now_, a.name, LineKind::kRedis, s.argv, s.reply, {.argv = &s.argv, .reply = &s.reply});
  }
  SetOracleLine(trace_.size() - 1);
  // A WAIT for more replicas than the run has is answered with the count
  // it has once its timeout has passed (one without is refused).
  if (wait && wait->replicas > server_->replicas()) a.ready_at_ms = std::max(a.ready_at_ms, now_ + wait->timeout_ms);
  Status observed = ObserveRedis(a, s, reply_lost);
  if (!observed.ok()) return observed;
  if (config_.probe && s.op == Op::kCommand) {
    Status ttls = ProbeKeyTtls(s);
    if (!ttls.ok()) return ttls;
  }
  if (reply_lost) {
    TimeOut(a, HistoryKind::kLostReply, site, EventsOf(s));
    *handled = true;
  }
  return Status::Ok();
}

Status Simulation::AnswerWithError(Actor& a, Step& s, const FaultSpec& f) {
  // The server refuses a command it will not run inside MULTI by flagging
  // the transaction, whose EXEC then fails with EXECABORT: an unknown
  // command does the same to the real transaction (outside one it does
  // nothing).
  static const std::vector<std::string> kRefused = {"XACKLY-ERROR-REPLY"};
  Result<Reply> flagged = Send(*a.conn, kRefused);
  if (!flagged.ok()) {
    return Status::Internal(fmt::format("{}: the error reply's stand-in failed: {}", a.name,
                                        flagged.status().ToString()));
  }
  s.reply = Reply::Error(ErrorReplyText(f.target));
  trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv),
             ReplyText(s.reply) + " !error-reply (never reached the server)",
             {.event = LineEvent::kErrorReply, .argv = &s.argv, .reply = &s.reply, .site = f.site});
  SetOracleLine(trace_.size() - 1);
  OracleOf(a).WorkerFault(HistoryKind::kErrorReply, now_, a.name, f.site, EventsOf(s), 0, "", f.target);
  return Status::Ok();
}

Status Simulation::AnswerLagging(Actor& a, Step& s, const FaultSpec* f, const WaitRequest& wait) {
  const int64_t timeout_ms = wait.timeout_ms;
  const int64_t lag_ends_ms =
      f != nullptr ? now_ + (timeout_ms > 0 ? timeout_ms : f->duration_ms) : replica_lags_until_ms_;
  const std::string_view marker = f != nullptr ? " !replica-lag (the replica lags" : " (the replica still lags";
  // One replica lags; the others (none with one replica) acknowledge every
  // write so far at once, as a real WAIT counts them.
  const int replicas = server_->replicas();
  const int64_t others = replicas - 1;
  std::string what;
  int64_t waited_ms = 0;
  if (wait.replicas <= others || (timeout_ms > 0 && now_ + timeout_ms <= lag_ends_ms)) {
    // Answered without the lagging replica: at once when the others are
    // enough, else when the timeout passes. Nothing is sent: the writes
    // before the WAIT stay unreplicated to the lagging replica. (WAIT 0
    // waits for nobody: it confirms nothing.)
    if (Status confirmed = wait.replicas > 0 ? server_->ConfirmByOtherReplicas() : Status::Ok(); !confirmed.ok()) {
      return Status::Internal(fmt::format("{}: the other replicas' acknowledgement of WAIT failed: {}", a.name,
                                          confirmed.ToString()));
    }
    s.reply = Reply::Integer(others);
    if (wait.replicas == 0) {
      what = fmt::format("{}: WAIT 0 waits for no replica)", marker);
    } else if (wait.replicas <= others) {
      what = fmt::format("{}: {} of the {} replicas acknowledged at once)", marker, others, replicas);
    } else {
      waited_ms = timeout_ms;
      what = others == 0 ? fmt::format("{}: no acknowledgement within the {} ms timeout)", marker, timeout_ms)
                         : fmt::format("{}: {} of the {} replicas acknowledged within the {} ms timeout)", marker,
                                       others, replicas, timeout_ms);
    }
  } else {
    ++protocol_rtt_;
    Result<Reply> r = Send(*a.conn, s.argv);  // the replica catches up now; the reply comes later
    if (!r.ok()) return Status::Internal(fmt::format("{}: WAIT failed unexpectedly: {}", a.name, r.status().ToString()));
    s.reply = std::move(r).value();
    // A WAIT for more replicas than the run has waits out its timeout
    // whenever the lag ends (ExecuteRedis, outside a lag).
    waited_ms = std::max(lag_ends_ms, wait.replicas > replicas ? now_ + timeout_ms : lag_ends_ms) - now_;
    what = fmt::format("{}: answered {} ms later, once it caught up)", marker, waited_ms);
  }
  a.lagging_wait_until_ms = now_ + waited_ms;
  if (f == nullptr) {
    trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), ReplyText(s.reply) + what,
               {.event = LineEvent::kReplicaLag, .argv = &s.argv, .reply = &s.reply, .duration_ms = waited_ms});
    a.ready_at_ms = std::max(a.ready_at_ms, now_ + waited_ms);
    return Status::Ok();
  }
  replica_lags_until_ms_ = std::max(replica_lags_until_ms_, lag_ends_ms);
  const FaultSpec& fault = *f;
  if (fault.target == kThenFailover) {
    // The lagging replica is promoted when the WAIT answers (its caller has
    // the answer): it never received what no WAIT brought it.
    FaultSpec failover;
    failover.kind = FaultKind::kFailover;
    // With one replica, every write no WAIT confirmed (lag:1000, the same
    // thing, as earlier runs wrote it); with several, the lagging one,
    // whatever the others confirmed.
    failover.target = replicas > 1 ? std::string(kLaggingReplica) : fmt::format("lag:{}", kMaxFailoverLag);
    failover.at_ms = now_ + waited_ms;
    failover.brought_by = a.name;
    plan_->ScheduleLater(failover);
    // Scheduled faults fire only while faults are on: a lag near the end of
    // the fault phase may promise a failover that never comes.
    what += fmt::format("; the primary fails over to it at {} ms, if faults are still on then", failover.at_ms);
  }
  trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv), ReplyText(s.reply) + what,
             {.event = LineEvent::kReplicaLag, .argv = &s.argv, .reply = &s.reply, .site = fault.site,
              .duration_ms = waited_ms});
  SetOracleLine(trace_.size() - 1);
  OracleOf(a).WorkerFault(HistoryKind::kReplicaLag, now_, a.name, fault.site, EventsOf(s), waited_ms);
  a.ready_at_ms = std::max(a.ready_at_ms, now_ + waited_ms);
  return Status::Ok();
}

Status Simulation::ProbeKeyTtls(const Step& s) {
  // EVAL script numkeys key... / FCALL function numkeys key... (the _RO
  // forms write no key, so they set no TTL)
  const CommandInfo& command = CommandOf(s.argv);
  if (!command.runs_code || !command.writes || s.argv.size() <= command.numkeys_at) return Status::Ok();
  int64_t numkeys = 0;
  const std::string& n = s.argv[command.numkeys_at];
  if (std::from_chars(n.data(), n.data() + n.size(), numkeys).ptr != n.data() + n.size()) return Status::Ok();
  std::vector<std::vector<std::string>> reads;
  const int64_t first = command.numkeys_at + 1;
  for (int64_t k = 0; k < numkeys && first + k < static_cast<int64_t>(s.argv.size()) && k < 16; ++k) {
    reads.push_back({"PTTL", s.argv[static_cast<size_t>(first + k)]});
  }
  if (reads.empty()) return Status::Ok();
  Result<std::vector<Reply>> ttls = OracleReads(reads, "probe");
  if (!ttls.ok()) return ttls.status();
  for (const Reply& t : *ttls) {
    if (t.is_integer() && t.integer() > 0) probed_key_expiry_ms_ = std::max(probed_key_expiry_ms_, t.integer());
  }
  return Status::Ok();
}

std::vector<std::string> Simulation::EventsOf(const Step& s) const {
  if (!s.event_id.empty()) return {s.event_id};
  if (s.argv.empty()) return {};
  const CommandInfo& command = CommandOf(s.argv);  // XACK stream group id...
  if (command.category != ReportCategory::kAck || command.ids_from == 0 || s.argv.size() <= command.ids_from) {
    return {};
  }
  return oracle_.EventsOfIds(std::vector<std::string>(s.argv.begin() + command.ids_from, s.argv.end()));
}

void Simulation::TimeOut(Actor& a, HistoryKind fault, const std::string& site, const std::vector<std::string>& events) {
  OracleOf(a).WorkerFault(fault, now_, a.name, site, events);
  if (a.sees_resets) {
    CutConnection(a);
    return;
  }
  Reset(a, "timeout");
}

bool Simulation::CrashPointFaults(Actor& a, const Step& s) {
  if (a.kind != ActorKind::kWorker) return false;
  return FirePointFault(a, s, PointAfter(s)) == PointFault::kCrashed;
}

Simulation::PointFault Simulation::FirePointFault(Actor& a, const Step& s, const std::string& point) {
  if (point.empty()) return PointFault::kNone;
  std::optional<FaultSpec> f = plan_->AtPoint(a.process, point, SiteFamily::kCrashPoint, now_);
  if (!f) return PointFault::kNone;
  SetOracleLine(trace_.size());
  const std::vector<std::string> events = EventsOf(s);
  switch (InfoOf(f->kind).effect) {
    case PointEffect::kCrash:
      OracleOf(a).WorkerFault(HistoryKind::kCrash, now_, a.name, point, events);
      Crash(a, point);
      return PointFault::kCrashed;
    case PointEffect::kStall:
      OracleOf(a).WorkerFault(HistoryKind::kStall, now_, a.name, point, events, f->duration_ms);
      trace_.Add(now_, a.name, LineKind::kFault, fmt::format("!stall at {} for {} ms", point, f->duration_ms), "",
                 {.event = LineEvent::kStall, .site = point, .duration_ms = f->duration_ms});
      a.ready_at_ms = std::max(a.ready_at_ms, now_ + f->duration_ms);
      FaultOtherLanes(a, HistoryKind::kStall, point, f->duration_ms);
      return PointFault::kStalled;
    case PointEffect::kNone:
    case PointEffect::kLoseRequest:
    case PointEffect::kLoseReply:
    case PointEffect::kErrorReply:
    case PointEffect::kReplicaLag: break;
  }
  XACKLY_CHECK(false);  // AtPoint draws only crash-point kinds at a crash point
  return PointFault::kNone;
}

Status Simulation::CheckEffect(const Actor& a, const Step& s) const {
  const bool effect = s.op == Op::kSqlEffect || s.op == Op::kExternalEffect || s.op == Op::kRedisEffect ||
                      s.op == Op::kCommittedEffect;
  if (!effect) return Status::Ok();
  const std::string& where = s.origin.empty() ? a.name : s.origin;
  if (!s.stream_id.empty()) {
    const std::string held = oracle_.EventOfId(s.stream_id);
    if (!held.empty() && held != s.event_id) {
      return Status::InvalidArgument(fmt::format(
          "{}: w:effect: '{}' is not the event of opts.entry (entry {} holds {}): the effect of an event must "
          "name the entry that holds it ({}, step {})",
          where, s.event_id, s.stream_id, held, a.name, steps_ + 1));
    }
  }
  const std::optional<std::string> group = FeedOf(a).OtherGroupOf(a.name, s.event_id);
  if (!group) return Status::Ok();
  const std::string& own = a.group_name.empty() ? names_.group : a.group_name;
  return Status::InvalidArgument(fmt::format(
      "{}: w:effect for {} handles an entry {} read through consumer group '{}', but {}'s effects are judged "
      "in its own group, '{}' (w.group), and would count this effect as a second run of {}'s there. Give the "
      "other group workers of its own ([[groups]] in the scenario, docs/scenarios.md) so that each group's "
      "exactly-once is judged on its own ({}, step {})",
      where, s.event_id, a.name, *group, a.name, own, s.event_id, a.name,
      steps_ + 1));
}

Status Simulation::ExecuteStep(Actor& a) {
  Step& s = *a.pending;
  const OpInfo& info = InfoOf(s.op);
  const bool business = info.channel == Channel::kSql || info.channel == Channel::kExternal;
  if (!business) StartBusy(a, s);  // a business step's, once its outcome is known
  if (config_.protocol.script != nullptr) {
    if (Status v = CheckEffect(a, s); !v.ok()) return v;
    if (s.op == Op::kCommand) script_timers_.AddCommand(s.argv);
    if (s.op == Op::kSleep || s.op == Op::kPark) script_timers_.AddWait(s.duration_ms);
  }
  switch (info.channel) {
    case Channel::kLocal: {
      if (s.op == Op::kExit) {
        // TakeDown destroys the coroutine that holds `s`: nothing of it after.
        const std::string why = s.label;
        const int64_t delay_ms = config_.timing.restart_delay_ms;
        SetOracleLine(trace_.size());
        OracleOf(a).WorkerFault(HistoryKind::kCrash, now_, a.name, "process exit", {});
        TakeDown(a, delay_ms, /*new_process=*/true);
        trace_.Add(now_, a.name, LineKind::kFault, fmt::format("!{} (replacement starts in {} ms)", why, delay_ms),
                   "", {.event = LineEvent::kCrash, .site = "process exit", .duration_ms = delay_ms});
        return Status::Ok();
      }
      if (s.op == Op::kPark && a.kind == ActorKind::kWorker && produced_ > a.produced_seen) {
        // [search] Issue 15 item 2: XREADGROUP BLOCK returns as soon as an
        // entry arrives, including one added between the empty read and
        // this park: the worker does not sleep, it reads again.
        a.pending->woken_by_data = true;
        trace_.Add(now_, a.name, LineKind::kLocal,
                   fmt::format("park: returns at once ({} new entries since its read)",
                               produced_ - a.produced_seen),
                   "");
        break;
      }
      // A quiet script's idle waits are lengthened (IdleWaitMs); the line
      // says so.
      const int64_t wait_ms = s.op == Op::kPark || s.op == Op::kSleep ? IdleWaitMs(s.duration_ms) : 0;
      const std::string stretched =
          wait_ms > s.duration_ms ? fmt::format(", lasts {} ms: the run is quiet", wait_ms) : "";
      if (s.op == Op::kPark) {
        a.state = ActorState::kParked;
        a.park_until_ms = now_ + wait_ms;
        a.park_seq = ++park_counter_;
        trace_.Add(now_, a.name, LineKind::kLocal,
                   fmt::format("park (nothing to read; wakes on new entries or in {} ms{})", s.duration_ms,
                               stretched),
                   "", {.event = LineEvent::kPark, .duration_ms = wait_ms});
        return Status::Ok();  // resumed by Wake
      }
      if (s.op == Op::kSleep) {
        a.ready_at_ms = now_ + wait_ms;
        trace_.Add(now_, a.name, LineKind::kLocal,
                   stretched.empty() ? fmt::format("sleep {} ms", s.duration_ms)
                                     : fmt::format("sleep {} ms ({})", s.duration_ms, stretched.substr(2)),
                   "", {.event = LineEvent::kSleep, .duration_ms = wait_ms});
      } else {
        trace_.Add(now_, a.name, LineKind::kLocal, "checkpoint " + s.label, "",
                   {.event = LineEvent::kCheckpoint, .site = s.label});
      }
      break;
    }
    case Channel::kRedis: {
      if (s.op == Op::kCommand && BeforeCommandFaults(a, s)) return Status::Ok();
      bool handled = false;
      Status st = ExecuteRedis(a, s, &handled);
      if (!st.ok()) return st;
      if (handled) return Status::Ok();
      break;
    }
    case Channel::kSql:
    case Channel::kExternal:
      if (ExecuteBusiness(a, s)) return Status::Ok();
      break;
  }
  if (CrashPointFaults(a, s)) return Status::Ok();
  ResumeActor(a);
  return Status::Ok();
}

}  // namespace xackly::run_internal
