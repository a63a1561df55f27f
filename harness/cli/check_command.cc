// `xackly check`: property-based checking of one protocol, scenario files (one, or a suite), or
// the whole catalog. Generates cases, shrinks the first one that shows what
// is looked for (harness/check.h) and writes it as a replay file.
//
// The command is a CheckSession: it resolves the flags (Open), prints what
// it will search, runs the checks one at a time with a progress bar or
// several at once in order (harness/cli/in_order.h), finishes each one
// (its replay file, its row, its report entry) and writes the reports
// (harness/cli/out_dir.h). The targets come from harness/cli/check_targets.h.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/case_pool.h"
#include "harness/check.h"
#include "harness/files.h"
#include "harness/cli/check_targets.h"
#include "harness/cli/command.h"
#include "harness/cli/in_order.h"
#include "harness/cli/out_dir.h"
#include "harness/cli/shared_flags.h"
#include "sim/limits.h"
#include "harness/progress.h"
#include "harness/results.h"
#include "harness/search_defaults.h"
#include "reports/report.h"
#include "sim/text.h"

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
  for (FaultKind k : m.kinds) {
    const FaultKindInfo& info = InfoOf(k);
    if (info.search == SearchScale::kModelValue) continue;
    parts.push_back(fmt::format("{} {} ms", info.name, m.ModelDurationMs(k)));
  }
  if (parts.empty()) return "";
  return fmt::format(" (or, in half of the draws, the fault model's own {})", fmt::join(parts, ", "));
}

struct CheckFlags {
  TargetFlags target;
  bool all = false;
  std::string library;  // --library NAME|all: the pack in scenarios/library/
  OutputFlags output;
  int cases = kDefaultCases;
  std::string seed = std::to_string(kDefaultCheckSeed);  // SeedValidator
  int max_workers = kDefaultMaxWorkers;
  int max_events = kDefaultMaxEvents;
  int max_faults = kDefaultMaxFaults;
  std::string shard;  // "I/N"
  int jobs = 0;       // 0: one per core
  bool fixed_workload = false;  // --fixed-workload
  bool no_swarm = false;        // --no-swarm
  int coverage_cap = 0;         // --coverage-cap (0: kDefaultCoverageCapFactor x --cases)
  int max_shrinks = kDefaultMaxShrinkRuns;  // --max-shrinks
  bool allow_gaps = false;      // --allow-gaps
  // One server of a matrix (RunServerMatrix): its human lines go to stderr
  // and its terminal table is left to the matrix.
  bool matrix_member = false;
  // Which of these the command line set (a scenario's own values apply otherwise).
  bool seed_given = false;
  bool workers_given = false;
  bool events_given = false;
};

// What checking one target gave, printed and recorded in target order.
struct TargetCheck {
  Result<CheckOutcome> outcome;
  std::string ranges_line;  // the swarm ranges it explored (printed before its row when checks run at once)
};

class CheckSession {
 public:
  CheckSession(const std::vector<Target>& targets, const CheckFlags& flags) : targets_(targets), flags_(flags) {}

  // Resolves the flags, starts the case pool; an exit code when it cannot.
  std::optional<int> Open();
  // Runs every check, writes the reports; the command's exit code.
  int Run();
  // What Run() recorded.
  const report::Report& report() const { return report_; }

 private:
  // The options of one check. A scenario file's seed is the default seed
  // and its [workload] the upper bounds of its cases (exact sizes with
  // --fixed-workload); the command line wins where it says something.
  CheckOptions OptionsFor(const Target& t) const;
  void PrintHeader() const;
  // The fault model line of a single check.
  void PrintFaultModel(const Target& t) const;
  // The swarm ranges (and the probes' sites and notes) a check searches.
  std::string RangesLine(const Target& t, const SwarmRanges& r, const FaultModel& model,
                         const std::vector<std::string>& notes) const;
  // Checks one at a time, in order, each with its own progress bar.
  std::optional<int> RunOneAtATime();
  // `drivers_` checks at once on the shared pool, printed and recorded in
  // target order as they become available.
  std::optional<int> RunAtOnce();
  // Writes target k's replay file, prints its row and adds it to the
  // report; an exit code when the check itself failed.
  std::optional<int> Finish(size_t k, const TargetCheck& c);
  // The row's one line: name, expected, observed, result word, cases. With
  // --quiet, these lines are all that stdout carries.
  void PrintRowLine(const report::CheckReport& row, const CheckOutcome& outcome) const;
  // Writes `failed`, a case of target k the harness could not finish, as a
  // replay file that reruns it alone; what to tell the user ("" when there
  // is no --out or the file could not be written).
  std::string WriteUnfinishedCase(size_t k, const RunConfig& failed, int case_index);
  int WriteReports();

