// The regression corpus: scenarios/regressions/ holds the minimal
// counterexample of every broken catalog protocol (as `xackly check` wrote
// it). Each must still show its expected verdict with exactly its recorded
// trace hash, so a change in xackly that alters what a replay does is caught.
// The hashes hold for the server version the corpus was recorded with
// (Debian 12's redis 7.0.15); see README, Determinism.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "harness/case_executor.h"
#include "harness/files.h"
#include "harness/results.h"
#include "reports/report.h"
#include "harness/scenario_files.h"
#include "scenarios/scenario.h"
#include "sim/text_hash.h"
#include "tests/approved_file.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

TEST(RegressionTest, EveryBrokenCatalogProtocolHasAMinimalCounterexampleThatStillReplays) {
  std::filesystem::path dir = std::filesystem::path(XACKLY_SOURCE_DIR) / "scenarios" / "regressions";
  CaseExecutor executor(TestServerOptions());
  std::set<std::string> covered;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    ++files;
    std::string path = entry.path().string();
    Result<Scenario> s = LoadScenarioFile(path);  // loads a script's files, as `xackly replay` does
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE(s->trace_hash.has_value()) << path << " has no trace_hash";
    Result<RunResult> r = executor.Run(s->config);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    EXPECT_EQ(r->TraceHashHex(), *s->trace_hash) << path;
    EXPECT_TRUE(r->matched) << path << ": observed " << r->observed << ", expected "
                            << s->config.expected.ToString();
    EXPECT_NE(s->config.expected.kind, VerdictKind::kOk) << path;
    covered.insert(s->protocol_ref);
  }
  EXPECT_GT(files, 0);
  for (const ProtocolDef& p : Catalog()) {
    if (p.expected.kind == VerdictKind::kOk) continue;
    EXPECT_EQ(covered.count(p.name), 1u) << "no regression file for broken protocol " << p.name;
  }
}

// A scenario parsed without its files (ParseScenario reads none) names a
// script it does not hold; run as it is, it would be the declarative
// protocol it also holds, with an empty handler: a wrong run, silently. It
// is refused instead.
TEST(RegressionTest, AScriptNamedButNotLoadedIsRefusedNotRunWithAnEmptyHandler) {
  Result<Scenario> s = ParseScenario("[protocol]\nscript = \"mine.lua\"\n", "mine.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  CaseExecutor executor(TestServerOptions());
  Result<RunResult> r = executor.Run(s->config);
  ASSERT_FALSE(r.ok()) << "ran: observed " << r->observed;
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'mine.lua' was named but not loaded"), std::string::npos)
      << r.status().message();
}

// Every scenario file under scenarios/ (the catalog and its scripts, the
// examples, the library pack and the corpus; real consumers' aside: they
// run outside xackly), as it stands, named by its path relative to the
// source tree.
class ScenarioRunsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::filesystem::path root(XACKLY_SOURCE_DIR);
    std::vector<std::string> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "scenarios")) {
      if (entry.path().extension() == ".toml") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    for (const std::string& path : paths) {
      Result<Scenario> s = LoadScenarioFile(path);
      ASSERT_TRUE(s.ok()) << s.status().message();
      if (!s->config.protocol.consumer_command.empty()) continue;
      configs_.push_back(s->config);
      names_.push_back(std::filesystem::relative(path, root).string());
    }
  }

  // Every config run on one executor, in file order or in reverse; each
  // result "hash verdict" in file order. `reports`, when given, gets each
  // run's report hashes (ReportHashes) in file order.
  static std::vector<std::string> RunAll(bool reversed, std::vector<std::string>* reports = nullptr) {
    CaseExecutor executor(TestServerOptions());
    std::vector<std::string> out(configs_.size());
    if (reports != nullptr) reports->assign(configs_.size(), "");
    for (size_t k = 0; k < configs_.size(); ++k) {
      size_t i = reversed ? configs_.size() - 1 - k : k;
      // The reports are those of `xackly run`, which keeps the trace (the
      // path, the timeline, the story's trace-read sentences).
      RunConfig config = configs_[i];
      config.keep_trace = reports != nullptr;
      Result<RunResult> r = executor.Run(config);
      out[i] = r.ok() ? r->TraceHashHex() + " " + r->observed : "error: " + r.status().ToString();
      if (r.ok() && reports != nullptr) (*reports)[i] = ReportHashes(names_[i], config, *r);
    }
    server_version_ = executor.server_version();
    return out;
  }

  // The reports `xackly run --scenario FILE --out DIR` writes for one run, as one
  // short hash per format (report::FormatNames' order): "a1b2c3d4 ...".
  // What varies between machines (version, duration) is fixed.
  static std::string ReportHashes(const std::string& file, const RunConfig& config, const RunResult& run) {
    report::CheckReport check = SingleRunCheck(file, config.protocol.description, config, run, file, 0.0);
    check.counterexample->replay_command = ReplayCommand(file);
    report::Report rep = SingleRunReport("run", config.seed, check);
    rep.tool_version = "approved";
    rep.command_line = "xackly run --scenario " + file;
    rep.server_version = "redis 7.0.15";
    std::string out;
    for (const std::string& format : report::FormatNames()) {
      uint64_t hash = Fnv1aText::kOffsetBasis;
      Fnv1aText(&hash).append(report::RenderFormat(rep, format));
      out += fmt::format("{}{:08x}", out.empty() ? "" : " ", static_cast<uint32_t>(hash));
    }
    return out;
  }

  static std::vector<RunConfig> configs_;
  static std::vector<std::string> names_;
  static std::string server_version_;  // of RunAll's last server: "redis 7.0.15"
};
std::vector<RunConfig> ScenarioRunsTest::configs_;
std::vector<std::string> ScenarioRunsTest::names_;
std::string ScenarioRunsTest::server_version_;

