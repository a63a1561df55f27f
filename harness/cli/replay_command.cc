// `xackly replay FILE` reproduces a scenario or replay file exactly (same
// trace hash, same verdicts, on a fresh server); `xackly explain FILE`
// replays it and tells what happened: the story and the timeline of the
// violating events.
#include <cstdio>
#include <memory>
#include <set>
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
};

void AddFileArgument(CLI::App* cmd, ReplayFlags* flags) {
  cmd->add_option("FILE", flags->file, "a scenario or replay file (.toml)")->required();
}

}  // namespace

void RegisterReplayCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Reproduce a scenario or replay file exactly: same trace hash, same verdicts");
  cmd->footer(
      "A replay file (written by `check` and `run --out`) carries the seed, the explicit fault "
      "plan and the trace hash the run must reproduce. Exit 0: the verdict matches the file's "
      "expectation; 1: it does not; 2: the file is malformed; 3: the trace differs from the "
      "file's hash (nondeterminism, or another server version) or the harness failed.");
  AddFileArgument(cmd, flags.get());
  AddOutputFlags(cmd, &flags->output, "");
  cmd->add_option("--trace", flags->trace_file, "write the full trace to this file");
  cmd->callback([flags, &result] {
    Result<Scenario> scenario = LoadScenarioFile(flags->file);
    if (!scenario.ok()) {
      PrintError("replay", scenario.status());
      result.exit_code = kExitUsage;
      return;
    }
    RunOptions options;
    options.output = flags->output;
    options.trace_file = flags->trace_file;
    options.write_replay = false;
    result.exit_code = RunAndReport("replay", *scenario, flags->file, options);
  });
}

void RegisterExplainCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Replay a scenario or replay file and tell its story, with a text timeline");
  cmd->footer(
      "Prints what happened to the violating events as numbered sentences, then every step of the "
      "trace, marking with '>' the steps on the violating events' path. Exit codes as for replay.");
  AddFileArgument(cmd, flags.get());
  cmd->add_option("--server", flags->output.server_path, "redis-server binary");
  cmd->callback([flags, &result] {
    Result<Scenario> scenario = LoadScenarioFile(flags->file);
    if (!scenario.ok()) {
      PrintError("explain", scenario.status());
      result.exit_code = kExitUsage;
      return;
    }
    RunConfig config = scenario->config;
    config.keep_trace = true;
    std::string server_version;
    Result<RunResult> run = RunOnce(config, flags->output, &server_version);
    if (!run.ok()) {
      PrintError("explain", run.status());
      result.exit_code = ExitCodeOf(run.status());
      return;
    }
    if (!ReproducesRecordedTrace("explain", *scenario, flags->file, *run)) {
      result.exit_code = kExitHarnessFailure;
      return;
    }
    report::CaseReport c = ToCaseReport(config, *run, flags->file);
    fmt::print("{} (seed {}, {}) on {}: observed {}, expected {}\n", scenario->name, config.seed,
               CaseSize(config, *run), server_version, run->observed, config.expected.ToString());
    PrintViolationsAndStory(*run, c, "\nWhat happened:\n");
    std::vector<int64_t> path = report::PathLines(c);
    std::set<int64_t> on_path(path.begin(), path.end());
    fmt::print("\nTimeline (virtual ms, actor, request -> reply; '>' marks the violating path):\n");
    for (size_t i = 0; i < run->trace.size(); ++i) {
      fmt::print("{} {}\n", on_path.count(static_cast<int64_t>(i)) ? ">" : " ", Trace::Render(run->trace[i]));
    }
    fmt::print("\ntrace {}; replay: {}\n", run->TraceHashHex(), ReplayCommand(flags->file));
    result.exit_code = run->matched ? kExitOk : kExitVerdictMismatch;
  });
}

}  // namespace xackly
