// Issue #7: parallelism and sharding change how fast a check runs, never
// what it finds. -j 2 equals -j 1; shards 1/3, 2/3, 3/3 merged equal the
// unsharded run.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/merge.h"
#include "harness/results.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const char* const kProtocols[] = {"no-dedupe", "ack-first", "eager-claim", "naive-trim", "txn-dedupe",
                                  "dup-no-ack"};

// `coverage_cap` 0: the default rule (each shard covers its own gaps);
// 60: none (the shards together are exactly the unsharded search).
CheckOutcome Check(CasePool& pool, const std::string& protocol, int shard_index = 0, int shard_count = 1,
                   int coverage_cap = 0) {
  CheckOptions options;
  options.cases = 60;
  options.coverage_cap = coverage_cap;
  options.seed = 5;
  options.shard_index = shard_index;
  options.shard_count = shard_count;
  Result<CheckOutcome> r = RunCheck(RunConfig::For(*FindProtocol(protocol)), pool, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : CheckOutcome{};
}

TEST(ParallelTest, TwoThreadsFindExactlyWhatOneThreadFinds) {
  CasePool one(1, TestServerOptions());
  CasePool two(2, TestServerOptions());
  for (const char* protocol : kProtocols) {
    CheckOutcome a = Check(one, protocol);
    CheckOutcome b = Check(two, protocol);
    EXPECT_EQ(a.cases_run, b.cases_run) << protocol;
    EXPECT_EQ(a.hit_index, b.hit_index) << protocol;
    EXPECT_EQ(a.minimal, b.minimal) << protocol;
    EXPECT_EQ(a.shrink_steps, b.shrink_steps) << protocol;
    EXPECT_EQ(a.shrink_runs, b.shrink_runs) << protocol;
    EXPECT_EQ(a.minimal_result.trace_hash, b.minimal_result.trace_hash) << protocol;
    EXPECT_EQ(a.observed, b.observed) << protocol;
    EXPECT_EQ(a.matched, b.matched) << protocol;
    EXPECT_EQ(a.coverage.fired, b.coverage.fired) << protocol;
    EXPECT_EQ(a.coverage.enabled, b.coverage.enabled) << protocol;
    EXPECT_EQ(a.observed_classes, b.observed_classes) << protocol;
  }
}

report::Report AsReport(const std::vector<report::CheckReport>& checks, const std::string& shard) {
  report::Report r;
  r.command = "check";
  r.seed = 5;
  r.shard = shard;
  r.checks = checks;
  return r;
}

TEST(ParallelTest, ThreeShardsMergedEqualTheUnshardedRun) {
  CasePool pool(2, TestServerOptions());
  std::vector<report::CheckReport> whole;
  std::vector<std::vector<report::CheckReport>> shards(3);
  for (const char* protocol : kProtocols) {
    RunConfig base = RunConfig::For(*FindProtocol(protocol));
    whole.push_back(ToCheckReport(protocol, "", base, Check(pool, protocol, 0, 1, 60), ""));
    for (int i = 0; i < 3; ++i) {
      shards[i].push_back(ToCheckReport(protocol, "", base, Check(pool, protocol, i, 3, 60), ""));
    }
  }
  Result<report::Report> merged = MergeReports(
      {AsReport(shards[0], "1/3"), AsReport(shards[1], "2/3"), AsReport(shards[2], "3/3")});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->checks.size(), whole.size());
  for (size_t c = 0; c < whole.size(); ++c) ExpectSameVerdict(merged->checks[c], whole[c]);
  EXPECT_EQ(merged->all_matched,
            std::all_of(whole.begin(), whole.end(), [](const report::CheckReport& k) { return k.matched; }));
}

