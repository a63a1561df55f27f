// The defaults of a property check, in one place: `xackly check`'s flags
// (and their --help), CheckOptions and CaseBounds (harness/check.h) and
// the embedding API's PropertyOptions (harness/embed.h) all start from
// these.
#pragma once

#include <cstdint>

namespace xackly {

inline constexpr int kDefaultCases = 100;         // generated cases per check
inline constexpr uint64_t kDefaultCheckSeed = 1;  // the case generator's seed
inline constexpr int kDefaultMaxWorkers = 3;      // most workers in a generated case
inline constexpr int kDefaultMaxEvents = 8;       // most events in a generated case
inline constexpr int kDefaultMaxFaults = 4;       // most faults in a generated case
inline constexpr int kDefaultMaxShrinkRuns = 1000;  // bound on shrink evaluations
// The coverage rule's cap: a check that found nothing draws cases aimed at
// the sites that never fired until at most this many times --cases ran.
inline constexpr int kDefaultCoverageCapFactor = 10;

}  // namespace xackly
