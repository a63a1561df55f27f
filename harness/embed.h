// xackly from another project's test suite: the small API an installed
// xackly offers (find_package(xackly), target xackly::xackly_harness;
// examples/downstream/ is such a project, and the template to copy).
//
//   xackly::ProtocolDef p = ...;                 // your protocol; its handler is
//   p.cpp_handler = &MyHandler;                  // a C++ coroutine (below)
//   xackly::EmbedOptions o;
//   o.clock_library = ...;                       // $<TARGET_FILE:xackly::xackly_clock>
//   auto check = xackly::CheckProperty(xackly::RunConfig::For(p), {}, o);
//   ASSERT_TRUE(check.ok()) << check.status().ToString();
//   std::cout << check->Summary();               // what was searched, what fired
//   EXPECT_TRUE(check->matched) << xackly::FailureReport(*check);
//   // The failure report ends with a replay file. Saved as f.replay.toml:
//   auto again = xackly::ReplayCaseFile("f.replay.toml", p, o);
//   EXPECT_TRUE(again->hash_matched) << again->mismatch;
//
// Every call starts its own private redis-server(s) on Unix sockets and
// stops them before returning. Nothing here exposes RapidCheck: the property
// check uses it inside the library.
//
// --- Writing the handler ------------------------------------------------------
// ProtocolDef::cpp_handler, `Task<bool> H(Worker& w, const StreamEntry& e)`,
// handles one live entry; the loop around it is xackly's (ConsumerMain,
// sim/worker.h: own pending at start-up, XREADGROUP >, XAUTOCLAIM every
// loop.claim_every_ms, deleted entries, dead letters, batch acks, all as
// ProtocolDef::loop says). Every `co_await w.X(...)` is one request, a
// scheduling point, and where X has one, a named crash point right after it:
// Effect after-effect, Commit after-commit, Ack after-ack, MarkDone
// after-mark, CheckDone after-dedupe-check, RedisAtomic after-eval,
// DeadLetter after-dead-letter; XACK, COMMIT, EVAL and a Redis MarkDone's SET
// are also lost-request / lost-reply sites.
//   - The return value. Per-entry acks (loop.ack kPerEntry, the default):
//     ignored. The handler acks itself (`co_await w.Ack(e.id)`); an entry it
//     leaves without XACK, whatever it returns, stays pending in the group
//     until recovery delivers it again: its worker's own-pending read when it
//     restarts (loop.read_own_pending_at_start), or any worker's XAUTOCLAIM
//     once it has been idle loop.claim_min_idle_ms (loop.claim). Batch acks
//     (kBatch): `true` puts the entry in the batch's one XACK, `false` leaves
//     it pending.
//   - A transaction (w.Begin()) still open when the handler returns is
//     rolled back by the loop.
//   - A store outage (fault `store-outage`) fails every call to the SQL
//     store and the external service while it lasts (Begin, Commit, Effect
//     return false; MarkDone, CheckDone return Dedupe::kFailed); Redis calls
//     are unaffected. A transaction open when the outage starts is rolled
//     back at once (its dedupe row and SQL effect are gone), and that
//     worker's store calls keep failing, after the outage too, until it
//     begins a new transaction or rolls back: its Commit fails. A handler
//     that acks after a failed step loses the event.
//   - `co_return co_await w.OnDuplicate(e)` is the duplicate branch: it
//     rolls back an open transaction, then as ProtocolDef::on_duplicate says
//     XACKs the entry (kAck; with batch acks it returns true instead, so the
//     batch's XACK includes it) or leaves it pending (kSkip, returns false:
//     it is delivered again, and a pel-leak if nothing ever acks it).
//   - GCC 12 miscompiles a co_await inside an if/while/switch condition
//     (the coroutine silently ends, sim/task.h): bind the result to a local
//     first, `bool ran = co_await w.Effect(e); if (!ran) co_return false;`.
//   - Fault sites: a check finds the crash points and lost sites your handler
//     visits by running it (as it probes a protocol script), and draws its
//     faults there. `steps` does not decide them: it documents the protocol,
//     is what a replay file writes as its [protocol] steps (marked
//     `handler = "c++"`), and is the handler only when cpp_handler is null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/search_defaults.h"
#include "sim/simulation.h"

