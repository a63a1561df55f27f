// From what the simulator and the check engine return to the one result
// model every report renders (reports/model.h), and the replay files that
// make every failure reproducible.
#pragma once

#include <string>

#include "harness/check.h"
#include "reports/model.h"
#include "scenarios/scenario.h"
#include "sim/simulation.h"

namespace xackly {

// The quoted command that replays `file`: `xackly replay <file>`, then
// `flags` (each one shell word: `--expect 'lost|stuck'`).
std::string ReplayCommand(const std::string& file, const std::vector<std::string>& flags = {});

report::CaseReport ToCaseReport(const RunConfig& config, const RunResult& result,
                                const std::string& scenario_file);

// A check row for a single run (run, replay, explain): one case, shown
// whatever its verdict (a green run's trace, histories and faults are its
// evidence), as `counterexample`.
report::CheckReport SingleRunCheck(const std::string& name, const std::string& description,
                                   const RunConfig& config, const RunResult& result,
                                   const std::string& scenario_file, double seconds);

// The report of a single run: `command` ("run", "replay", "explain") of
// `seed`, with `check` (SingleRunCheck) as its one check, all matched when
// it passed (report::Passed: a green run whose plan left a fault unfired did
// not). The caller names the tool version, command line, server and options.
report::Report SingleRunReport(const std::string& command, uint64_t seed, const report::CheckReport& check);

// A check row for a property check; `counterexample_file` is where the
// minimal case was written (empty: none).
report::CheckReport ToCheckReport(const std::string& name, const std::string& description,
                                  const RunConfig& base, const CheckOutcome& outcome,
                                  const std::string& counterexample_file);

// The scenario that replays `config` exactly, with the trace hash it must
// reproduce. `like` supplies the name, protocol reference and description.
Scenario ReplayScenario(const Scenario& like, const RunConfig& config, const RunResult& result,
                        const std::string& origin);

// A case's size, "1 event, 1 worker, 1 fault, 9 steps": the faults of its
// plan (what shrinking makes smaller; an unshrunk case's plan may hold
// faults that never fired).
std::string CaseSize(const RunConfig& config, const RunResult& result);
// A single run's size: the faults that fired (a planned one that never did
// is no part of what happened; the run names it apart, as unfired).
std::string RunSize(const RunConfig& config, const RunResult& result);

}  // namespace xackly
