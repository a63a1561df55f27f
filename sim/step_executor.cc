// One actor step (see sim/run_internal.h): the request goes to Redis
// (through LossyConnection: lost requests and replies), the business store
// or stays local; point faults fire at its crash points and sites; what
// Redis replied is fed to the oracle.
#include "sim/run_internal.h"

#include <charconv>

#include <fmt/format.h>

#include "sim/lossy_connection.h"
#include "sim/script_steps.h"

namespace xackly::run_internal {

namespace {

// The ids a business-store step's line mentions, as its statement shows them.
LineFacts BusinessFacts(const Step& s) {
  LineFacts facts;
  switch (s.op) {
    case Op::kSqlEffect: facts.stream_id = s.stream_id; [[fallthrough]];
    case Op::kSqlCheckDone:
    case Op::kSqlMarkDone:
    case Op::kExternalEffect: facts.event_id = s.event_id; break;
    default: break;
  }
  return facts;
}

}  // namespace

void Simulation::ExecuteBusiness(Actor& a, Step& s, std::string* request, std::string* result) {
  bool poison = plan_->IsPoison(EventNumber(s.event_id));
  EffectRecord effect{s.event_id, s.stream_id, a.name, now_, ""};
  switch (s.op) {
    case Op::kSqlBegin: s.outcome = store_.Begin(a.owner_id, now_, request, result); break;
    case Op::kSqlCheckDone:
      s.outcome = store_.CheckDone(a.owner_id, now_, s.event_id, request, result);
      break;
    case Op::kSqlMarkDone:
      s.outcome = store_.MarkDone(a.owner_id, now_, s.event_id, request, result);
      break;
    case Op::kSqlEffect:
      effect.sink = "sql";
      s.outcome = store_.Effect(a.owner_id, now_, effect, poison, request, result);
      break;
    case Op::kSqlCommit: s.outcome = store_.Commit(a.owner_id, now_, request, result); break;
    case Op::kSqlRollback: s.outcome = store_.Rollback(a.owner_id, request, result); break;
    case Op::kSqlStatement:
      s.outcome = store_.Execute(a.owner_id, now_, s.label, s.params, &s.sql, request, result);
      if (s.outcome != BusinessOutcome::kOk && s.sql.error.empty()) s.sql.error = *result;
      break;
    case Op::kExternalEffect:
      effect.sink = "external";
      if (script()) {  // the script's own idempotency key and its expiry
        s.outcome = external_.ApplyKeyed(now_, effect, s.label, s.duration_ms, poison, request, result);
        // An idempotency key that expires is a done-record with a TTL: a
        // duplicate after it is blamed on the expiry (dedupe-expired).
        if (s.outcome == BusinessOutcome::kOk && !s.label.empty() && s.duration_ms > 0) {
          oracle_.DedupeRecord(now_, a.name, s.event_id, s.duration_ms);
        }
      } else {
        s.outcome = external_.Apply(now_, effect, config_.protocol.idempotency_key, poison, request,
                                    result);
      }
      break;
    default: XACKLY_CHECK(false);
  }
  a.in_transaction = store_.InTransaction(a.owner_id);
  if ((s.op == Op::kSqlEffect || s.op == Op::kExternalEffect) &&
      (s.outcome == BusinessOutcome::kFailed || s.outcome == BusinessOutcome::kUnavailable)) {
    oracle_.EffectFailed(now_, a.name, s.event_id, s.stream_id, *result);
  }
  feed_.ForwardNewEffects();
}

Status Simulation::ObserveRedis(Actor& a, const Step& s, bool reply_lost) {
  // A BLOCK after a read of new entries has seen every XADD made so far.
  if (s.op == Op::kReadNew || (s.op == Op::kCommand && !s.argv.empty() &&
                               VerbOf(s.argv[0]) == "XREADGROUP" && s.argv.back() == ">")) {
    a.produced_seen = produced_;
  }
  Result<OracleFeed::Observed> seen = feed_.Redis(now_, {a.slot, a.name}, s, reply_lost);
  if (!seen.ok()) return seen.status();
  for (int i = 0; i < seen->produced; ++i) {
    ++produced_;
    WakeOneParkedWorker();
  }
  // A script may read or claim under a name that is not its actor's (one
  // name shared by every worker): while this incarnation lives, so does
  // that consumer (FinalReads' live_consumers).
  const std::vector<std::string>& argv = s.argv;
  if (s.op == Op::kCommand && argv.size() > 3 && argv[2] == names_.group) {
    const std::string verb = VerbOf(argv[0]);
    if (verb == "XREADGROUP" || ((verb == "XCLAIM" || verb == "XAUTOCLAIM") && argv[1] == names_.stream)) {
      consumer_names_[a.owner_id].insert(argv[3]);
    }
  }
  return Status::Ok();
}

bool Simulation::BeforeCommandFaults(Actor& a, const Step& s) {
  if (a.kind != ActorKind::kWorker) return false;
  std::string point = "before-" + VerbOf(s.argv[0]);
  return FirePointFault(a, s, point.c_str()) != PointFault::kNone;
}

Status Simulation::ExecuteRedis(Actor& a, Step& s, bool* handled) {
  const OpInfo& info = InfoOf(s.op);
  *handled = false;
  if (s.op == Op::kProduce) {
    StreamId id = std::max(StreamId{static_cast<uint64_t>(now_), 0}, last_id_.Next());
    last_id_ = id;
    s.argv[2] = id.ToString();
  }
  bool fault_actor = a.kind != ActorKind::kJanitor;
  // A script's command is named by its verb: that is its lost site.
  std::string verb_site;
  const char* lost_site = info.lost_site;
  if (s.op == Op::kCommand) {
    std::string why = RefusedCommand(s.argv, names_);
    if (!why.empty()) {
      s.reply = Reply::Error("ERR xackly: " + why);
      trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "(not sent) " + ReplyText(s.reply),
                 {.event = LineEvent::kNotSent, .argv = &s.argv, .reply = &s.reply});
      return Status::Ok();
    }
    verb_site = VerbOf(s.argv[0]);
    lost_site = verb_site.c_str();
  }

