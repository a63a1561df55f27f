// `xackly check`: property-based checking of one protocol, one scenario, or
// the whole catalog. Generates cases, shrinks the first one that shows what
// is looked for (harness/check.h) and writes it as a replay file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <mutex>
#include <condition_variable>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/check.h"
#include "harness/case_pool.h"
#include "harness/cli/command.h"
#include "harness/cli/shared_flags.h"
#include "harness/files.h"
#include "harness/progress.h"
#include "harness/results.h"
#include "reports/report.h"

namespace xackly {

namespace {

// "name: note: ..." for each note of the protocol's probe runs.
std::string NoteLines(const std::string& name, const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& note : notes) out += fmt::format("{}: note: {}\n", name, note);
  return out;
}

// What the ranges line leaves out: half of the drawn stalls, clock jumps
// and outages take the fault model's own length instead of one in range.
std::string ModelDurationsText(const FaultModel& m) {
  std::vector<std::string> parts;
  if (m.Has(FaultKind::kStall)) parts.push_back(fmt::format("stalls {} ms", m.stall_ms));
  if (m.Has(FaultKind::kClockJump)) parts.push_back(fmt::format("clock jumps {} ms", m.clock_jump_ms));
  if (m.Has(FaultKind::kStoreOutage)) parts.push_back(fmt::format("outages {} ms", m.store_outage_ms));
  if (parts.empty()) return "";
  std::string list;
  for (size_t k = 0; k < parts.size(); ++k) list += (k == 0 ? "" : ", ") + parts[k];
  return " (or, in half of the draws, the fault model's own " + list + ")";
}

struct CheckFlags {
  TargetFlags target;
  bool all = false;
  std::string library;  // --library NAME|all: the pack in scenarios/library/
  OutputFlags output;
  int cases = 100;
  std::string seed = "1";  // SeedValidator
  int max_workers = 3;
  int max_events = 8;
  int max_faults = 4;
  std::string shard;  // "I/N"
  int jobs = 0;       // 0: one per core
  bool fixed_workload = false;  // --fixed-workload
  bool no_swarm = false;        // --no-swarm
  // Which of these the command line set (a scenario's own values apply otherwise).
  bool seed_given = false;
  bool workers_given = false;
  bool events_given = false;
};

// What one check is about: a name, a description and the base config.
struct Target {
  Scenario scenario;
  std::string scenario_file;
};

// What checking one target gave, printed and recorded in target order.
struct TargetCheck {
  Result<CheckOutcome> outcome;
  std::string ranges_line;  // the swarm ranges it explored (printed before its row when checks run at once)
};

// The options of one check. A scenario file's seed is the default seed and
// its [workload] the upper bounds of its cases (exact sizes with
// --fixed-workload); the command line wins where it says something.
CheckOptions OptionsFor(const Target& t, const CheckFlags& flags, uint64_t seed) {
  CheckOptions options;
  options.cases = flags.cases;
  options.seed = seed;
  options.bounds = {flags.max_workers, flags.max_events, flags.max_faults, flags.fixed_workload, !flags.no_swarm};
  if (!t.scenario_file.empty()) {
    const RunConfig& c = t.scenario.config;
    if (!flags.seed_given) options.seed = c.seed;
    if (!flags.workers_given) options.bounds.max_workers = c.workers;
    if (!flags.events_given) options.bounds.max_events = c.events;
  }
  return options;
}

// Where the scenario files of `check --all` and `--library` live:
// $XACKLY_SCENARIO_DIR, else the source tree this binary was built from.
std::filesystem::path ScenarioRoot() {
  const char* env = std::getenv("XACKLY_SCENARIO_DIR");
  return env != nullptr && *env != '\0' ? env : XACKLY_SCENARIO_DIR;
}

// Every *.toml directly in `dir`, appended in name order.
void AppendScenarioFiles(const std::filesystem::path& dir, std::vector<std::string>* files) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
}

