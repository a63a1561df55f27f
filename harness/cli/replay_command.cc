// `xackly replay FILE` reproduces a scenario or replay file exactly (same
// trace hash, same verdicts, on a fresh server); `xackly explain FILE`
// replays it and tells what happened: the story and the timeline of the
// violating events.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "harness/cli/command.h"
#include "harness/cli/run_command.h"
#include "harness/results.h"
#include "reports/report.h"

namespace xackly {

namespace {

struct ReplayFlags {
  std::string file;
  OutputFlags output;
  std::string trace_file;
  bool all_steps = false;  // explain --all-steps
};

void AddReplayFlags(CLI::App* cmd, ReplayFlags* flags) {
  cmd->add_option("FILE", flags->file, "a scenario or replay file (.toml)")->required();
  AddOutputFlags(cmd, &flags->output, "");
  cmd->add_option("--trace", flags->trace_file, "write the full trace to this file")->check(NonEmptyPath());
}

int Replay(const char* command, const ReplayFlags& flags, bool timeline) {
  Result<Scenario> scenario = LoadScenarioFile(flags.file);
  if (!scenario.ok()) {
    PrintError(command, scenario.status());
    return kExitUsage;
  }
  RunOptions options;
  options.output = flags.output;
  options.trace_file = flags.trace_file;
  options.write_replay = false;
  options.check_recorded_trace = true;
  options.timeline = !timeline ? RunOptions::Timeline::kNone
                               : flags.all_steps ? RunOptions::Timeline::kAllSteps : RunOptions::Timeline::kPath;
  if (Status resolved = ResolveOutput(&options.output); !resolved.ok()) {
    PrintError(command, resolved);
    return kExitUsage;
  }
  return RunAndReport(command, *scenario, flags.file, options);
}

}  // namespace

void RegisterReplayCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Reproduce a scenario or replay file exactly: same trace hash, same verdicts");
  cmd->footer(
      "A replay file (written by `check` and `run --out`) carries the seed, the explicit fault "
      "plan, the trace hash the run must reproduce and the server it was recorded on; replay says "
      "whether the trace hash matches the file (or that the file has none).\n"
      "Exit 0: the verdict matches the file's expectation; 1: it does not; 2: the file is malformed, or its handler is C++ code in your own test (replay it there: ReplayCaseFile); "
      "3: the trace differs from the file's hash (nondeterminism, or another server: both are named) "
      "or the harness failed.");
  AddReplayFlags(cmd, flags.get());
  cmd->callback([flags, &result] { result.exit_code = Replay("replay", *flags, /*timeline=*/false); });
}

void RegisterExplainCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Replay a scenario or replay file and tell its story, with a text timeline");
  cmd->footer(
      "Prints what replay prints, then the steps on the violating events' path, each with its "
      "virtual time, actor, request and reply ('... N steps' marks what lies between them); "
      "--all-steps prints every step, marking the path with '>'.\n"
      "Exit 0: the verdict matches the file's expectation; 1: it does not; 2: the file is malformed, or its handler is C++ code in your own test (replay it there: ReplayCaseFile); "
      "3: the trace differs from the file's hash, or the harness failed.");
  AddReplayFlags(cmd, flags.get());
  cmd->add_flag("--all-steps", flags->all_steps, "print every step of the trace, not only the violating path");
  cmd->callback([flags, &result] { result.exit_code = Replay("explain", *flags, /*timeline=*/true); });
}

}  // namespace xackly
