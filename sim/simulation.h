// One deterministic run of a consumer protocol against a real server.
//
// A run is a pure function of (RunConfig, server version): a seeded
// scheduler picks, step by step, which runnable actor (producer, worker,
// janitor) executes its next request; virtual time moves only when the
// scheduler moves it and is written to the server's clock before every
// command. The run has two phases (TigerBeetle's VOPR has the same shape):
//   fault phase  faults fire per the plan while producers send every event;
//   drain phase  faults off; crashed workers restart; recovery runs until
//                quiescence: settled, nothing left that could run, or no
//                progress in virtual time for the quiet window (longer than
//                the protocol's longest timer). When every actor waits,
//                virtual time jumps to the next timer. The step guard
//                (timing.max_steps) is a harness limit: reaching it fails
//                the run (a Status), it is never a protocol verdict.
// Then the oracle reads the final state and judges.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/command_timers.h"
#include "sim/faults.h"
#include "sim/limits.h"
#include "sim/oracle.h"
#include "sim/protocol.h"
#include "sim/server.h"
#include "sim/trace.h"
#include "sim/verdict.h"
#include "sim/worker.h"

namespace xackly {

// The server clock at virtual time 0 of every run (Unix ms, 2023-11-14).
inline constexpr int64_t kEpochMs = 1'700'000'000'000;

// A consumer group on the run's stream besides the run's own (WorldNames::
// group, "workers"), with workers of its own that run `function` of the
// protocol script (a fan-out: an orders group and a search indexer's
// group). Its exactly-once is judged on its own, per (group, event): its
// workers' effects count for it alone, its PEL, claims and acks are its
// own, and a violation names it (Violation::group).
struct ConsumerGroupSpec {
  std::string name;                 // the group's name in Redis (w.group of its workers)
  std::string function = "consumer";  // the script function each of its workers runs
  int workers = 1;
  bool operator==(const ConsumerGroupSpec&) const = default;
};

struct RunConfig {
  ProtocolDef protocol;
  Expectation expected;          // usually protocol.expected
  uint64_t seed = 1;
  int producers = 1;
  int workers = 3;               // the run's own group's workers (w1..wN)
  // Further groups on the stream (protocol scripts only). Their workers'
  // slots follow the run's group's: w(N+1).. in the order listed.
  std::vector<ConsumerGroupSpec> groups;
  // Handler lanes per worker process (protocol scripts only; every group's
  // workers): each lane runs the worker's function with its own connection
  // and memory, under the process's consumer name, as a library's pool of
  // handler goroutines or tasks does. A crash or exit of one lane is the
  // whole process's: every lane goes down and the replacement starts them
  // all. A lost request or reply times out only the lane that sent it.
  int handlers = 1;
  int events = 10;
  RestartNaming naming = RestartNaming::kSame;
  Persistence persistence = Persistence::kNone;  // must match the server's
  // Replicas following the primary (0 or 1): with one, the run's server is
  // a primary and a replica the harness links (harness/replicated_server.h),
  // WAIT is answered truthfully, and `failover` faults can promote the
  // replica (a default kind then). REQUIRES: server->replicas() == replicas
  int replicas = 0;
  // With replicas: whether the built-in producer waits (WAIT <replicas> 0)
  // until its XADD reached every replica before it moves on (a producer that
  // acknowledges its caller only then). false: it moves on at the XADD's
  // reply, so a failover can drop an event the producer acknowledged.
  bool producer_waits = true;
  Timing timing;
  FaultModel faults;
  // Explicit fault plan; when absent, the plan is drawn from `faults` rates.
  std::optional<std::vector<FaultSpec>> fault_schedule;
  // Explicit scheduling choices (actor slots, one per step); when empty or
  // exhausted, choices come from the seed.
  std::vector<std::string> picks;
  bool keep_trace = false;       // keep trace lines (else only the hash)
  // A probe run (check's WithVisitedSites, for a protocol whose fault sites
  // and timers are known only once it runs): after it first settles it
  // goes on, faults off, for kProbeLingerMs of virtual time or
  // kProbeLingerSteps more steps, whichever ends first, so that periodic
  // code (a claim loop that first runs 3 s in) shows its sites and timers;
  // and after each EVAL/EVALSHA/FCALL of a script it reads the TTLs of the
  // keys the call names (harness reads, no trace line) into
  // RunResult::script_timers.key_expiry_ms, so an expiry set inside the
  // script's own Lua sizes the search too. Not for runs that are judged.
  bool probe = false;

  // A config with the protocol's own defaults (naming, persistence, faults,
  // expectation).
  static RunConfig For(const ProtocolDef& protocol);

