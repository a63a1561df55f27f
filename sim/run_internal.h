// The Simulation class: the state of one run and the jobs that share it,
// each in its own file. Internal to sim/ (not installed): the API is
// RunSimulation (sim/simulation.h).
//   sim/simulation.cc     the scheduler: the run loop, its two phases, when
//                         virtual time moves, quiescence, the verdict
//   sim/actor_host.cc     actor lifecycle: setup, start, crash, take-down,
//                         restart, reconnect, park and wake
//   sim/step_executor.cc  one actor step: its request on Redis (through
//                         LossyConnection), the business store or locally,
//                         with the point faults at its crash points and sites
//   sim/harness_io.cc     harness I/O: the clock page, the harness
//                         connection, the oracle's reads, scheduled faults
//                         (trace line, then the kind's injector,
//                         sim/injectors.h) and the final reads
// Each part reaches the others only through this class's members.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/actor.h"
#include "sim/business.h"
#include "sim/command_timers.h"
#include "sim/commands.h"
#include "sim/injectors.h"
#include "sim/limits.h"
#include "sim/oracle_feed.h"
#include "sim/quiet_window.h"
#include "sim/rng.h"
#include "sim/simulation.h"
#include "sim/store.h"
#include "sim/text.h"

namespace xackly::run_internal {

// The records of the Redis effect ledger (an LRANGE reply of
// "<event_id>|<entry id>|<consumer>|<t_ms>" strings); other strings are
// skipped.
std::vector<EffectRecord> ParseRedisEffects(const Reply& reply);

class Simulation : private FaultHost {
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
  // After Run() failed: the trace lines up to the stop (empty unless
  // config.keep_trace).
  std::vector<TraceLine> TakeTraceLines() { return std::move(trace_.lines()); }

 private:
  // --- Setup and actors ---
  Status Setup();
  Status StartActor(Actor& a);
  // Destroys the actor's coroutine (rolling back its transaction) and
  // schedules its next start; a new process may get a new consumer name.
  void TakeDown(Actor& a, int64_t restart_in_ms, bool new_process);
  void Crash(Actor& a, const std::string& point);             // process death
  void Reset(Actor& a, const std::string& why);               // timeout: reconnect, same process
  // A lost request or reply as a process that sees resets
  // (ProtocolScript::SeesConnectionResets): a fresh server connection, and
  // the actor resumes with Actor::connection_cut set.
  void CutConnection(Actor& a);
  // A worker process dies or stalls whole (`kind` kCrash or kStall at
  // `point`, fired in `a`): the other handler lanes of its process go down
  // too (restarting in `duration_ms`, with it) or take no step for
  // `duration_ms` (a parked one, woken meanwhile, waits it out), each with
  // its own trace line and oracle history. Nothing without lanes. (A real
  // consumer's exit has no lanes: handlers need a script.)
  void FaultOtherLanes(const Actor& a, HistoryKind kind, const std::string& point, int64_t duration_ms);
  void Wake(Actor& a, bool by_data);
  void WakeOneParkedWorker();
  void ResumeActor(Actor& a);

