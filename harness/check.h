// Property-based checking of a consumer protocol: RapidCheck generates cases
// (worker and event counts, a schedule seed, an explicit fault plan drawn
// from the protocol's fault model), xackly runs each against the real
// server, and the first case that shows what is looked for is shrunk, with
// RapidCheck's shrink trees, to a minimal case that still shows it.
//
// What is looked for: for a protocol expected `ok`, any violation; for one
// expected to break (say `duplicate:crash`), a case with that violation.
// Finding the expected violation of a broken protocol is success; finding
// any violation of a correct one is failure.
//
// Case i is generated from (seed, i) alone (not from --cases), so any subset
// of cases (a shard, a parallel worker, a longer or shorter check) generates
// exactly the same cases. Case sizes follow CaseSize(i): small first, and
// every size band within the first five cases.
//
// Swarm search (Groce et al., "Swarm Testing", ISSTA 2012; TigerBeetle's
// VOPR swarm options): each case also draws the *environment* it runs in,
// within SwarmRanges derived from the protocol's own timers: effect
// duration, production rate (bursts or spread over the fault phase), restart
// delay, stall lengths, clock-jump sizes, outage lengths, and a subset of
// the enabled fault kinds. The protocol's own settings (claim window, block,
// TTLs, dead-letter threshold) are the user's design and never change. The
// fault phase of every case is long enough that at least two claim cycles,
// the dead-letter threshold and dedupe TTLs are reached with faults on.
//
// Determinism self-check (FoundationDB re-runs a share of its simulations):
// about one case in twenty (IsRecheckCase) runs twice; different trace
// hashes are a harness failure naming both.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/case_pool.h"
#include "harness/search_defaults.h"
#include "sim/command_timers.h"
#include "sim/simulation.h"

namespace xackly {

// Upper bounds of generated cases.
struct CaseBounds {
  int max_workers = kDefaultMaxWorkers;
  int max_events = kDefaultMaxEvents;
  int max_faults = kDefaultMaxFaults;
  bool fixed = false;   // every case has exactly max_workers and max_events
  bool swarm = true;    // draw the environment's timing and a subset of fault kinds
};

// The generation size (0..100) of case `index`: a ramp that restarts every
// five cases (0, 25, 50, 75, 100), so the first case is the smallest and
// every size band is reached by case 5. Depends on the index alone.
int CaseSize(int index);
// True for the ~5% of case indexes whose case a check runs twice and
// compares by trace hash (depends on seed and index alone).
bool IsRecheckCase(uint64_t seed, int index);
// The determinism self-check of one case that ran twice, `first` then
// `again` (each a result, or the harness limit that stopped it): ok when
// both traces hash the same, or both runs stopped at the harness limit
// (nothing to compare). Fails with kInternal when one run stopped at the
// harness limit and the other did not, or the trace hashes differ; the
// message starts "determinism self-check failed: " and names `which` (the
// case) and, for traces, both hashes.
// REQUIRES: every non-ok status is a harness limit (kHarnessLimit).
Status CompareRerun(const Result<RunResult>& first, const Result<RunResult>& again, const std::string& which);

// The environment timing a swarm case may draw, from the protocol's timers
// (all virtual ms). Each range is [min, max].
struct SwarmRanges {
  int64_t fault_phase_ms = 0;  // fixed: >= 2 claim cycles, the dead-letter threshold, the TTL
  int64_t effect_min_ms = 1, effect_max_ms = 10;  // the longest effect; each event's is shorter by a spread
  int64_t produce_every_min_ms = 1, produce_every_max_ms = 5;
  int64_t produce_burst_max = 1;  // events added back to back, 1..this
  int64_t restart_delay_min_ms = 100, restart_delay_max_ms = 5000;
  int64_t stall_min_ms = 1, stall_max_ms = 60000;
  int64_t clock_jump_min_ms = 1, clock_jump_max_ms = 120000;
  int64_t outage_min_ms = 100, outage_max_ms = 3000;