  // Worker slots of every group: workers plus each group's workers.
  int TotalWorkers() const;
  // The group of worker slot `number` (1-based): 0 for the run's own group,
  // k for groups[k - 1]. A number past every group's slots is 0.
  int GroupOfWorker(int number) const;
};

// The protocol's fault model (protocol.faults) resolved to the sites the
// protocol visits (CrashPointsOf, LostSitesOf): empty site lists become every
// visited site, listed sites it never visits are dropped, and a point kind
// left with no site is disabled. A protocol script's lists stay as they are
// (its sites are known only once it runs). RunConfig::For's fault model.
FaultModel ReachableFaultModel(const ProtocolDef& protocol);
// The protocol's fault model with only the listed sites its steps visit
// (a point kind left with none disabled); empty lists stay empty. For a
// protocol whose steps say what it does (not a script or C++ handler).
FaultModel WithoutUnvisitedSites(const ProtocolDef& protocol);

// Validates everything a user can get wrong; errors name the field.
Status ValidateRunConfig(const RunConfig& config);

// Calls visit(path, value, min, max) for every bounded number of `config`
// (RunConfig or const RunConfig), where `value` is a reference to the field
// (int or int64_t) and min..max its range (sim/limits.h). `path` is the
// field's path in a scenario file ("timing.step_ms"). ValidateRunConfig
// refuses a value outside its range with a message that starts with the
// path; tests walk the same list, so a field added here is tested unedited.
template <typename Config, typename Visit>
void ForEachNumberField(Config& config, Visit&& visit) {
  auto& t = config.timing;
  auto& pr = config.protocol;
  auto& f = config.faults;
  visit("timing.step_ms", t.step_ms, 1, kMaxDurationMs);
  visit("timing.effect_ms", t.effect_ms, 0, kMaxDurationMs);
  visit("timing.effect_spread_ms", t.effect_spread_ms, 0, kMaxDurationMs);
  visit("timing.produce_every_ms", t.produce_every_ms, 0, kMaxDurationMs);
  visit("timing.produce_burst", t.produce_burst, 1, kMaxCount);
  visit("timing.restart_delay_ms", t.restart_delay_ms, 0, kMaxDurationMs);
  visit("timing.reconnect_ms", t.reconnect_ms, 0, kMaxDurationMs);
  visit("timing.fault_phase_ms", t.fault_phase_ms, 0, kMaxDurationMs);
  visit("timing.quiet_window_ms", t.quiet_window_ms, 0, kMaxDurationMs);
  visit("timing.max_steps", t.max_steps, 0, kMaxSteps);  // 0: derived (DefaultMaxSteps)
  visit("protocol.dedupe_ttl_ms", pr.dedupe_ttl_ms, 0, kMaxDurationMs);
  visit("protocol.fault_phase_ms", pr.fault_phase_ms, 0, kMaxDurationMs);
  visit("protocol.loop.read_count", pr.loop.read_count, 1, kMaxCount);
  visit("protocol.loop.claim_min_idle_ms", pr.loop.claim_min_idle_ms, 0, kMaxDurationMs);
  visit("protocol.loop.claim_count", pr.loop.claim_count, 1, kMaxCount);
  visit("protocol.loop.claim_every_ms", pr.loop.claim_every_ms, 1, kMaxDurationMs);
  visit("protocol.loop.block_ms", pr.loop.block_ms, 1, kMaxDurationMs);
  visit("protocol.loop.dead_letter_after", pr.loop.dead_letter_after, 0, kMaxCount);
  visit("protocol.janitor.trim_maxlen", pr.janitor.trim_maxlen, 0, kMaxCount);
  visit("protocol.janitor.consumer_idle_ms", pr.janitor.consumer_idle_ms, 0, kMaxDurationMs);
  visit("protocol.janitor.every_ms", pr.janitor.every_ms, 1, kMaxDurationMs);
  visit("faults.stall_ms", f.stall_ms, 1, kMaxDurationMs);
  visit("faults.scheduled_count", f.scheduled_count, 0, kMaxCount);
  visit("faults.clock_jump_ms", f.clock_jump_ms, 1, kMaxDurationMs);
  visit("faults.store_outage_ms", f.store_outage_ms, 1, kMaxDurationMs);
  visit("faults.poison_count", f.poison_count, 0, kMaxCount);
}
// The part of it about config.groups: errors start "groups.<field>" (or
// "groups:"); whether each group's function exists is checked only once
// the script is loaded (config.protocol.script).
Status ValidateGroups(const RunConfig& config);

// When the fault phase ends (virtual ms after the start): the timing's own
// fault_phase_ms, else as long as producing `events` takes, at least 2 s.
int64_t FaultPhaseEndMs(const Timing& timing, int events, int producers);

// The shortest silence after which a protocol script's run may end with
// something still pending (and so be judged `stuck` or `pel-leak`), when
// timing.quiet_window_ms does not set the window. A script's timers are
// its own code: xackly sees those its commands name (claim thresholds,
// expiries, blocks, sleeps) but not one kept in a variable and compared
// with w:now() (a batch flushed every 5 minutes), so a liveness verdict on
// a script waits out an hour of virtual silence. Longer timers: declare
// them ([protocol.loop], docs/scripts.md) or set timing.quiet_window_ms.
inline constexpr int64_t kScriptQuietFloorMs = 3'600'000;

// A run that keeps acting after its fault phase without ever settling (a
// retry loop that never ends) is judged as it stands this long after the
// faults stopped (or ten quiet windows, if longer): its duplicates are
// real, and what is still pending is `stuck`.
inline constexpr int64_t kUnsettledHorizonMs = 86'400'000;

// In a protocol script's run that has been quiet past the window its timers
// give, an idle wait lasts at least the silence so far divided by this
// (Simulation::IdleWaitMs): the floor above is then a few hundred idle
// rounds per actor, not one per millisecond.
inline constexpr int64_t kIdleStretchDivisor = 100;

// How long a probe run (RunConfig::probe) goes on after it settles.
inline constexpr int64_t kProbeLingerMs = 3'600'000;
inline constexpr int64_t kProbeLingerSteps = 20'000;

// The step guard when timing.max_steps is 0: far above what any healthy run
// of `events` events needs (a few steps per event, plus idle polls, which
// are bounded by the quiet window in virtual time, not by steps).
int64_t DefaultMaxSteps(int events);

struct RunResult {
  std::vector<Violation> violations;
  std::string observed;          // ObservedClass(violations)
  bool matched = false;          // Matches(expected, violations)
  uint64_t trace_hash = 0;
  int64_t steps = 0;             // actor steps executed
  int64_t trace_lines = 0;
  int64_t virtual_ms = 0;        // virtual time at the end
  int64_t protocol_round_trips = 0;  // Redis requests the actors sent
  int64_t harness_round_trips = 0;   // setup, fault injection, oracle reads
  // Requests the actors sent to the SQL store or the external service (a
  // real consumer's committed effects, which are neither, not counted).
  int64_t business_requests = 0;
  std::vector<FaultSpec> fired;  // the explicit plan that replays this run
  // An explicit plan's (config.fault_schedule) faults that never fired,
  // with why (FaultPlan::UnfiredPlanned); empty for a drawn plan.
  std::vector<FaultPlan::Unfired> unfired_planned;
  FaultCoverage coverage;
  // Every request site the actors visited, with who sent it.
  std::map<std::string, RequestSenders, std::less<>> request_senders;
  std::vector<std::string> picks;      // slots picked, one per step (when keep_trace)
  std::vector<TraceLine> trace;        // when keep_trace
  // History of every event named in a violation (for stories and timelines).
  std::map<std::string, std::vector<HistoryItem>> histories;
  // History of every poison event that fired: what the protocol does with
  // an effect that keeps failing (check's probe reads it).
  std::map<std::string, std::vector<HistoryItem>> poison_histories;
  std::map<std::string, int> effect_counts;
  std::vector<std::string> notes;      // oracle self-check findings, replay divergence...
  ScriptTimers script_timers;          // a protocol script's timers, as it used them

  std::string TraceHashHex() const { return Trace::HashHex(trace_hash); }
};

// Runs one case. Resets `server` first (FLUSHALL, clock to kEpochMs). Returns
// a non-ok Status only for harness failures (the server died unexpectedly, a
// connection could not be made, the step guard was reached: code
// kHarnessLimit, a message that starts "harness limit:" and names
// timing.max_steps); protocol failures are
// verdicts.
// When the run fails and `trace_at_failure` is given, it receives the
// trace lines up to the stop (config.keep_trace; a step-guard stop ends
// with a "step guard" note), so a run cut short can still be inspected.
// A config that names a protocol script it has not loaded
// (protocol.script_path without protocol.script, as ParseScenario leaves
// it) is kInvalidArgument.
// REQUIRES: ValidateRunConfig(config).ok(); server->persistence() == config.persistence
Result<RunResult> RunSimulation(const RunConfig& config, ServerControl* server,
                                std::vector<TraceLine>* trace_at_failure = nullptr);

}  // namespace xackly