  // --- Steps ---
  Status ExecuteStep(Actor& a);
  // A script's effect is refused, naming the call, when it names an entry
  // that holds another event (opts.entry, as a table or an ID: it would
  // read as this event sitting in a second entry, a producer retry that
  // never happened), or an event `a` last received through another
  // consumer group (OracleFeed::OtherGroupOf: one group's exactly-once is
  // judged, so it would read as a duplicate).
  Status CheckEffect(const Actor& a, const Step& s) const;
  Status ExecuteRedis(Actor& a, Step& s, bool* handled);
  // A business step (SQL store, external service) through business_, with
  // lost requests and replies at its request site; true when a loss ended
  // it (the actor timed out).
  bool ExecuteBusiness(Actor& a, Step& s);
  // Keeps `a` busy for s.busy_ms after this step, once its outcome is
  // known: an external service answers a key it remembers (kAlreadyDone)
  // at once, not after the effect's duration; a caller with a timeout
  // (s.timeout_ms) waits at most that long and then s.timed_out is set.
  void StartBusy(Actor& a, Step& s);
  // Tells the oracle what a business step did (a dedupe record with a
  // TTL, a failed effect, the effects it recorded).
  void ObserveBusiness(Actor& a, const Step& s, const std::string& result);
  // The request fault the fault plan draws at this visit of request site
  // `site` by `a`, or nullopt (none, or no site). An error-reply or a
  // replica-lag only where `can` allows it.
  std::optional<FaultSpec> RequestFault(Actor& a, const std::string& site, VisitCan can);
  // Answers `s` with the error-reply fault `f` instead of sending it: the
  // server never sees the request (inside MULTI, its transaction is made
  // to abort, as the server's own refusal would).
  Status AnswerWithError(Actor& a, Step& s, const FaultSpec& f);
  // Answers the WAIT `s` while the replica lags. `f`, the replica-lag
  // fault that fired at it, starts the lag: for the WAIT's timeout, or
  // for f->duration_ms when it has none (WAIT n 0). Without `f`, a WAIT
  // made while an earlier lag lasts (replica_lags_until_ms_) finds the
  // replica as far behind: a replica that acknowledged it would have
  // released the lagging WAIT too. Either way a timeout that ends within
  // the lag answers 0 once it has passed, without sending the WAIT (the
  // replica gets none of the writes before it); any other WAIT is sent
  // (the replica catches up) and its reply held until the lag ends.
  Status AnswerLagging(Actor& a, Step& s, const FaultSpec* f, const WaitRequest& wait);
  // Tells the oracle what a Redis reply shows (OracleFeed), and wakes a
  // parked worker per entry produced. `reply_lost`: the caller never saw it
  // (an XADD's outcome is then unknown to the producer). Fails only when
  // the oracle's read-back fails (a harness failure).
  Status ObserveRedis(Actor& a, const Step& s, bool reply_lost = false);
  // A probe's read of the TTLs of the keys a script's EVAL/EVALSHA/FCALL
  // names (RunConfig::probe).
  Status ProbeKeyTtls(const Step& s);
  // The events a worker step is about: its event, or an XACK's entries.
  std::vector<std::string> EventsOf(const Step& s) const;
  // A request of `a` timed out (a lost request or reply at `site`): the
  // oracle records the fault, and the actor reconnects.
  void TimeOut(Actor& a, HistoryKind fault, const std::string& site, const std::vector<std::string>& events);
  bool CrashPointFaults(Actor& a, const Step& s);
  // A crash or stall at before-CMD; true when the actor crashed or stalls
  // (the command is then not sent now).
  bool BeforeCommandFaults(Actor& a, const Step& s);
  // A crash or stall drawn at crash point `point` ("" none) for `s`, injected.
  enum class PointFault : uint8_t { kNone, kCrashed, kStalled };
  PointFault FirePointFault(Actor& a, const Step& s, const std::string& point);
  bool script() const { return config_.protocol.script != nullptr; }
  // Effects may land on the Redis effect ledger (a list): a Redis-effect
  // protocol, or a script, whose own EVAL may push them there.
  bool RedisEffects() const { return config_.protocol.effect == EffectSink::kRedis || script(); }

  // --- Faults and harness I/O ---
  // Writes a scheduled fault's trace line and runs its injector.
  Status InjectScheduled(const FaultSpec& f);
  // FaultHost: what a scheduled injector may do (sim/injectors.h).
  int64_t now_ms() const override { return now_; }
  void AdvanceClockMs(int64_t ms) override { now_ += ms; }
  const WorldNames& names() const override { return names_; }
  Oracle& oracle() override { return oracle_; }
  std::vector<JudgedGroup> judged_groups() override;
  Result<std::optional<StreamId>> ReadLastDelivered(const char* actor) override;
  Result<Reply> HarnessCall(std::vector<std::string> argv, const char* actor) override;
  // Like HarnessCall for each command, in one round trip.
  Result<std::vector<Reply>> HarnessCalls(const std::vector<std::vector<std::string>>& commands,
                                          const char* actor) override;
  void Note(std::string_view label, std::string_view rest) override { TraceNote(label, rest); }
  void RunNote(std::string text) override { notes_.push_back(std::move(text)); }
  Status RestartServer() override;
  Result<FailoverOutcome> FailoverServer(int lag, bool to_lagging) override;
  Persistence persistence() const override { return server_->persistence(); }
  void StoreDownUntil(int64_t t_ms) override {
    store_.SetUnavailableUntil(t_ms);
    external_.SetUnavailableUntil(t_ms);
  }
  // The oracle's reads during the run (OracleFeed::ReadBack): one round
  // trip, counted, but no trace line: they observe, they change nothing,
  // and a run's trace is the same whether or not the oracle had to look.
  Result<std::vector<Reply>> OracleReads(const std::vector<std::vector<std::string>>& commands,
                                         const char* actor = "oracle");
  Status EnsureHarnessConnection();
  void SetClock();
  // A trace note: "label" or "label: rest".
  void TraceNote(std::string_view label, std::string_view rest = "") {
    std::string text(label);
    if (!rest.empty()) text.append(": ").append(rest);
    trace_.Add(now_, kSimActor, LineKind::kLifecycle, text, "", {.event = LineEvent::kNote, .site = label});
  }