  // The [min, max] a fault's duration parameter is drawn from at `scale`
  // (FaultKindInfo::search). REQUIRES: scale != SearchScale::kModelValue
  std::pair<int64_t, int64_t> RangeOf(SearchScale scale) const;
};
// The ranges for `base`'s protocol and fault model, for cases of `bounds`.
// A built-in (catalog or inline) protocol declares its timers; a protocol
// script's are the ones `seen` in its probe runs (WithVisitedSites), or
// declared in the scenario where no command shows them (TimedProtocol).
SwarmRanges SwarmRangesFor(const RunConfig& base, const CaseBounds& bounds, const ScriptTimers& seen = {});
// "fault phase 70000 ms; effects 1..60000 ms, ..." (what `check` prints).
std::string SwarmRangesText(const SwarmRanges& ranges);

// The protocol whose timers the search sizes its ranges by: `base`'s own
// for a built-in protocol. For a protocol script (whose loop settings are
// otherwise unused): the claim threshold it used (XCLAIM/XAUTOCLAIM
// min-idle, XPENDING IDLE) or declared, claims and reads once per pass of
// its loop (paced by its sleeps and blocks), the key expiry as its dedupe
// TTL, and up to three redeliveries before a dead letter (a script's
// threshold is a number no command shows). A declared timer is one the
// scenario sets to other than the built-in default.
ProtocolDef TimedProtocol(const RunConfig& base, const ScriptTimers& seen);

// One generated case: applied on top of a base RunConfig.
struct GeneratedCase {
  int workers = 1;
  int events = 1;
  uint64_t seed = 0;
  std::vector<FaultSpec> faults;
  // The drawn environment (0: the base config's value).
  int64_t effect_ms = 0;
  int64_t effect_spread_ms = 0;  // at most the effect_ms in force (ApplyCase)
  int64_t produce_every_ms = 0;
  int64_t produce_burst = 0;
  int64_t restart_delay_ms = 0;
  int64_t fault_phase_ms = 0;

