#include "sim/simulation.h"

#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "sim/command_timers.h"
#include "sim/limits.h"
#include "sim/oracle_feed.h"
#include "sim/rng.h"
#include "sim/script_steps.h"
#include "sim/store.h"
#include "sim/text.h"

namespace xackly {

RunConfig RunConfig::For(const ProtocolDef& protocol) {
  RunConfig c;
  c.protocol = protocol;
  c.expected = protocol.expected;
  c.naming = protocol.naming;
  c.persistence = protocol.persistence;
  c.faults = protocol.faults;
  // "Every point" means every point this protocol visits; a model's explicit
  // list keeps only those, so coverage never reports unreachable sites.
  // A kind left with no reachable site is dropped (an empty list would mean
  // "every site").
  auto reachable = [&](std::vector<std::string>& wanted, const std::vector<std::string>& have,
                       std::initializer_list<FaultKind> kinds) {
    bool listed = !wanted.empty();
    if (!listed) {
      wanted = have;
      return;
    }
    std::erase_if(wanted, [&](const std::string& w) {
      return std::find(have.begin(), have.end(), w) == have.end();
    });
    if (wanted.empty()) {
      for (FaultKind k : kinds) c.faults.kinds.erase(k);
    }
  };
  // A protocol script's sites are named by the commands it sends: every
  // site it visits is eligible (empty lists), or the ones the model lists.
  if (protocol.script_path.empty()) {
    reachable(c.faults.crash_points, CrashPointsOf(protocol), {FaultKind::kCrash, FaultKind::kStall});
    reachable(c.faults.lost_sites, LostSitesOf(protocol), {FaultKind::kLostRequest, FaultKind::kLostReply});
  }
  c.timing.fault_phase_ms = protocol.fault_phase_ms;
  return c;
}

int64_t FaultPhaseEndMs(const Timing& t, int events, int producers) {
  if (t.fault_phase_ms > 0) return t.fault_phase_ms;
  return std::max<int64_t>(2000, events * t.produce_every_ms / producers + 1000);
}

int64_t DefaultMaxSteps(int events) { return 1'000'000 + 500 * static_cast<int64_t>(events); }

namespace {

// Every duration added up, the quiet window's multiples counted twice, with
// max_steps * step_ms, the fault phase and every scheduled fault: a bound on
// every sum of durations the run computes before it starts. Saturates.
// REQUIRES: each value within its own limit (so no product overflows).
int64_t TimeBudgetMs(const RunConfig& c) {
  const Timing& t = c.timing;
  const ProtocolDef& p = c.protocol;
  const FaultModel& f = c.faults;
  const int64_t steps = t.max_steps > 0 ? t.max_steps : DefaultMaxSteps(c.events);  // the guard Run uses
  int64_t sum = SaturatingMul(steps, t.step_ms);
  sum = SaturatingAdd(sum, FaultPhaseEndMs(t, c.events, c.producers));
  for (int64_t d : {t.effect_ms, t.produce_every_ms, t.restart_delay_ms, t.reconnect_ms,
                    t.quiet_window_ms, p.dedupe_ttl_ms, p.loop.claim_min_idle_ms,
                    p.loop.claim_every_ms, p.loop.block_ms, p.janitor.consumer_idle_ms,
                    p.janitor.every_ms, f.stall_ms}) {
    sum = SaturatingAdd(sum, SaturatingMul(2, d));
  }
  sum = SaturatingAdd(sum, SaturatingMul(p.loop.dead_letter_after,
                                         p.loop.claim_min_idle_ms + p.loop.claim_every_ms));
  sum = SaturatingAdd(sum, SaturatingMul(f.scheduled_count,
                                         f.clock_jump_ms + f.store_outage_ms + f.stall_ms));
  if (c.fault_schedule) {
    for (const FaultSpec& s : *c.fault_schedule) {
      sum = SaturatingAdd(sum, SaturatingAdd(s.at_ms, s.duration_ms));
    }
  }
  return sum;
}

}  // namespace

Status ValidateRunConfig(const RunConfig& c) {
  auto bad = [](std::string why) { return Status::InvalidArgument(std::move(why)); };
  if (c.workers < 1 || c.workers > 64) return bad(fmt::format("workers must be in 1..64 (got {})", c.workers));
  if (c.producers < 1 || c.producers > 16) return bad(fmt::format("producers must be in 1..16 (got {})", c.producers));
  if (c.events < 1 || c.events > 100000) return bad(fmt::format("events must be in 1..100000 (got {})", c.events));
  // Every number within the limits of sim/limits.h; messages start with the
  // field's path in a scenario file.
  const Timing& t = c.timing;
  const ProtocolDef& pr = c.protocol;
  const FaultModel& f = c.faults;
  struct Range {
    const char* path;
    int64_t value, min, max;
  };
  const Range ranges[] = {
      {"timing.step_ms", t.step_ms, 1, kMaxDurationMs},
      {"timing.effect_ms", t.effect_ms, 0, kMaxDurationMs},
      {"timing.produce_every_ms", t.produce_every_ms, 0, kMaxDurationMs},
      {"timing.restart_delay_ms", t.restart_delay_ms, 0, kMaxDurationMs},
      {"timing.reconnect_ms", t.reconnect_ms, 0, kMaxDurationMs},
      {"timing.fault_phase_ms", t.fault_phase_ms, 0, kMaxDurationMs},
      {"timing.quiet_window_ms", t.quiet_window_ms, 0, kMaxDurationMs},
      {"timing.max_steps", t.max_steps, 0, kMaxSteps},  // 0: derived (DefaultMaxSteps)
      {"protocol.dedupe_ttl_ms", pr.dedupe_ttl_ms, 0, kMaxDurationMs},
      {"protocol.fault_phase_ms", pr.fault_phase_ms, 0, kMaxDurationMs},
      {"protocol.loop.read_count", pr.loop.read_count, 1, kMaxCount},
      {"protocol.loop.claim_min_idle_ms", pr.loop.claim_min_idle_ms, 0, kMaxDurationMs},
      {"protocol.loop.claim_count", pr.loop.claim_count, 1, kMaxCount},
      {"protocol.loop.claim_every_ms", pr.loop.claim_every_ms, 1, kMaxDurationMs},
      {"protocol.loop.block_ms", pr.loop.block_ms, 1, kMaxDurationMs},
      {"protocol.loop.dead_letter_after", pr.loop.dead_letter_after, 0, kMaxCount},
      {"protocol.janitor.trim_maxlen", pr.janitor.trim_maxlen, 0, kMaxCount},
      {"protocol.janitor.consumer_idle_ms", pr.janitor.consumer_idle_ms, 0, kMaxDurationMs},
      {"protocol.janitor.every_ms", pr.janitor.every_ms, 1, kMaxDurationMs},
      {"faults.stall_ms", f.stall_ms, 1, kMaxDurationMs},
      {"faults.scheduled_count", f.scheduled_count, 0, kMaxCount},
      {"faults.clock_jump_ms", f.clock_jump_ms, 1, kMaxDurationMs},
      {"faults.store_outage_ms", f.store_outage_ms, 1, kMaxDurationMs},
      {"faults.poison_count", f.poison_count, 0, kMaxCount},
  };
  for (const Range& r : ranges) {
    if (r.value < r.min || r.value > r.max) {
      return bad(fmt::format("{}: expected an integer in {}..{}, got {}", r.path, r.min, r.max, r.value));
    }
  }
  // A number out of range is reported before what it may have broken.
  Status p = ValidateProtocol(c.protocol);
  if (!p.ok()) return p;
  if (c.fault_schedule) {
    for (const FaultSpec& s : *c.fault_schedule) {
      Status v = ValidateFaultSpec(s);
      if (!v.ok()) return v;
      if (s.duration_ms > kMaxDurationMs || s.at_ms > kMaxRunSpanMs || s.nth > kMaxSteps) {
        return bad(fmt::format(
            "schedule.faults: '{}': durations are at most {} ms, times at most {} ms, visits at most {}",
            s.ToString(), kMaxDurationMs, kMaxRunSpanMs, kMaxSteps));
      }
      if (s.kind == FaultKind::kPoison && s.event > c.events) {
        return bad(fmt::format("schedule.faults: '{}': this run produces only {}", s.ToString(),
                               Plural(c.events, "event")));
      }
    }
  }
  if (int64_t budget = TimeBudgetMs(c); budget > kMaxRunSpanMs) {
    return bad(fmt::format(
        "timing: the run's durations add up to more than {} ms (100 years): max_steps x step_ms, "
        "the fault phase, every interval, timeout and TTL, and every scheduled fault make {} ms",
        kMaxRunSpanMs, budget == INT64_MAX ? std::string("over 9.2e18") : std::to_string(budget)));
  }
  return Status::Ok();
}

namespace {

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
    e.event_id = s.substr(0, a);
    e.stream_id = s.substr(a + 1, b - a - 1);
    e.consumer = s.substr(b + 1, c - b - 1);
    e.t_ms = std::stoll(s.substr(c + 1));
    e.sink = "redis";
    out.push_back(std::move(e));
  }
  return out;
}

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

