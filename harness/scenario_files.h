// Scenario files on disk: reading one with the protocol script it names,
// and moving a scenario's script paths to another file's directory.
#pragma once

#include <string>

#include "scenarios/scenario.h"
#include "sim/status.h"

namespace xackly {

// Reads and parses a scenario file. A protocol script it names (and the
// files its [protocol] include lists) is read relative to the file and
// loaded, with [protocol.params] and the includes run before its first
// line. Errors name the file and field (exit 2 material). Lua chunk names
// are the files' names (no directory).
Result<Scenario> LoadScenarioFile(const std::string& path);
// The most a protocol script and all its includes may add up to.
inline constexpr size_t kMaxScriptBytes = size_t{16} << 20;
// A protocol script's paths (script, include) are relative to the scenario
// file: rewrites them for a copy of `*s` written to `to_file` instead of
// `from_file`, so a replay file in --out still finds its script. Paths that
// are absolute, or a scenario without a script, are left as they are.
void RebaseScriptPaths(Scenario* s, const std::string& from_file, const std::string& to_file);

}  // namespace xackly