  const std::vector<Target>& targets_;
  const CheckFlags& flags_;
  OutputFlags output_;
  std::FILE* human_ = stdout;
  uint64_t seed_ = kDefaultCheckSeed;
  std::string shard_;         // "I/N" when sharded, as the report records it
  std::string shard_source_;  // with --shard auto: the variables it came from
  CheckOptions options_;                     // the first target's (its seed and bounds head the output)
  std::vector<CheckOptions> target_options_;  // each target's
  int jobs_ = 1;
  int drivers_ = 1;
  std::unique_ptr<CasePool> pool_;
  std::string server_version_;
  std::unique_ptr<OutDir> out_;
  std::unique_ptr<Progress> progress_;
  report::Report report_;
  // The case each target failed on in the harness (a harness limit, a
  // server failure), written as a replay file so that the failure can be
  // rerun on its own. Each target is driven by one thread at a time.
  std::vector<std::optional<std::pair<RunConfig, int>>> harness_failed_;
  bool incomplete_ = false;  // a check stopped some cases at the harness limit and found nothing
};

CheckOptions CheckSession::OptionsFor(const Target& t) const {
  CheckOptions options;
  options.cases = flags_.cases;
  options.seed = seed_;
  options.bounds = {flags_.max_workers, flags_.max_events, flags_.max_faults, flags_.fixed_workload,
                    !flags_.no_swarm};
  options.coverage_cap = flags_.coverage_cap;
  options.max_shrink_runs = flags_.max_shrinks;
  if (!t.scenario_file.empty()) {
    const RunConfig& c = t.scenario.config;
    if (!flags_.seed_given) options.seed = c.seed;
    if (!flags_.workers_given) options.bounds.max_workers = c.workers;
    if (!flags_.events_given) options.bounds.max_events = c.events;
  }
  return options;
}

std::optional<int> CheckSession::Open() {
  if (!ParseSeed(flags_.seed, &seed_)) {
    fmt::print(stderr, "xackly check: error: --seed: expected an integer in 0..2^64-1, got '{}'\n", flags_.seed);
    return kExitUsage;
  }
  if (flags_.coverage_cap > 0 && flags_.coverage_cap < flags_.cases) {
    // The cap counts every case, the search's own included: a cap below
    // --cases is a misreading (extra cases?), not a request.
    fmt::print(stderr,
               "xackly check: error: --coverage-cap {} is below --cases {}: the cap counts all the cases of a check, "
               "the search's own included; give at least {} (equal to --cases turns the coverage rule off)\n",
               flags_.coverage_cap, flags_.cases, flags_.cases);
    return kExitUsage;
  }
  options_ = OptionsFor(targets_[0]);
  if (flags_.shard == "auto") {
    Result<ShardSpec> env = ShardFromEnvironment(std::getenv);
    if (!env.ok()) {
      fmt::print(stderr, "xackly check: error: --shard auto: {}\n", env.status().message());
      return kExitUsage;
    }
    options_.shard_index = env->index;
    options_.shard_count = env->count;
    shard_source_ = env->source;
  } else if (!flags_.shard.empty() && !ParseShard(flags_.shard, &options_.shard_index, &options_.shard_count)) {
    fmt::print(stderr, "xackly check: error: --shard: expected I/N with 1 <= I <= N, or auto, got '{}'\n",
               flags_.shard);
    return kExitUsage;
  }
  if (!flags_.shard.empty()) shard_ = ShardSpec{options_.shard_index, options_.shard_count, ""}.Text();
  output_ = flags_.output;
  Status output_ok = ResolveOutput(&output_);
  if (output_ok.ok()) output_ok = CheckOutputFlags(output_);
  if (!output_ok.ok()) {
    PrintError("check", output_ok);
    return kExitUsage;
  }
  human_ = flags_.matrix_member ? stderr : HumanOut(output_);
  jobs_ = flags_.jobs > 0 ? flags_.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Cases run on `jobs` threads. With several protocols, `jobs` checks run
  // at once and share them (one check's shrinking is a chain of small
  // batches that would leave threads idle; the last check still gets them
  // all). Either way the outcomes do not depend on it.
  pool_ = std::make_unique<CasePool>(jobs_, ServerOptionsFrom(output_));
  drivers_ = targets_.size() > 1 ? std::min<int>(jobs_, static_cast<int>(targets_.size())) : 1;
  Result<std::string> server_version = pool_->ServerVersion();
  if (!server_version.ok()) {
    PrintError("check", server_version.status());
    return kExitHarnessFailure;
  }
  server_version_ = *server_version;
  for (size_t k = 0; k < targets_.size(); ++k) {
    CheckOptions own = k == 0 ? options_ : OptionsFor(targets_[k]);
    own.shard_index = options_.shard_index;
    own.shard_count = options_.shard_count;
    own.on_harness_failure = [this, k](const RunConfig& failed, int case_index) {
      harness_failed_[k] = std::make_pair(failed, case_index);
    };
    target_options_.push_back(std::move(own));
  }
  harness_failed_.resize(targets_.size());
  out_ = std::make_unique<OutDir>(output_.out_dir);
  progress_ = std::make_unique<Progress>(stderr, Progress::IsTty(stderr), flags_.output.quiet);

  report_.tool_version = XACKLY_VERSION;
  report_.command = "check";
  report_.command_line = CommandLine();
  report_.seed = options_.seed;
  report_.server_version = server_version_;
  report_.options = fmt::format("{} cases, bounds {} workers / {} events / {} faults{}", flags_.cases,
                                options_.bounds.max_workers, options_.bounds.max_events,
                                options_.bounds.max_faults, options_.bounds.swarm ? ", swarm" : "");
  if (flags_.max_shrinks != kDefaultMaxShrinkRuns) report_.options += fmt::format(", at most {} shrinks", flags_.max_shrinks);
  report_.search = {flags_.cases, flags_.max_workers, flags_.max_events, flags_.max_faults, flags_.fixed_workload,
                    !flags_.no_swarm};
  report_.shard = shard_;
  report_.all_matched = true;
  return std::nullopt;
}