class Simulation {
 public:
  Simulation(const RunConfig& config, ServerControl* server)
      : config_(config),
        server_(server),
        trace_(config.keep_trace),
        oracle_(config.events),
        store_(&ledger_),
        external_(&ledger_),
        feed_(&oracle_, &ledger_, &env_,
              [this](const std::vector<std::vector<std::string>>& c) { return OracleReads(c); }),
        sched_rng_(Rng(config.seed).Split("scheduler")) {}

  Result<RunResult> Run();

 private:
  // --- Setup and actors ---
  Status Setup();
  Status StartActor(Actor& a);
  // Destroys the actor's coroutine (rolling back its transaction) and
  // schedules its next start; a new process may get a new consumer name.
  void TakeDown(Actor& a, int64_t restart_in_ms, bool new_process);
  void Crash(Actor& a, const std::string& point);             // process death
  void Reset(Actor& a, const std::string& why);               // timeout: reconnect, same process
  void Wake(Actor& a, bool by_data);
  void WakeOneParkedWorker();
  void ResumeActor(Actor& a);

  // --- Steps ---
  Status ExecuteStep(Actor& a);
  Status ExecuteRedis(Actor& a, Step& s, bool* handled);
  void ExecuteBusiness(Actor& a, Step& s, std::string* request, std::string* result);
  // Tells the oracle what a Redis reply shows (OracleFeed), and wakes a
  // parked worker per entry produced. `reply_lost`: the caller never saw it
  // (an XADD's outcome is then unknown to the producer). Fails only when
  // the oracle's read-back fails (a harness failure).
  Status ObserveRedis(Actor& a, const Step& s, bool reply_lost = false);
  // The events a worker step is about: its event, or an XACK's entries.
  std::vector<std::string> EventsOf(const Step& s) const;
  // A request of `a` timed out (a lost request or reply at `site`): the
  // oracle records the fault, and the actor reconnects.
  void TimeOut(Actor& a, HistoryKind fault, const char* site, const std::vector<std::string>& events);
  bool CrashPointFaults(Actor& a, const Step& s);
  // A crash or stall at before-CMD; true when the actor crashed or stalls
  // (the command is then not sent now).
  bool BeforeCommandFaults(Actor& a, const Step& s);
  // A crash or stall drawn at `point` for `s`, injected.
  enum class PointFault : uint8_t { kNone, kCrashed, kStalled };
  PointFault FirePointFault(Actor& a, const Step& s, const char* point);
  bool script() const { return config_.protocol.script != nullptr; }

