// RapidCheck generators of scenarios, for the properties that the scenario
// file and the replay file keep a run exactly (scenario_roundtrip_test.cc,
// tests/harness/replay_roundtrip_test.cc).
//
// Values are drawn by walking the schema's own key descriptions
// (scenarios/schema.h), so a key added there is generated here unedited,
// over its whole range.
#pragma once

#include <rapidcheck.h>

#include "scenarios/scenario.h"
#include "sim/simulation.h"

namespace xackly::testing {

// A scenario within WriteScenario's round-trip contract (scenarios/
// scenario.h): a catalog protocol by reference, in its inline form, or
// inline with its options drawn (loop, janitor, policies, name and
// description; its steps and stores stay the catalog's); every run setting
// drawn over its valid range (seed, workload, restart naming, persistence,
// timing, the fault model with kinds and the sites the protocol visits,
// expectation); sometimes an explicit fault schedule of every fault class
// and picks naming only the run's actors; a trace hash and server
// sometimes; free text in names' stead where the format allows it. An
// inline protocol's own defaults (expected, naming, persistence, faults)
// are the run's. Always passes ValidateRunConfig and CheckScheduleFitsRun.
rc::Gen<Scenario> AnyScenario();

// An explicit fault plan for `config`'s run: 0..5 faults of any kind, each
// naming only actors and events the run has.
rc::Gen<std::vector<FaultSpec>> AnyFaultSchedule(const RunConfig& config);

}  // namespace xackly::testing
