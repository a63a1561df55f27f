// Scenario files on disk: reading one with the protocol script it names,
// and moving a scenario's script paths to another file's directory.
#pragma once

#include <cstdint>
#include <string>

#include "scenarios/scenario.h"
#include "sim/status.h"

namespace xackly {

// Which text of a protocol script (and its includes) a scenario file runs.
enum class ScriptFiles : uint8_t {
  // The copy the file embeds ([[embedded]], a replay file), else the file
  // on disk.
  kEmbeddedCopies,
  // The file on disk (beside the scenario file, else where the embedded
  // copy was read from when recorded): re-judging a recorded schedule
  // against today's script. Scenario::changed_files names those that differ
  // from their embedded copy.
  kCurrent,
};

// Reads and parses a scenario file. A protocol script it names (and the
// files its [protocol] include lists) is read relative to the file, or
// taken from the file's embedded copy (`which`), and loaded, with
// [protocol.params] and the includes run before its first line; every file
// read ends up in Scenario::embedded (so a replay file written from the
// result carries it). A real consumer's command ([protocol] command) is
// resolved, and the text files among its arguments (consumer.py) are
// read from disk and carried the same way (changed_files names those that
// differ from a replay file's copy; the process always runs the file on
// disk). Errors name the file and field (exit 2 material).
// Lua chunk names are the files' names (no directory).
Result<Scenario> LoadScenarioFile(const std::string& path, ScriptFiles which = ScriptFiles::kEmbeddedCopies);
// The most a protocol script and all its includes may add up to.
inline constexpr size_t kMaxScriptBytes = size_t{16} << 20;
// The largest file of a real consumer's (an argument of [protocol] command
// naming a text file beside the scenario) that a replay file carries.
inline constexpr size_t kMaxConsumerFileBytes = size_t{1} << 20;
// A protocol script's paths (script, include) are relative to the scenario
// file: rewrites them for a copy of `*s` written to `to_file` instead of
// `from_file`, so a replay file in --out still finds its script. Paths that
// are absolute, or a scenario without a script, are left as they are.
void RebaseScriptPaths(Scenario* s, const std::string& from_file, const std::string& to_file);

}  // namespace xackly