// A thread's executor runs each case on the servers and the SQLite database
// its previous case used, reset. A case's trace must not depend on which
// case ran before it: a replay, or the determinism self-check's rerun, runs
// it after another one or on fresh servers. (A script's CREATE once
// reported the rows the previous case's emptying deleted.)
TEST_F(ScenarioRunsTest, ACasesTraceDoesNotDependOnTheCaseBeforeItOnItsThread) {
  ASSERT_GE(names_.size(), 150u) << "the scenario folders moved?";
  const std::vector<std::string> forward = RunAll(false), backward = RunAll(true);
  for (size_t i = 0; i < names_.size(); ++i) {
    EXPECT_EQ(forward[i].rfind("error", 0), std::string::npos) << names_[i] << ": " << forward[i];
    EXPECT_EQ(forward[i], backward[i]) << names_[i] << " ran after "
                                         << (i > 0 ? names_[i - 1] : "nothing") << " and after "
                                         << (i + 1 < names_.size() ? names_[i + 1] : "nothing");
  }
}

// Each scenario file's run gives its approved trace hash and verdict
// (tests/harness/data/scenario-runs.approved, recorded on Debian 12's redis
// 7.0.15 like the corpus; its first line names the server): a change to
// what any protocol, fault or command does in any of these runs fails
// here, naming the file, until it is approved (tests/approved_file.h). The
// corpus pins only counterexamples; this pins the correct protocols'
// faulted runs and the examples' too.
TEST_F(ScenarioRunsTest, EveryScenarioFilesRunGivesItsApprovedTraceAndVerdict) {
  const std::vector<std::string> forward = RunAll(false);
  // The first line names the server: the hashes hold for it alone.
  std::string text = "# on " + server_version_ + ": each scenario file's run as it stands: path trace-hash observed\n";
  for (size_t i = 0; i < names_.size(); ++i) {
    // A harness error is never approved: it would then compare equal for ever.
    ASSERT_EQ(forward[i].rfind("error", 0), std::string::npos) << names_[i] << ": " << forward[i];
    text += names_[i] + " " + forward[i] + "\n";
  }
  ExpectMatchesApprovedFile(std::string(XACKLY_SOURCE_DIR) + "/tests/harness/data/scenario-runs.approved", text);
}

// Each scenario file's run writes its approved reports
// (tests/harness/data/scenario-reports.approved: a hash of each format's
// text): a change to what any report, story, timeline or JSON field says
// about any of these runs, green ones included, fails here naming the
// file, until it is approved. GoldenTest shows a few reports whole; this
// pins every file's, so a wording or field that only some runs reach is
// covered too. See what changed with `xackly run --scenario FILE --format md`
// before and after.
TEST_F(ScenarioRunsTest, EveryScenarioFilesRunWritesItsApprovedReports) {
  std::vector<std::string> reports;
  const std::vector<std::string> runs = RunAll(false, &reports);
  std::string text = "# on " + server_version_ + ": each scenario file's run's reports, one hash per format: path " +
                     fmt::format("{}", fmt::join(report::FormatNames(), " ")) + "\n";
  for (size_t i = 0; i < names_.size(); ++i) {
    ASSERT_EQ(runs[i].rfind("error", 0), std::string::npos) << names_[i] << ": " << runs[i];
    text += names_[i] + " " + reports[i] + "\n";
  }
  ExpectMatchesApprovedFile(std::string(XACKLY_SOURCE_DIR) + "/tests/harness/data/scenario-reports.approved", text);
}

}  // namespace
}  // namespace xackly
