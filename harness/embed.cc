#include "harness/embed.h"

#include <fmt/format.h>

#include "harness/case_executor.h"
#include "harness/case_pool.h"
#include "harness/check.h"
#include "harness/results.h"
#include "reports/model.h"
#include "scenarios/scenario.h"

namespace xackly {
namespace {

RedisServerOptions ServerOptions(const EmbedOptions& embed) {
  RedisServerOptions o;
  o.server_path = embed.server_path;
  o.clock_library = embed.clock_library;
  return o;
}

}  // namespace

Result<RunResult> RunOneCase(const RunConfig& config, const EmbedOptions& options) {
  if (Status v = ValidateRunConfig(config); !v.ok()) return v;
  CaseExecutor executor(ServerOptions(options));
  return executor.Run(config);
}

Result<PropertyResult> CheckProperty(const RunConfig& base, const PropertyOptions& options,
                                     const EmbedOptions& embed) {
  if (Status v = ValidateRunConfig(base); !v.ok()) return v;
  CasePool pool(std::max(1, embed.threads), ServerOptions(embed));
  CheckOptions check;
  check.cases = options.cases;
  check.seed = options.seed;
  check.bounds.max_workers = options.max_workers;
  check.bounds.max_events = options.max_events;
  check.bounds.max_faults = options.max_faults;
  Result<CheckOutcome> outcome = RunCheck(base, pool, check);
  if (!outcome.ok()) return outcome.status();
  PropertyResult out;
  out.cases_run = outcome->cases_run;
  out.matched = outcome->matched;
  out.observed = outcome->observed;
  if (outcome->hit_index) {
    out.counterexample = outcome->minimal_config;
    out.counterexample_result = outcome->minimal_result;
  }
  return out;
}

std::string ReplayFile(const RunConfig& config, const RunResult& result) {
  Scenario like;
  like.name = config.protocol.name.empty() ? "replay" : config.protocol.name;
  like.description = config.protocol.description;
  if (FindProtocol(config.protocol.name) != nullptr) like.protocol_ref = config.protocol.name;
  return WriteScenario(ReplayScenario(like, config, result, "xackly embedded test"));
}

std::string FailureReport(const RunConfig& config, const RunResult& result) {
  if (result.matched) return "";
  std::string out = fmt::format("{}: expected {}, observed {}\n", config.protocol.name,
                                config.expected.ToString(), result.observed);
  for (const Violation& v : result.violations) {
    out += fmt::format("  {} {} [{}]: {}\n", VerdictKindName(v.kind), v.event_id, v.cause, v.detail);
  }
  for (const std::string& sentence : report::Story(ToCaseReport(config, result, ""))) {
    out += "  " + sentence + "\n";
  }
  out += "replay file (save it and run `xackly replay <file>`):\n" + ReplayFile(config, result);
  return out;
}

}  // namespace xackly
