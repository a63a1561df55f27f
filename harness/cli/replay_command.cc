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
  bool current = false;    // --current: today's script files, not the embedded copies
  std::string expect;      // --expect: the verdict to require instead of the file's
};

void AddReplayFlags(CLI::App* cmd, ReplayFlags* flags) {
  cmd->add_option("FILE", flags->file, "a scenario or replay file (.toml)")->required();
  AddOutputFlags(cmd, &flags->output, "");
  cmd->add_option("--trace", flags->trace_file, "write the full trace to this file")->check(NonEmptyPath());
  cmd->add_flag("--current", flags->current,
                "run the recorded workload and fault schedule against the protocol script files as they are now "
                "(beside the file, else where they were recorded), not the copies the file embeds: re-judge an "
                "old counterexample after a fix");
  cmd->add_option("--expect", flags->expect,
                  "the verdict to require instead of the file's (e.g. ok: after a fix, the old counterexample as a "
                  "regression test)");
}

int Replay(const char* command, const ReplayFlags& flags, bool timeline) {
  Result<Scenario> scenario =
      LoadScenarioFile(flags.file, flags.current ? ScriptFiles::kCurrent : ScriptFiles::kEmbeddedCopies);
  if (!scenario.ok()) {
    PrintError(command, scenario.status());
    return kExitUsage;
  }
  if (!flags.expect.empty()) {
    std::string why;
    if (!Expectation::Parse(flags.expect, &scenario->config.expected, &why)) {
      PrintError(command, Status::InvalidArgument(fmt::format("--expect '{}': {}", flags.expect, why)));
      return kExitUsage;
    }
  }
  RunOptions options;
  if (!scenario->changed_files.empty()) {
    // Not a divergence: the user's protocol changed, so the recorded trace
    // cannot come again; the recorded workload and faults judge it anew.
    std::string changed;
    for (const std::string& f : scenario->changed_files) changed += (changed.empty() ? "" : ", ") + f;
    fmt::print(stderr,
               "xackly {}: your protocol changed since {} was recorded ({}): judging the recorded workload and "
               "fault schedule against it as it is now; the recorded trace hash no longer applies\n",
               command, flags.file, changed);
    scenario->trace_hash.reset();
    options.verdict_is_news = flags.expect.empty();
  }
  if (flags.current) options.replay_flags.push_back("--current");
  if (!flags.expect.empty()) options.replay_flags.insert(options.replay_flags.end(), {"--expect", flags.expect});
  options.output = flags.output;
  options.trace_file = flags.trace_file;
  options.write_replay = false;
  options.check_recorded_trace = scenario->changed_files.empty();
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
      "whether the trace hash matches the file (or that the file has none). The file embeds the protocol "
      "script and includes it ran, so it replays wherever it lies; --current runs the files as they are now "
      "instead (\"your protocol changed\", then the new verdict), and --expect ok turns a fixed "
      "counterexample into a regression test.\n"
      "Exit 0: the verdict matches the file's expectation (--expect's, when given; with --current and no "
      "--expect, whatever the changed protocol gives: the file's expectation was the old protocol's); 1: it does "
      "not; 2: the file is malformed, or its handler is C++ code in your own test (replay it there: ReplayCaseFile); "
      "3: the trace differs from the file's hash (the file was edited, nondeterminism, or another server: the "
      "run's own verdict is shown, then why it is not the recorded one) or the harness failed; 4: it matches an expected "
      "ok, but a fault of the file's plan ([schedule] faults) never fired, so the run says nothing about it.");
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
      "3: the trace differs from the file's hash, or the harness failed; 4: it matches an expected ok, "
      "but a fault of the file's plan never fired.");
  AddReplayFlags(cmd, flags.get());
  cmd->add_flag("--all-steps", flags->all_steps, "print every step of the trace, not only the violating path");
  cmd->callback([flags, &result] { result.exit_code = Replay("explain", *flags, /*timeline=*/true); });
}

}  // namespace xackly