  // --- Run loop helpers ---
  // A ready actor whose step is due now (it may still wait for the store).
  bool Due(const Actor& a) const;
  // REQUIRES: Due(a). Its step is SQL and another incarnation holds the
  // store's open transaction.
  bool WaitsForStore(const Actor& a) const;
  bool Runnable(const Actor& a) const;
  // Marks `a` waiting since now when its ready SQL step cannot run because
  // another incarnation holds the store's transaction (once per wait).
  void NoteStoreWait(Actor& a);
  bool ProducersDone() const;
  bool AllWorkersIdle() const;
  // Settled: the run can no longer change what the oracle will find. Every
  // worker is parked (none is down with a restart due), nothing is pending
  // or left to deliver, and no produced event's effect is still owed
  // (Oracle::OwedEvents; for a protocol that may write the Redis effect
  // ledger inside its own EVAL, after reading that ledger back). A run that
  // owes work it may still do (an outbox or inbox relay, a worker about to
  // restart) goes on until that work is done or the quiet window passes.
  // Fails only when the ledger read fails (a harness failure).
  Result<bool> Settled();
  // Whether step `s` cannot change the Redis effect ledger (a list): local
  // and SQL steps, an external effect, and a script's command whose verb
  // cannot write a list. Settled rereads the ledger only after a step that
  // may have changed it.
  bool LeavesTheLedgerAlone(const Step& s) const;
  int64_t NextWakeTime() const;
  // The quiet window and idle waits (sim/quiet_window.h), on this run's
  // silence and the timers its script has used so far.
  int64_t QuietSinceMs() const {
    return Silence{drain_start_ms_, LastProgressMs(), long_work_ends_ms_}.SinceMs();
  }
  int64_t CurrentQuietWindowMs() const { return quiet_.CurrentMs(script_timers_.Longest()); }
  int64_t IdleWaitMs(int64_t requested_ms) const {
    return quiet_.IdleWaitMs(requested_ms, now_ - QuietSinceMs(), fault_phase_);
  }
  Status FinalReads(Oracle::FinalState* fs);

  // --- Further consumer groups (RunConfig::groups) ---
  // Each further group has a judge of its own: its names (the group's), its
  // oracle and its feed. Every feed sees every request; a feed takes an
  // actor's own doings (effects, dead letters, key expiries, position
  // reads) only from its group's workers (OracleFeed::Who::member), and
  // its group's commands (XREADGROUP, XACK, claims) by the group they name.
  struct GroupJudge {
    WorldNames names;
    ActorEnv env;
    std::unique_ptr<Oracle> oracle;
    std::unique_ptr<OracleFeed> feed;
    std::vector<PendingRow> final_pending;  // XPENDING of the group at the end (FinalReads)
  };
  void AddGroupJudges();
  // The group an effect record's consumer works for (0: the run's own;
  // a name no worker of a further group has counts as the run's own).
  int GroupOfConsumer(std::string_view consumer) const;
  // The effects of group `index`'s workers: the run's ledger's, and those
  // of fs->redis_effects (which keeps only them).
  EffectLedger EffectsOfGroup(int index, Oracle::FinalState* fs) const;
  Oracle& OracleOf(const Actor& a) { return a.group == 0 ? oracle_ : *group_judges_[a.group - 1]->oracle; }
  OracleFeed& FeedOf(const Actor& a) { return a.group == 0 ? feed_ : *group_judges_[a.group - 1]->feed; }
  const OracleFeed& FeedOf(const Actor& a) const { return a.group == 0 ? feed_ : *group_judges_[a.group - 1]->feed; }
  // Calls `f` with every group's oracle (the run's own first).
  template <typename F>
  void ForEachOracle(F&& f) {
    f(oracle_);
    for (auto& g : group_judges_) f(*g->oracle);
  }
  template <typename F>
  void ForEachFeed(F&& f) {
    f(feed_);
    for (auto& g : group_judges_) f(*g->feed);
  }
  // Every group's dead-letter streams of the script's choice
  // (OracleFeed::parking_streams), and the streams any group read with
  // XREADGROUP. FinalReads reads them all; a group's dead letters are those
  // in names.dead_letters and in the streams its own workers XADDed to
  // (DeadLettersOf).
  std::set<std::string> ParkingStreams();
  std::vector<StreamEntry> DeadLettersOf(const OracleFeed& feed) const;
  std::set<std::string> GroupReadStreams();
  void SetOracleLine(int64_t line) {
    ForEachOracle([line](Oracle& o) { o.SetLine(line); });
  }
  // The latest progress any group's oracle saw.
  int64_t LastProgressMs() const {
    int64_t t = oracle_.last_progress_ms();
    for (const auto& g : group_judges_) t = std::max(t, g->oracle->last_progress_ms());
    return t;
  }
  bool AnyEffectOwed() const {
    if (!oracle_.OwedEvents().empty()) return true;
    for (const auto& g : group_judges_) {
      if (!g->oracle->OwedEvents().empty()) return true;
    }
    return false;
  }
  // A further group's final judgement: its own PEL (FinalReads read it
  // into final_pending), the effects of its own workers; its violations
  // name it.
  void JudgeGroup(GroupJudge& g, int index, const Oracle::FinalState& shared, RunResult* result);