// The scenario files after the C++ catalog. `library` empty (`--all`): the
// catalog as protocol scripts (scenarios/catalog/scripts/), the worked
// examples (scenarios/examples/) and every library of the pack
// (scenarios/library/<name>/, docs/libraries.md); without any, a note says
// so. Else (`--library NAME`) that library's files, or every library's for
// "all"; an unknown name is an error listing the known ones.
Status AddScenarioTargets(const std::string& library, std::vector<Target>* targets) {
  namespace fs = std::filesystem;
  const fs::path root = ScenarioRoot();
  std::vector<std::string> libraries;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(root / "library", ec)) {
    if (dir.is_directory()) libraries.push_back(dir.path().filename().string());
  }
  std::sort(libraries.begin(), libraries.end());
  if (!library.empty() && library != "all" &&
      std::find(libraries.begin(), libraries.end(), library) == libraries.end()) {
    std::string known;
    for (const std::string& n : libraries) known += n + ", ";
    return Status::InvalidArgument(fmt::format("--library: unknown library '{}' (valid: {}all; from {}, set "
                                               "XACKLY_SCENARIO_DIR to a copy of scenarios/)",
                                               library, known, (root / "library").string()));
  }
  std::vector<std::string> files;
  if (library.empty()) {
    AppendScenarioFiles(root / "catalog" / "scripts", &files);
    AppendScenarioFiles(root / "examples", &files);
  }
  for (const std::string& n : libraries) {
    if (library.empty() || library == "all" || library == n) AppendScenarioFiles(root / "library" / n, &files);
  }
  if (files.empty()) {
    fmt::print("xackly check --all: no protocol scripts under {} (set XACKLY_SCENARIO_DIR to a copy of "
               "scenarios/): checking the C++ catalog only\n",
               root.string());
    return Status::Ok();
  }
  for (const std::string& file : files) {
    Result<Scenario> s = LoadScenarioFile(file);
    if (!s.ok()) return s.status();
    targets->push_back({std::move(s).value(), file});
  }
  return Status::Ok();
}