// Under the coverage rule each shard draws aimed cases at its own gaps, so
// a merged report counts other cases than an unsharded run; its verdict
// and its evidence (no gaps) are the same.
TEST(ParallelTest, ShardsThatEachCoverTheirGapsMergeToTheSameVerdictWithoutGaps) {
  CasePool pool(2, TestServerOptions());
  const char* const protocol = "txn-dedupe";  // green, and needs coverage cases at 60
  RunConfig base = RunConfig::For(*FindProtocol(protocol));
  const CheckOutcome whole = Check(pool, protocol);
  ASSERT_GT(whole.cases_for_coverage, 0) << "otherwise this test shows nothing";
  std::vector<report::CheckReport> shards;
  for (int i = 0; i < 3; ++i) shards.push_back(ToCheckReport(protocol, "", base, Check(pool, protocol, i, 3), ""));
  Result<report::Report> merged = MergeReports(
      {AsReport({shards[0]}, "1/3"), AsReport({shards[1]}, "2/3"), AsReport({shards[2]}, "3/3")});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const report::CheckReport& m = merged->checks[0];
  EXPECT_TRUE(whole.coverage_gaps.empty());
  EXPECT_TRUE(m.coverage_gaps.empty());
  EXPECT_TRUE(m.matched);
  EXPECT_EQ(m.observed, whole.observed);
  EXPECT_GE(m.cases_run, 60);
}

// Several checks with -j 2 run two at a time, each on its own CPU; the
// table, the reports and the replay files are those of -j 1, in the same
// order.
TEST(ParallelTest, ChecksRunTwoAtATimeReportExactlyWhatOneAtATimeReports) {
  ScopedTempRoot dir;
  // `check --library mini` of five catalog scripts (quick ones, broken and
  // correct) from a scenario root of their own.
  namespace fs = std::filesystem;
  const fs::path src = fs::path(XACKLY_SOURCE_DIR) / "scenarios" / "catalog" / "scripts";
  const fs::path mini = fs::path(dir.path()) / "scenarios" / "library" / "mini";
  fs::create_directories(mini);
  fs::copy_file(src / "catalog_loop.lua", mini / "catalog_loop.lua");
  const std::vector<std::string> names = {"ack-first", "eager-claim", "mark-after-effect", "no-dedupe",
                                          "txn-dedupe"};
  for (const std::string& n : names) {
    fs::copy_file(src / (n + ".toml"), mini / (n + ".toml"));
    fs::copy_file(src / (n + ".lua"), mini / (n + ".lua"));
  }
  ScopedEnv scenario_dir("XACKLY_SCENARIO_DIR", (dir.path() + "/scenarios").c_str());
  report::Report reports[2];
  std::string tables[2];
  for (int j = 1; j <= 2; ++j) {
    const std::string out = dir.path() + "/j" + std::to_string(j);
    CommandOutput check = RunXackly({"check", "--library", "mini", "--cases", "20", "--seed", "3", "-j",
                                     std::to_string(j), "--out", out, "--format", "json,text", "--quiet"});
    ASSERT_TRUE(check.exit_code == kExitOk || check.exit_code == kExitVerdictMismatch) << check.output;
    Result<report::Report> json = report::ParseJsonReport(*ReadFile(out + "/report.json"));
    ASSERT_TRUE(json.ok()) << json.status().ToString();
    reports[j - 1] = *json;
    // The table without the command line, timings and the run's own paths.
    std::string table = *ReadFile(out + "/report.txt");
    table = std::regex_replace(table, std::regex("command: [^\\n]*"), "command: C");
    table = std::regex_replace(table, std::regex("[0-9]+\\.[0-9]+ s"), "T s");
    tables[j - 1] = std::regex_replace(table, std::regex(out), "OUT");
  }
  ASSERT_EQ(reports[0].checks.size(), names.size());
  ASSERT_EQ(reports[1].checks.size(), names.size());
  for (size_t c = 0; c < names.size(); ++c) {
    const report::CheckReport& one = reports[0].checks[c];
    const report::CheckReport& two = reports[1].checks[c];
    EXPECT_EQ(one.name, names[c] + "-script") << "rows in file order";
    EXPECT_EQ(two.name, one.name) << "row " << c;
    EXPECT_EQ(two.observed, one.observed) << one.name;
    EXPECT_EQ(two.matched, one.matched) << one.name;
    EXPECT_EQ(two.cases_run, one.cases_run) << one.name;
    EXPECT_EQ(two.first_hit_case, one.first_hit_case) << one.name;
    ASSERT_EQ(two.counterexample.has_value(), one.counterexample.has_value()) << one.name;
    if (one.counterexample) {
      EXPECT_EQ(two.counterexample->trace_hash, one.counterexample->trace_hash) << one.name;
      // The same replay file, but for the command line it names as its origin.
      const std::regex origin("origin = [^\\n]*");
      EXPECT_EQ(std::regex_replace(*ReadFile(two.counterexample->replay_file), origin, ""),
                std::regex_replace(*ReadFile(one.counterexample->replay_file), origin, ""))
          << one.name;
    }
  }
  EXPECT_EQ(reports[1].all_matched, reports[0].all_matched);
  EXPECT_EQ(tables[1], tables[0]);
}

