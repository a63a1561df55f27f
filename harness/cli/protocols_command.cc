// `xackly protocols [--format text|json]`: the protocol catalog.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/cli/command.h"
#include "sim/simulation.h"

namespace xackly {

namespace {

std::string Steps(const ProtocolDef& p) {
  std::string out;
  for (HandlerOp op : p.steps) out += (out.empty() ? "" : " ") + std::string(HandlerOpName(op));
  return out;
}

void PrintJson() {
  nlohmann::json list = nlohmann::json::array();
  for (const ProtocolDef& p : Catalog()) {
    RunConfig defaults = RunConfig::For(p);
    nlohmann::json kinds = nlohmann::json::array();
    for (FaultKind k : defaults.faults.kinds) kinds.push_back(FaultKindName(k));
    list.push_back({{"name", p.name},
                    {"description", p.description},
                    {"expected", p.expected.ToString()},
                    {"steps", Steps(p)},
                    {"persistence", PersistenceName(defaults.persistence)},
                    {"restart_naming", RestartNamingName(defaults.naming)},
                    {"fault_model",
                     {{"summary", defaults.faults.ToString()},
                      {"kinds", kinds},
                      {"crash_points", defaults.faults.crash_points},
                      {"lost_sites", defaults.faults.lost_sites}}}});
  }
  std::printf("%s\n", list.dump(2).c_str());
}

void PrintText() {
  fmt::print("{:<24} {:<30} {}\n", "PROTOCOL", "EXPECTED", "WHAT IT DOES");
  for (const ProtocolDef& p : Catalog()) {
    RunConfig defaults = RunConfig::For(p);
    fmt::print("{:<24} {:<30} {}\n", p.name, p.expected.ToString(), p.description);
    fmt::print("{:<24} {:<30} steps: {}; faults: {}; persistence {}; restart naming {}\n", "", "",
               Steps(p), defaults.faults.ToString(), PersistenceName(defaults.persistence),
               RestartNamingName(defaults.naming));
  }
  fmt::print(
      "\nEach protocol is also a scenario file: scenarios/catalog/<name>.toml.\n"
      "Run one:   xackly run --protocol NAME --seed N\n"
      "Check one: xackly check --protocol NAME --cases 200\n");
}

}  // namespace

void RegisterProtocolsCommand(CLI::App& app, CommandResult& result) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand(
      "protocols", "List the catalog of consumer protocols, their expected verdicts and fault models");
  cmd->footer("Exit 0: the catalog was printed; 2: bad usage (e.g. --format yaml).");
  cmd->add_option("--format", *format, "text (a table) or json (an array, on stdout)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([format, &result] {
    if (*format == "json") {
      PrintJson();
    } else {
      PrintText();
    }
    result.exit_code = kExitOk;
  });
}

}  // namespace xackly