void CheckSession::PrintHeader() const {
  if (flags_.output.quiet) return;  // the rows' lines only
  const CaseBounds& b = options_.bounds;
  fmt::print(human_, "xackly check: seed {}, {} per {}, on {} ({}); cases of at most {}, {}, {}{}; {}\n",
             options_.seed, Plural(flags_.cases, "case"), targets_.size() == 1 ? "check" : "protocol",
             server_version_, Plural(jobs_, "parallel job"), Plural(b.max_workers, "worker"),
             Plural(b.max_events, "event"), Plural(b.max_faults, "fault"),
             shard_.empty() ? "" : ", shard " + shard_ + (shard_source_.empty() ? "" : " (" + shard_source_ + ")"),
             !output_.stdout_format.empty()
                 ? fmt::format("the {} report on stdout, replay files in {}", output_.stdout_format, output_.out_dir)
                 : "reports and replay files in " + output_.out_dir);
  if (targets_.size() != 1) return;
  const Target& t = targets_[0];
  if (!t.scenario_file.empty()) {
    const int replicas = t.scenario.config.replicas;
    fmt::print(human_, "{}: seed {} ({}), cases of {} {} workers and {} events ({}), {} producer(s), {}timing and "
               "protocol from the file\n",
               t.scenario_file, options_.seed,
               flags_.seed_given ? "--seed" : t.scenario.has_seed ? "the file's seed" : "the default seed",
               flags_.fixed_workload ? "exactly" : "at most", b.max_workers, b.max_events,
               flags_.workers_given || flags_.events_given ? "the command line and the file's [workload]"
               : t.scenario.has_workload                   ? "the file's [workload]"
                                                           : "the defaults of a scenario file",
               t.scenario.config.producers,
               replicas > 0 ? fmt::format("a primary with {}, ", Plural(replicas, "replica")) : "");
  }
  PrintFaultModel(t);
}

void CheckSession::PrintFaultModel(const Target& t) const {
  const RunConfig& c = t.scenario.config;
  if (c.fault_schedule) {
    // A search draws each case's faults: the file's exact plan is what
    // `run` and `replay` fire, and a check saying nothing of it would seem
    // to have used it.
    fmt::print(human_, "{}: note: check draws each case's faults from the model below; the file's [schedule] "
               "faults ({}) are what `xackly run` and `replay` fire\n",
               t.scenario.name, Plural(c.fault_schedule->size(), "fault"));
  }
  if (c.faults.kinds.empty()) {
    fmt::print(human_, "{}: no faults{}: this check injects NO faults and only shows the protocol works when "
               "nothing fails\n",
               t.scenario.name, t.scenario.no_faults_asked ? " (as the file asks: kinds = [])" : "");
  } else if (SitesFoundByRunning(c.protocol) && c.faults.crash_points.empty() && c.faults.lost_sites.empty()) {
    // Its sites are what it visits: the probes' line says which.
    std::vector<std::string> kinds;
    for (FaultKind k : c.faults.kinds) kinds.emplace_back(FaultKindName(k));
    fmt::print(human_, "{}: fault model {} (point faults at the sites its probe runs visit)\n", t.scenario.name,
               fmt::join(kinds, " "));
  } else {
    fmt::print(human_, "{}: fault model {}\n", t.scenario.name, c.faults.ToString());
  }
}

std::string CheckSession::RangesLine(const Target& t, const SwarmRanges& r, const FaultModel& model,
                                     const std::vector<std::string>& notes) const {
  // A protocol whose sites are found by running it: the sites its probes found.
  const std::string probed = SitesFoundByRunning(t.scenario.config.protocol)
                                 ? fmt::format("{}: faults at the sites its probe runs visited: {}\n",
                                               t.scenario.name, model.ToString())
                                 : "";
  const std::string searched =
      flags_.no_swarm ? std::string("no swarm: every case keeps the config's own timing and every fault kind")
                      : "swarm: " + SwarmRangesText(r) + ModelDurationsText(t.scenario.config.faults) +
                            "; a subset of the fault kinds per case";
  return probed + fmt::format("{}: {}\n", t.scenario.name, searched) + NoteLines(t.scenario.name, notes);
}