  // "2 workers, 3 events, seed 17, faults: crash w1 after-effect #1"
  std::string ToString() const;
  // "1 event, 1 worker, 1 fault"
  std::string SizeText() const;
  bool operator==(const GeneratedCase&) const = default;
};
void showValue(const GeneratedCase& c, std::ostream& os);  // for RapidCheck's output

// The case generator itself (RapidCheck-typed) is in harness/check_rc.h,
// which is not installed: RapidCheck is no public dependency of the harness.
// `base` with the case's workers, events, seed and faults (worker slots and
// event numbers folded into the case's range).
RunConfig ApplyCase(const RunConfig& base, const GeneratedCase& c);

// True when `result` shows what a check of a protocol expected to behave as
// `expected` looks for (see the top of this file).
bool IsHit(const Expectation& expected, const RunResult& result);

struct CheckProgress {
  int cases_done = 0;  // judged or stopped at a harness limit
  int hits = 0;
  int unjudged = 0;    // ... of them stopped at a harness limit (the step guard, a timeout)
  bool covering = false;  // drawing cases aimed at sites that have not fired (CheckOptions::coverage_cap)
  int gaps = 0;           // ... how many are left
  bool shrinking = false;
  int shrink_steps = 0;
  int shrink_runs = 0;
};

struct CheckOptions {
  int cases = kDefaultCases;
  uint64_t seed = kDefaultCheckSeed;
  CaseBounds bounds;
  int max_shrink_runs = kDefaultMaxShrinkRuns;  // bound on shrink evaluations
  // Coverage before green: when `cases` cases found nothing, the search
  // goes on with cases aimed at the reachable sites and kinds of its model
  // that have not fired yet (FaultCoverage::Gaps), until none is left or
  // this many cases ran in all (this shard's share of them); 0: the default,
  // kDefaultCoverageCapFactor x cases. A cap of `cases` turns the rule off.
  int coverage_cap = 0;
  // Case indexes to run: those with index % shard_count == shard_index.
  int shard_index = 0;
  int shard_count = 1;
  std::function<void(const CheckProgress&)> on_progress;  // may be empty
  // Called once, before the first case, with the ranges the search draws
  // from (after a script's probes); may be empty.
  // The fault model is the one the search draws from: for a protocol whose
  // sites are found by running it, with the probes' sites. `notes`: what
  // the probe runs noted (RunResult::notes, without repeats), for people.
  std::function<void(const SwarmRanges&, const FaultModel&, const std::vector<std::string>& notes)> on_ranges;
  // Called when a case fails in the harness (a harness limit, a server
  // failure), before RunCheck returns that failure: the case's whole config
  // and its index (-1: a smaller case tried while shrinking), so that the
  // caller can write it where `xackly replay` reruns it. May be empty.
  std::function<void(const RunConfig& failed, int case_index)> on_harness_failure;
};

// "3 events, 2 workers, 1 fault": the size of a case as reports show it.
// With handlers > 1 (RunConfig::handlers): "1 worker x 3 lanes".
std::string CaseSizeText(int64_t events, int64_t workers, int64_t faults, int handlers = 1);

// Fault sites the model enables by kind but the protocol can never visit
// ("crash@after-ack" for a protocol whose only XACK runs inside its EVAL):
// derived from its operations (CrashPointsOf, LostSitesOf). Never-fired
// sites are search gaps only when reachable. Empty for a protocol script
// (its sites are what it visits: WithVisitedSites).
std::vector<std::string> UnreachableSites(const RunConfig& config);

// A protocol script's point-fault sites are named by what it does
// (before-XACK, after-INSERT, after-effect, point:<name>) and its timers
// are constants inside it: two probe cases (fault-free, and drawn from the
// model's rates with `seed`) find every crash point and lost site the
// script visits and the timers it uses. When `given`'s model lists no
// sites, the returned config lists every visited crash point (sorted) and
// the visited ones among the default lost sites (XACK, XADD, COMMIT, EVAL;
// lost-* kinds are dropped when it visits none), so the search draws its
// faults there and coverage names them. Other protocols: `given`, no
// probes, no timers.
struct ProbedConfig {
  RunConfig config;
  ScriptTimers timers;  // the longest of each kind over both probes
  std::vector<std::string> notes;  // the probes' run notes, without repeats
  std::set<std::string> visited_crash_points;  // what the probes visited
  std::set<std::string> visited_requests;
};
Result<ProbedConfig> WithVisitedSites(const RunConfig& given, CasePool& pool, uint64_t seed);

// Parses "I/N" (--shard): sets *index to I - 1 (0-based) and *count to N.
// Returns false (and sets nothing) unless 1 <= I <= N.
bool ParseShard(const std::string& text, int* index, int* count);

// One shard of a check's cases, 0 <= index < count, and the environment
// variables it was read from (`--shard auto`).
struct ShardSpec {
  int index = 0;
  int count = 1;
  std::string source;  // "XACKLY_SHARD=2/3", "CI_NODE_INDEX=2, CI_NODE_TOTAL=3", ...
  // "I/N" with I = index + 1: what --shard takes and a shard's report records.
  std::string Text() const;
};

// The variables `--shard auto` reads, in the order it reads them.
inline constexpr char kShardEnv[] = "XACKLY_SHARD";                    // "I/N", 1-based
inline constexpr char kGitLabNodeIndexEnv[] = "CI_NODE_INDEX";         // GitLab `parallel: N`, 1..N
inline constexpr char kGitLabNodeTotalEnv[] = "CI_NODE_TOTAL";         // N
inline constexpr char kJobCompletionIndexEnv[] = "JOB_COMPLETION_INDEX";  // Kubernetes Indexed Job, 0..N-1
inline constexpr char kShardCountEnv[] = "XACKLY_SHARD_COUNT";         // N, set in the Job's env

// `check --shard auto`: the shard a CI job runs, from `getenv` (std::getenv,
// or a fake in tests). The first of these that is set decides:
//   XACKLY_SHARD=I/N                          any CI, or by hand; 1 <= I <= N
//   CI_NODE_INDEX and CI_NODE_TOTAL            GitLab's `parallel: N`; the index is 1-based
//   JOB_COMPLETION_INDEX and XACKLY_SHARD_COUNT  a Kubernetes Indexed Job; the index is
//       0-based, and the count is the Job's `completions`, which Kubernetes does
//       not export: the Job sets XACKLY_SHARD_COUNT to it
// A variable set to "" counts as unset. Fails with kInvalidArgument naming
// the variable and its value when a value is malformed or out of range,
// naming the missing one when only one of a pair is set, and naming every
// variable when none is set.
Result<ShardSpec> ShardFromEnvironment(const std::function<const char*(const char*)>& getenv);

// The case indexes this shard runs, in order: i in [0, cases) with
// i % shard_count == shard_index.
std::vector<int> ShardCaseIndexes(const CheckOptions& options);

struct CheckOutcome {
  int cases_run = 0;
  int cases_with_violations = 0;
  std::map<std::string, int> observed_classes;  // over the search cases
  FaultCoverage coverage;                       // fired and enabled sites, over the search cases
  std::optional<int> hit_index;                 // the first case that showed what was looked for
  // Cases with a violation that is not what was looked for (a broken
  // protocol's other violation), by verdict class, and the first of them.
  // Without a hit, that one is shrunk: every violation counted has a
  // counterexample, or (with a hit) is named here as not shrunk.
  std::map<std::string, int> other_violations;
  std::optional<int> other_index;
  std::optional<int> counterexample_index;      // the case shrunk into `minimal`: hit_index, else other_index
  GeneratedCase minimal;                        // after shrinking
  RunConfig minimal_config;                     // base + minimal
  RunResult minimal_result;                     // rerun with its trace kept
  int shrink_steps = 0;                         // accepted shrinks
  int shrink_runs = 0;                          // shrink candidates tried
  bool shrink_cut = false;                      // stopped at max_shrink_runs with smaller cases untried
  std::string observed;                         // verdict class the check observed (the counterexample's)
  bool matched = false;                         // observed equals the expectation
  int determinism_reruns = 0;                   // cases run twice, same trace hash
  // Search cases a harness limit stopped (Status::Code::kHarnessLimit: the
  // step guard): not judged, not counted in cases_run, and the search went
  // on without them. The first one, whole, so it can be written as a
  // replay file and rerun alone.
  int cases_unjudged = 0;
  // Unjudged cases without a hit may hold what the search looks for: the
  // check is not decided, and `matched` is false.
  bool Undecided() const { return cases_unjudged > 0 && !hit_index; }
  std::optional<int> unjudged_index;
  RunConfig unjudged_config;
  std::string unjudged_why;                     // its harness-limit message
  // The coverage rule (CheckOptions::coverage_cap): cases drawn past
  // `cases` at the sites and kinds that had not fired, and the gaps left
  // when the search ended (FaultCoverage::Gaps; none after a hit, whose
  // search stops at once).
  int cases_for_coverage = 0;
  std::vector<std::string> coverage_gaps;
  // Sites the model names (crash_points, lost_sites) of a protocol whose
  // sites are found by running it that no probe and no case visited: an
  // input error (a typo, or another protocol's spelling), never a green.
  struct UnvisitedSite {
    std::string field;                 // "faults.crash_points"
    std::string site;                  // "after-commit"
    std::vector<std::string> nearest;  // visited sites it may have meant ("after-COMMIT")
    std::vector<std::string> visited;  // every site of its family that was visited
  };
  std::vector<UnvisitedSite> unvisited_sites;
  // The model the cases drew from (FaultModel::ToString), with the sites
  // the probes found for a protocol whose sites are found by running it.
  std::string fault_model;
  double seconds = 0;
};

// Runs the check on `pool`'s threads. The search (cases 0..cases-1 of the
// shard) stops at the first case that shows what it looks for; when none
// does, the coverage rule draws more cases (CheckOptions::coverage_cap). The outcome does not depend on the
// number of threads. A case stopped by a harness limit is not judged and
// does not end the search (CheckOutcome::cases_unjudged); a smaller case
// stopped so while shrinking does not show. Fails only on other harness
// errors (a server that will not start or dies, or a determinism
// self-check whose two runs differ: the status names the case and both
// trace hashes).
Result<CheckOutcome> RunCheck(const RunConfig& base, CasePool& pool, const CheckOptions& options);

}  // namespace xackly
