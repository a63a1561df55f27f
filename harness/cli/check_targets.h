// What `xackly check` checks: the targets its flags name (a catalog
// protocol, scenario files, a library of the pack, the whole catalog).
#pragma once

#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/status.h"

namespace xackly {

// One check: a scenario (a catalog protocol's, or a file's) and the file
// it came from ("" for a catalog protocol).
struct Target {
  Scenario scenario;
  std::string scenario_file;
};

// Appends the scenario files that follow the C++ catalog. `library` empty
// (`--all`): the catalog as protocol scripts (scenarios/catalog/scripts/),
// the worked examples (scenarios/examples/) and every library of the pack
// (scenarios/library/<name>/, docs/libraries.md); without any, a note says
// so. Else (`--library NAME`) that library's files, or every library's for
// "all"; an unknown name is an input error listing the known ones. The
// scenario root is $XACKLY_SCENARIO_DIR; else, for an installed xackly,
// the scenarios installed with it (<prefix>/share/xackly/scenarios beside
// <prefix>/bin/xackly, wherever the prefix was moved); else the source
// tree this binary was built from.
Status AddScenarioTargets(const std::string& library, std::vector<Target>* targets);

// Appends every catalog protocol, in catalog order.
void AddCatalogTargets(std::vector<Target>* targets);

// Appends a suite (check --scenario A --scenario DIR ...): each of `paths`,
// in order, is a scenario file, or a directory that stands for every *.toml
// file below it, recursively, in path order. Replay files (*.replay.toml,
// IsReplayFileName) below a directory are skipped: they are check's own
// output (an --out inside the suite's directory would otherwise grow the
// suite by its counterexamples each run); named as a path they are checked
// like any scenario file. Each file loads as LoadTarget loads one. Errors
// are input errors (kInvalidArgument, exit 2): a file that does not parse
// (file:line: field), one this executable cannot run, a directory with no
// scenario file below it.
Status AddSuiteTargets(const std::vector<std::string>& paths, std::vector<Target>* targets);

// Ok, or an input error naming the first two targets (their files, or
// "the catalog protocol") that share a scenario name: their replay files,
// report rows and JUnit testcases would collide.
Status RequireDistinctNames(const std::vector<Target>& targets);

}  // namespace xackly