std::string CheckSession::WriteUnfinishedCase(size_t k, const RunConfig& failed, int case_index) {
  if (out_->dir().empty()) return "";
  Scenario replay = targets_[k].scenario;
  replay.config = failed;
  replay.config.keep_trace = false;
  replay.origin = case_index >= 0 ? fmt::format("{} (case {} of seed {}, which the harness could not finish)",
                                                CommandLine(), case_index, target_options_[k].seed)
                                  : fmt::format("{} (a smaller case tried while shrinking, which the harness "
                                                "could not finish)",
                                                CommandLine());
  replay.name = ScenarioNameFrom(targets_[k].scenario.name + "-harness-limit");
  Result<std::string> file = out_->WriteReplay(targets_[k].scenario.name + "-harness-limit", std::move(replay),
                                               targets_[k].scenario_file, server_version_);
  if (!file.ok()) return "";
  // Also when the check ends here, with a failure.
  if (Status recorded = out_->Record(); !recorded.ok()) PrintError("check", recorded);
  return fmt::format("`xackly replay {}` reruns that case alone", *file);
}

void CheckSession::PrintRowLine(const report::CheckReport& row, const CheckOutcome& outcome) const {
  if (flags_.matrix_member && flags_.output.quiet) return;  // the matrix prints the rows
  fmt::print(human_, "{:<24} expected {:<28} observed {:<14} {} ({}{}{}{}, {} for determinism, {:.1f} s)\n",
             row.name, row.expected.ToString(), row.observed, report::ResultWord(row), Plural(row.cases_run, "case"),
             row.cases_for_coverage > 0 ? fmt::format(" ({} for coverage)", row.cases_for_coverage) : "",
             outcome.hit_index     ? fmt::format(", first hit at case {}", *outcome.hit_index)
             : outcome.other_index ? fmt::format(", another violation at case {}", *outcome.other_index)
                                   : "",
             row.counterexample ? (row.shrink_cut ? ", not minimal: " : ", minimal: ") + row.counterexample_size : "",
             Plural(outcome.determinism_reruns, "rerun"), row.seconds);
  std::fflush(human_);
}

