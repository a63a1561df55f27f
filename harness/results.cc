#include "harness/results.h"

#include <fmt/format.h>

#include "sim/text.h"

namespace xackly {

namespace {

bool NeedsQuoting(const std::string& s) {
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '-' ||
          c == '_' || c == ':' || c == '+' || c == '=')) {
      return true;
    }
  }
  return s.empty();
}

// `s` as one word of a POSIX shell.
std::string ShellWord(const std::string& s) {
  if (!NeedsQuoting(s)) return s;
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string ReplayCommand(const std::string& file, const std::vector<std::string>& flags) {
  std::string command = "xackly replay " + ShellWord(file);
  for (const std::string& f : flags) command += " " + ShellWord(f);
  return command;
}

namespace {

std::string SizeWithFaults(const RunConfig& config, const RunResult& result, size_t faults) {
  return CaseSizeText(config.events, config.workers, static_cast<int64_t>(faults), config.handlers) + ", " +
         Plural(result.steps, "step");
}

}  // namespace

std::string CaseSize(const RunConfig& config, const RunResult& result) {
  return SizeWithFaults(config, result, config.fault_schedule ? config.fault_schedule->size() : result.fired.size());
}

std::string RunSize(const RunConfig& config, const RunResult& result) {
  return SizeWithFaults(config, result, result.fired.size());
}

report::CaseReport ToCaseReport(const RunConfig& config, const RunResult& result,
                                const std::string& scenario_file) {
  report::CaseReport c;
  c.protocol = config.protocol.name;
  c.scenario_file = scenario_file;
  c.seed = config.seed;
  c.producers = config.producers;
  c.workers = config.workers;
  c.handlers = config.handlers;
  c.events = config.events;
  c.persistence = PersistenceName(config.persistence);
  c.restart_naming = RestartNamingName(config.naming);
  c.expected = config.expected;
  c.observed = result.observed;
  c.matched = result.matched;
  c.violations = result.violations;
  c.trace_hash = result.TraceHashHex();
  c.steps = result.steps;
  c.virtual_ms = result.virtual_ms;
  c.fired = result.fired;
  c.coverage = result.coverage;
  c.trace = result.trace;
  c.histories = result.histories;
  for (int i = config.workers + 1; i <= config.TotalWorkers(); ++i) {
    c.worker_groups[ActorName(ActorRole::kWorker, i)] = config.groups[config.GroupOfWorker(i) - 1].name;
  }
  return c;
}

report::CheckReport SingleRunCheck(const std::string& name, const std::string& description,
                                   const RunConfig& config, const RunResult& result,
                                   const std::string& scenario_file, double seconds) {
  report::CheckReport r;
  r.name = name;
  r.description = description;
  r.fault_model = config.fault_schedule ? "explicit plan" : config.faults.ToString();
  r.expected = config.expected;
  r.observed = result.observed;
  r.matched = result.matched;
  r.cases_run = 1;
  r.cases_failed = result.violations.empty() ? 0 : 1;
  r.counterexample = ToCaseReport(config, result, scenario_file);
  r.counterexample_size = RunSize(config, result);
  r.fired_totals = result.coverage.fired;
  // An explicit plan fires only the faults it names: the model's other
  // sites were never meant to fire, and its own unfired faults are named
  // below (unfired_planned).
  if (!config.fault_schedule) r.never_fired = result.coverage.NeverFired();
  for (const FaultPlan::Unfired& u : result.unfired_planned) r.unfired_planned.push_back({u.spec.ToString(), u.why});
  r.single_run = true;
  r.seconds = seconds;
  return r;
}

report::Report SingleRunReport(const std::string& command, uint64_t seed, const report::CheckReport& check) {
  report::Report r;
  r.command = command;
  r.seed = seed;
  r.checks.push_back(check);
  r.all_matched = report::Passed(check);
  return r;
}

report::CheckReport ToCheckReport(const std::string& name, const std::string& description,
                                  const RunConfig& base, const CheckOutcome& outcome,
                                  const std::string& counterexample_file) {
  report::CheckReport r;
  r.name = name;
  r.description = description;
  r.fault_model = outcome.fault_model.empty() ? base.faults.ToString() : outcome.fault_model;
  r.expected = base.expected;
  r.observed = outcome.observed;
  r.matched = outcome.matched;
  r.cases_run = outcome.cases_run;
  r.cases_failed = outcome.cases_with_violations;
  r.cases_unjudged = outcome.cases_unjudged;
  r.other_violations = outcome.other_violations;
  if (outcome.counterexample_index) {
    r.counterexample = ToCaseReport(outcome.minimal_config, outcome.minimal_result, "");
    r.counterexample->replay_file = counterexample_file;
    if (!counterexample_file.empty()) r.counterexample->replay_command = ReplayCommand(counterexample_file);
    r.counterexample_size = CaseSize(outcome.minimal_config, outcome.minimal_result);
    r.shrink_steps = outcome.shrink_steps;
    r.shrink_cut = outcome.shrink_cut;
    if (outcome.hit_index) r.first_hit_case = *outcome.hit_index;
  }
  r.fired_totals = outcome.coverage.fired;
  r.never_fired = outcome.coverage.NeverFired();
  r.cases_for_coverage = outcome.cases_for_coverage;
  r.coverage_gaps = outcome.coverage_gaps;
  r.seconds = outcome.seconds;
  return r;
}

Scenario ReplayScenario(const Scenario& like, const RunConfig& config, const RunResult& result,
                        const std::string& origin) {
  Scenario s = like;
  s.config = config;
  s.config.keep_trace = false;
  if (!s.config.fault_schedule) s.config.fault_schedule = result.fired;
  s.trace_hash = result.TraceHashHex();
  s.origin = origin;
  return s;
}

}  // namespace xackly