  const RunConfig& config_;
  const QuietWindow quiet_{config_};
  ServerControl* server_;
  WorldNames names_;
  ActorEnv env_;
  Trace trace_;
  Oracle oracle_;
  EffectLedger ledger_;
  SqlStore store_;
  ExternalService external_;
  StoreChannel store_channel_{&store_, &external_};
  LossyBusiness business_{&store_channel_};  // what steps send business requests through
  OracleFeed feed_;
  std::vector<std::unique_ptr<GroupJudge>> group_judges_;
  // FinalReads: names.dead_letters' entries, and each parking stream's.
  std::vector<StreamEntry> common_dead_letters_;
  std::map<std::string, std::vector<StreamEntry>> parked_;
  std::unique_ptr<FaultPlan> plan_;
  Rng sched_rng_;

  std::vector<std::unique_ptr<Actor>> actors_;
  std::vector<std::shared_ptr<void>> process_memory_;  // ActorEnv::process_memory
  std::shared_ptr<void> run_memory_;                    // ActorEnv::run_memory
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
  int64_t long_work_ends_ms_ = 0;  // Silence::long_work_ends_ms
  int64_t unsettled_after_ms_ = 0;  // > 0: ended by QuietWindow::UnsettledHorizonMs
  int64_t owed_quiet_ms_ = 0;       // > 0: a script's run ended this long quiet with effects owed
  // Settled's last read of the Redis effect ledger, as a count of trace
  // lines that may have changed it (all but ledger_neutral_lines_).
  int64_t ledger_read_at_line_ = -1;
  int64_t ledger_neutral_lines_ = 0;  // lines of steps that cannot change the ledger (LeavesTheLedgerAlone)
  // A probe's linger (RunConfig::probe): it ends at this time or step (-1: not settled yet).
  int64_t linger_until_ms_ = -1;
  // Until then the replica acknowledges nothing (AnswerLagging); -1: it
  // does not lag. A failover or a server restart ends the lag.
  int64_t replica_lags_until_ms_ = -1;
  int64_t linger_until_step_ = -1;
  int64_t probed_key_expiry_ms_ = 0;  // the longest TTL a probe read after a script's EVAL
  size_t next_scheduled_ = 0;
  size_t next_pick_ = 0;
  StreamId last_id_;
  int64_t protocol_rtt_ = 0;
  int64_t business_requests_ = 0;  // RunResult::business_requests
  int64_t harness_rtt_ = 0;
  std::vector<std::string> picks_;
  std::vector<std::string> notes_;
  // Per-request scratch, reused so that a step allocates nothing for them.
  std::vector<std::string_view> views_;
  std::string request_text_;
  std::string reply_text_;
  std::vector<Actor*> runnable_;  // scratch for Run's pick, reused every step
  // A script's timers, read off what it does (sim/command_timers.h): the
  // longest claim threshold, key expiry, sleep or park seen so far.
  ScriptTimers script_timers_;
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

}  // namespace xackly::run_internal