std::optional<int> CheckSession::Finish(size_t k, const TargetCheck& c) {
  const Target& t = targets_[k];
  const RunConfig& base = t.scenario.config;
  const Result<CheckOutcome>& outcome = c.outcome;
  if (!outcome.ok()) {
    // Among several targets, say whose case it was.
    PrintError("check", targets_.size() > 1 ? outcome.status().WithContext(t.scenario.name) : outcome.status());
    if (harness_failed_[k]) {
      std::string rerun = WriteUnfinishedCase(k, harness_failed_[k]->first, harness_failed_[k]->second);
      if (!rerun.empty()) fmt::print(stderr, "{}\n", rerun);
    }
    return ExitCodeOf(outcome.status());
  }
  if (!outcome->unvisited_sites.empty()) {
    // A named site no run visited: a typo or another protocol's spelling,
    // never a green (its faults could not fire).
    std::vector<std::string> what;
    for (const CheckOutcome::UnvisitedSite& u : outcome->unvisited_sites) {
      what.push_back(fmt::format("{}: '{}' is a site no probe and no case visited{}", u.field, u.site,
                                 !u.nearest.empty() ? fmt::format(" (did you mean {}?)", fmt::join(u.nearest, ", "))
                                 : u.visited.empty() ? ""
                                                     : fmt::format(" (the runs visited: {})", fmt::join(u.visited, ", "))));
    }
    PrintError("check", Status::InvalidArgument(fmt::format(
                            "{}: {}; no fault could fire there", t.scenario_file.empty() ? t.scenario.name : t.scenario_file,
                            fmt::join(what, "; "))));
    return kExitUsage;
  }
  std::string replay_file;
  if (outcome->counterexample_index && !out_->dir().empty()) {
    std::string origin = fmt::format("{} (case {} of seed {}, after {} shrink{})", CommandLine(),
                                     *outcome->counterexample_index, target_options_[k].seed, outcome->shrink_steps,
                                     outcome->shrink_steps == 1 ? "" : "s");
    Scenario replay = ReplayScenario(t.scenario, outcome->minimal_config, outcome->minimal_result, origin);
    replay.name = ScenarioNameFrom(t.scenario.name + "-counterexample");
    // A case whose shrinking was cut short may show more than the check
    // expects: its replay file expects what it shows, so that it replays.
    Expectation shown;
    if (outcome->shrink_cut && !Matches(replay.config.expected, outcome->minimal_result.violations) &&
        Expectation::Parse(outcome->observed, &shown)) {
      replay.config.expected = shown;
    }
    Result<std::string> file = out_->WriteReplay(t.scenario.name, std::move(replay), t.scenario_file, server_version_);
    if (!file.ok()) {
      PrintError("check", file.status());
      return kExitHarnessFailure;
    }
    replay_file = *file;
  }
  report::CheckReport row = ToCheckReport(t.scenario.name, t.scenario.description, base, *outcome, replay_file);
  if (row.counterexample) row.counterexample->scenario_file = t.scenario_file;
  row.gaps_allowed = flags_.allow_gaps;
  if (t.scenario.no_faults_asked) row.fault_model = "none (as the file asks)";
  // One shard sees only some cases: not finding a broken protocol's
  // violation is not a failure yet (`xackly merge` decides), finding any
  // violation of a correct one is.
  row.undecided = options_.shard_count > 1 && !row.matched && !outcome->hit_index && !row.expected.IsOk();
  // Cases the harness could not judge may hold what the search looks for:
  // without a hit the check is not decided (exit 3), whatever the judged
  // cases showed.
  row.undecided = row.undecided || outcome->Undecided();
  incomplete_ = incomplete_ || outcome->Undecided();
  report_.all_matched = report_.all_matched && report::Passed(row);
  PrintRowLine(row, *outcome);
  if (!row.coverage_gaps.empty() && row.matched) {
    // Said even with --quiet: unless allowed, it changes the exit code.
    fmt::print(stderr, "{}: coverage gaps after {}: {} never fired although some case reached {} in its fault "
               "phase ({}); this green is evidence only for the sites that fired{}\n",
               row.name, Plural(row.cases_run + row.cases_unjudged, "case"), fmt::join(row.coverage_gaps, ", "),
               row.coverage_gaps.size() == 1 ? "it" : "them",
               flags_.coverage_cap > 0 ? fmt::format("--coverage-cap {}", flags_.coverage_cap)
                                       : fmt::format("the cap, {}x --cases", kDefaultCoverageCapFactor),
               flags_.allow_gaps ? " (allowed by --allow-gaps)" : ": raise --coverage-cap, or --allow-gaps to accept");
  }
  if (outcome->cases_unjudged > 0) {
    // Not judged, not a verdict: said even with --quiet, since it changes the exit code.
    std::string rerun = WriteUnfinishedCase(k, outcome->unjudged_config, *outcome->unjudged_index);
    fmt::print(stderr, "{}: {} stopped by the harness limit, not judged (the first, case {}: {}){}{}\n", row.name,
               Plural(outcome->cases_unjudged, "case"), *outcome->unjudged_index, outcome->unjudged_why,
               rerun.empty() ? "" : "; ", rerun);
  }
  if (!flags_.output.quiet && targets_.size() == 1) {
    std::vector<std::string> unreachable = UnreachableSites(base);
    if (!unreachable.empty()) {
      fmt::print(human_, "{}: sites it cannot visit (derived from its operations; not search gaps): {}\n", row.name,
                 fmt::join(unreachable, ", "));
    }
  }
  report_.checks.push_back(std::move(row));
  return std::nullopt;
}

std::optional<int> CheckSession::RunOneAtATime() {
  for (size_t k = 0; k < targets_.size(); ++k) {
    const Target& t = targets_[k];
    CheckOptions own = target_options_[k];
    own.on_ranges = [&](const SwarmRanges& r, const FaultModel& model, const std::vector<std::string>& notes) {
      if (!flags_.output.quiet) {
        fmt::print(human_, "{}", RangesLine(t, r, model, notes));
        std::fflush(human_);
      }
      progress_->Begin(targets_.size() == 1
                           ? t.scenario.name
                           : fmt::format("{} (protocol {} of {})", t.scenario.name, k + 1, targets_.size()),
                       static_cast<int>(ShardCaseIndexes(own).size()));
    };
    own.on_progress = [&](const CheckProgress& p) {
      const std::string phase = p.shrinking ? "shrinking" : p.covering ? "covering" : "";
      const std::string detail =
          p.shrinking  ? fmt::format("{} kept of {} tried", Plural(p.shrink_steps, "smaller case"), p.shrink_runs)
          : p.covering ? fmt::format("{} not fired yet", Plural(p.gaps, "site"))
                       : "";
      progress_->Update(p.cases_done, p.hits, phase, detail, p.unjudged);
    };
    TargetCheck checked{RunCheck(t.scenario.config, *pool_, own), ""};
    progress_->End();
    if (std::optional<int> code = Finish(k, checked)) return code;
  }
  return std::nullopt;
}

