// Running one scenario and reporting it: shared by `run`, `replay` and
// `explain`.
#pragma once

#include <string>

#include "harness/cli/shared_flags.h"
#include "reports/model.h"
#include "sim/simulation.h"

namespace xackly {

struct RunOptions {
  OutputFlags output;
  std::string trace_file;       // write the trace here ("" : no)
  bool check_determinism = false;
  bool write_replay = true;     // write <out>/<name>.replay.toml when --out is set
  std::string stdout_format;    // "" or "text": human summary; "json": the report
};

// Runs `config` once on a fresh server; the server version goes to *server_version.
Result<RunResult> RunOnce(const RunConfig& config, const OutputFlags& output,
                          std::string* server_version);

// True when `scenario` records no trace hash or `run` reproduced it; else
// says on stderr that the replay of `scenario_file` diverged, and why that
// happens, and returns false (the caller exits 3).
bool ReproducesRecordedTrace(const char* command, const Scenario& scenario,
                             const std::string& scenario_file, const RunResult& run);

// Prints one line per violation, then the story of `c` (numbered, under
// `heading`) when there is one.
void PrintViolationsAndStory(const RunResult& run, const report::CaseReport& c, const char* heading);

// Runs the scenario once, prints its summary (or JSON), writes the trace,
// the replay file and the reports asked for, and returns the exit code.
// A scenario with a trace_hash must reproduce it (else exit 3).
int RunAndReport(const char* command, const Scenario& scenario, const std::string& scenario_file,
                 const RunOptions& options);

}  // namespace xackly
