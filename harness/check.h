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
// Case i is generated from (seed, i) alone, so any subset of cases (a
// shard, a parallel worker) generates exactly the same cases.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "harness/case_pool.h"
#include "sim/simulation.h"

namespace xackly {

// Upper bounds of generated cases.
struct CaseBounds {
  int max_workers = 3;
  int max_events = 8;
  int max_faults = 4;
};

// One generated case: applied on top of a base RunConfig.
struct GeneratedCase {
  int workers = 1;
  int events = 1;
  uint64_t seed = 0;
  std::vector<FaultSpec> faults;

  // "2 workers, 3 events, seed 17, faults: crash w1 after-effect #1"
  std::string ToString() const;
  // "1 event, 1 worker, 1 fault"
  std::string SizeText() const;
  bool operator==(const GeneratedCase&) const = default;
};
void showValue(const GeneratedCase& c, std::ostream& os);  // for RapidCheck's output

// Cases for `base`: faults drawn from base.faults (kinds, crash points, lost
// sites, targets), scheduled faults inside the fault phase.
rc::Gen<GeneratedCase> GenCase(const RunConfig& base, const CaseBounds& bounds);
// The shrinkable case number `index` of a check seeded with `seed`, at `size`.
rc::Shrinkable<GeneratedCase> NthCase(const rc::Gen<GeneratedCase>& gen, uint64_t seed,
                                      int index, int size);
// `base` with the case's workers, events, seed and faults (worker slots and
// event numbers folded into the case's range).
RunConfig ApplyCase(const RunConfig& base, const GeneratedCase& c);

// True when `result` shows what a check of a protocol expected to behave as
// `expected` looks for (see the top of this file).
bool IsHit(const Expectation& expected, const RunResult& result);

struct CheckProgress {
  int cases_done = 0;
  int hits = 0;
  bool shrinking = false;
  int shrink_steps = 0;
  int shrink_runs = 0;
};

struct CheckOptions {
  int cases = 100;
  uint64_t seed = 1;
  CaseBounds bounds;
  int max_shrink_runs = 1000;  // bound on shrink evaluations
  // Case indexes to run: those with index % shard_count == shard_index.
  int shard_index = 0;
  int shard_count = 1;
  std::function<void(const CheckProgress&)> on_progress;  // may be empty
};

// Parses "I/N" (--shard): sets *index to I - 1 (0-based) and *count to N.
// Returns false (and sets nothing) unless 1 <= I <= N.
bool ParseShard(const std::string& text, int* index, int* count);

// The case indexes this shard runs, in order: i in [0, cases) with
// i % shard_count == shard_index.
std::vector<int> ShardCaseIndexes(const CheckOptions& options);

struct CheckOutcome {
  int cases_run = 0;
  int cases_with_violations = 0;
  std::map<std::string, int> observed_classes;  // over the search cases
  FaultCoverage coverage;                       // fired and enabled sites, over the search cases
  std::optional<int> hit_index;                 // the first case that showed what was looked for
  GeneratedCase minimal;                        // after shrinking
  RunConfig minimal_config;                     // base + minimal
  RunResult minimal_result;                     // rerun with its trace kept
  int shrink_steps = 0;                         // accepted shrinks
  int shrink_runs = 0;                          // shrink candidates tried
  std::string observed;                         // verdict class the check observed
  bool matched = false;                         // observed equals the expectation
  double seconds = 0;

};

// Runs the check on `pool`'s threads. The outcome does not depend on the
// number of threads. Fails only on harness errors (a server that will not
// start or dies).
Result<CheckOutcome> RunCheck(const RunConfig& base, CasePool& pool, const CheckOptions& options);

}  // namespace xackly
