// The regression corpus: scenarios/regressions/ holds the minimal
// counterexample of every broken catalog protocol (as `xackly check` wrote
// it). Each must still show its expected verdict with exactly its recorded
// trace hash, so a change in xackly that alters what a replay does is caught.
// The hashes hold for the server version the corpus was recorded with
// (Debian 12's redis 7.0.15); see README, Determinism.
#include <filesystem>
#include <set>
#include <string>

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

}  // namespace
}  // namespace xackly