// Two checks share -j 2 by running at once, one thread each; with -j 1
// they run one after the other. The progress line says which (seed 1 of
// the generated mutants, 2026-12-07: two checks ran one at a time under
// -j 2 and no test noticed).
TEST(ParallelTest, TwoChecksRunAtOnceWhenThereAreTwoThreads) {
  ScopedTempRoot dir;
  const std::string scripts = std::string(XACKLY_SOURCE_DIR) + "/scenarios/catalog/scripts/";
  for (const std::string jobs : {"2", "1"}) {
    CommandOutput check = RunXackly({"check", "--scenario", scripts + "ack-first.toml", "--scenario",
                                     scripts + "no-dedupe.toml", "--cases", "3", "--max-shrinks", "0", "-j", jobs,
                                     "--out", dir.path() + "/j" + jobs});
    EXPECT_EQ(check.exit_code, kExitOk) << check.output;
    EXPECT_EQ(Contains(check.output, "2 checks, 2 at once"), jobs == "2") << jobs << "\n" << check.output;
    // Counted as checks, each that found its violation once.
    EXPECT_EQ(Contains(check.output, "2 checks, 2 at once: 2/2 checks, 2 violations"), jobs == "2")
        << jobs << "\n" << check.output;
    EXPECT_EQ(Contains(check.output, "(protocol 1 of 2)"), jobs == "1") << jobs << "\n" << check.output;
  }
}

// A gap is a site some shard's cases reached but never fired: merged, a
// gap that another shard fired is closed, one that no shard fired stays
// (and makes `merge` exit 4), and the tallies add up over the shards.
TEST(ParallelTest, MergedGapsAreTheShardsGapsThatNoShardFired) {
  report::CheckReport one, two;
  one.name = two.name = "no-dedupe";
  Expectation duplicate;
  std::string why;
  ASSERT_TRUE(Expectation::Parse("duplicate", &duplicate, &why)) << why;
  one.expected = two.expected = duplicate;
  one.observed = two.observed = "ok";
  one.cases_run = two.cases_run = 10;
  one.coverage_gaps = {"crash@after-ack", "xdel"};
  one.never_fired = {"crash@after-ack", "xdel"};
  one.fired_totals = {{"crash@after-effect", 3}};
  two.coverage_gaps = {"crash@after-ack"};
  two.never_fired = {"crash@after-ack"};
  two.fired_totals = {{"crash@after-effect", 2}, {"xdel", 1}};
  Result<report::Report> merged = MergeReports({AsReport({one}, "1/2"), AsReport({two}, "2/2")});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->checks.size(), 1u);
  const report::CheckReport& m = merged->checks[0];
  EXPECT_EQ(m.coverage_gaps, std::vector<std::string>{"crash@after-ack"});
  EXPECT_EQ(m.never_fired, std::vector<std::string>{"crash@after-ack"});
  EXPECT_EQ(m.fired_totals, (std::map<std::string, int>{{"crash@after-effect", 5}, {"xdel", 1}}));
  EXPECT_EQ(m.cases_run, 20);
}

TEST(ParallelTest, MergeRefusesShardsThatDoNotBelongTogether) {
  report::CheckReport k;
  k.name = "no-dedupe";
  // A set that does belong together merges, so each refusal below is about
  // what it changes.
  ASSERT_TRUE(MergeReports({AsReport({k}, "1/2"), AsReport({k}, "2/2")}).ok());
  EXPECT_FALSE(MergeReports({AsReport({k}, "1/3"), AsReport({k}, "2/3")}).ok());   // 3/3 missing
  EXPECT_FALSE(MergeReports({AsReport({k}, "1/2"), AsReport({k}, "1/2")}).ok());   // given twice
  report::Report other = AsReport({k}, "2/2");
  other.seed = 6;
  EXPECT_FALSE(MergeReports({AsReport({k}, "1/2"), other}).ok());                  // another seed
  EXPECT_FALSE(MergeReports({AsReport({k}, "")}).ok());                            // not a shard
  // Another server (a server matrix's other column): the same cases, but
  // not one search.
  report::Report valkey = AsReport({k}, "2/2");
  valkey.server_version = "valkey 8.0.1";
  Result<report::Report> mixed = MergeReports({AsReport({k}, "1/2"), valkey});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("ran on different servers"), std::string::npos) << mixed.status().message();
}

