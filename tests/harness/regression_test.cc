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

#include <gtest/gtest.h>

#include "harness/case_executor.h"
#include "harness/files.h"
#include "harness/scenario_files.h"
#include "scenarios/scenario.h"
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

// A thread's executor runs each case on the servers and the SQLite database
// its previous case used, reset. A case's trace must not depend on which
// case ran before it: a replay, or the determinism self-check's rerun, runs
// it after another one or on fresh servers. Every scenario file under
// scenarios/ (the catalog and its scripts, the examples, the library pack
// and the corpus; real consumers' aside: they run outside xackly) runs in file order on one executor and in the reverse
// order on another; each must give the same trace hash both times. (A
// script's CREATE once reported the previous case's deleted rows.)
TEST(RegressionTest, ACasesTraceDoesNotDependOnTheCaseBeforeItOnItsThread) {
  std::vector<std::string> paths;
  std::filesystem::path dir = std::filesystem::path(XACKLY_SOURCE_DIR) / "scenarios";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".toml") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<RunConfig> configs;
  std::vector<std::string> names;
  for (const std::string& path : paths) {
    Result<Scenario> s = LoadScenarioFile(path);
    ASSERT_TRUE(s.ok()) << s.status().message();
    if (!s->config.protocol.consumer_command.empty()) continue;
    configs.push_back(s->config);
    names.push_back(path);
  }
  ASSERT_GE(configs.size(), 150u) << "the scenario folders moved?";
  auto hashes = [&](bool reversed) {
    CaseExecutor executor(TestServerOptions());
    std::vector<std::string> out(configs.size());
    for (size_t k = 0; k < configs.size(); ++k) {
      size_t i = reversed ? configs.size() - 1 - k : k;
      Result<RunResult> r = executor.Run(configs[i]);
      out[i] = r.ok() ? r->TraceHashHex() : "error: " + r.status().ToString();
    }
    return out;
  };
  std::vector<std::string> forward = hashes(false);
  std::vector<std::string> backward = hashes(true);
  for (size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(forward[i].rfind("error", 0), std::string::npos) << names[i] << ": " << forward[i];
    EXPECT_EQ(forward[i], backward[i]) << names[i] << " ran after "
                                       << (i > 0 ? names[i - 1] : "nothing") << " and after "
                                       << (i + 1 < names.size() ? names[i + 1] : "nothing");
  }
}

}  // namespace
}  // namespace xackly