  if (s.op == Op::kRedisEffect && plan_->IsPoison(EventNumber(s.event_id))) {
    s.outcome = BusinessOutcome::kFailed;
    trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "(not sent: the poison event's effect fails)",
               {.event = LineEvent::kNotSent, .argv = &s.argv});
    oracle_.EffectFailed(now_, a.name, s.event_id, s.stream_id, "poison");
    return Status::Ok();
  }
  if (a.conn_generation != generation_ || !a.conn || !a.conn->alive()) {
    trace_.Add(now_, a.name, LineKind::kRedis, RequestText(s.argv), "!io-error (connection died with the server)",
               {.event = LineEvent::kIoError, .argv = &s.argv});
    Reset(a, "connection lost");
    *handled = true;
    return Status::Ok();
  }
  std::optional<FaultSpec> lost;
  if (fault_actor && lost_site != nullptr) {
    lost = plan_->AtPoint(a.slot, lost_site, /*crash_site=*/false, now_);
  }
  // The connection wrapper injects what the plan drew.
  a.conn->LoseNext(!lost                                   ? LossyConnection::Loss::kNone
                   : lost->kind == FaultKind::kLostRequest ? LossyConnection::Loss::kRequest
                                                           : LossyConnection::Loss::kReply);
  Result<Reply> r = Send(*a.conn, s.argv);
  if (lost && lost->kind == FaultKind::kLostRequest) {
    trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv), "!lost-request (never reached the server)",
               {.event = LineEvent::kLostRequest, .argv = &s.argv, .site = lost_site});
    oracle_.SetLine(trace_.size() - 1);
    if (s.op == Op::kProduce) {
      oracle_.Produced(now_, a.name, s.event_id, s.argv[2], Oracle::ProduceOutcome::kNotSent);
    }
    TimeOut(a, HistoryKind::kLostRequest, lost_site, EventsOf(s));
    *handled = true;
    return Status::Ok();
  }
  ++protocol_rtt_;
  if (lost && a.conn->hidden_reply()) r = *a.conn->hidden_reply();  // the oracle sees what really happened
  if (!r.ok()) {
    return Status::Internal(fmt::format("{}: {} failed unexpectedly: {}", a.name, s.argv[0],
                                        r.status().ToString()));
  }
  s.reply = std::move(r).value();
  if (lost) {  // the reply is lost: executed, but the caller times out
    trace_.Add(now_, a.name, LineKind::kFault, RequestText(s.argv),
               ReplyText(s.reply) + " !lost-reply (executed; the caller times out)",
               {.event = LineEvent::kLostReply, .argv = &s.argv, .reply = &s.reply, .site = lost_site});
  } else {
    trace_.AddCommand(now_, a.name, LineKind::kRedis, s.argv, s.reply, {.argv = &s.argv, .reply = &s.reply});
  }
  oracle_.SetLine(trace_.size() - 1);
  Status observed = ObserveRedis(a, s, /*reply_lost=*/lost.has_value());
  if (!observed.ok()) return observed;
  if (config_.probe && s.op == Op::kCommand) {
    Status ttls = ProbeKeyTtls(s);
    if (!ttls.ok()) return ttls;
  }
  if (lost) {
    TimeOut(a, HistoryKind::kLostReply, lost_site, EventsOf(s));
    *handled = true;
  }
  return Status::Ok();
}

