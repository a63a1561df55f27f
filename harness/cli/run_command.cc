// `xackly run`: one deterministic run of a protocol or scenario, its
// verdicts, counts and trace hash. Also the engine of `replay` and `explain`
// (harness/cli/replay_command.cc), which run a scenario file exactly.
#include "harness/cli/run_command.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "harness/case_executor.h"
#include "harness/cli/command.h"
#include "harness/cli/out_dir.h"
#include "harness/cli/shared_flags.h"
#include "harness/files.h"
#include "harness/real_consumer.h"
#include "harness/results.h"
#include "reports/report.h"
#include "sim/text.h"

namespace xackly {

namespace {

struct RunFlags {
  TargetFlags target;
  OverrideFlags overrides;
  OutputFlags output;
  std::string trace_file;
  bool check_determinism = false;
};

std::string TraceText(const std::vector<TraceLine>& trace) {
  std::string out;
  for (const TraceLine& line : trace) {
    out += Trace::Render(line);
    out += '\n';
  }
  return out;
}

}  // namespace

Result<RunResult> RunOnce(const RunConfig& config, const OutputFlags& output, std::string* server_version,
                          const std::function<void(const std::string&)>& before_run,
                          std::vector<TraceLine>* trace_at_failure) {
  CaseExecutor executor(ServerOptionsFrom(output));
  if (config.replicas > 0) {
    Result<ReplicatedServer*> server = executor.Replicated(config.persistence);
    if (!server.ok()) return server.status();
  } else {
    Result<RedisServer*> server = executor.Server(config.persistence);
    if (!server.ok()) return server.status();
  }
  *server_version = executor.server_version();
  if (before_run) before_run(*server_version);
  return executor.Run(config, trace_at_failure);
}

bool ReproducesRecordedTrace(const char* command, const Scenario& scenario, const std::string& scenario_file,
                             const RunResult& run, const std::string& server_version, std::FILE* human) {
  bool other_server = scenario.server && *scenario.server != server_version;
  // A server the file recorded a hash of its own for (one the trace_hash was
  // not recorded on) is held to that hash.
  if (auto own = scenario.server_hashes.find(server_version);
      scenario.server != server_version && own != scenario.server_hashes.end()) {
    if (own->second == run.TraceHashHex()) {
      fmt::print(human, "trace hash: {} matches the file's hash for {} (server_hashes)\n", run.TraceHashHex(),
                 server_version);
      return true;
    }
    fmt::print(stderr,
               "xackly {}: replay diverged: trace {} on {} but {} recorded {} for that server (server_hashes): "
               "the file was edited after it was recorded, or xackly changed (see README, Determinism)\n",
               command, run.TraceHashHex(), server_version, scenario_file, own->second);
    return false;
  }
  if (!scenario.trace_hash) {
    fmt::print(human, "trace hash: not checked ({} records none)\n", scenario_file.empty() ? "the run" : scenario_file);
    return true;
  }
  if (*scenario.trace_hash == run.TraceHashHex()) {
    fmt::print(human, "trace hash: {} matches the file{}\n", run.TraceHashHex(),
               other_server ? fmt::format(" (recorded on {}, replayed on {})", *scenario.server, server_version) : "");
    return true;
  }
  if (other_server) {
    fmt::print(stderr,
               "xackly {}: replay diverged: {} was recorded on {} (trace {}) and this run used {} (trace {}); "
               "replay it with --server naming a {} binary (same seed + scenario + server version => same "
               "trace; see README, Determinism)\n",
               command, scenario_file, *scenario.server, *scenario.trace_hash, server_version, run.TraceHashHex(),
               *scenario.server);
    return false;
  }
  fmt::print(stderr,
             "xackly {}: replay diverged: trace {} on {} but {} says {} (recorded {}): the file was edited "
             "after it was recorded, or xackly changed (see README, Determinism). The verdict below is this "
             "run's, not the recorded one's; to judge an edited file as it is now, delete its trace_hash line\n",
             command, run.TraceHashHex(), server_version, scenario_file, *scenario.trace_hash,
             scenario.server ? "on the same server" : "on a server the file does not name");
  return false;
}

void PrintViolationsAndStory(std::FILE* out, const RunResult& run, const report::CaseReport& c, const char* heading) {
  for (const Violation& v : run.violations) {
    fmt::print(out, "  {} {} [{}]: {}\n", VerdictKindName(v.kind), ViolationSubject(v, ""), v.cause, v.detail);
  }
  if (run.violations.empty()) return;
  std::vector<std::string> story = report::Story(c);
  if (!story.empty()) fmt::print(out, "{}", heading);
  for (size_t i = 0; i < story.size(); ++i) fmt::print(out, "  {}. {}\n", i + 1, story[i]);
}

namespace {

// The first line of run/replay/explain: seed, server version, resolved options.
void PrintRunHeader(std::FILE* out, const char* command, const Scenario& scenario, const RunConfig& config,
                    const std::string& server_version) {
  fmt::print(out, "xackly {}: {} seed {} on {}: {}\n", command, scenario.name, config.seed, server_version,
             DescribeRun(config));
  std::fflush(out);
}

// What a run whose expected violation did not show should tell a new user.
std::string NoHitHint(const Scenario& scenario, const RunConfig& config, const RunResult& run) {
  if (run.matched || config.expected.IsOk() || run.observed != "ok") return "";
  std::string target = scenario.protocol_ref.empty() ? "--scenario FILE" : "--protocol " + scenario.protocol_ref;
  return fmt::format(
      "note: one seed is one schedule: seed {} happened not to show the expected {}. `xackly check {}` "
      "searches many schedules and shrinks what it finds; `--seed N` tries another one.\n",
      config.seed, config.expected.ToString(), target);
}

// explain's timeline: the path of the violating events, the steps between
// them counted, or every step with the path marked '>'.
void PrintTimeline(std::FILE* out, RunOptions::Timeline timeline, const RunResult& run, const report::CaseReport& c) {
  if (timeline == RunOptions::Timeline::kNone) return;
  std::vector<int64_t> path = report::PathLines(c);
  std::set<int64_t> on_path(path.begin(), path.end());
  if (timeline == RunOptions::Timeline::kAllSteps || on_path.empty()) {
    fmt::print(out, "\nTimeline, every step (virtual ms, actor, request -> reply; '>' marks the violating path):\n");
    for (size_t i = 0; i < run.trace.size(); ++i) {
      fmt::print(out, "{} {}\n", on_path.count(static_cast<int64_t>(i)) ? ">" : " ", Trace::Render(run.trace[i]));
    }
    return;
  }
  fmt::print(out,
             "\nTimeline of the violating path ({} of {} trace lines; virtual ms, actor, request -> reply; "
             "--all-steps shows every one):\n",
             on_path.size(), run.trace.size());
  // A path line that repeats the last one shown for its actor (same
  // request and reply: a janitor polling the entry every tick) is counted,
  // not shown. A repeat after something else (a second read of the same
  // entry, the effect run again) is the story itself and is shown.
  std::map<std::string, std::string> last_shown;  // actor -> request and reply
  int64_t skipped = 0, repeats = 0;
  const auto flush = [&] {
    if (skipped == 0) return;
    fmt::print(out, "  ... {}{}\n", report::Count(skipped, "line"),
               repeats == 0 ? "" : fmt::format(" ({} repeating path lines shown above)", repeats));
    skipped = repeats = 0;
  };
  int64_t next = 0;
  for (int64_t line : on_path) {
    if (line < 0 || line >= static_cast<int64_t>(run.trace.size())) continue;
    const TraceLine& t = run.trace[static_cast<size_t>(line)];
    skipped += line - next;
    next = line + 1;
    std::string& last = last_shown[t.actor];
    std::string key = t.request + '\x1f' + t.reply;
    if (last == key) {
      ++skipped;
      ++repeats;
      continue;
    }
    last = std::move(key);
    flush();
    fmt::print(out, "> {}\n", Trace::Render(t));
  }
  skipped += static_cast<int64_t>(run.trace.size()) - next;
  flush();
}


// A run stopped before its judgement (the step guard): the trace up to the
// stop, as --trace and --all-steps asked, so it can be inspected. Returns
// the run's exit code, or the harness failure's when the trace file
// cannot be written.
int ShowCutRun(const char* command, const Status& stop, const std::vector<TraceLine>& cut,
               const RunOptions& options, std::FILE* human) {
  const int code = ExitCodeOf(stop);
  if (cut.empty()) return code;
  const std::string why = stop.code() == Status::Code::kHarnessLimit ? "it stopped at a harness limit (the "
                                                                       "step guard: see the last line)"
                                                                     : "it failed";
  if (options.timeline == RunOptions::Timeline::kAllSteps) {
    fmt::print(human, "\nTimeline up to the stop, every step ({} trace lines; {}, not judged):\n", cut.size(), why);
    for (const TraceLine& line : cut) fmt::print(human, "  {}\n", Trace::Render(line));
  }
  if (!options.trace_file.empty()) {
    if (Status s = WriteFileAtomically(options.trace_file, TraceText(cut)); !s.ok()) {
      PrintError(command, s);
      return kExitHarnessFailure;
    }
    fmt::print(human, "trace up to the stop ({} lines; {}, not judged) written to {}\n", cut.size(), why,
               options.trace_file);
  }
  return code;
}

// Where --quiet sends the lines it drops: /dev/null, opened once. nullptr when
// it cannot be opened.
std::FILE* QuietSink() {
  static std::FILE* sink = std::fopen("/dev/null", "w");
  return sink;
}

// --quiet's one line for a run or replay (on stdout, or stderr when a machine
// report has stdout): the verdict against the expectation and the trace hash. A mismatch's replay command goes to stderr,
// one line, as `check --quiet` does.
void PrintQuietLine(const Scenario& scenario, const RunConfig& config, const RunResult& run,
                    const report::CheckReport& check, const RunOptions& options) {
  const bool gaps = !options.verdict_is_news && report::GreenWithUnfiredPlan(check);
  const char* judged = options.verdict_is_news ? "protocol changed"
                       : gaps                  ? "matched with gaps"
                       : run.matched           ? "matched"
                                               : "DOES NOT MATCH";
  fmt::print(HumanOut(options.output), "{} seed {}: observed {} (expected {}): {}, trace {}\n", scenario.name, config.seed,
             run.observed, config.expected.ToString(), judged, run.TraceHashHex());
  if (!run.matched && !options.verdict_is_news) fmt::print(stderr, "replay: {}\n", check.counterexample->replay_command);
  // What makes a green run exit 4, one line each, as `check --quiet` does.
  if (gaps) {
    for (const std::string& line : report::UnfiredPlannedLines(check)) fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace

int RunAndReport(const char* command, const Scenario& scenario, const std::string& scenario_file,
                 const RunOptions& options) {
  if (Status runnable = RunnableByThisExecutable(scenario, scenario_file); !runnable.ok()) {
    PrintError(command, runnable);
    return kExitUsage;
  }
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
  // --quiet: the human lines go nowhere; one summary line (below) goes to stdout.
  std::FILE* human = options.output.quiet ? QuietSink() : HumanOut(options.output);
  if (human == nullptr) {
    PrintError(command, Status::Internal("--quiet: cannot open /dev/null"));
    return kExitHarnessFailure;
  }
  RunConfig config = scenario.config;
  config.keep_trace = true;
  auto started = std::chrono::steady_clock::now();
  std::string server_version;
  std::vector<TraceLine> cut;  // the trace of a run stopped before its judgement
  Result<RunResult> run = RunOnce(
      config, options.output, &server_version,
      [&](const std::string& version) { PrintRunHeader(human, command, scenario, config, version); }, &cut);
  if (!run.ok()) {
    PrintError(command, run.status());
    return ShowCutRun(command, run.status(), cut, options, human);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (options.check_determinism) {
    std::string again_version;
    Result<RunResult> again = RunOnce(config, options.output, &again_version);
    if (!again.ok()) {
      PrintError(command, again.status());
      return kExitHarnessFailure;
    }
    if (again->trace_hash != run->trace_hash) {
      const std::string where = FirstTraceDifference(run->trace, again->trace);
      const std::string hint =
          config.protocol.consumer_command.empty() ? "" : "; " + NondeterministicConsumerHint();
      fmt::print(stderr,
                 "xackly {}: NONDETERMINISM: the same seed gave trace {} and then {} on a fresh "
                 "server; the two runs {}{}\n",
                 command, run->TraceHashHex(), again->TraceHashHex(),
                 where.empty() ? "agree line for line" : where, hint);
      return kExitHarnessFailure;
    }
    fmt::print(human, "determinism: a second run on a fresh server gave the same trace {}\n", run->TraceHashHex());
  }
  // A diverged replay still shows what this run did (an edited file's
  // verdict), and then fails: it is not the recorded run.
  const bool diverged = (options.check_recorded_trace || scenario.trace_hash) &&
                        !ReproducesRecordedTrace(command, scenario, scenario_file, *run, server_version, human);

  if (!options.trace_file.empty()) {
    Status s = WriteFileAtomically(options.trace_file, TraceText(run->trace));
    if (!s.ok()) {
      PrintError(command, s);
      return kExitHarnessFailure;
    }
  }

  // The replay file: everything needed to reproduce this exact run.
  std::string replay_file;
  OutDir out(options.output.out_dir);
  if (!out.dir().empty() && options.write_replay) {
    out.ClearPrevious();
    Result<std::string> file =
        out.WriteReplay(scenario.name, ReplayScenario(scenario, config, *run, CommandLine()), scenario_file,
                        server_version);
    if (!file.ok()) {
      PrintError(command, file.status());
      return kExitHarnessFailure;
    }
    replay_file = *file;
  }

  report::CheckReport check = SingleRunCheck(scenario.name, scenario.description, config, *run, scenario_file, seconds);
  // `run` without --out is reproduced by its own command line (its flags may
  // override the scenario file's seed or workload); replay and explain by
  // the file they replayed.
  check.counterexample->replay_file = options.write_replay ? replay_file : scenario_file;
  check.counterexample->replay_command =
      !check.counterexample->replay_file.empty()
          ? ReplayCommand(check.counterexample->replay_file, options.replay_flags)
          : CommandLine();
  report::Report rep = SingleRunReport(command, config.seed, check);
  rep.tool_version = XACKLY_VERSION;
  rep.command_line = CommandLine();
  rep.server_version = server_version;
  rep.options = DescribeRun(config);

  if (Status wrote = out.WriteReports(rep, options.output); !wrote.ok()) {
    PrintError(command, wrote);
    return wrote.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitHarnessFailure;
  }
  if (Status recorded = out.Record(); !recorded.ok()) {
    PrintError(command, recorded);
    return kExitHarnessFailure;
  }
  PrintMachineReport(rep, options.output);
  if (options.verdict_is_news) {
    // Not a mismatch: the file's expectation was the old protocol's.
    fmt::print(human, "observed {} (the file expected {} of the protocol as it was recorded)\n", run->observed,
               config.expected.ToString());
  } else {
    fmt::print(human, "observed {} (expected {}): {}\n", run->observed, config.expected.ToString(),
               run->matched ? "matched" : "DOES NOT MATCH");
  }
  PrintViolationsAndStory(human, *run, *check.counterexample, "what happened:\n");
  std::string fired;
  for (const auto& [site, n] : run->coverage.fired) {
    fired += fmt::format("{}{} ({} time{})", fired.empty() ? "" : ", ", site, n, n == 1 ? "" : "s");
  }
  fmt::print(human, "faults fired: {}\n", fired.empty() ? "none" : fired);
  for (const std::string& line : report::UnfiredPlannedLines(check)) fmt::print(human, "{}\n", line);
  PrintTimeline(human, options.timeline, *run, *check.counterexample);
  for (const std::string& note : run->notes) fmt::print(human, "note: {}\n", note);
  if (!options.verdict_is_news && !diverged) fmt::print(human, "{}", NoHitHint(scenario, config, *run));
  fmt::print(human, "trace {}, {} steps, {} trace lines, {} virtual, {} round trips ({} by the harness)\n",
             run->TraceHashHex(), run->steps, run->trace_lines,
             report::FormatDuration(std::max<int64_t>(run->virtual_ms, 0)),
             run->protocol_round_trips + run->harness_round_trips, run->harness_round_trips);
  if (!options.trace_file.empty()) fmt::print(human, "trace written to {}\n", options.trace_file);
  for (const std::string& f : out.written()) fmt::print(human, "wrote {}\n", f);
  fmt::print(human, "replay: {}\n", check.counterexample->replay_command);
  if (options.output.quiet) PrintQuietLine(scenario, config, *run, check, options);
  if (diverged) {
    fmt::print(human, "replay diverged: observed {} in a run that is not the recorded one (see above); exit 3\n",
               run->observed);
    return kExitHarnessFailure;
  }
  if (options.verdict_is_news) {
    fmt::print(human,
               "protocol changed: observed {} with the changed protocol (the file expects {}); exit 0, since that "
               "expectation was written for the old protocol: add --expect VERDICT to make this a test\n",
               run->observed, config.expected.ToString());
    return kExitOk;
  }
  if (report::GreenWithUnfiredPlan(check)) {
    // A green that never injected what the plan named is no evidence about
    // it (README, Exit codes). A violation that matched stands whatever
    // else the plan named: a counterexample replays to its exit code.
    const char* them = run->unfired_planned.size() == 1 ? "it" : "them";
    fmt::print(human,
               "matched, but {} of the plan never fired (above): the run says nothing about {}; make the run "
               "reach {} or take {} out of [schedule] faults; exit {}\n",
               Plural(run->unfired_planned.size(), "fault"), them, them, them, kExitCoverageGaps);
    return kExitCoverageGaps;
  }
  return run->matched ? kExitOk : kExitVerdictMismatch;
}

void RegisterRunCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run one protocol or scenario once, deterministically, and judge it");
  cmd->footer(
      "Prints the seed line first (before the run), then the observed verdict against the expected "
      "one, every violation with its cause, what happened, the faults that fired and the trace hash; "
      "the last line is the command that reproduces the run. One seed is one schedule: to search "
      "many, use `xackly check`. With --out, writes the replay file and the reports (default: all "
      "formats); without --out, --format json (or md, html, junit) prints that report on stdout "
      "and the rest on stderr.\n"
      "Exit 0: the observed verdict matches the expectation; 1: it does not; 2: bad input; 3: "
      "harness or server failure (or --check-determinism found two different traces); 4: it matches an "
      "expected ok, but a fault the scenario's [schedule] named never fired, so the run says nothing about it.");
  AddTargetFlags(cmd, &flags->target, ScenarioCount::kOne);
  AddOverrideFlags(cmd, &flags->overrides, /*with_seed=*/true);
  AddOutputFlags(cmd, &flags->output, "");
  cmd->add_option("--trace", flags->trace_file, "write the full trace (one line per step) to this file")
      ->check(NonEmptyPath());
  cmd->add_flag("--check-determinism", flags->check_determinism,
                "run the seed a second time on a fresh server and fail (exit 3) if the traces differ");
  cmd->callback([flags, &result] {
    if (flags->target.protocol.empty() && flags->target.scenarios.empty()) {
      fmt::print(stderr, "xackly run: error: name a --protocol NAME (valid: {}) or a --scenario FILE\n",
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
    if (Status resolved = ResolveOutput(&options.output); !resolved.ok()) {
      PrintError("run", resolved);
      result.exit_code = kExitUsage;
      return;
    }
    result.exit_code = RunAndReport("run", *scenario, flags->target.scenario_file(), options);
  });
}

}  // namespace xackly