namespace xackly {

struct EmbedOptions {
  // The redis-server binary. Empty: $XACKLY_REDIS_SERVER, else PATH.
  std::string server_path;
  // libxackly_clock.so, installed in <prefix>/lib (in CMake:
  // $<TARGET_FILE:xackly::xackly_clock>). Empty: $XACKLY_CLOCK_LIB, else
  // next to the running executable (your test's, where it is not).
  std::string clock_library;
  // Threads (each with its own servers) a property check runs cases on.
  int threads = 1;
};

// One case as it ran: what ran, what it gave, and on which server.
struct CaseRun {
  RunConfig config;
  RunResult result;
  std::string server_version;  // "redis 7.0.15"
};

// Runs one case of `config` exactly as given (see RunSimulation: its fault
// model, or its fault_schedule) on a fresh private server. Fails only on
// harness errors (no server binary or clock library, a server that dies)
// and on a config ValidateRunConfig rejects.
Result<CaseRun> RunOneCase(const RunConfig& config, const EmbedOptions& options);

struct PropertyOptions {
  int cases = kDefaultCases;
  uint64_t seed = kDefaultCheckSeed;
  int max_workers = kDefaultMaxWorkers;
  int max_events = kDefaultMaxEvents;
  int max_faults = kDefaultMaxFaults;
  // No silent green: a base whose fault model has no kinds (RunConfig::For
  // of a ProtocolDef whose `faults` was never set) is checked under
  // DefaultFaultModel(base.protocol), what a correct protocol must survive;
  // a check that injects nothing only shows that the protocol works when
  // nothing fails. true: no kinds means no faults, and Summary() says so.
  bool empty_fault_model_injects_nothing = false;
  // Coverage before green (README): when `cases` cases found nothing, cases
  // aimed at the model's reachable sites that never fired are drawn, up to
  // this many cases in all (0: kDefaultCoverageCapFactor x cases; `cases`:
  // none). Gaps left at the cap are PropertyResult::coverage_gaps.
  int coverage_cap = 0;
};

struct PropertyResult {
  std::string protocol;   // base.protocol.name
  Expectation expected;   // base.expected
  uint64_t seed = 0;
  std::string server_version;  // "redis 7.0.15"
  int cases_run = 0;
  int cases_with_violations = 0;
  int cases_unjudged = 0;  // stopped by the harness limit (the step guard), not judged
  // The observed verdict class equals the expectation: for a protocol
  // expected `ok`, no case showed a violation; for a broken one, a case
  // showed the expected violation. Never with unjudged cases and no hit:
  // those cases may hold it.
  bool matched = false;
  std::string observed;   // "ok", "duplicate", "duplicate+lost"...
  // The fault model the cases drew their faults from (FaultModel::ToString:
  // "none" without kinds), and whether it is DefaultFaultModel because
  // base's had no kinds (PropertyOptions::empty_fault_model_injects_nothing).
  std::string fault_model;
  bool default_fault_model = false;
  // The environment ranges the cases drew from (SwarmRangesText: effect
  // durations, production rate, restart delays, stall, clock-jump and
  // outage lengths).
  std::string swarm_ranges;
  // Fault coverage over all cases: times each site fired
  // ("crash@after-effect" → 3), and the enabled sites no case fired (gaps
  // in the search).
  std::map<std::string, int> faults_fired;
  std::vector<std::string> never_fired;
  // Of cases_run, those the coverage rule drew, and the reachable sites
  // that still never fired at its cap: a green with gaps is evidence only
  // for the sites that fired (EvidenceComplete).
  int cases_for_coverage = 0;
  std::vector<std::string> coverage_gaps;
  bool EvidenceComplete() const { return coverage_gaps.empty(); }
  // Cases with a violation other than the one looked for (a broken
  // protocol's other violations), by verdict class.
  std::map<std::string, int> other_violations;
  int determinism_reruns = 0;  // cases run twice that gave the same trace hash
  // The case shrunk to a minimal one, with its trace kept: the first that
  // showed what was looked for, else the first with another violation.
  std::optional<CaseRun> counterexample;

  // One paragraph for a CI log: verdict, cases, server, fault model, swarm
  // ranges, faults fired and never fired, other violations, the
  // counterexample's size. Ends with a newline.
  std::string Summary() const;
};

// Generates `options.cases` cases from `base` (worker and event counts, a
// schedule seed, an environment drawn from the swarm ranges, faults drawn
// from the fault model), runs them, and shrinks the first hit. Fails only
// on harness errors (as RunOneCase; also two traces for one case in the
// determinism self-check) and on a base ValidateRunConfig rejects.
Result<PropertyResult> CheckProperty(const RunConfig& base, const PropertyOptions& options,
                                     const EmbedOptions& embed);

// The scenario file (TOML) that replays `run` exactly, with the trace hash
// it must reproduce and the server it was recorded on. A protocol that is
// not a catalog protocol unchanged is written inline, as its step list; one
// whose handler is your C++ code is marked `handler = "c++"`: replay that
// file with ReplayCaseFile, the xackly executable refuses it (exit 2).
std::string ReplayFile(const CaseRun& run);

// "" when `run` matched its expectation; otherwise what a failing test
// should print: the violations with their causes, the story of the first
// one, how to replay it (`xackly replay`, or ReplayCaseFile for a C++
// handler) and the replay file.
std::string FailureReport(const CaseRun& run);
// "" when `check` matched; otherwise its Summary() and the counterexample's
// FailureReport (or, without one, that no case showed the expected verdict).
std::string FailureReport(const PropertyResult& check);

struct ReplayOutcome {
  CaseRun run;                  // the file's case, run with your protocol
  std::string recorded_hash;    // the file's [schedule] trace_hash
  std::string recorded_server;  // the file's [schedule] server ("" when it names none)
  bool hash_matched = false;    // run.result reproduced recorded_hash
  // Your protocol's settings (steps, stores, loop, janitor: ProtocolText in
  // scenarios/scenario.h) equal the file's.
  bool protocol_as_recorded = false;
  // "" when hash_matched; else both hashes and why they may differ (your
  // protocol's settings, another server, or your handler's code changed).
  std::string mismatch;
};

// Replays a replay file (ReplayFile's text, as FailureReport prints it) with
// `protocol`, your protocol with its handler, and checks the trace hash. The
// file gives the case (seed, workload, timing, persistence, fault plan,
// picks, expectation); `protocol` runs as given. A hash that differs is a
// result (hash_matched false), not an error. Fails with kInvalidArgument
// when the file does not parse (the message names line and field), records
// no trace hash, is a protocol script's, names another protocol than
// `protocol.name`, or says `handler = "c++"` while `protocol` has no
// cpp_handler; else only on harness errors, as RunOneCase.
Result<ReplayOutcome> ReplayCase(std::string_view file_text, const ProtocolDef& protocol,
                                 const EmbedOptions& options);
// The same for the replay file at `path` (errors name it).
Result<ReplayOutcome> ReplayCaseFile(const std::string& path, const ProtocolDef& protocol,
                                     const EmbedOptions& options);

}  // namespace xackly