Status Simulation::ProbeKeyTtls(const Step& s) {
  // EVAL script numkeys key... / FCALL function numkeys key...
  const std::string verb = VerbOf(s.argv[0]);
  if ((verb != "EVAL" && verb != "EVALSHA" && verb != "FCALL") || s.argv.size() < 3) return Status::Ok();
  int64_t numkeys = 0;
  const std::string& n = s.argv[2];
  if (std::from_chars(n.data(), n.data() + n.size(), numkeys).ptr != n.data() + n.size()) return Status::Ok();
  std::vector<std::vector<std::string>> reads;
  for (int64_t k = 0; k < numkeys && 3 + k < static_cast<int64_t>(s.argv.size()) && k < 16; ++k) {
    reads.push_back({"PTTL", s.argv[static_cast<size_t>(3 + k)]});
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
  if (s.op == Op::kAck || (s.op == Op::kCommand && VerbOf(s.argv[0]) == "XACK")) {  // XACK stream group id...
    return oracle_.EventsOfIds(std::vector<std::string>(s.argv.begin() + 3, s.argv.end()));
  }
  return {};
}

void Simulation::TimeOut(Actor& a, HistoryKind fault, const char* site, const std::vector<std::string>& events) {
  oracle_.WorkerFault(fault, now_, a.name, site, events);
  Reset(a, "timeout");
}

bool Simulation::CrashPointFaults(Actor& a, const Step& s) {
  if (a.kind != ActorKind::kWorker) return false;
  std::string script_point;  // a script's command or statement: after-VERB
  if (s.op == Op::kCommand) script_point = "after-" + VerbOf(s.argv[0]);
  if (s.op == Op::kSqlStatement) script_point = "after-" + VerbOf(s.label);
  const char* point = s.op == Op::kCheckpoint ? s.label.c_str()
                      : !script_point.empty() ? script_point.c_str()
                                              : InfoOf(s.op).crash_point;
  if (point == nullptr) return false;
  return FirePointFault(a, s, point) == PointFault::kCrashed;
}

Simulation::PointFault Simulation::FirePointFault(Actor& a, const Step& s, const char* point) {
  std::optional<FaultSpec> f = plan_->AtPoint(a.slot, point, /*crash_site=*/true, now_);
  if (!f) return PointFault::kNone;
  oracle_.SetLine(trace_.size());
  const std::vector<std::string> events = EventsOf(s);
  if (f->kind == FaultKind::kCrash) {
    oracle_.WorkerFault(HistoryKind::kCrash, now_, a.name, point, events);
    Crash(a, point);
    return PointFault::kCrashed;
  }
  oracle_.WorkerFault(HistoryKind::kStall, now_, a.name, point, events, f->duration_ms);
  trace_.Add(now_, a.name, LineKind::kFault,
             fmt::format("!stall at {} for {} ms", point, f->duration_ms), "",
             {.event = LineEvent::kStall, .site = point, .duration_ms = f->duration_ms});
  a.ready_at_ms = std::max(a.ready_at_ms, now_ + f->duration_ms);
  return PointFault::kStalled;
}

Status Simulation::ExecuteStep(Actor& a) {
  Step& s = *a.pending;
  const OpInfo& info = InfoOf(s.op);
  a.ready_at_ms = now_ + s.busy_ms;
  // Work up to effect_ms is in QuietWindowMs already (so the catalog's
  // traces keep their length); only longer work moves the quiet clock.
  if (s.busy_ms > config_.timing.effect_ms && a.kind == ActorKind::kWorker) {
    long_work_ends_ms_ = std::max(long_work_ends_ms_, now_ + s.busy_ms);
  }
  if (config_.protocol.script != nullptr) {
    if (s.op == Op::kCommand) script_timers_.AddCommand(s.argv);
    if (s.op == Op::kSleep || s.op == Op::kPark) script_timers_.AddWait(s.duration_ms);
  }
  switch (info.channel) {
    case Channel::kLocal: {
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
    case Channel::kExternal: {
      const char* lost_site = info.lost_site;
      std::string verb_site;
      if (s.op == Op::kSqlStatement) {
        verb_site = VerbOf(s.label);
        lost_site = verb_site.c_str();
      }
      std::optional<FaultSpec> lost;
      if (lost_site != nullptr) lost = plan_->AtPoint(a.slot, lost_site, /*crash_site=*/false, now_);
      std::string request;
      std::string result;
      if (lost && lost->kind == FaultKind::kLostRequest) {
        trace_.Add(now_, a.name, LineKind::kFault, std::string("sql ") + lost_site,
                   "!lost-request (never reached the store)",
                   {.event = LineEvent::kLostRequest, .site = lost_site});
        oracle_.SetLine(trace_.size() - 1);
        TimeOut(a, HistoryKind::kLostRequest, lost_site, {});
        return Status::Ok();
      }
      oracle_.SetLine(trace_.size());
      ExecuteBusiness(a, s, &request, &result);
      LineKind kind = info.channel == Channel::kSql ? LineKind::kSql : LineKind::kExternal;
      std::string prefix = info.channel == Channel::kSql ? "sql " : "ext ";
      LineFacts facts = BusinessFacts(s);
      if (lost) {  // lost reply
        facts.event = LineEvent::kLostReply;
        facts.site = lost_site;
        trace_.Add(now_, a.name, LineKind::kFault, prefix + request,
                   result + " !lost-reply (executed; the caller times out)", facts);
        TimeOut(a, HistoryKind::kLostReply, lost_site, {});
        return Status::Ok();
      }
      trace_.Add(now_, a.name, kind, prefix + request, result, facts);
      break;
    }
  }
  if (CrashPointFaults(a, s)) return Status::Ok();
  ResumeActor(a);
  return Status::Ok();
}

}  // namespace xackly::run_internal