std::optional<int> CheckSession::RunAtOnce() {
  std::atomic<int> hits = 0;
  std::optional<int> code;
  const std::string label = fmt::format("{} checks, {} at once", targets_.size(), drivers_);
  progress_->Begin(label, static_cast<int>(targets_.size()), "checks");
  RunInOrder<TargetCheck>(
      targets_.size(), drivers_,
      [&](size_t k) {
        CheckOptions own = target_options_[k];
        std::string ranges;
        own.on_ranges = [&](const SwarmRanges& r, const FaultModel& model, const std::vector<std::string>& notes) {
          ranges = RangesLine(targets_[k], r, model, notes);
        };
        Result<CheckOutcome> outcome = RunCheck(targets_[k].scenario.config, *pool_, own);
        if (outcome.ok() && outcome->hit_index) ++hits;
        return TargetCheck{std::move(outcome), std::move(ranges)};
      },
      [&](size_t k, TargetCheck& checked) {
        progress_->End();
        if (!flags_.output.quiet) fmt::print(human_, "{}", checked.ranges_line);
        code = Finish(k, checked);
        if (code) return false;
        if (k + 1 < targets_.size()) progress_->Begin(label, static_cast<int>(targets_.size()), "checks");
        return true;
      },
      [&](size_t done) { progress_->Update(static_cast<int>(done), hits); });
  return code;
}

int CheckSession::WriteReports() {
  if (Status wrote = out_->WriteReports(report_, output_); !wrote.ok()) {
    PrintError("check", wrote);
    return kExitHarnessFailure;
  }
  if (Status recorded = out_->Record(); !recorded.ok()) {
    PrintError("check", recorded);
    return kExitHarnessFailure;
  }
  // One check: every detail. Many: the table, with details only for what
  // needs attention (report.txt and the other reports keep everything).
  // The report comes last, so the last line of a failure is its replay
  // command.
  const bool many = report_.checks.size() > 1;
  if (!flags_.output.quiet) {
    for (const std::string& f : out_->written()) fmt::print(human_, "wrote {}\n", f);
  }
  // Every judged case matched, but some were not judged: exit 3, not 0;
  // every check matched but some left coverage gaps: exit 4.
  const int passed_code = incomplete_ ? kExitHarnessFailure : kExitOk;
  const bool only_gaps = std::all_of(report_.checks.begin(), report_.checks.end(), [](const report::CheckReport& c) {
    return report::Passed(c) || report::FailedOnlyByGaps(c);
  });
  // One shard's gaps are not the search's: another shard may have fired
  // them, so merge judges them (it exits 4 for gaps no shard fired).
  const int gaps_code = options_.shard_count > 1 ? passed_code : kExitCoverageGaps;
  const int code = report_.all_matched ? passed_code : only_gaps ? gaps_code : kExitVerdictMismatch;
  const bool machine_report = PrintMachineReport(report_, output_);
  if (flags_.output.quiet) {
    // A mismatch changes the exit code: how to reproduce it, one line each,
    // on stderr (stdout has the rows' lines only; the reports are in --out).
    for (const report::CheckReport& c : report_.checks) {
      if (!c.matched && c.counterexample) fmt::print(stderr, "replay: {}\n", c.counterexample->replay_command);
    }
  }
  if (machine_report || flags_.output.quiet || flags_.matrix_member) return code;
  if (many && !out_->dir().empty() && output_.stdout_format.empty()) {
    fmt::print("stories and timelines of every counterexample: {}/report.html, {}/report.md\n", out_->dir(),
               out_->dir());
  }
  std::printf("\n%s", report::RenderText(report_, ColorAllowed(stdout), many).c_str());
  return code;
}

int CheckSession::Run() {
  PrintHeader();
  std::fflush(human_);
  // This run's files replace the previous run's (in a directory of their own, the
  // default xackly-out, nothing else is there): no stale replay file looks current.
  out_->ClearPrevious();
  if (std::optional<int> code = drivers_ == 1 ? RunOneAtATime() : RunAtOnce()) return *code;
  return WriteReports();
}

// What the flags name, in the order checked: the catalog and the scenario
// root's scripts (--all), a library (--library), a suite of scenario files
// (--scenario), or one catalog protocol. Errors are input errors.
// REQUIRES: exactly one of them is set.
Result<std::vector<Target>> TargetsOf(const CheckFlags& flags) {
  std::vector<Target> targets;
  if (flags.all) AddCatalogTargets(&targets);
  Status added = Status::Ok();
  if (flags.all || !flags.library.empty()) {
    added = AddScenarioTargets(flags.all ? "" : flags.library, &targets);
  } else if (!flags.target.scenarios.empty()) {
    added = AddSuiteTargets(flags.target.scenarios, &targets);
  } else {
    Result<Scenario> s = LoadTarget(flags.target);
    if (!s.ok()) return s.status();
    targets.push_back({std::move(s).value(), ""});
  }
  if (added.ok()) added = RequireDistinctNames(targets);
  if (!added.ok()) return added;
  return targets;
}

// The version a server binary reports ("redis 7.0.15"), from one server
// started and stopped.
Result<std::string> ServerVersionOf(const OutputFlags& output) {
  CasePool probe(1, ServerOptionsFrom(output));
  return probe.ServerVersion();
}

// "redis 7.0.15" -> "redis-7.0.15": a directory name.
std::string ServerLabel(const std::string& version) {
  std::string label;
  for (char c : version) label += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '-';
  return label.empty() ? "server" : label;
}