  // --- Faults and harness I/O ---
  Status InjectScheduled(const FaultSpec& f);
  Status InjectXdel(const FaultSpec& f);
  Status InjectXtrim(const FaultSpec& f);
  Status InjectRestart();
  Status InjectDelConsumer();
  // The XDEL victim for a target (unread, pending, acked); "" when none.
  Result<std::string> PickXdelTarget(const std::string& target);
  Result<std::optional<StreamId>> ReadLastDelivered(const char* actor);
  Result<Reply> HarnessCall(std::vector<std::string> argv, const char* actor);
  // Like HarnessCall for each command, in one round trip.
  Result<std::vector<Reply>> HarnessCalls(const std::vector<std::vector<std::string>>& commands,
                                          const char* actor);
  // The oracle's reads during the run (OracleFeed::ReadBack): one round
  // trip, counted, but no trace line: they observe, they change nothing,
  // and a run's trace is the same whether or not the oracle had to look.
  Result<std::vector<Reply>> OracleReads(const std::vector<std::vector<std::string>>& commands,
                                         const char* actor = "oracle");
  Status EnsureHarnessConnection();
  void SetClock();
  // A run note: "label" or "label: rest".
  void Note(std::string_view label, std::string_view rest = "") {
    std::string text(label);
    if (!rest.empty()) text.append(": ").append(rest);
    trace_.Add(now_, "sim", LineKind::kLifecycle, text, "", {.event = LineEvent::kNote, .site = label});
  }

  // --- Run loop helpers ---
  bool Runnable(const Actor& a) const;
  bool ProducersDone() const;
  bool AllWorkersIdle() const;
  int64_t NextWakeTime() const;
  int64_t QuietWindowMs() const;
  // The longest of the timers the config declares (QuietWindowMs counts
  // each of them in).
  int64_t DeclaredLongestTimerMs() const;
  // The quiet window now: the config's, plus twice what the longest timer a
  // protocol script has used so far exceeds the declared ones by (a claim
  // waits that long, then the claimer's next round). A script that keeps to
  // its declared timers (a catalog script) ends exactly where its C++ form
  // does.
  int64_t CurrentQuietWindowMs() const {
    const int64_t beyond_ms = std::max<int64_t>(0, script_timers_.Longest() - declared_timer_ms_);
    return SaturatingAdd(quiet_window_ms_, SaturatingMul(2, beyond_ms));
  }
  Status FinalReads(Oracle::FinalState* fs);

  const RunConfig& config_;
  ServerControl* server_;
  WorldNames names_;
  ActorEnv env_;
  Trace trace_;
  Oracle oracle_;
  EffectLedger ledger_;
  SqlStore store_;
  ExternalService external_;
  OracleFeed feed_;
  std::unique_ptr<FaultPlan> plan_;
  Rng sched_rng_;

  std::vector<std::unique_ptr<Actor>> actors_;
  std::unique_ptr<Connection> harness_conn_;
  uint64_t generation_ = 0;   // bumped by every server restart
  int next_owner_id_ = 1;
  int64_t park_counter_ = 0;
  int64_t produced_ = 0;      // successful XADDs (Actor::produced_seen)

  int64_t now_ = 0;
  int64_t last_clock_written_ = -1;
  int64_t steps_ = 0;
  bool fault_phase_ = true;
  int64_t fault_phase_end_ms_ = 0;
  int64_t drain_start_ms_ = 0;
  size_t next_scheduled_ = 0;
  size_t next_pick_ = 0;
  StreamId last_id_;
  int64_t protocol_rtt_ = 0;
  int64_t harness_rtt_ = 0;
  std::vector<std::string> picks_;
  std::vector<std::string> notes_;
  // Per-request scratch, reused so that a step allocates nothing for them.
  std::vector<std::string_view> views_;
  std::string request_text_;
  std::string reply_text_;
  std::vector<Actor*> runnable_;  // scratch for Run's pick, reused every step
  int64_t quiet_window_ms_ = 0;   // QuietWindowMs(), fixed by the config
  // A script's timers, read off what it does (sim/command_timers.h): the
  // longest claim threshold, key expiry, sleep or park seen so far.
  ScriptTimers script_timers_;
  int64_t declared_timer_ms_ = 0;  // DeclaredLongestTimerMs(), fixed by the config
  Status script_error_;           // a protocol script's error ends the run with it
  // The consumer names each incarnation (owner_id) read or claimed as: a
  // script may read under a name that is not its actor's (a name shared by
  // every worker, as Dapr, Symfony and Redpanda Connect do); while the
  // incarnation lives, so does that consumer (the oracle's stranded/stuck).
  std::map<int, std::set<std::string>> consumer_names_;

  // Sends `argv` on `conn` at the current virtual time.
  Result<Reply> Send(Connection& conn, const std::vector<std::string>& argv) {
    SetClock();
    views_.assign(argv.begin(), argv.end());
    return conn.Call(views_);
  }
  const std::string& RequestText(const std::vector<std::string>& argv) {
    request_text_.clear();
    RenderArgvTo(argv, request_text_);
    return request_text_;
  }
  const std::string& ReplyText(const Reply& reply) {
    reply_text_.clear();
    reply.RenderTo(reply_text_);
    return reply_text_;
  }
};