int RunChecks(const std::vector<Target>& targets, const CheckFlags& flags) {
  uint64_t seed = 0;
  if (!ParseSeed(flags.seed, &seed)) {
    fmt::print(stderr, "xackly check: error: --seed: expected an integer in 0..2^64-1, got '{}'\n", flags.seed);
    return kExitUsage;
  }
  CheckOptions options = OptionsFor(targets[0], flags, seed);
  if (!flags.shard.empty() && !ParseShard(flags.shard, &options.shard_index, &options.shard_count)) {
    fmt::print(stderr, "xackly check: error: --shard: expected I/N with 1 <= I <= N, got '{}'\n", flags.shard);
    return kExitUsage;
  }
  OutputFlags output = flags.output;
  Status output_ok = ResolveOutput(&output);
  if (output_ok.ok()) output_ok = CheckOutputFlags(output);
  if (!output_ok.ok()) {
    PrintError("check", output_ok);
    return kExitUsage;
  }
  std::FILE* human = HumanOut(output);

  int jobs = flags.jobs > 0 ? flags.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Cases run on `jobs` threads. With several protocols, `jobs` checks run
  // at once and share them (one check's shrinking is a chain of small
  // batches that would leave threads idle; the last check still gets them
  // all). Either way the outcomes do not depend on it.
  CasePool pool(jobs, ServerOptionsFrom(output));
  const int drivers = targets.size() > 1 ? std::min<int>(jobs, static_cast<int>(targets.size())) : 1;
  Result<std::string> server_version = pool.ServerVersion();
  if (!server_version.ok()) {
    PrintError("check", server_version.status());
    return kExitHarnessFailure;
  }
  bool tty = Progress::IsTty(stderr);
  fmt::print(human,
             "xackly check: seed {}, {} case{} per {}, on {} ({} parallel job{}); cases of at most {} worker{}, {} "
             "event{}, {} fault{}{}; {}\n",
             options.seed, flags.cases, flags.cases == 1 ? "" : "s", targets.size() == 1 ? "check" : "protocol",
             *server_version, jobs, jobs == 1 ? "" : "s", options.bounds.max_workers,
             options.bounds.max_workers == 1 ? "" : "s", options.bounds.max_events,
             options.bounds.max_events == 1 ? "" : "s", options.bounds.max_faults,
             options.bounds.max_faults == 1 ? "" : "s", flags.shard.empty() ? "" : ", shard " + flags.shard,
             !output.stdout_format.empty()
                 ? fmt::format("the {} report on stdout, replay files in {}", output.stdout_format, output.out_dir)
                 : "reports and replay files in " + output.out_dir);
  if (!flags.output.quiet && targets.size() == 1) {
    const Target& t = targets[0];
    const RunConfig& c = t.scenario.config;
    if (!t.scenario_file.empty()) {
      fmt::print(human, "{}: seed {} ({}), cases of {} {} workers and {} events ({}), {} producer(s), timing and "
                 "protocol from the file\n",
                 t.scenario_file, options.seed,
                 flags.seed_given ? "--seed" : t.scenario.has_seed ? "the file's seed" : "the default seed",
                 flags.fixed_workload ? "exactly" : "at most", options.bounds.max_workers,
                 options.bounds.max_events,
                 flags.workers_given || flags.events_given ? "the command line and the file's [workload]"
                 : t.scenario.has_workload                 ? "the file's [workload]"
                                                           : "the defaults of a scenario file",
                 c.producers);
    }
    if (c.faults.kinds.empty() && !c.fault_schedule) {
      fmt::print(human, "{}: the fault model is empty: this check injects NO faults and only shows the protocol "
                 "works when nothing fails\n",
                 t.scenario.name);
    } else if (!c.fault_schedule && SitesFoundByRunning(c.protocol) && c.faults.crash_points.empty() &&
               c.faults.lost_sites.empty()) {
      // Its sites are what it visits: the probes' line says which.
      std::string kinds;
      for (FaultKind k : c.faults.kinds) kinds += std::string(kinds.empty() ? "" : " ") + FaultKindName(k);
      fmt::print(human, "{}: fault model {} (point faults at the sites its probe runs visit)\n", t.scenario.name,
                 kinds);
    } else if (!c.fault_schedule) {
      fmt::print(human, "{}: fault model {}\n", t.scenario.name, c.faults.ToString());
    }
  }
  std::fflush(human);
  // This run's files replace the previous run's (in a directory of their own, the
  // default xackly-out, nothing else is there): no stale replay file looks current.
  if (!output.out_dir.empty()) RemovePreviousRunFiles(output.out_dir);
  std::vector<std::string> written;

  report::Report rep;
  rep.tool_version = XACKLY_VERSION;
  rep.command = "check";
  rep.command_line = CommandLine();
  rep.seed = options.seed;
  rep.server_version = *server_version;
  rep.options = fmt::format("{} cases, bounds {} workers / {} events / {} faults{}", flags.cases,
                            options.bounds.max_workers, options.bounds.max_events, options.bounds.max_faults,
                            options.bounds.swarm ? ", swarm" : "");
  rep.shard = flags.shard;
  rep.all_matched = true;

  Progress progress(stderr, tty, flags.output.quiet);
  // Each target's options: a scenario file's own seed and [workload] bounds.
  std::vector<CheckOptions> target_options;
  for (size_t k = 0; k < targets.size(); ++k) {
    CheckOptions own = k == 0 ? options : OptionsFor(targets[k], flags, seed);
    own.shard_index = options.shard_index;
    own.shard_count = options.shard_count;
    target_options.push_back(own);
  }
  // The case each target failed on in the harness (a harness limit, a
  // server failure), written as a replay file so that the failure can be
  // rerun on its own. Each target is driven by one thread at a time.
  std::vector<std::optional<std::pair<RunConfig, int>>> harness_failed(targets.size());
  for (size_t k = 0; k < targets.size(); ++k) {
    target_options[k].on_harness_failure = [&harness_failed, k](const RunConfig& failed, int case_index) {
      harness_failed[k] = std::make_pair(failed, case_index);
    };
  }
  auto ranges_line = [&](const Target& t, const SwarmRanges& r, const FaultModel& model,
                         const std::vector<std::string>& notes) {
    // A protocol whose sites are found by running it: the sites its probes found.
    const std::string probed = SitesFoundByRunning(t.scenario.config.protocol)
                                   ? fmt::format("{}: faults at the sites its probe runs visited: {}\n",
                                                 t.scenario.name, model.ToString())
                                   : "";
    return probed + fmt::format("{}: {}\n", t.scenario.name,
                       flags.no_swarm ? std::string("no swarm: every case keeps the config's own timing and every "
                                                    "fault kind")
                                      : "swarm: " + SwarmRangesText(r) + ModelDurationsText(t.scenario.config.faults) +
                                            "; a subset of the fault kinds per case") +
           NoteLines(t.scenario.name, notes);
  };
  // Writes `replay` (a case of target k, its config set) to --out as FILE
  // (ReplayFileName of the target's name + `file_suffix`), named the
  // target's name + `name_suffix`, its script paths rebased there, with this
  // run's server. Returns FILE.
  auto WriteCaseFile = [&](size_t k, Scenario replay, const std::string& file_suffix,
                           const std::string& name_suffix) -> Result<std::string> {
    const Target& t = targets[k];
    const std::string file = JoinPath(output.out_dir, ReplayFileName(t.scenario.name + file_suffix));
    replay.name = ScenarioNameFrom(t.scenario.name + name_suffix);
    if (!t.scenario_file.empty()) RebaseScriptPaths(&replay, t.scenario_file, file);
    replay.server = *server_version;
    written.push_back(file);
    Status s = WriteFileAtomically(file, WriteScenario(replay));
    if (!s.ok()) return s;
    return file;
  };
  // Writes `failed`, a case of target k the harness could not finish, as a
  // replay file that reruns it alone. Returns what to tell the user ("" when
  // there is no --out or the file could not be written).
  auto WriteUnfinishedCase = [&](size_t k, const RunConfig& failed, int case_index) -> std::string {
    if (output.out_dir.empty()) return "";
    Scenario replay = targets[k].scenario;
    replay.config = failed;
    replay.config.keep_trace = false;
    replay.origin = case_index >= 0 ? fmt::format("{} (case {} of seed {}, which the harness could not finish)",
                                                  CommandLine(), case_index, target_options[k].seed)
                                    : fmt::format("{} (a smaller case tried while shrinking, which the harness "
                                                  "could not finish)",
                                                  CommandLine());
    Result<std::string> file = WriteCaseFile(k, std::move(replay), "-harness-limit", "-harness-limit");
    if (!file.ok()) return "";
    // Also when the check ends here, with a failure.
    if (Status recorded = RecordRunFiles(output.out_dir, written); !recorded.ok()) PrintError("check", recorded);
    return fmt::format("`xackly replay {}` reruns that case alone", *file);
  };
  // Writes target k's replay file, prints its row and adds it to the report.
  // Returns -1, or the exit code when the check itself failed.
  bool incomplete = false;  // a check stopped some cases at the harness limit and found nothing
  auto FinishTarget = [&](size_t k, const TargetCheck& c) -> int {
    const Target& t = targets[k];
    const RunConfig& base = t.scenario.config;
    const Result<CheckOutcome>& outcome = c.outcome;
    if (!outcome.ok()) {
      // Among several targets, say whose case it was.
      PrintError("check", targets.size() > 1 ? outcome.status().WithContext(t.scenario.name) : outcome.status());
      if (harness_failed[k]) {
        std::string rerun = WriteUnfinishedCase(k, harness_failed[k]->first, harness_failed[k]->second);
        if (!rerun.empty()) fmt::print(stderr, "{}\n", rerun);
      }
      return ExitCodeOf(outcome.status());
    }
    std::string replay_file;
    if (outcome->counterexample_index && !output.out_dir.empty()) {
      std::string origin = fmt::format("{} (case {} of seed {}, after {} shrink{})", CommandLine(),
                                       *outcome->counterexample_index, target_options[k].seed,
                                       outcome->shrink_steps, outcome->shrink_steps == 1 ? "" : "s");
      Result<std::string> file = WriteCaseFile(
          k, ReplayScenario(t.scenario, outcome->minimal_config, outcome->minimal_result, origin), "", "-counterexample");
      if (!file.ok()) {
        PrintError("check", file.status());
        return kExitHarnessFailure;
      }
      replay_file = *file;
    }
    report::CheckReport row = ToCheckReport(t.scenario.name, t.scenario.description, base, *outcome, replay_file);
    if (row.counterexample) row.counterexample->scenario_file = t.scenario_file;
    // One shard sees only some cases: not finding a broken protocol's
    // violation is not a failure yet (`xackly merge` decides), finding any
    // violation of a correct one is.
    row.undecided = options.shard_count > 1 && !row.matched && !outcome->hit_index &&
                    !row.expected.IsOk();
    // Cases the harness could not judge may hold what the search looks for:
    // without a hit the check is not decided (exit 3), whatever the judged
    // cases showed.
    row.undecided = row.undecided || outcome->Undecided();
    incomplete = incomplete || outcome->Undecided();
    rep.all_matched = rep.all_matched && report::Passed(row);
    if (!flags.output.quiet) {
      fmt::print(human,
                 "{:<24} expected {:<28} observed {:<14} {} ({} case{}{}{}, {} rerun{} for determinism, {:.1f} s)\n",
                 row.name, row.expected.ToString(), row.observed, report::ResultWord(row), row.cases_run,
                 row.cases_run == 1 ? "" : "s",
                 outcome->hit_index       ? fmt::format(", first hit at case {}", *outcome->hit_index)
                 : outcome->other_index ? fmt::format(", another violation at case {}", *outcome->other_index)
                                        : "",
                 row.counterexample ? ", minimal: " + row.counterexample_size : "", outcome->determinism_reruns,
                 outcome->determinism_reruns == 1 ? "" : "s", row.seconds);
      std::fflush(human);
    }
    if (outcome->cases_unjudged > 0) {
      // Not judged, not a verdict: said even with --quiet, since it changes the exit code.
      std::string rerun = WriteUnfinishedCase(k, outcome->unjudged_config, *outcome->unjudged_index);
      fmt::print(stderr,
                 "{}: {} case{} stopped by the harness limit, not judged (the first, case {}: {}){}{}\n", row.name,
                 outcome->cases_unjudged, outcome->cases_unjudged == 1 ? "" : "s", *outcome->unjudged_index,
                 outcome->unjudged_why, rerun.empty() ? "" : "; ", rerun);
    }
    if (!flags.output.quiet && targets.size() == 1) {
      std::vector<std::string> unreachable = UnreachableSites(base);
      if (!unreachable.empty()) {
        std::string list;
        for (const std::string& u : unreachable) list += (list.empty() ? "" : ", ") + u;
        fmt::print(human, "{}: sites it cannot visit (derived from its operations; not search gaps): {}\n",
                   row.name, list);
      }
    }
    rep.checks.push_back(std::move(row));
    return -1;
  };
  std::vector<std::optional<TargetCheck>> checked(targets.size());
  if (drivers == 1) {
    // One at a time, in order: the ranges it explores, then its progress bar.
    for (size_t k = 0; k < targets.size(); ++k) {
      const Target& t = targets[k];
      CheckOptions own = target_options[k];
      own.on_ranges = [&](const SwarmRanges& r, const FaultModel& model, const std::vector<std::string>& notes) {
        if (!flags.output.quiet) {
          fmt::print(human, "{}", ranges_line(t, r, model, notes));
          std::fflush(human);
        }
        progress.Begin(targets.size() == 1 ? t.scenario.name
                                           : fmt::format("{} (protocol {} of {})", t.scenario.name, k + 1,
                                                         targets.size()),
                       static_cast<int>(ShardCaseIndexes(own).size()));
      };
      own.on_progress = [&](const CheckProgress& p) {
        progress.Update(p.cases_done, p.hits, p.shrinking ? "shrinking" : "",
                        p.shrinking ? fmt::format("{} smaller case{} kept of {} tried", p.shrink_steps,
                                                  p.shrink_steps == 1 ? "" : "s", p.shrink_runs)
                                    : "");
      };
      checked[k] = TargetCheck{RunCheck(t.scenario.config, pool, own), ""};
      progress.End();
      if (int code = FinishTarget(k, *checked[k]); code >= 0) return code;
    }
  } else {
    // `drivers` checks at once on the shared pool; results are printed and
    // recorded in target order as they become available, the progress bar
    // counts checks.
    std::mutex mu;
    std::condition_variable changed;
    size_t next = 0, finished = 0, hits = 0;
    bool abandon = false;
    auto drive = [&] {
      for (;;) {
        size_t k;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (abandon || next == targets.size()) return;
          k = next++;
        }
        CheckOptions own = target_options[k];
        std::string ranges;
        own.on_ranges = [&](const SwarmRanges& r, const FaultModel& model, const std::vector<std::string>& notes) {
          ranges = ranges_line(targets[k], r, model, notes);
        };
        Result<CheckOutcome> outcome = RunCheck(targets[k].scenario.config, pool, own);
        {
          std::lock_guard<std::mutex> lock(mu);
          if (outcome.ok() && outcome->hit_index) ++hits;
          checked[k] = TargetCheck{std::move(outcome), std::move(ranges)};
          ++finished;
        }
        changed.notify_all();
      }
    };
    std::vector<std::thread> driver_threads;
    for (int i = 0; i < drivers; ++i) driver_threads.emplace_back(drive);
    auto stop_drivers = [&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        abandon = true;
      }
      for (std::thread& d : driver_threads) d.join();
      driver_threads.clear();
    };
    progress.Begin(fmt::format("{} protocols, {} at once", targets.size(), drivers),
                   static_cast<int>(targets.size()));
    for (size_t k = 0; k < targets.size(); ++k) {
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] {
          progress.Update(static_cast<int>(finished), static_cast<int>(hits));
          return checked[k].has_value();
        });
      }
      progress.End();
      if (!flags.output.quiet) fmt::print(human, "{}", checked[k]->ranges_line);
      int code = FinishTarget(k, *checked[k]);
      if (code >= 0) {
        stop_drivers();
        return code;
      }
      if (k + 1 < targets.size()) {
        progress.Begin(fmt::format("{} protocols, {} at once", targets.size(), drivers),
                       static_cast<int>(targets.size()));
      }
    }
    stop_drivers();
  }

  std::vector<std::string> reports;
  Status wrote = WriteReports(rep, output, "text,md,html,junit,json", &reports);
  if (!wrote.ok()) {
    PrintError("check", wrote);
    return kExitHarnessFailure;
  }
  written.insert(written.end(), reports.begin(), reports.end());
  if (!output.out_dir.empty()) {
    if (Status recorded = RecordRunFiles(output.out_dir, written); !recorded.ok()) {
      PrintError("check", recorded);
      return kExitHarnessFailure;
    }
  }
  // One check: every detail. Many: the table, with details only for what
  // needs attention (report.txt and the other reports keep everything).
  // The report comes last, so the last line of a failure is its replay
  // command.
  bool many = rep.checks.size() > 1;
  for (const std::string& f : written) fmt::print(human, "wrote {}\n", f);
  // Every judged case matched, but some were not judged: exit 3, not 0.
  const int passed_code = incomplete ? kExitHarnessFailure : kExitOk;
  if (PrintMachineReport(rep, output)) return rep.all_matched ? passed_code : kExitVerdictMismatch;
  if (many && !output.out_dir.empty() && output.stdout_format.empty()) {
    fmt::print("stories and timelines of every counterexample: {}/report.html, {}/report.md\n", output.out_dir,
               output.out_dir);
  }
  std::printf("\n%s", report::RenderText(rep, ColorAllowed(stdout), many).c_str());
  return rep.all_matched ? passed_code : kExitVerdictMismatch;
}

}  // namespace

void RegisterCheckCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Property-check a protocol, a scenario or the whole catalog: generate cases, shrink the "
      "first failure to a minimal replay file");
  cmd->footer(
      "For a protocol expected to be correct, check searches for any violation; for a broken one "
      "(expected duplicate, lost...), it searches for that violation. The first case that shows it "
      "is shrunk to a minimal case, written to --out as a replay file; `xackly replay FILE` "
      "reproduces it exactly.\n"
      "Exit 0: every observed verdict matches its expectation; 1: one does not; 2: bad input; 3: "
      "harness or server failure, or a search that found nothing while some cases stopped at the "
      "step guard (not judged; the first is written to --out as NAME-harness-limit.replay.toml).");
  AddTargetFlags(cmd, &flags->target);
  cmd->add_flag("--all", flags->all,
                "check every catalog protocol, then the protocol scripts (the catalog as scripts, the "
                "examples and the library pack in scenarios/), and print a table");
  cmd->add_option("--library", flags->library,
                  "check every scenario of one library in scenarios/library/NAME/ (all: every library; "
                  "docs/libraries.md)");
  AddOutputFlags(cmd, &flags->output, "xackly-out");
  cmd->add_option("--cases", flags->cases, "generated cases per protocol (default 100)")
      ->check(CLI::Range(1, 1000000));
  CLI::Option* seed = cmd->add_option("--seed", flags->seed,
                                      "seed of the case generator (default 1; a scenario file's own seed)");
  CLI::Option* workers =
      cmd->add_option("--max-workers", flags->max_workers,
                      "most workers in a generated case (default 3; a scenario file's [workload] workers)")
          ->check(CLI::Range(1, 64));
  CLI::Option* events =
      cmd->add_option("--max-events", flags->max_events,
                      "most events in a generated case (default 8; a scenario file's [workload] events)")
          ->check(CLI::Range(1, 1000));
  cmd->add_flag("--fixed-workload", flags->fixed_workload,
                "every case has exactly the most workers and events instead of at most");
  cmd->add_flag("--no-swarm", flags->no_swarm,
                "keep the config's own timing and every fault kind in every case (default: each case draws "
                "effect durations, production rate, restart delays, stall/jump/outage lengths and a subset "
                "of fault kinds within ranges derived from the protocol's timers)");
  cmd->add_option("--max-faults", flags->max_faults, "most faults in a generated case (default 4)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("-j,--jobs", flags->jobs,
                  "cases run in parallel, each thread on its own redis-server (default: one per core); "
                  "the results do not depend on it")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--shard", flags->shard,
                  "run only shard I of N (cases whose index is I-1 modulo N); `xackly merge` combines shards");
  cmd->callback([flags, &result, seed, workers, events] {
    flags->seed_given = seed->count() > 0;
    flags->workers_given = workers->count() > 0;
    flags->events_given = events->count() > 0;
    int chosen = (flags->all ? 1 : 0) + (flags->target.protocol.empty() ? 0 : 1) +
                 (flags->target.scenario.empty() ? 0 : 1) + (flags->library.empty() ? 0 : 1);
    if (chosen != 1) {
      fmt::print(stderr, "xackly check: error: name exactly one of --protocol NAME, --scenario FILE, --library NAME, --all\n");
      result.exit_code = kExitUsage;
      return;
    }
    std::vector<Target> targets;
    if (flags->all) {
      for (const ProtocolDef& p : Catalog()) {
        TargetFlags t;
        t.protocol = p.name;
        targets.push_back({*LoadTarget(t), ""});
      }
    }
    if (flags->all || !flags->library.empty()) {
      Status scripts = AddScenarioTargets(flags->all ? "" : flags->library, &targets);
      if (!scripts.ok()) {
        PrintError("check", scripts);
        result.exit_code = kExitUsage;
        return;
      }
    } else {
      Result<Scenario> s = LoadTarget(flags->target);
      if (!s.ok()) {
        PrintError("check", s.status());
        result.exit_code = kExitUsage;
        return;
      }
      targets.push_back({std::move(s).value(), flags->target.scenario});
    }
    result.exit_code = RunChecks(targets, *flags);
  });
}

}  // namespace xackly
