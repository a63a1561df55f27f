// The RapidCheck-typed half of harness/check.h: the case generator. Not
// installed (CMakeLists.txt excludes it), so that RapidCheck stays a private
// dependency of the harness library; the CLI and xackly's own tests use it.
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "harness/check.h"

namespace xackly {

// Cases for `base`: faults drawn from base.faults (kinds, crash points, lost
// sites, targets), scheduled faults inside the fault phase.
// A script's timers as `seen` by its probes size the ranges (SwarmRangesFor).
rc::Gen<GeneratedCase> GenCase(const RunConfig& base, const CaseBounds& bounds, const ScriptTimers& seen = {});
// The shrinkable case number `index` of a check seeded with `seed`, at `size`.
rc::Shrinkable<GeneratedCase> NthCase(const rc::Gen<GeneratedCase>& gen, uint64_t seed,
                                      int index, int size);

}  // namespace xackly