// ---------------------------------------------------------------------------

void Simulation::SetClock() {
  if (now_ != last_clock_written_) {
    server_->SetClockMs(kEpochMs + now_);
    last_clock_written_ = now_;
  }
}

Status Simulation::EnsureHarnessConnection() {
  if (harness_conn_ && harness_conn_->alive()) return Status::Ok();
  auto conn = server_->Connect();
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

Status Simulation::Setup() {
  Status reset = server_->Reset(kEpochMs);
  if (!reset.ok()) return reset;
  last_clock_written_ = 0;
  env_.protocol = &config_.protocol;
  env_.names = &names_;
  env_.timing = &config_.timing;
  env_.now_ms = &now_;
  env_.events = config_.events;
  env_.producers = config_.producers;
  env_.atomic_script = CompileAtomicScript(config_.protocol);
  env_.atomic = AtomicGroupOf(config_.protocol);
  env_.seed = config_.seed;
  env_.epoch_ms = kEpochMs;
  env_.steps = &steps_;
  env_.script_error = &script_error_;

  const Timing& t = config_.timing;
  fault_phase_end_ms_ = FaultPhaseEndMs(t, config_.events, config_.producers);
  quiet_window_ms_ = QuietWindowMs();
  declared_timer_ms_ = DeclaredLongestTimerMs();
  if (config_.fault_schedule) {
    plan_ = std::make_unique<FaultPlan>(config_.faults, *config_.fault_schedule);
  } else {
    plan_ = std::make_unique<FaultPlan>(config_.faults, Rng(config_.seed).Split("faults"),
                                        fault_phase_end_ms_, config_.events);
  }
  env_.faults = plan_.get();

  Result<Reply> created = HarnessCall(
      {"XGROUP", "CREATE", names_.stream, names_.group, "0", "MKSTREAM"}, "setup");
  if (!created.ok()) return created.status();

  auto add = [&](ActorKind kind, const std::string& slot) {
    auto a = std::make_unique<Actor>();
    a->kind = kind;
    a->slot = slot;
    a->name = slot;
    actors_.push_back(std::move(a));
  };
  for (int i = 1; i <= config_.producers; ++i) add(ActorKind::kProducer, "p" + std::to_string(i));
  for (int i = 1; i <= config_.workers; ++i) add(ActorKind::kWorker, "w" + std::to_string(i));
  bool janitor = script() ? config_.protocol.script->Defines(ScriptRole::kJanitor)
                          : config_.protocol.janitor.enabled();
  if (janitor) add(ActorKind::kJanitor, "j1");
  for (auto& a : actors_) {
    Status s = StartActor(*a);
    if (!s.ok()) return s;
  }
  return script_error_;
}

Status Simulation::StartActor(Actor& a) {
  auto conn = server_->Connect();
  if (!conn.ok()) return conn.status();
  a.conn = std::make_unique<LossyConnection>(std::move(conn).value());
  a.conn_generation = generation_;
  a.owner_id = next_owner_id_++;
  a.state = ActorState::kReady;
  a.pending = nullptr;
  a.in_transaction = false;
  const ProtocolScript* script = config_.protocol.script.get();
  feed_.Forget(a.slot);
  switch (a.kind) {
    case ActorKind::kProducer:
      a.task = script != nullptr && script->Defines(ScriptRole::kProducer)
                   ? ScriptActorMain(&a, &env_, ScriptRole::kProducer)
                   : ProducerMain(&a, &env_);
      break;
    case ActorKind::kWorker:
      a.task = script != nullptr ? ScriptActorMain(&a, &env_, ScriptRole::kConsumer)
                                 : ConsumerMain(Worker(&a, &env_));
      break;
    case ActorKind::kJanitor:
      a.task = script != nullptr ? ScriptActorMain(&a, &env_, ScriptRole::kJanitor)
                                 : JanitorMain(&a, &env_);
      break;
  }
  a.task.Start();
  if (a.task.done()) a.state = ActorState::kDone;
  return Status::Ok();
}

void Simulation::ResumeActor(Actor& a) {
  a.pending = nullptr;
  std::coroutine_handle<> h = a.resume_point;
  a.resume_point = {};
  h.resume();
  if (a.task.done()) a.state = ActorState::kDone;
}

void Simulation::TakeDown(Actor& a, int64_t restart_in_ms, bool new_process) {
  store_.Abandon(a.owner_id);
  a.task = Task<void>();  // destroys the whole coroutine chain mid-step
  a.pending = nullptr;
  // A dead process's connection closes and the server drops its open MULTI;
  // a connection handed back to a pool must not keep it either.
  if (feed_.InMulti(a.slot) && a.conn && a.conn->alive()) {
    (void)a.conn->Call({"DISCARD"});
    ++harness_rtt_;
  }
  feed_.Forget(a.slot);
  a.conn.reset();
  a.in_transaction = false;
  a.state = ActorState::kDown;
  a.restart_at_ms = now_ + restart_in_ms;
  a.restart_as_new_process = new_process;
}

void Simulation::Crash(Actor& a, const std::string& point) {
  TakeDown(a, config_.timing.restart_delay_ms, /*new_process=*/true);
  trace_.Add(now_, a.name, LineKind::kFault,
             fmt::format("!crash at {} (replacement starts in {} ms)", point,
                         config_.timing.restart_delay_ms),
             "",
             {.event = LineEvent::kCrash, .site = point, .duration_ms = config_.timing.restart_delay_ms});
}

void Simulation::Reset(Actor& a, const std::string& why) {
  TakeDown(a, config_.timing.reconnect_ms, /*new_process=*/false);
  trace_.Add(now_, a.name, LineKind::kLifecycle,
             fmt::format("{}: reconnects and restarts its loop in {} ms", why,
                         config_.timing.reconnect_ms),
             "", {.event = LineEvent::kReconnect, .duration_ms = config_.timing.reconnect_ms});
}

void Simulation::Wake(Actor& a, bool by_data) {
  a.state = ActorState::kReady;
  a.ready_at_ms = now_;
  a.pending->woken_by_data = by_data;
  ResumeActor(a);
}

void Simulation::WakeOneParkedWorker() {
  Actor* first = nullptr;
  for (auto& a : actors_) {
    if (a->state == ActorState::kParked && (first == nullptr || a->park_seq < first->park_seq)) {
      first = a.get();
    }
  }
  if (first != nullptr) Wake(*first, /*by_data=*/true);
}

bool Simulation::Runnable(const Actor& a) const {
  if (a.state != ActorState::kReady || a.ready_at_ms > now_ || a.pending == nullptr) return false;
  if (InfoOf(a.pending->op).channel == Channel::kSql && store_.Busy(a.owner_id)) return false;
  return true;
}

bool Simulation::ProducersDone() const {
  for (const auto& a : actors_) {
    if (a->kind == ActorKind::kProducer && a->state != ActorState::kDone) return false;
  }
  return true;
}

bool Simulation::AllWorkersIdle() const {
  for (const auto& a : actors_) {
    if (a->kind == ActorKind::kWorker && a->state != ActorState::kParked &&
        a->state != ActorState::kDown) {
      return false;
    }
  }
  return true;
}

int64_t Simulation::QuietWindowMs() const {
  const Timing& t = config_.timing;
  if (t.quiet_window_ms > 0) return t.quiet_window_ms;
  const ProtocolDef& p = config_.protocol;
  int64_t w = p.loop.block_ms + t.restart_delay_ms + t.reconnect_ms + 1000;
  // [search] Issue 15 item 1: a worker may legitimately make no progress for
  // as long as one batch of failing effects takes (a claimed batch of poison
  // events, each effect effect_ms long), once per claim round: without this
  // a slow environment was called stuck while the worker was still busy.
  const int64_t batch_ms = std::max(p.loop.read_count, p.loop.claim_count) * (t.effect_ms + 10 * t.step_ms);
  w += batch_ms;
  if (p.loop.claim) w += 2 * (p.loop.claim_min_idle_ms + p.loop.claim_every_ms + batch_ms);
  if (p.loop.dead_letter_after > 0) {
    w += p.loop.dead_letter_after * (p.loop.claim_min_idle_ms + p.loop.claim_every_ms + batch_ms);
  }
  if (p.janitor.enabled()) w += p.janitor.every_ms + p.janitor.consumer_idle_ms;
  // A stalled worker may still act after a long silence, and nothing
  // progresses while the business store is down. Both start before the
  // drain does, so the longest of them bounds the extra silence. The window
  // is a function of the configuration alone (not of what fired), so that a
  // run and its replay from the fired plan stop at the same step.
  int64_t stall_ms = config_.faults.Has(FaultKind::kStall) ? config_.faults.stall_ms : 0;
  int64_t outage_ms = config_.faults.Has(FaultKind::kStoreOutage) ? config_.faults.store_outage_ms : 0;
  if (config_.fault_schedule) {
    for (const FaultSpec& f : *config_.fault_schedule) {
      if (f.kind == FaultKind::kStall) stall_ms = std::max(stall_ms, f.duration_ms);
      if (f.kind == FaultKind::kStoreOutage) outage_ms = std::max(outage_ms, f.duration_ms);
    }
  }
  return w + std::max(stall_ms, outage_ms);
}

int64_t Simulation::DeclaredLongestTimerMs() const {
  const ProtocolDef& p = config_.protocol;
  return std::max({p.loop.block_ms, p.loop.claim_min_idle_ms + p.loop.claim_every_ms, p.dedupe_ttl_ms,
                   p.janitor.every_ms + p.janitor.consumer_idle_ms});
}

int64_t Simulation::NextWakeTime() const {
  int64_t next = INT64_MAX;
  for (const auto& a : actors_) {
    switch (a->state) {
      case ActorState::kReady:
        if (a->ready_at_ms > now_) next = std::min(next, a->ready_at_ms);
        break;
      case ActorState::kParked: next = std::min(next, a->park_until_ms); break;
      case ActorState::kDown: next = std::min(next, a->restart_at_ms); break;
      default: break;
    }
  }
  if (fault_phase_) {
    if (next_scheduled_ < plan_->scheduled().size()) {
      next = std::min(next, plan_->scheduled()[next_scheduled_].at_ms);
    }
    if (now_ < fault_phase_end_ms_) next = std::min(next, fault_phase_end_ms_);
  }
  return next;
}

// ---------------------------------------------------------------------------

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
    lost = plan_->AtPoint(a.slot, lost_site, /*crash_site=*/false);
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
  if (lost) {
    TimeOut(a, HistoryKind::kLostReply, lost_site, EventsOf(s));
    *handled = true;
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
  std::optional<FaultSpec> f = plan_->AtPoint(a.slot, point, /*crash_site=*/true);
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
  if (config_.protocol.script != nullptr) {
    if (s.op == Op::kCommand) script_timers_.AddCommand(s.argv);
    if (s.op == Op::kSleep || s.op == Op::kPark) script_timers_.AddWait(s.duration_ms);
  }
  switch (info.channel) {
    case Channel::kLocal:
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
      if (s.op == Op::kPark) {
        a.state = ActorState::kParked;
        a.park_until_ms = now_ + s.duration_ms;
        a.park_seq = ++park_counter_;
        trace_.Add(now_, a.name, LineKind::kLocal,
                   fmt::format("park (nothing to read; wakes on new entries or in {} ms)", s.duration_ms),
                   "", {.event = LineEvent::kPark, .duration_ms = s.duration_ms});
        return Status::Ok();  // resumed by Wake
      }
      if (s.op == Op::kSleep) {
        a.ready_at_ms = now_ + s.duration_ms;
        trace_.Add(now_, a.name, LineKind::kLocal, fmt::format("sleep {} ms", s.duration_ms), "",
                   {.event = LineEvent::kSleep, .duration_ms = s.duration_ms});
      } else {
        trace_.Add(now_, a.name, LineKind::kLocal, "checkpoint " + s.label, "",
                   {.event = LineEvent::kCheckpoint, .site = s.label});
      }
      break;
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
      if (lost_site != nullptr) lost = plan_->AtPoint(a.slot, lost_site, /*crash_site=*/false);
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

// ---------------------------------------------------------------------------

Result<std::optional<StreamId>> Simulation::ReadLastDelivered(const char* actor) {
  Result<Reply> groups = HarnessCall({"XINFO", "GROUPS", names_.stream}, actor);
  if (!groups.ok()) return groups.status();
  return GroupLastDeliveredId(*groups, names_.group);
}

Result<std::string> Simulation::PickXdelTarget(const std::string& target) {
  const std::string& st = names_.stream;
  if (target == "pending") {  // the oldest pending entry
    auto r = HarnessCall({"XPENDING", st, names_.group, "-", "+", "1"}, "fault");
    if (!r.ok()) return r.status();
    auto rows = ParsePendingRows(*r);
    return rows && !rows->empty() ? (*rows)[0].id : "";
  }
  auto last_result = ReadLastDelivered("fault");
  if (!last_result.ok()) return last_result.status();
  std::string last = last_result->value_or(StreamId{}).ToString();
  if (target == "unread") {  // the oldest entry after the group's position
    auto r = HarnessCall({"XRANGE", st, "(" + last, "+", "COUNT", "1"}, "fault");
    if (!r.ok()) return r.status();
    auto e = ParseRangeReply(*r);
    return e && !e->empty() ? (*e)[0].id : "";
  }
  // acked: the oldest delivered entry that is no longer pending
  auto replies = HarnessCalls({{"XRANGE", st, "-", last, "COUNT", "100"},
                               {"XPENDING", st, names_.group, "-", "+", "100"}},
                              "fault");
  if (!replies.ok()) return replies.status();
  auto entries = ParseRangeReply((*replies)[0]);
  auto rows = ParsePendingRows((*replies)[1]);
  std::set<std::string> pending_ids;
  if (rows) {
    for (const auto& row : *rows) pending_ids.insert(row.id);
  }
  if (entries) {
    for (const auto& e : *entries) {
      if (pending_ids.count(e.id) == 0) return e.id;
    }
  }
  return std::string();
}

Status Simulation::InjectXdel(const FaultSpec& f) {
  Result<std::string> target = PickXdelTarget(f.target);
  if (!target.ok()) return target.status();
  if (target->empty()) {
    Note("xdel " + f.target, "no such entry right now; nothing deleted");
    return Status::Ok();
  }
  auto r = HarnessCall({"XDEL", names_.stream, *target}, "fault");
  if (!r.ok()) return r.status();
  if (r->is_integer() && r->integer() > 0) {
    oracle_.PayloadsDeleted(now_, "fault", {*target}, "XDEL", "XDEL of a " + f.target + " entry");
  }
  return Status::Ok();
}

Status Simulation::InjectXtrim(const FaultSpec& f) {
  std::vector<std::string> argv;
  std::vector<std::string> gone;  // what an exact trim removes, from the oracle's model
  if (f.target.rfind("maxlen:", 0) == 0) {
    size_t keep = static_cast<size_t>(std::stoll(f.target.substr(7)));
    size_t live = oracle_.live_count();
    if (live > keep) gone = oracle_.OldestLive(live - keep);
    argv = {"XTRIM", names_.stream, "MAXLEN", f.target.substr(7)};
  } else {
    auto last = ReadLastDelivered("fault");
    if (!last.ok()) return last.status();
    if (!*last) {
      Note("xtrim", "no group to read last-delivered-id from; nothing trimmed");
      return Status::Ok();
    }
    gone = oracle_.LiveBelow((*last)->Next());
    argv = {"XTRIM", names_.stream, "MINID", (*last)->Next().ToString()};
  }
  auto r = HarnessCall(argv, "fault");
  if (!r.ok()) return r.status();
  if (r->is_integer() && r->integer() != static_cast<int64_t>(gone.size())) {
    notes_.push_back(fmt::format("xtrim removed {} entries; the oracle expected {}", r->integer(), gone.size()));
  }
  oracle_.PayloadsDeleted(now_, "fault", gone, "XTRIM", RenderArgv(argv));
  return Status::Ok();
}

Status Simulation::InjectRestart() {
  Status s = server_->CrashAndRestart();
  if (!s.ok()) return s;
  ++generation_;  // every actor's connection is now dead
  harness_conn_.reset();
  last_clock_written_ = -1;
  // Read back what survived (one round trip), so the oracle's model
  // matches the server.
  const std::string& st = names_.stream;
  auto replies = HarnessCalls({{"XRANGE", st, "-", "+"},
                               {"XPENDING", st, names_.group, "-", "+", "100000"},
                               {"XINFO", "GROUPS", st}},
                              "oracle");
  if (!replies.ok()) return replies.status();
  const std::vector<Reply>& r = *replies;
  std::vector<std::string> surviving;
  if (auto e = ParseRangeReply(r[0])) {
    for (const auto& entry : *e) surviving.push_back(entry.id);
  }
  std::vector<PendingRow> rows;
  if (auto parsed = ParsePendingRows(r[1])) rows = std::move(*parsed);
  std::optional<StreamId> last = GroupLastDeliveredId(r[2], names_.group);
  oracle_.ServerRestarted(now_, server_->persistence(), surviving, rows, last ? last->ToString() : "");
  return Status::Ok();
}

Status Simulation::InjectDelConsumer() {
  auto r = HarnessCall({"XPENDING", names_.stream, names_.group}, "fault");
  if (!r.ok()) return r.status();
  auto summary = ParsePendingSummary(*r);
  std::string victim;  // the consumer holding most pending entries
  int64_t most = 0;
  if (summary) {
    for (const auto& [consumer, n] : summary->per_consumer) {
      if (n > most) {
        most = n;
        victim = consumer;
      }
    }
  }
  if (victim.empty()) {
    Note("delconsumer", "no consumer holds pending entries; nothing deleted");
    return Status::Ok();
  }
  auto d = HarnessCall({"XGROUP", "DELCONSUMER", names_.stream, names_.group, victim}, "fault");
  if (!d.ok()) return d.status();
  oracle_.ConsumerDeleted(now_, "fault", victim);
  return Status::Ok();
}

Status Simulation::InjectScheduled(const FaultSpec& f) {
  plan_->RecordFired(f);
  trace_.Add(now_, "fault", LineKind::kFault, "!" + f.ToString(), "",
             {.event = LineEvent::kScheduledFault, .fault = FaultKindName(f.kind),
              .duration_ms = f.duration_ms});
  oracle_.SetLine(trace_.size() - 1);
  switch (f.kind) {
    case FaultKind::kXdel: return InjectXdel(f);
    case FaultKind::kXtrim: return InjectXtrim(f);
    case FaultKind::kRestart: return InjectRestart();
    case FaultKind::kSave: {
      auto r = HarnessCall({"SAVE"}, "fault");
      return r.ok() ? Status::Ok() : r.status();
    }
    case FaultKind::kDelConsumer: return InjectDelConsumer();
    case FaultKind::kClockJump:
      now_ += f.duration_ms;
      oracle_.RunWideFault(HistoryKind::kClockJump, now_,
                           fmt::format("virtual time jumped forward {} ms", f.duration_ms), f.duration_ms);
      return Status::Ok();
    case FaultKind::kStoreOutage:
      store_.SetUnavailableUntil(now_ + f.duration_ms);
      external_.SetUnavailableUntil(now_ + f.duration_ms);
      oracle_.RunWideFault(HistoryKind::kStoreOutage, now_,
                           fmt::format("the business store is unavailable for {} ms", f.duration_ms),
                           f.duration_ms);
      return Status::Ok();
    default:
      XACKLY_CHECK(false);
  }
  return Status::Ok();
}

Status Simulation::FinalReads(Oracle::FinalState* fs) {
  const std::string& st = names_.stream;
  std::vector<std::vector<std::string>> reads = {
      {"XPENDING", st, names_.group, "-", "+", "100000"},
      {"XRANGE", st, "-", "+"},
      {"XRANGE", names_.dead_letters, "-", "+"}};
  // A script may write Redis effects (w:effect or its own EVAL): the ledger
  // list is the truth for them.
  bool redis_effects = config_.protocol.effect == EffectSink::kRedis || script();
  if (redis_effects) reads.push_back({"LRANGE", names_.effects, "0", "-1"});
  const size_t first_parking = reads.size();
  for (const std::string& key : feed_.parking_streams()) reads.push_back({"XRANGE", key, "-", "+"});
  auto replies = HarnessCalls(reads, "oracle");
  if (!replies.ok()) return replies.status();
  const std::vector<Reply>& r = *replies;
  if (auto rows = ParsePendingRows(r[0])) fs->pending = std::move(*rows);
  if (auto e = ParseRangeReply(r[1])) {
    for (const auto& entry : *e) fs->stream_ids.push_back(entry.id);
  }
  if (auto e = ParseRangeReply(r[2])) fs->dead_letters = std::move(*e);
  if (redis_effects) fs->redis_effects = ParseRedisEffects(r[3]);
  for (size_t i = first_parking; i < r.size(); ++i) {  // dead letters in streams of the script's choice
    if (auto e = ParseRangeReply(r[i])) fs->dead_letters.insert(fs->dead_letters.end(), e->begin(), e->end());
  }
  for (const auto& a : actors_) {
    if (a->kind != ActorKind::kWorker || a->state == ActorState::kDone) continue;
    fs->live_consumers.insert(a->name);
    auto names = consumer_names_.find(a->owner_id);
    if (names != consumer_names_.end()) fs->live_consumers.insert(names->second.begin(), names->second.end());
  }
  return Status::Ok();
}

Result<RunResult> Simulation::Run() {
  Status setup = Setup();
  if (!setup.ok()) return setup;
  const Timing& t = config_.timing;
  // [search] Issue 15 item 1: the step budget is a harness guard. Reaching
  // it says nothing about the protocol (liveness is judged in virtual time,
  // by the quiet window below), so the run fails as a harness limit (exit 3)
  // instead of being judged: no `stuck`, and no `pel-leak` from a cut run.
  const int64_t max_steps = t.max_steps > 0 ? t.max_steps : DefaultMaxSteps(config_.events);
  for (;;) {
    if (steps_ >= max_steps) {
      for (auto& a : actors_) a->task = Task<void>();
      return Status::Internal(fmt::format(
          "harness limit: the run reached the step guard, timing.max_steps = {}{}, at virtual {} ms "
          "before it settled; this is not a verdict on the protocol. Raise [timing] max_steps in the "
          "scenario (0 = derived from the workload)",
          max_steps, t.max_steps > 0 ? "" : " (derived)", now_));
    }
    if (fault_phase_ && now_ >= fault_phase_end_ms_ && ProducersDone()) {
      fault_phase_ = false;
      plan_->Disable();
      drain_start_ms_ = now_;
      Note("fault phase over", "faults off, draining until quiescent");
    }
    while (fault_phase_ && next_scheduled_ < plan_->scheduled().size() &&
           plan_->scheduled()[next_scheduled_].at_ms <= now_) {
      Status s = InjectScheduled(plan_->scheduled()[next_scheduled_++]);
      if (!s.ok()) return s;
    }
    for (auto& a : actors_) {
      if (a->state == ActorState::kDown && a->restart_at_ms <= now_) {
        std::string old = a->name;
        if (a->restart_as_new_process) {
          a->incarnation++;
          if (a->kind == ActorKind::kWorker && config_.naming == RestartNaming::kFresh) {
            a->name = a->slot + "." + std::to_string(a->incarnation);
          }
        }
        Status s = StartActor(*a);
        if (!s.ok()) return s;
        if (!script_error_.ok()) return script_error_;
        trace_.Add(now_, a->name, LineKind::kLifecycle,
                   old == a->name ? "starts again" : "starts (replaces " + old + ")", "",
                   {.event = LineEvent::kStart, .replaces = old == a->name ? "" : old});
      } else if (a->state == ActorState::kParked && a->park_until_ms <= now_) {
        Wake(*a, /*by_data=*/false);
      }
    }
    if (!script_error_.ok()) return script_error_;
    if (!fault_phase_) {
      if (AllWorkersIdle() && oracle_.NothingLeftToDeliver()) {
        Note("quiescent", "nothing pending, nothing left to deliver");
        break;
      }
      int64_t quiet_since = std::max(drain_start_ms_, oracle_.last_progress_ms());
      if (now_ - quiet_since >= CurrentQuietWindowMs()) {
        Note("quiescent", fmt::format("no progress for {} ms", now_ - quiet_since));
        break;
      }
    }
    std::vector<Actor*>& runnable = runnable_;
    runnable.clear();
    for (auto& a : actors_) {
      if (Runnable(*a)) runnable.push_back(a.get());
    }
    if (runnable.empty()) {
      int64_t next = NextWakeTime();
      if (!fault_phase_) {
        int64_t quiet_deadline = std::max(drain_start_ms_, oracle_.last_progress_ms()) + CurrentQuietWindowMs();
        next = std::min(next, quiet_deadline);
      }
      if (next == INT64_MAX) {
        Note("nothing left to run");
        break;
      }
      now_ = std::max(now_ + 1, next);
      continue;
    }
    Actor* pick = nullptr;
    if (next_pick_ < config_.picks.size()) {
      const std::string& want = config_.picks[next_pick_++];
      for (Actor* a : runnable) {
        if (a->slot == want) pick = a;
      }
      if (pick == nullptr) {
        std::string names;
        for (Actor* a : runnable) names += (names.empty() ? "" : " ") + a->slot;
        return Status::FailedPrecondition(fmt::format(
            "replay diverged at step {}: the schedule picks {} but only {} can run",
            steps_ + 1, want, names));
      }
    } else {
      pick = runnable[sched_rng_.Below(runnable.size())];
    }
    if (config_.keep_trace) picks_.push_back(pick->slot);
    Status s = ExecuteStep(*pick);
    if (!s.ok()) return s;
    if (!script_error_.ok()) return script_error_;
    ++steps_;
    now_ += t.step_ms;
  }

  Oracle::FinalState fs;
  fs.steps = steps_;
  Status reads = FinalReads(&fs);
  if (!reads.ok()) return reads;
  for (std::string& m : oracle_.ModelMismatches(fs)) notes_.push_back("oracle self-check: " + m);

  RunResult result;
  result.violations = oracle_.Judge(fs, ledger_);
  result.observed = ObservedClass(result.violations);
  result.matched = Matches(config_.expected, result.violations);
  result.trace_hash = trace_.hash();
  result.steps = steps_;
  result.trace_lines = trace_.size();
  result.virtual_ms = now_;
  result.protocol_round_trips = protocol_rtt_;
  result.harness_round_trips = harness_rtt_;
  result.fired = plan_->fired();
  result.coverage = plan_->Coverage();
  result.picks = std::move(picks_);
  if (trace_.keeps_lines()) result.trace = std::move(trace_.lines());
  for (const Violation& v : result.violations) {
    if (!v.event_id.empty()) result.histories[v.event_id] = oracle_.HistoryOf(v.event_id);
  }
  result.effect_counts = oracle_.effect_counts();
  result.notes = std::move(notes_);
  result.script_timers = script_timers_;
  // Destroy coroutines before the actors' connections and the store go away.
  for (auto& a : actors_) a->task = Task<void>();
  return result;
}

}  // namespace

Result<RunResult> RunSimulation(const RunConfig& config, ServerControl* server) {
  XACKLY_CHECK(server->persistence() == config.persistence);
  Simulation sim(config, server);
  return sim.Run();
}

}  // namespace xackly