// `xackly merge` reads each shard from its report.json: a shard whose cases
// a harness limit stopped keeps them unjudged through its JSON, and the
// merged check stays undecided (those cases may hold what it looks for),
// even when the limit stopped one case only.
TEST(ParallelTest, MergedShardsKeepTheirUnjudgedCasesUndecidedThroughJson) {
  report::CheckReport stopped;
  stopped.name = "txn-dedupe";
  stopped.observed = "ok";
  stopped.undecided = true;
  stopped.cases_run = 9;
  stopped.cases_unjudged = 1;
  report::CheckReport judged = stopped;
  judged.undecided = false;
  judged.matched = true;
  judged.cases_run = 10;
  judged.cases_unjudged = 0;
  std::vector<report::Report> shards;
  for (const auto& [k, which] : {std::pair{stopped, "1/2"}, std::pair{judged, "2/2"}}) {
    Result<report::Report> back = report::ParseJsonReport(report::RenderJson(AsReport({k}, which)));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->checks.size(), 1u);
    EXPECT_EQ(back->checks[0].cases_unjudged, k.cases_unjudged) << which;
    EXPECT_EQ(back->checks[0].undecided, k.undecided) << which;
    shards.push_back(*std::move(back));
  }
  Result<report::Report> merged = MergeReports(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const report::CheckReport& m = merged->checks[0];
  EXPECT_EQ(m.cases_run, 19);
  EXPECT_EQ(m.cases_unjudged, 1);
  EXPECT_TRUE(m.undecided);
  EXPECT_FALSE(m.matched);
  EXPECT_STREQ(report::ResultWord(m), "undecided");
  // Without unjudged cases the same shards decide it.
  shards[0].checks[0].cases_unjudged = 0;
  shards[0].checks[0].undecided = false;
  shards[0].checks[0].matched = true;
  Result<report::Report> decided = MergeReports(shards);
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_FALSE(decided->checks[0].undecided);
  EXPECT_TRUE(decided->checks[0].matched);
}

// Shards run with different search options do not hold the cases of one
// search: merging them would report a search nobody ran.
TEST(ParallelTest, MergeRefusesShardsThatSearchedDifferentlyAndNamesTheFlag) {
  report::CheckReport k;
  k.name = "no-dedupe";
  const report::SearchSettings base{100, 3, 8, 4, false, true};
  auto shard = [&](const std::string& which, report::SearchSettings search) {
    report::Report r = AsReport({k}, which);
    r.search = search;
    return r;
  };
  ASSERT_TRUE(MergeReports({shard("1/2", base), shard("2/2", base)}).ok());
  struct Case {
    report::SearchSettings other;
    const char* named;
  };
  report::SearchSettings cases = base, swarm = base, workers = base, events = base, faults = base, fixed = base;
  cases.cases = 50;
  swarm.swarm = false;
  workers.max_workers = 5;
  events.max_events = 9;
  faults.max_faults = 2;
  fixed.fixed_workload = true;
  for (const Case& c : {Case{cases, "--cases 100 / 50"}, Case{swarm, "--no-swarm off / on"},
                        Case{workers, "--max-workers 3 / 5"}, Case{events, "--max-events 8 / 9"},
                        Case{faults, "--max-faults 4 / 2"}, Case{fixed, "--fixed-workload off / on"}}) {
    Result<report::Report> merged = MergeReports({shard("1/2", base), shard("2/2", c.other)});
    ASSERT_FALSE(merged.ok()) << c.named;
    EXPECT_EQ(merged.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(merged.status().message().find(c.named), std::string::npos) << merged.status().message();
  }
}

// The settings travel in report.json: merge reads them back from the files.
TEST(ParallelTest, SearchSettingsRoundTripThroughTheJsonReport) {
  report::Report r = AsReport({}, "1/2");
  r.search = {77, 2, 9, 1, true, false};
  Result<report::Report> back = report::ParseJsonReport(report::RenderJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->search, r.search);
}

}  // namespace
}  // namespace xackly
