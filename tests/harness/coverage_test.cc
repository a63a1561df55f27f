// Fault coverage as the product computes and reports it: the sites a run's
// model enabled that never fired, and a merged shard set whose coverage is
// the unsharded check's (for a check that runs every case).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/merge.h"
#include "harness/results.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

class CoverageTest : public ServerTest {};

TEST_F(CoverageTest, ARunReportsTheEnabledSitesThatNeverFired) {
  // no-dedupe's model: crashes after-read, after-effect and after-ack.
  RunConfig c = RunConfig::For(*FindProtocol("no-dedupe"));
  c.workers = 1;
  c.events = 1;
  c.fault_schedule = {*ParseFaultSpec("crash w1 after-effect #1")};
  Result<RunResult> r = RunSimulation(c, StartServer());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  report::CheckReport k = SingleRunCheck("no-dedupe", "", c, *r, "", 0);
  EXPECT_EQ(k.fired_totals, (std::map<std::string, int>{{"crash@after-effect", 1}}));
  EXPECT_EQ(k.never_fired, (std::vector<std::string>{"crash@after-ack", "crash@after-read"}));
}

CheckOutcome Check(CasePool& pool, const RunConfig& base, int shard_index, int shard_count) {
  CheckOptions options;
  options.cases = 24;
  options.coverage_cap = 24;  // the search alone: shards then add up to the whole exactly
  options.seed = 3;
  options.shard_index = shard_index;
  options.shard_count = shard_count;
  Result<CheckOutcome> r = RunCheck(base, pool, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : CheckOutcome{};
}

report::Report Shard(const report::CheckReport& k, const std::string& shard) {
  report::Report r;
  r.command = "check";
  r.seed = 3;
  r.shard = shard;
  r.checks = {k};
  return r;
}

TEST(MergeCoverageTest, MergedShardsHaveTheUnshardedCoverage) {
  // txn-dedupe passes every case, so every shard runs all of its cases and
  // the fault counts must add up to the unsharded run's exactly.
  CasePool pool(2, TestServerOptions());
  RunConfig base = RunConfig::For(*FindProtocol("txn-dedupe"));
  report::CheckReport whole = ToCheckReport("txn-dedupe", "", base, Check(pool, base, 0, 1), "");
  std::vector<report::Report> shards;
  for (int i = 0; i < 3; ++i) {
    shards.push_back(Shard(ToCheckReport("txn-dedupe", "", base, Check(pool, base, i, 3), ""),
                           std::to_string(i + 1) + "/3"));
  }
  ASSERT_EQ(whole.cases_failed, 0);
  // Each shard alone sees less: otherwise this comparison proves nothing.
  for (const report::Report& s : shards) EXPECT_NE(s.checks[0].fired_totals, whole.fired_totals) << s.shard;
  Result<report::Report> merged = MergeReports(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const report::CheckReport& m = merged->checks[0];
  EXPECT_EQ(m.fired_totals, whole.fired_totals);
  EXPECT_EQ(m.never_fired, whole.never_fired);
  EXPECT_EQ(m.cases_run, whole.cases_run);
}

TEST(MergeCoverageTest, ASiteThatFiredInAnyShardIsNotNeverFired) {
  report::CheckReport a;
  a.name = "x";
  a.fired_totals = {{"crash@after-effect", 2}};
  a.never_fired = {"crash@after-read", "xdel"};
  report::CheckReport b = a;
  b.fired_totals = {{"crash@after-read", 1}};
  b.never_fired = {"crash@after-effect", "xdel"};
  Result<report::Report> merged = MergeReports({Shard(a, "1/2"), Shard(b, "2/2")});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const report::CheckReport& m = merged->checks[0];
  EXPECT_EQ(m.fired_totals, (std::map<std::string, int>{{"crash@after-effect", 2}, {"crash@after-read", 1}}));
  EXPECT_EQ(m.never_fired, (std::vector<std::string>{"xdel"}));
}

}  // namespace
}  // namespace xackly
