// Running one scenario and reporting it: shared by `run`, `replay` and
// `explain`.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "harness/cli/shared_flags.h"
#include "reports/model.h"
#include "sim/simulation.h"

namespace xackly {

struct RunOptions {
  OutputFlags output;
  std::string trace_file;       // write the trace here ("" : no)
  bool check_determinism = false;
  bool write_replay = true;     // write <out>/<name>.replay.toml when --out is set
  // explain: after the story, the trace lines on the violating path (kPath)
  // or every trace line with the path marked (kAllSteps).
  enum class Timeline { kNone, kPath, kAllSteps };
  Timeline timeline = Timeline::kNone;
  bool check_recorded_trace = false;  // replay: say whether the trace hash was checked (a hash
                                      // in the scenario is always checked)
  // replay --current of a protocol that changed since the file was
  // recorded, without --expect: the verdict is news, not a test (the file's
  // expectation was the old protocol's), so the exit code is 0 unless the
  // harness failed.
  bool verdict_is_news = false;
  // replay: the flags the replay command repeats after the file
  // (--current, --expect VERDICT).
  std::vector<std::string> replay_flags;
};

// Runs `config` once on a fresh server; the server version goes to
// *server_version. `before_run`, when set, is called with it once the
// server is up and before the run starts (the header line).
// `trace_at_failure`: as for RunSimulation (the trace of a run cut short).
Result<RunResult> RunOnce(const RunConfig& config, const OutputFlags& output, std::string* server_version,
                          const std::function<void(const std::string&)>& before_run = {},
                          std::vector<TraceLine>* trace_at_failure = nullptr);

// True when `scenario` records no trace hash (says on `human` "not
// checked") or `run` reproduced it (says it matches the file); else says on
// stderr that the replay of `scenario_file` diverged and why, naming the
// server the file was recorded on and `server_version` when they differ,
// and returns false (the caller exits 3).
bool ReproducesRecordedTrace(const char* command, const Scenario& scenario, const std::string& scenario_file,
                             const RunResult& run, const std::string& server_version, std::FILE* human);

// Prints on `out` one line per violation, then the story of `c` (numbered,
// under `heading`) when there is one.
void PrintViolationsAndStory(std::FILE* out, const RunResult& run, const report::CaseReport& c,
                             const char* heading);

// Runs the scenario once, prints its summary (or JSON), writes the trace,
// the replay file and the reports asked for, and returns the exit code.
// A scenario with a trace_hash must reproduce it (else exit 3).
int RunAndReport(const char* command, const Scenario& scenario, const std::string& scenario_file,
                 const RunOptions& options);

}  // namespace xackly
