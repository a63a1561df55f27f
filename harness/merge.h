// Combining the reports of `xackly check --shard I/N` runs into the report
// the unsharded run would have written. Case i of a check is generated from
// (seed, i) alone and shard I runs the cases i with i % N == I-1, so:
//   - the counterexample is the one of the lowest first-hit case over all
//     shards: the case the unsharded run finds first, shrunk the same way;
//   - cases_run is first_hit_case + 1 when a shard found one (what the
//     unsharded run stops at), else the sum over shards.
// cases_failed and the fault-site counts are sums over the cases the shards
// ran, which, past the first hit, can be more than the unsharded run ran.
#pragma once

#include <vector>

#include "reports/model.h"
#include "sim/status.h"

namespace xackly {

// Fails with kInvalidArgument when the reports do not belong together
// (different seeds or search settings such as --cases or --no-swarm,
// different checks or expectations, a shard missing or given twice).
Result<report::Report> MergeReports(const std::vector<report::Report>& shards);

}  // namespace xackly
