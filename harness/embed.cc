#include "harness/embed.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/case_executor.h"
#include "harness/case_pool.h"
#include "harness/check.h"
#include "harness/files.h"
#include "harness/redis_server.h"
#include "harness/results.h"
#include "harness/virtual_clock.h"
#include "reports/model.h"
#include "scenarios/scenario.h"

namespace xackly {
namespace {

// The servers' options, with the clock library found now: a missing one is
// told in the terms of this API (EmbedOptions), not the executable's.
Result<RedisServerOptions> ServerOptions(const EmbedOptions& embed) {
  Result<std::string> clock_library = FindClockLibrary(embed.clock_library);
  if (!clock_library.ok()) {
    return Status::NotFound(fmt::format(
        "{}. Through harness/embed.h, set EmbedOptions::clock_library to the installed "
        "libxackly_clock.so (<prefix>/lib; in CMake, $<TARGET_FILE:xackly::xackly_clock>, as "
        "examples/downstream/CMakeLists.txt passes it)",
        clock_library.status().message()));
  }
  // The same lookup RedisServer::Start makes, told in this API's terms
  // (its own words name the CLI's --server flag).
  Result<std::string> server = FindServerBinary(embed.server_path);
  if (!server.ok()) {
    return Status::NotFound(fmt::format("{}. Through harness/embed.h, --server PATH is EmbedOptions::server_path",
                                        server.status().message()));
  }
  RedisServerOptions o;
  o.server_path = embed.server_path;
  o.clock_library = *clock_library;
  return o;
}

Result<CaseRun> RunCase(const RunConfig& config, const RedisServerOptions& servers) {
  if (Status v = ValidateRunConfig(config); !v.ok()) return v;
  CaseExecutor executor(servers);
  Result<RunResult> result = executor.Run(config);
  if (!result.ok()) return result.status();
  return CaseRun{config, std::move(result).value(), executor.server_version()};
}

// `base` under DefaultFaultModel when its model has no kinds, unless the
// caller said that means no faults; `*defaulted` says whether it did.
RunConfig WithFaultModel(const RunConfig& base, const PropertyOptions& options, bool* defaulted) {
  *defaulted = base.faults.kinds.empty() && !options.empty_fault_model_injects_nothing;
  if (!*defaulted) return base;
  RunConfig c = base;
  c.protocol.faults = DefaultFaultModel(c.protocol);
  c.faults = ReachableFaultModel(c.protocol);
  return c;
}

// "crash@after-effect 3, xdel 1", or "none".
std::string FiredText(const std::map<std::string, int>& fired) {
  std::string out;
  for (const auto& [site, n] : fired) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", site, n);
  return out.empty() ? "none" : out;
}

std::string ListText(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

// How to replay `run`'s file, for FailureReport.
std::string ReplayInstruction(const CaseRun& run) {
  const std::string file = ReplayFileName(run.config.protocol.name);
  if (HandlerFormOf(run.config.protocol) == HandlerForm::kCpp) {
    return fmt::format(
        "replay file (the handler is your C++ code, which `xackly replay` cannot run: save the file, "
        "e.g. as {}, and replay it from your test with xackly::ReplayCaseFile(\"{}\", protocol, options), "
        "which checks its trace hash):\n",
        file, file);
  }
  return fmt::format("replay file (save it, e.g. as {}, and run `xackly replay {}`):\n", file, file);
}

// Why a replay's trace hash may differ from the file's, for ReplayOutcome.
std::string MismatchText(const ReplayOutcome& r) {
  std::string why;
  if (!r.protocol_as_recorded) {
    why = "your protocol's settings differ from the file's [protocol] tables (steps, stores, loop, janitor), "
          "so another protocol ran";
  } else if (!r.recorded_server.empty() && r.recorded_server != r.run.server_version) {
    why = fmt::format("it was recorded on {}: replay it on that server (EmbedOptions::server_path)",
                      r.recorded_server);
  } else {
    why = fmt::format("the protocol's settings are the file's and {}, so your handler's code changed since the "
                      "file was written (or xackly did)",
                      r.recorded_server.empty() ? "the file names no server" : "the server is the same");
  }
  return fmt::format("replay diverged: trace {} on {}, but the file recorded {}{}: {}",
                     r.run.result.TraceHashHex(), r.run.server_version, r.recorded_hash,
                     r.recorded_server.empty() ? "" : " on " + r.recorded_server, why);
}

Result<ReplayOutcome> Replay(std::string_view file_text, std::string_view source, const ProtocolDef& protocol,
                             const EmbedOptions& options) {
  Result<Scenario> file = ParseScenario(file_text, source);
  if (!file.ok()) return file.status();
  const ProtocolDef& recorded = file->config.protocol;
  if (!recorded.script_path.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: protocol {} is a protocol script; replay it with `xackly replay {}`", source, recorded.name, source));
  }
  if (!file->trace_hash) {
    return Status::InvalidArgument(fmt::format(
        "{}: [schedule] has no trace_hash: a scenario, not a replay file; run it with RunOneCase", source));
  }
  if (recorded.name != protocol.name) {
    return Status::InvalidArgument(fmt::format("{}: the file replays protocol '{}', not '{}'", source,
                                               recorded.name, protocol.name));
  }
  if (file->handler == HandlerForm::kCpp && protocol.cpp_handler == nullptr) {
    return Status::InvalidArgument(fmt::format(
        "{}: [protocol] handler = \"c++\": the case ran protocol '{}' with a C++ handler; pass that protocol "
        "with its cpp_handler set",
        source, protocol.name));
  }
  Result<RedisServerOptions> servers = ServerOptions(options);
  if (!servers.ok()) return servers.status();
  RunConfig config = file->config;
  config.protocol = protocol;
  config.keep_trace = true;
  Result<CaseRun> run = RunCase(config, *servers);
  if (!run.ok()) return run.status();
  ReplayOutcome out;
  out.run = std::move(run).value();
  out.recorded_hash = *file->trace_hash;
  out.recorded_server = file->server.value_or("");
  out.hash_matched = out.run.result.TraceHashHex() == out.recorded_hash;
  // The description is prose for people: a new one changes nothing that runs.
  ProtocolDef as_run = protocol;
  as_run.description = recorded.description;
  out.protocol_as_recorded = ProtocolText(as_run) == ProtocolText(recorded);
  if (!out.hash_matched) out.mismatch = MismatchText(out);
  return out;
}

}  // namespace

Result<CaseRun> RunOneCase(const RunConfig& config, const EmbedOptions& options) {
  Result<RedisServerOptions> servers = ServerOptions(options);
  if (!servers.ok()) return servers.status();
  return RunCase(config, *servers);
}

Result<PropertyResult> CheckProperty(const RunConfig& given, const PropertyOptions& options,
                                     const EmbedOptions& embed) {
  if (Status v = ValidateRunConfig(given); !v.ok()) return v;
  Result<RedisServerOptions> servers = ServerOptions(embed);
  if (!servers.ok()) return servers.status();
  PropertyResult out;
  const RunConfig base = WithFaultModel(given, options, &out.default_fault_model);
  CasePool pool(std::max(1, embed.threads), *servers);
  Result<std::string> server_version = pool.ServerVersion();
  if (!server_version.ok()) return server_version.status();
  CheckOptions check;
  check.cases = options.cases;
  check.seed = options.seed;
  check.coverage_cap = options.coverage_cap;
  check.bounds.max_workers = options.max_workers;
  check.bounds.max_events = options.max_events;
  check.bounds.max_faults = options.max_faults;
  out.fault_model = base.faults.ToString();  // until the check says which model it drew from
  check.on_ranges = [&out](const SwarmRanges& ranges, const FaultModel& model, const std::vector<std::string>&) {
    out.swarm_ranges = SwarmRangesText(ranges);
    out.fault_model = model.ToString();  // with a C++ handler's probed sites
  };
  Result<CheckOutcome> outcome = RunCheck(base, pool, check);
  if (!outcome.ok()) return outcome.status();
  out.protocol = base.protocol.name;
  out.expected = base.expected;
  out.seed = options.seed;
  out.server_version = *server_version;
  out.cases_run = outcome->cases_run;
  out.cases_with_violations = outcome->cases_with_violations;
  out.cases_unjudged = outcome->cases_unjudged;
  out.matched = outcome->matched;
  out.observed = outcome->observed;
  out.faults_fired = outcome->coverage.fired;
  out.never_fired = outcome->coverage.NeverFired();
  out.cases_for_coverage = outcome->cases_for_coverage;
  out.coverage_gaps = outcome->coverage_gaps;
  out.other_violations = outcome->other_violations;
  out.determinism_reruns = outcome->determinism_reruns;
  if (outcome->counterexample_index) {
    out.counterexample = CaseRun{outcome->minimal_config, outcome->minimal_result, *server_version};
  }
  return out;
}

std::string PropertyResult::Summary() const {
  std::string out = fmt::format("{}: expected {}, observed {}: {}; {} (seed {}, on {}), {} with a violation. ",
                                protocol, expected.ToString(), observed, matched ? "matched" : "DOES NOT MATCH",
                                report::Count(cases_run, "case"), seed, server_version,
                                cases_with_violations);
  if (cases_unjudged > 0) {
    out += fmt::format("{} stopped by the harness limit, not judged (raise timing.max_steps). ",
                       report::Count(cases_unjudged, "case"));
  }
  out += fault_model == FaultModel{}.ToString()
             ? std::string("Fault model: none, this check injects NO faults (it only shows the protocol works when "
                           "nothing fails). ")
             : fmt::format("Fault model: {}{}. ", fault_model,
                           default_fault_model ? " (DefaultFaultModel: the protocol sets none)" : "");
  out += fmt::format("Swarm: {}. Faults fired: {}; never fired: {}. Other violations: {}. ",
                     swarm_ranges.empty() ? "none" : swarm_ranges, FiredText(faults_fired), ListText(never_fired),
                     FiredText(other_violations));
  if (cases_for_coverage > 0) {
    out += fmt::format("{} of the cases were aimed at sites that had not fired yet. ",
                       report::Count(cases_for_coverage, "case"));
  }
  if (!coverage_gaps.empty()) {
    out += fmt::format("Coverage gaps at the cap (reached, never fired; this green is evidence only for the sites "
                       "that fired): {}. ",
                       ListText(coverage_gaps));
  }
  out += fmt::format("Determinism: {} rerun with the same trace.",
                     report::Count(determinism_reruns, "case"));
  if (counterexample) {
    out += fmt::format(" Counterexample: {}, observed {}.", CaseSize(counterexample->config, counterexample->result),
                       counterexample->result.observed);
  }
  return out + "\n";
}

std::string ReplayFile(const CaseRun& run) {
  Scenario like;
  like.name = ScenarioNameFrom(run.config.protocol.name.empty() ? "replay" : run.config.protocol.name);
  like.description = run.config.protocol.description;
  if (FindProtocol(run.config.protocol.name) != nullptr) like.protocol_ref = run.config.protocol.name;
  Scenario replay = ReplayScenario(like, run.config, run.result, "xackly embedded test (harness/embed.h)");
  if (!run.server_version.empty()) replay.server = run.server_version;
  return WriteScenario(replay);
}

std::string FailureReport(const CaseRun& run) {
  const RunResult& result = run.result;
  if (result.matched) return "";
  std::string out = fmt::format("{}: expected {}, observed {}\n", run.config.protocol.name,
                                run.config.expected.ToString(), result.observed);
  for (const Violation& v : result.violations) {
    out += fmt::format("  {} {} [{}]: {}\n", VerdictKindName(v.kind), ViolationSubject(v, ""), v.cause, v.detail);
  }
  for (const std::string& sentence : report::Story(ToCaseReport(run.config, result, ""))) {
    out += "  " + sentence + "\n";
  }
  return out + ReplayInstruction(run) + ReplayFile(run);
}

std::string FailureReport(const PropertyResult& check) {
  if (check.matched) return "";
  if (check.counterexample) return check.Summary() + FailureReport(*check.counterexample);
  return check.Summary() + fmt::format("no case showed the expected {}: more cases (PropertyOptions::cases), "
                                       "another seed, or a fault model that reaches it\n",
                                       check.expected.ToString());
}

Result<ReplayOutcome> ReplayCase(std::string_view file_text, const ProtocolDef& protocol,
                                 const EmbedOptions& options) {
  return Replay(file_text, "replay.toml", protocol, options);
}

Result<ReplayOutcome> ReplayCaseFile(const std::string& path, const ProtocolDef& protocol,
                                     const EmbedOptions& options) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Replay(*text, path, protocol, options);
}

}  // namespace xackly
