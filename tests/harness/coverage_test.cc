// Fault coverage as the product computes and reports it: the sites a run's
// model enabled that never fired, and a merged shard set whose coverage is
// the unsharded check's (for a check that runs every case).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/merge.h"
#include "harness/results.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

class CoverageTest : public ServerTest {};

// A run of the model's drawn faults names the sites its model enabled that
// never fired; a run of an explicit plan fires only the faults it names, so
// it names those that never fired (unfired_planned) and no other site: the
// model's sites it never aimed at are no gap of it, in any format.
TEST_F(CoverageTest, ARunNamesTheSitesItsFaultsCouldHaveFiredAndDidNot) {
  // no-dedupe's model: crashes after-read, after-effect and after-ack.
  RunConfig c = RunConfig::For(*FindProtocol("no-dedupe"));
  c.workers = 1;
  c.events = 1;
  c.fault_schedule = {*ParseFaultSpec("crash w1 after-effect #1"), *ParseFaultSpec("crash w1 after-ack #5")};
  Result<RunResult> planned = RunSimulation(c, StartServer());
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  report::CheckReport k = SingleRunCheck("no-dedupe", "", c, *planned, "", 0);
  EXPECT_EQ(k.fired_totals, (std::map<std::string, int>{{"crash@after-effect", 1}}));
  EXPECT_TRUE(k.never_fired.empty()) << k.never_fired.front();
  ASSERT_EQ(k.unfired_planned.size(), 1u);
  EXPECT_EQ(k.unfired_planned[0].fault, "crash w1 after-ack #5");
  EXPECT_TRUE(k.counterexample_size.starts_with("1 event, 1 worker, 1 fault, ")) << "the fault that fired";
  const std::vector<report::CoverageRow> rows = report::CoverageRows(k);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].site, "crash@after-effect");
  EXPECT_FALSE(rows[0].never_fired);
  for (const std::string& format : report::FormatNames()) {
    if (format == "json") continue;  // it keeps the case's raw coverage, every enabled site
    EXPECT_EQ(report::RenderFormat(SingleRunReport("run", c.seed, k), format).find("after-read"), std::string::npos)
        << format;
  }

  c.fault_schedule.reset();
  c.seed = 2;
  Result<RunResult> drawn = RunSimulation(c, StartServer());
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  k = SingleRunCheck("no-dedupe", "", c, *drawn, "", 0);
  EXPECT_FALSE(k.never_fired.empty());
  EXPECT_EQ(k.never_fired, drawn->coverage.NeverFired());
  EXPECT_EQ(k.fired_totals, drawn->coverage.fired);
}

// A single run's report calls its case the run, not a search's minimal
// counterexample, counts its coverage in this run, and a green run tells no
// empty story or violations heading and no violating path (its timeline's
// legend and squeezed steps included); a check's report keeps its words.
TEST_F(CoverageTest, AGreenRunIsCalledTheRunAndTellsNoEmptyStory) {
  RunConfig c = RunConfig::For(*FindProtocol("txn-dedupe"));
  c.workers = 2;
  c.events = 3;
  c.keep_trace = true;  // as `run` keeps it: the timeline is drawn
  c.fault_schedule = {*ParseFaultSpec("crash w1 after-effect #1")};
  Result<RunResult> r = RunSimulation(c, StartServer());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->observed, "ok");
  const report::CheckReport run = SingleRunCheck("txn-dedupe", "", c, *r, "", 0);
  EXPECT_TRUE(run.single_run);
  report::CheckReport searched = run;
  searched.single_run = false;
  const report::Report run_report = SingleRunReport("run", c.seed, run);
  report::Report check_report = run_report;
  check_report.checks = {searched};
  for (const std::string& format : report::FormatNames()) {
    const std::string text = report::RenderFormat(run_report, format);
    const std::string checked = report::RenderFormat(check_report, format);
    if (format != "json") {
      EXPECT_EQ(text.find("counterexample"), std::string::npos) << format << "\n" << text;
      EXPECT_NE(text.find("in this run"), std::string::npos) << format << "\n" << text;
      EXPECT_EQ(text.find("violating path"), std::string::npos) << format << ": a green run has none";
      EXPECT_NE(checked.find("minimal counterexample"), std::string::npos) << format;
      EXPECT_NE(checked.find("over the 1 case searched, not in the counterexample"), std::string::npos) << format;
      for (const char* heading :
           {"story:", "violations:", "### Story", "### Violations", "<h3>Story</h3>", "<h3>Violations</h3>"}) {
        EXPECT_EQ(text.find(heading), std::string::npos) << format << ": " << heading << "\n" << text;
      }
    }
  }
  EXPECT_NE(report::RenderText(run_report, false).find("\nrun: 3 events, 2 workers, 1 fault, "), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(run_report).find("- **Run:** 3 events, 2 workers, 1 fault, "), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(run_report).find("| cases | run | replay file |"), std::string::npos);
  EXPECT_NE(report::RenderHtml(run_report).find("<h3>Timeline of the run</h3>"), std::string::npos);
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