// The exit code of a matrix: a harness failure on any server first, then a
// mismatch, then coverage gaps; 0 when every server's check passed.
int MatrixExitCode(const std::vector<report::ServerResult>& servers) {
  for (int code : {kExitHarnessFailure, kExitVerdictMismatch, kExitCoverageGaps}) {
    for (const report::ServerResult& s : servers) {
      if (s.exit_code == code) return code;
    }
  }
  for (const report::ServerResult& s : servers) {
    if (s.exit_code != kExitOk) return s.exit_code;
  }
  return kExitOk;
}

// `check --server A --server B ...`: the same targets, seeds and cases on
// each server in turn, each server's reports and replay files in
// --out/<label>/, then the verdicts side by side (stdout, and matrix.txt and
// matrix.json in --out). A verdict that differs by server is flagged, not
// failed: the exit code is each server's own, combined (MatrixExitCode).
int RunServerMatrix(const std::vector<Target>& targets, const CheckFlags& flags) {
  OutputFlags base = flags.output;
  if (Status resolved = ResolveOutput(&base); !resolved.ok()) {
    PrintError("check", resolved);
    return kExitUsage;
  }
  if (!base.stdout_format.empty()) {
    PrintError("check", Status::InvalidArgument(
                            "--format without --out: a server matrix writes each server's reports into "
                            "--out/<server>/; add --out DIR"));
    return kExitUsage;
  }
  if (Status ok = CheckOutputFlags(base); !ok.ok()) {
    PrintError("check", ok);
    return kExitUsage;
  }
  OutDir out(base.out_dir);
  out.ClearPrevious();
  std::vector<report::ServerResult> servers;
  std::set<std::string> labels;
  const size_t count = flags.output.server_paths.size();
  for (const std::string& path : flags.output.server_paths) {
    CheckFlags own = flags;
    own.output.server_paths = {path};
    own.output.server_path = path;
    Result<std::string> version = ServerVersionOf(own.output);
    if (!version.ok()) {
      PrintError("check", version.status().WithContext(fmt::format("server {} of {}", servers.size() + 1, count)));
      return kExitHarnessFailure;
    }
    std::string label = ServerLabel(*version);
    for (int n = 2; labels.count(label) > 0; ++n) label = ServerLabel(*version) + "-" + std::to_string(n);
    labels.insert(label);
    own.output.out_dir = JoinPath(base.out_dir, label);
    own.matrix_member = true;
    if (!flags.output.quiet) fmt::print(stderr, "── {} ({})\n", *version, path);
    CheckSession session(targets, own);
    std::optional<int> failed = session.Open();
    const int code = failed ? *failed : session.Run();
    if (failed) return code;  // it could not start: nothing to compare
    servers.push_back({label, own.output.out_dir, session.report(), code});
  }
  const std::string text = report::RenderMatrixText(servers, /*color=*/false);
  for (const auto& [name, content] :
       {std::pair{"matrix.txt", text}, std::pair{"matrix.json", report::RenderMatrixJson(servers)}}) {
    if (Status wrote = out.WriteFile(name, content); !wrote.ok()) {
      PrintError("check", wrote);
      return kExitHarnessFailure;
    }
  }
  if (Status recorded = out.Record(); !recorded.ok()) {
    PrintError("check", recorded);
    return kExitHarnessFailure;
  }
  if (flags.output.quiet) {
    std::printf("%s", report::RenderMatrixText(servers, /*color=*/false, /*rows_only=*/true).c_str());
  } else {
    std::printf("\n%s", report::RenderMatrixText(servers, ColorAllowed(stdout)).c_str());
  }
  return MatrixExitCode(servers);
}

}  // namespace

void RegisterCheckCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Property-check a protocol, scenario files (one, or a suite of files and directories) or the whole "
      "catalog: generate cases, shrink the first failure to a minimal replay file");
  cmd->footer(
      "For a protocol expected to be correct, check searches for any violation; for a broken one "
      "(expected duplicate, lost...), it searches for that violation. The first case that shows it "
      "is shrunk to a minimal case, written to --out as a replay file; `xackly replay FILE` "
      "reproduces it exactly. Several --scenario values (files, or directories standing for every "
      "*.toml below them except *.replay.toml) are one suite, run like --all: one table, one report "
      "and one JUnit testcase per scenario; shards of a suite merge like any check's.\n"
      "Exit 0: every observed verdict matches its expectation; 1: one does not; 2: bad input; 3: "
      "harness or server failure, or a search that found nothing while some cases stopped at the "
      "step guard (not judged; the first is written to --out as NAME-harness-limit.replay.toml); 4: "
      "every verdict matched, but some fault sites the cases reached never fired (coverage gaps, "
      "see --coverage-cap and --allow-gaps).");
  AddTargetFlags(cmd, &flags->target, ScenarioCount::kSuite);
  cmd->add_flag("--all", flags->all,
                "check every catalog protocol, then the protocol scripts (the catalog as scripts, the "
                "examples and the library pack in scenarios/), and print a table");
  cmd->add_option("--library", flags->library,
                  "check every scenario of one library in scenarios/library/NAME/ (all: every library; "
                  "docs/libraries.md)");
  AddOutputFlags(cmd, &flags->output, "xackly-out", /*several_servers=*/true);
  cmd->get_option("--quiet")->description(
      "stdout carries one line per check (name, expected, observed, result, cases) and nothing else: no "
      "header, progress, notes or report (the reports are in --out); what changes the exit code (an error, "
      "coverage gaps, cases not judged, a mismatch's replay command) is one line each on stderr");
  cmd->add_option("--cases", flags->cases, fmt::format("generated cases per protocol (default {})", kDefaultCases))
      ->check(CLI::Range(1, 1000000));
  CLI::Option* seed = cmd->add_option(
      "--seed", flags->seed,
      fmt::format("seed of the case generator (default {}; a scenario file's own seed)", kDefaultCheckSeed));
  CLI::Option* workers =
      cmd->add_option("--max-workers", flags->max_workers,
                      fmt::format("most workers in a generated case (default {}; a scenario file's [workload] "
                                  "workers)",
                                  kDefaultMaxWorkers))
          ->check(CLI::Range(1, kMaxWorkers));
  CLI::Option* events =
      cmd->add_option("--max-events", flags->max_events,
                      fmt::format("most events in a generated case (default {}; a scenario file's [workload] "
                                  "events)",
                                  kDefaultMaxEvents))
          ->check(CLI::Range(1, 1000));
  cmd->add_flag("--fixed-workload", flags->fixed_workload,
                "every case has exactly the most workers and events instead of at most");
  cmd->add_flag("--no-swarm", flags->no_swarm,
                "keep the config's own timing and every fault kind in every case (default: each case draws "
                "effect durations, production rate, restart delays, stall/jump/outage lengths and a subset "
                "of fault kinds within ranges derived from the protocol's timers)");
  cmd->add_option("--max-faults", flags->max_faults,
                  fmt::format("most faults in a generated case (default {})", kDefaultMaxFaults))
      ->check(CLI::Range(0, 64));
  cmd->add_option("--coverage-cap", flags->coverage_cap,
                  fmt::format("coverage before green: when --cases cases found nothing, keep drawing cases aimed at "
                              "the fault sites and kinds of the model that some case reached but none fired, up to "
                              "this many cases in all, the search's own included (default {}x --cases; equal to --cases turns "
                              "the rule off, below it is refused)",
                              kDefaultCoverageCapFactor))
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--max-shrinks", flags->max_shrinks,
                  fmt::format("most smaller cases tried while shrinking a failing case (default {}); 0 keeps the "
                              "first failing case as found, sooner: it matches an expectation it shows even when it "
                              "shows more (a minimal case shows exactly what is expected), and its replay file is not "
                              "minimal (the reports say so)",
                              kDefaultMaxShrinkRuns))
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--allow-gaps", flags->allow_gaps,
                "a check that matched with coverage gaps left at the cap passes (default: exit 4)");
  cmd->add_option("-j,--jobs", flags->jobs,
                  "cases run in parallel, each thread on its own redis-server (default: one per core); "
                  "the results do not depend on it")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--shard", flags->shard,
                  "run only shard I of N (cases whose index is I-1 modulo N); `xackly merge` combines shards. "
                  "auto: from the environment, the first set of XACKLY_SHARD=I/N, GitLab's CI_NODE_INDEX "
                  "(1-based) and CI_NODE_TOTAL, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) and "
                  "XACKLY_SHARD_COUNT (its completions)");
  cmd->callback([flags, &result, seed, workers, events] {
    flags->seed_given = seed->count() > 0;
    flags->workers_given = workers->count() > 0;
    flags->events_given = events->count() > 0;
    int chosen = (flags->all ? 1 : 0) + (flags->target.protocol.empty() ? 0 : 1) +
                 (flags->target.scenarios.empty() ? 0 : 1) + (flags->library.empty() ? 0 : 1);
    if (chosen != 1) {
      fmt::print(stderr, "xackly check: error: name exactly one of --protocol NAME, --scenario FILE|DIR..., "
                         "--library NAME, --all\n");
      result.exit_code = kExitUsage;
      return;
    }
    Result<std::vector<Target>> targets = TargetsOf(*flags);
    if (!targets.ok()) {
      PrintError("check", targets.status());
      result.exit_code = kExitUsage;
      return;
    }
    if (flags->output.server_paths.size() > 1) {
      result.exit_code = RunServerMatrix(*targets, *flags);
      return;
    }
    CheckSession session(*targets, *flags);
    std::optional<int> failed = session.Open();
    result.exit_code = failed ? *failed : session.Run();
  });
}

}  // namespace xackly
