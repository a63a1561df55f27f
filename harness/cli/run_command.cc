// `xackly run`: one deterministic run of a protocol or scenario, its
// verdicts, counts and trace hash. Also the engine of `replay` and `explain`
// (harness/cli/replay_command.cc), which run a scenario file exactly.
#include "harness/cli/run_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "harness/case_executor.h"
#include "harness/cli/command.h"
#include "harness/cli/shared_flags.h"
#include "harness/files.h"
#include "harness/results.h"
#include "reports/report.h"

namespace xackly {

namespace {

struct RunFlags {
  TargetFlags target;
  OverrideFlags overrides;
  OutputFlags output;
  std::string trace_file;
  bool check_determinism = false;
};

std::string TraceText(const RunResult& r) {
  std::string out;
  for (const TraceLine& line : r.trace) {
    out += Trace::Render(line);
    out += '\n';
  }
  return out;
}

}  // namespace

Result<RunResult> RunOnce(const RunConfig& config, const OutputFlags& output, std::string* server_version) {
  CaseExecutor executor(ServerOptionsFrom(output));
  Result<RedisServer*> server = executor.Server(config.persistence);
  if (!server.ok()) return server.status();
  *server_version = executor.server_version();
  return executor.Run(config);
}

bool ReproducesRecordedTrace(const char* command, const Scenario& scenario,
                             const std::string& scenario_file, const RunResult& run) {
  if (!scenario.trace_hash || *scenario.trace_hash == run.TraceHashHex()) return true;
  fmt::print(stderr,
             "xackly {}: replay diverged: trace {} but {} says {} (a different server version, "
             "or a change in xackly; see README, Determinism)\n",
             command, run.TraceHashHex(), scenario_file, *scenario.trace_hash);
  return false;
}

void PrintViolationsAndStory(const RunResult& run, const report::CaseReport& c, const char* heading) {
  for (const Violation& v : run.violations) {
    fmt::print("  {} {} [{}]: {}\n", VerdictKindName(v.kind), v.event_id, v.cause, v.detail);
  }
  if (run.violations.empty()) return;
  std::vector<std::string> story = report::Story(c);
  if (!story.empty()) fmt::print("{}", heading);
  for (size_t i = 0; i < story.size(); ++i) fmt::print("  {}. {}\n", i + 1, story[i]);
}

int RunAndReport(const char* command, const Scenario& scenario, const std::string& scenario_file,
                 const RunOptions& options) {
  // Bad output flags are found before the run, not after it.
  Status output_ok = CheckOutputFlags(options.output);
  if (output_ok.ok() && !options.trace_file.empty()) {
    if (Status trace_ok = CheckWritableFilePath(options.trace_file); !trace_ok.ok()) {
      output_ok = Status::InvalidArgument("--trace: " + trace_ok.message());
    }
  }
  if (!output_ok.ok()) {
    PrintError(command, output_ok);
    return kExitUsage;
  }
  RunConfig config = scenario.config;
  config.keep_trace = true;
  auto started = std::chrono::steady_clock::now();
  std::string server_version;
  Result<RunResult> run = RunOnce(config, options.output, &server_version);
  if (!run.ok()) {
    PrintError(command, run.status());
    return ExitCodeOf(run.status());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The first line: seed, server version, resolved options.
  fmt::print("xackly {}: {} seed {} on {}: {}\n", command, scenario.name, config.seed, server_version,
             DescribeRun(config));

  if (options.check_determinism) {
    std::string again_version;
    Result<RunResult> again = RunOnce(config, options.output, &again_version);
    if (!again.ok()) {
      PrintError(command, again.status());
      return kExitHarnessFailure;
    }
    if (again->trace_hash != run->trace_hash) {
      fmt::print(stderr,
                 "xackly {}: NONDETERMINISM: the same seed gave trace {} and then {} on a fresh "
                 "server\n",
                 command, run->TraceHashHex(), again->TraceHashHex());
      return kExitHarnessFailure;
    }
    fmt::print("determinism: a second run on a fresh server gave the same trace {}\n", run->TraceHashHex());
  }
  if (!ReproducesRecordedTrace(command, scenario, scenario_file, *run)) return kExitHarnessFailure;

  if (!options.trace_file.empty()) {
    Status s = WriteFileAtomically(options.trace_file, TraceText(*run));
    if (!s.ok()) {
      PrintError(command, s);
      return kExitHarnessFailure;
    }
  }

  // The replay file: everything needed to reproduce this exact run.
  std::string replay_file;
  if (!options.output.out_dir.empty() && options.write_replay) {
    replay_file = JoinPath(options.output.out_dir, ReplayFileName(scenario.name));
    Scenario replay = ReplayScenario(scenario, config, *run, CommandLine());
    if (!scenario_file.empty()) RebaseScriptPaths(&replay, scenario_file, replay_file);
    Status s = WriteFileAtomically(replay_file, WriteScenario(replay));
    if (!s.ok()) {
      PrintError(command, s);
      return kExitHarnessFailure;
    }
  }

  report::Report rep;
  rep.tool_version = XACKLY_VERSION;
  rep.command = command;
  rep.command_line = CommandLine();
  rep.seed = config.seed;
  rep.server_version = server_version;
  rep.options = DescribeRun(config);
  report::CheckReport check = SingleRunCheck(scenario.name, scenario.description, config, *run, scenario_file, seconds);
  if (!check.counterexample) {
    check.counterexample = ToCaseReport(config, *run, scenario_file);
    check.counterexample_size = CaseSize(config, *run);
  }
  check.counterexample->replay_file = replay_file.empty() ? scenario_file : replay_file;
  check.counterexample->replay_command =
      !check.counterexample->replay_file.empty() ? ReplayCommand(check.counterexample->replay_file) : CommandLine();
  rep.checks.push_back(check);
  rep.all_matched = run->matched;

  std::vector<std::string> written;
  Status wrote = WriteReports(rep, options.output, "text,json", &written);
  if (!wrote.ok()) {
    PrintError(command, wrote);
    return wrote.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitHarnessFailure;
  }
  if (options.stdout_format == "json") {
    std::printf("%s\n", report::RenderJson(rep).c_str());
  } else {
    fmt::print("observed {} (expected {}): {}\n", run->observed, config.expected.ToString(),
               run->matched ? "matches" : "DOES NOT MATCH");
    PrintViolationsAndStory(*run, *check.counterexample, "what happened:\n");
    std::string fired;
    for (const auto& [site, n] : run->coverage.fired) fired += fmt::format("{}{} x{}", fired.empty() ? "" : ", ", site, n);
    fmt::print("faults fired: {}\n", fired.empty() ? "none" : fired);
    for (const std::string& note : run->notes) fmt::print("note: {}\n", note);
    fmt::print("trace {}, {} steps, {} trace lines, {} virtual ms, {} round trips ({} by the harness)\n",
               run->TraceHashHex(), run->steps, run->trace_lines, run->virtual_ms,
               run->protocol_round_trips + run->harness_round_trips, run->harness_round_trips);
    if (!options.trace_file.empty()) fmt::print("trace written to {}\n", options.trace_file);
    for (const std::string& f : written) fmt::print("wrote {}\n", f);
    fmt::print("replay: {}\n", check.counterexample->replay_command);
  }
  return run->matched ? kExitOk : kExitVerdictMismatch;
}

void RegisterRunCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run one protocol or scenario once, deterministically, and judge it");
  cmd->footer(
      "Prints the resolved options first, then the observed verdict against the expected one, "
      "every violation with its cause, what happened, the faults that fired and the trace hash; "
      "the last line is the command that reproduces the run.\n"
      "Exit 0: the observed verdict matches the expectation; 1: it does not; 2: bad input; 3: "
      "harness or server failure (or --check-determinism found two different traces).");
  AddTargetFlags(cmd, &flags->target);
  AddOverrideFlags(cmd, &flags->overrides, /*with_seed=*/true);
  AddOutputFlags(cmd, &flags->output, "");
  cmd->add_option("--trace", flags->trace_file, "write the full trace (one line per step) to this file");
  cmd->add_flag("--check-determinism", flags->check_determinism,
                "run the seed a second time on a fresh server and fail (exit 3) if the traces differ");
  cmd->callback([flags, &result] {
    if (flags->target.protocol.empty() && flags->target.scenario.empty()) {
      fmt::print(stderr, "xackly run: error: name a --protocol (valid: {}) or a --scenario FILE\n",
                 CatalogNames());
      result.exit_code = kExitUsage;
      return;
    }
    Result<Scenario> scenario = LoadTarget(flags->target);
    if (!scenario.ok()) {
      PrintError("run", scenario.status());
      result.exit_code = kExitUsage;
      return;
    }
    Status applied = ApplyOverrides(flags->overrides, &scenario->config);
    if (!applied.ok()) {
      PrintError("run", applied);
      result.exit_code = kExitUsage;
      return;
    }
    RunOptions options;
    options.output = flags->output;
    options.trace_file = flags->trace_file;
    options.check_determinism = flags->check_determinism;
    options.write_replay = true;
    // Without --out, --format picks what goes to stdout (text or json).
    if (flags->output.out_dir.empty() && !flags->output.formats.empty()) {
      if (flags->output.formats != "text" && flags->output.formats != "json") {
        fmt::print(stderr, "xackly run: error: --format without --out prints to stdout: text or json\n");
        result.exit_code = kExitUsage;
        return;
      }
      options.stdout_format = flags->output.formats;
      options.output.formats.clear();
    }
    result.exit_code = RunAndReport("run", *scenario, flags->target.scenario, options);
  });
}

}  // namespace xackly
