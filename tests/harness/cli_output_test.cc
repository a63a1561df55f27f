// Approval tests of what xackly prints and finds (tests/approved_file.h):
// the CLI tests assert the facts a user relies on one by one; these catch
// the change nobody asserted (a count, a cause, a sentence of a story, a
// line of a header, a fault a run no longer fires, a search that finds
// something else), compared whole with tests/harness/data/:
//   cli-output.approved        `xackly run` and `xackly protocols`
//   cli-check-output.approved  `xackly check`'s stdout
//   catalog-searches.approved  what each catalog check's search finds
// They hold for the server the corpus was recorded with (Debian 12's redis
// 7.0.15), which each names near its top, like every trace hash.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/files.h"
#include "reports/report.h"
#include "tests/approved_file.h"
#include "sim/protocol.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// Every occurrence of `from` in `text` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

void ExpectApprovedOutput(const std::string& name, const std::string& printed) {
  ExpectMatchesApprovedFile(std::string(XACKLY_SOURCE_DIR) + "/tests/harness/data/" + name, printed);
}

// Each command's output under a line "$ xackly ARGS   (exit N)", the source
// tree written SRC and `out_dir` (when given) OUT. `stdout_only`: stderr
// (progress lines, which come as the machine's speed allows) is dropped.
std::string Printed(const std::vector<std::vector<std::string>>& commands, const std::string& out_dir = "",
                    bool stdout_only = false) {
  const std::string src = XACKLY_SOURCE_DIR;
  std::string printed;
  for (const std::vector<std::string>& args : commands) {
    CommandOutput out = stdout_only ? RunXacklyStdout(args) : RunXackly(args);
    std::string text = "$ xackly";
    for (const std::string& a : args) text += " " + a;
    text += "   (exit " + std::to_string(out.exit_code) + ")\n" + out.output + "\n";
    if (!out_dir.empty()) text = ReplaceAll(text, out_dir, "OUT");
    printed += ReplaceAll(text, src, "SRC");
  }
  return printed;
}

TEST(CliOutputTest, RunsAndRefusalsPrintAsApproved) {
  const std::string src = XACKLY_SOURCE_DIR;
  std::vector<std::vector<std::string>> commands = {{"protocols"}};
  for (const ProtocolDef& p : Catalog()) commands.push_back({"run", "--protocol", p.name, "--seed", "1"});
  commands.push_back({"run", "--protocol", "no-dedupe", "--workers", "2", "--events", "3", "--seed", "3", "--faults",
                      "crash,stall,restart,lost-reply,xdel"});
  for (const char* example : {"handler-pool", "dispatcher-pool-keyed", "fan-out-groups-unkeyed", "failover-setnx-first",
                              "outbox-pipeline", "sql-dedupe-expiry"}) {
    commands.push_back({"run", "--scenario", src + "/scenarios/examples/" + example + ".toml"});
  }
  commands.push_back({"run", "--protocol", "no-such-protocol"});
  commands.push_back({"run", "--protocol", "no-dedupe", "--seed", "x"});
  commands.push_back({"check", "--protocol", "no-dedupe", "--shard", "0/2"});
  ExpectApprovedOutput("cli-output.approved", Printed(commands));
}

// What `xackly check` prints on stdout (header, notes, the check lines,
// the files it wrote and the report) for a broken protocol found and
// shrunk, a correct one with the coverage rule's extra cases, a suite with
// a mismatch, and a shard in --quiet: one job each, so the cases and their
// order are fixed. A check line's wall time is written T.
TEST(CliOutputTest, ChecksPrintAsApproved) {
  ScopedTempRoot dir;
  const std::string src = XACKLY_SOURCE_DIR, out = dir.path() + "/out";
  const std::vector<std::vector<std::string>> commands = {
      {"check", "--protocol", "no-dedupe", "--cases", "5", "-j", "1", "--out", out},
      {"check", "--protocol", "txn-dedupe", "--cases", "5", "-j", "1", "--out", out},
      {"check", "--scenario", src + "/scenarios/catalog/short-ttl-dedupe.toml",
       src + "/tests/reports/golden/said-ok.toml", "--cases", "5", "-j", "1", "--out", out},
      {"check", "--protocol", "ack-first", "--cases", "4", "--shard", "1/2", "-j", "1", "--quiet", "--out", out},
  };
  std::string printed = Printed(commands, out, /*stdout_only=*/true);
  // "..., 0.1 s)" at the end of a check line: wall time.
  printed = std::regex_replace(printed, std::regex(R"(for determinism, [0-9]+\.[0-9] s\))"), "for determinism, T s)");
  ExpectApprovedOutput("cli-check-output.approved", printed);
}

// What a search finds for every protocol of the catalog and its scripts at
// 10 cases (`xackly check --scenario scenarios/catalog`): per check, the
// verdict, the cases run and drawn for coverage, the first hit, the
// counterexample's trace hash and size, other violations, and how often
// each fault site fired and which never did. A change to what the case
// generator draws, how a fault fires, what the shrinker keeps or what the
// coverage rule adds shows here as the checks it moved.
TEST(CliOutputTest, TheCatalogsSearchesFindAsApproved) {
  ScopedTempRoot dir;
  const std::string src = XACKLY_SOURCE_DIR;
  CommandOutput out = RunXackly({"check", "--scenario", src + "/scenarios/catalog", "--cases", "10", "-j", "2",
                                 "--format", "json", "--out", dir.path()});
  ASSERT_TRUE(out.exit_code == 0 || out.exit_code == 1) << out.output;
  Result<std::string> json = ReadFile(dir.path() + "/report.json");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  Result<report::Report> report = report::ParseJsonReport(*json);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::string printed =
      "# xackly check --scenario scenarios/catalog --cases 10 on " + report->server_version + ": each check's search\n";
  for (const report::CheckReport& c : report->checks) {
    printed += c.name + ": " + c.observed + (c.matched ? " (matched)" : " (MISMATCH)") + ", " +
               std::to_string(c.cases_run) + " cases (" + std::to_string(c.cases_for_coverage) +
               " for coverage), first hit " + std::to_string(c.first_hit_case) + "\n";
    if (c.counterexample) {
      printed += "  counterexample " + c.counterexample->trace_hash + ": " + c.counterexample_size + "\n";
    }
    for (const auto& [verdict, n] : c.other_violations) printed += "  other " + verdict + " " + std::to_string(n) + "\n";
    printed += "  fired:";
    for (const auto& [site, n] : c.fired_totals) printed += " " + site + "=" + std::to_string(n);
    printed += "\n  never fired:";
    for (const std::string& site : c.never_fired) printed += " " + site;
    printed += "\n";
  }
  ExpectApprovedOutput("catalog-searches.approved", printed);
}

}  // namespace
}  // namespace xackly
