// The one result model every report format is rendered from. `run`,
// `replay`, `check` and `merge` fill it; text, Markdown, HTML, JUnit and JSON
// only present it. No renderer computes anything another format lacks:
// shared derivations (the counterexample story, coverage gaps) live here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/actor_name.h"
#include "sim/faults.h"
#include "sim/oracle.h"
#include "sim/trace.h"
#include "sim/verdict.h"

namespace xackly::report {

inline constexpr int kSchemaVersion = 2;  // 2: "search" (SearchSettings)

// One simulated case: a single run, a replay, or a check's minimal counterexample.
struct CaseReport {
  std::string protocol;          // catalog or scenario protocol name
  std::string scenario_file;     // the scenario it came from, if any
  uint64_t seed = 0;
  int producers = 1;
  int workers = 0;
  int handlers = 1;              // handler lanes per worker process
  int events = 0;
  std::string persistence;       // "none", "rdb", "aof-always"
  std::string restart_naming;    // "same", "fresh"
  Expectation expected;
  std::string observed;          // "ok", "duplicate", "duplicate+lost"
  bool matched = false;
  std::vector<Violation> violations;
  std::string trace_hash;        // 16 hex digits
  int64_t steps = 0;
  int64_t virtual_ms = 0;
  // The faults that fired, in order: the plan that replays the run. A fault
  // another one brought about (a replica-lag's failover) is not in it; the
  // coverage counts it, and the trace shows it.
  std::vector<FaultSpec> fired;
  FaultCoverage coverage;
  std::vector<TraceLine> trace;  // may be empty when the trace was not kept
  // Per-event history of every event named in a violation (sim/oracle.h).
  std::map<std::string, std::vector<HistoryItem>> histories;
  // The worker slots of further consumer groups (RunConfig::groups) and
  // their group's name ("w3" -> "search-indexer"); empty with one group.
  std::map<std::string, std::string> worker_groups;
  std::string replay_file;       // path of the written replay file, if any
  std::string replay_command;    // the one command that reproduces this case
};

// One protocol (or scenario) under `check`; `run`/`replay` produce one with
// cases_run == 1.
struct CheckReport {
  std::string name;              // protocol or scenario name
  std::string description;
  std::string fault_model;       // FaultModel::ToString()
  Expectation expected;
  std::string observed;          // observed verdict class over all cases
  bool matched = false;
  // One shard of several (`check --shard`) met no case that decides this
  // check: a broken protocol's violation may lie in another shard's cases.
  // Neither matched nor a mismatch; `xackly merge` decides. Also a check
  // that found nothing while some of its cases were not judged
  // (cases_unjudged): they may hold it.
  bool undecided = false;
  int cases_run = 0;
  int cases_failed = 0;          // cases whose verdict differed from ok
  // Generated cases a harness limit stopped (the step guard): not judged,
  // not in cases_run. Without a hit, the check is incomplete (exit 3).
  int cases_unjudged = 0;
  // Of those, the cases whose violation is not what the check looks for (a
  // broken protocol's other violation), by verdict class. With a hit they
  // are not shrunk (the counterexample is the hit); without one, the
  // counterexample is the first of them.
  std::map<std::string, int> other_violations;
  // The minimal counterexample after shrinking, when a case violated.
  std::optional<CaseReport> counterexample;
  std::string counterexample_size;  // e.g. "1 event, 1 worker, 1 fault, 9 steps"
  int shrink_steps = 0;          // accepted shrinks
  // Shrinking stopped at its bound (--max-shrinks) with smaller cases left
  // untried: the counterexample may not be minimal.
  bool shrink_cut = false;
  // Index of the generated case that first showed what the check looks for
  // (-1: none). Shards of one check merge to the lowest one.
  int first_hit_case = -1;
  // Fault sites enabled by the model, with how often each fired over all cases.
  std::map<std::string, int> fired_totals;
  std::vector<std::string> never_fired;  // enabled sites that never fired
  // Coverage before green: cases the search drew past cases_run's first
  // --cases, aimed at sites that had not fired; and the gaps it ended with
  // (sites the model enables and some case reached in its fault phase, and
  // scheduled kinds, that never fired). A check that matched with gaps
  // passes only when the user allowed gaps (--allow-gaps).
  int cases_for_coverage = 0;
  std::vector<std::string> coverage_gaps;
  bool gaps_allowed = false;
  // A single run (run, replay, explain) of an explicit plan ([schedule]
  // faults): the planned faults that never fired, each with why ("w1
  // reached after-effect only 1 time while faults could fire"). A green run
  // with any of them does not pass (GreenWithUnfiredPlan).
  struct UnfiredFault {
    std::string fault;  // as the plan names it: "crash w1 after-effect #5"
    std::string why;
    bool operator==(const UnfiredFault&) const = default;
  };
  std::vector<UnfiredFault> unfired_planned;
  // A single run (run, replay, explain: SingleRunCheck): its case is the run
  // itself, shown whatever its verdict, not a search's shrunk counterexample.
  bool single_run = false;
  double seconds = 0;
};

// What a `check` searched with, as its command line resolved it: shards
// merge only when these are the same (their cases are then the same cases).
struct SearchSettings {
  int cases = 0;
  int max_workers = 0;
  int max_events = 0;
  int max_faults = 0;
  bool fixed_workload = false;
  bool swarm = true;
  bool operator==(const SearchSettings&) const = default;
  // The first setting in which `other` differs, as its flag and both
  // values ("--cases 100 / 50"); "" when none does.
  std::string DifferenceFrom(const SearchSettings& other) const;
};

struct Report {
  int schema = kSchemaVersion;
  std::string tool_version;      // xackly version
  std::string command;           // "run", "check", "replay", "merge"
  std::string command_line;      // as typed (for the reader, not parsed)
  uint64_t seed = 0;
  std::string server_version;    // "redis 7.0.15"
  std::string options;           // resolved options, one line
  std::vector<CheckReport> checks;
  bool all_matched = false;      // every check passed (matched, or undecided in a shard)
  std::string shard;             // "2/3" when the run was one shard of several
  SearchSettings search;         // check and merge: what the search ran with (JSON null: none ran)
};

// --- Shared derivations ---------------------------------------------------
// Every renderer presents these and computes nothing of its own on top.

// The counterexample story (reports/story.cc): a short numbered narrative of
// what happened to the violating events, built from the case's histories and
// trace (never hand-written per protocol). Each line is one sentence without
// its number. At most kMaxStorySentences lines; a "…" line marks where the
// middle was cut. Empty when the case has no violation.
inline constexpr size_t kMaxStorySentences = 15;
std::vector<std::string> Story(const CaseReport& c);

// The same sentences with what each one is, for renderers that mark them.
struct StorySentence {
  enum class Kind : uint8_t { kBeat, kVerdict, kCut };  // kVerdict: it ends on a violation
  std::string text;
  Kind kind = Kind::kBeat;
};
std::vector<StorySentence> StorySentences(const CaseReport& c);

// The trace lines on the path of the violating events, ascending and unique:
// every line a history item of a violating event points to, every line whose
// request or reply names one of those events or its stream IDs (as a whole
// token, also inside a key: SET done:order:1), the restart lines of workers
// that crashed, stalled or lost a request or reply while holding one, and
// the DecisiveLines. Empty when the trace was not kept.
std::vector<int64_t> PathLines(const CaseReport& c);

// Steps that name no violating event yet decided what its holder did next:
// an injected fault, a dead connection, a write answered nil or with an
// error (SET ... NX -> nil: the key was there, so the branch skipped), a
// failed SQL statement or a ROLLBACK, a business call that did not succeed.
// Looked for among the holder's own steps after each history item of the
// event, up to the event's next item (or the holder's next start), at most
// kDecisiveWindowLines lines on. Ascending and unique.
inline constexpr int64_t kDecisiveWindowLines = 64;
// A line's request without the channel word of a business request ("sql
// COMMIT" -> "COMMIT", also on the fault line of a lost one; "ext apply
// order:1" -> "apply order:1"); a Redis request as it is.
std::string_view BusinessRequest(const TraceLine& t);
std::vector<int64_t> DecisiveLines(const CaseReport& c);
// Whether DecisiveLines takes `t` when it is the holder's: one of the steps
// above, or an SQL statement that waited at least a second for another
// worker's transaction (WaitedForATransaction).
bool IsDecisive(const TraceLine& t);
// An SQL statement that waited at least a second for another worker's open
// transaction (TraceLine::waited_for; the store runs one at a time).
bool WaitedForATransaction(const TraceLine& t);

// The violating path as every format shows it: PathLines with each run of
// consecutive identical steps (same actor, kind, request and reply: a poll
// that keeps finding nothing) as one row. `line` is the run's first trace
// line, `last` its last, `repeats` how many followed the first.
struct PathRow {
  int64_t line = 0;
  int64_t last = 0;
  int64_t repeats = 0;
};
std::vector<PathRow> FoldedPath(const CaseReport& c);
// "" for a single step, else " … and 1 619 more identical to #3000 (1.6 s)".
std::string RepeatsText(const CaseReport& c, const PathRow& row);

// The descriptor of the fault kind a history item records (a crash, a
// deletion, a clock jump...), or nullptr for what the protocol did: the
// kind whose `history` is the item's kind, or for HistoryKind::kFault the
// kind the item's `site` names. Reports tell and draw faults from it.
const FaultKindInfo* FaultOf(const HistoryItem& item);

// The slot an actor incarnation shares with its others ("w1" for "w1.2").
inline std::string_view Slot(std::string_view actor) { return DescribeActor(actor).slot; }

// What every format calls a check's case: "run" for a single run, else
// "minimal counterexample".
const char* CaseTitle(const CheckReport& check);
// The heading of the verdict table's case column: "run" when every check of
// `report` is a single run, else "minimal counterexample".
const char* CaseColumnTitle(const Report& report);
// Where a check's coverage counts come from: "in this run", or "over the 300
// cases searched" (", not in the counterexample" when it has one).
std::string CoverageScope(const CheckReport& check);

// One fault site of a check's coverage.
struct CoverageRow {
  std::string site;          // "crash@after-effect", "xdel", ...
  int fired = 0;             // over all cases of the check
  bool never_fired = false;  // enabled, but never fired: a gap in the search
};
// The check's coverage by site name: every site in fired_totals and
// never_fired. When both are empty, the counterexample's own coverage
// (not a single run's: its counts are already its case's).
std::vector<CoverageRow> CoverageRows(const CheckReport& check);

// "300 run, 4 violated", and ", 1 stopped by the harness limit (not
// judged)" when a case was: what every format says about a check's cases.
std::string CaseCountsText(const CheckReport& check);

// "planned fault never fired: 'crash w1 after-effect #5': w1 reached
// after-effect only 1 time while faults could fire": what every format says
// of each of check.unfired_planned, in order.
std::vector<std::string> UnfiredPlannedLines(const CheckReport& check);

// Why a check that matched does not pass, one line each: its coverage gaps
// ("fault site that never fired although a case reached it: crash@after-ack")
// unless allowed, and a green run's unfired planned faults. Empty when it
// passes or did not match.
std::vector<std::string> GapLines(const CheckReport& check);

// "1 worker", or "2 workers x 3 lanes" when its processes run lanes.
std::string WorkersText(int64_t workers, int handlers);
inline std::string WorkersText(const CaseReport& c) { return WorkersText(c.workers, c.handlers); }

// " (after 14 shrinks)", and that shrinking was cut short when it was:
// what every format appends to a counterexample's size.
std::string ShrinkNote(const CheckReport& check);

// A run that matched an expected ok while a fault its plan named never
// fired: it is no evidence about that fault (`run` exits 4, as `check` does
// for coverage gaps). A matched violation stands whatever else the plan
// named.
inline bool GreenWithUnfiredPlan(const CheckReport& check) {
  return check.matched && check.observed == "ok" && !check.unfired_planned.empty();
}

// A check passes when it matched its expectation (with no coverage gap, or
// gaps allowed; and, a green run, with every planned fault fired) or is
// undecided in a shard.
inline bool Passed(const CheckReport& check) {
  return (check.matched && (check.coverage_gaps.empty() || check.gaps_allowed) && !GreenWithUnfiredPlan(check)) ||
         check.undecided;
}
// A check that matched but left coverage gaps it was not allowed.
inline bool FailedOnlyByGaps(const CheckReport& check) { return check.matched && !Passed(check); }

// Why an undecided check is: "in this shard: merge the shards to decide",
// or that cases the harness could not judge may hold what it looks for.
const char* UndecidedWhy(const CheckReport& check);

// A check's result in one word: "matched", "undecided" or "MISMATCH"
// (never "ok", which is a verdict: "observed ok").
const char* ResultWord(const CheckReport& check);

// A check gets a detail section in every format when it did not pass or has
// a counterexample.
bool NeedsDetail(const CheckReport& check);

// A server matrix (`check --server A --server B ...`): the same checks, with
// the same seeds and cases, on each server.
struct ServerResult {
  std::string label;  // "redis-7.0.15": its subdirectory of --out
  std::string dir;    // where its reports and replay files are
  Report report;      // its check (report.server_version names the server)
  int exit_code = 0;  // what `check` on that server alone would exit with
};
// One check across the servers, in the first server's check order.
struct MatrixRow {
  std::string name;
  std::string expected;
  // Per server: the observed verdict and the causes of its counterexample's
  // violations, sorted ("duplicate [crash:after-effect]"; "ok"); "-" when
  // that server has no such check.
  std::vector<std::string> verdicts;
  std::vector<bool> passed;  // per server: Passed() (false without the check)
  // Per server, what its cell adds to the verdict: "" (decided and
  // passed), "UNDECIDED" (its cases could not decide), "GAPS" (matched,
  // with coverage gaps it was not allowed) or "MISMATCH" (also without
  // the check).
  std::vector<std::string> marks;
  bool differs = false;      // the verdicts are not all the same
};
std::vector<MatrixRow> MatrixRows(const std::vector<ServerResult>& servers);

// "2 of 3 checks matched their expectation" (singular for one).
std::string Summary(const Report& report);

// A duration for people: "7 ms", "2.5 s", "30 s", "12 min".
// REQUIRES: ms >= 0
std::string FormatDuration(int64_t ms);

// "1 case", "3 cases", "0 workers": `n` and `noun`, plural with an "s"
// unless n is 1. Every format counts with it.
std::string Count(int64_t n, const std::string& noun);

}  // namespace xackly::report
