// Approval tests: every rendering of five fixed reports, byte for byte.
//
// The other report tests each assert one fact a user relies on (a glyph, a
// headline, a table's column); a change nobody thought to assert (a word of
// a story, a count in a summary, a row left out of a table) passes them
// all. Here each rendering a user reads or a CI tool parses (text, with and
// without colour, Markdown, HTML, JUnit, JSON, the server matrix) is
// compared whole with its approved copy in tests/reports/golden/, so any
// change to what a report says fails until a person has read the new text
// and approved it (tests/approved_file.h says how).
//
// The inputs are JSON reports that real runs wrote, read with
// ParseJsonReport: `xackly check` of a suite of seven checks (duplicates, a
// failover's, a handler pool's, passes with coverage) and of a shard with
// coverage gaps and a mismatch whose counterexample is unshrunk; `xackly
// run` of a handler pool over six events and of a no-dedupe case under five
// fault kinds; and EverythingReport(), which sets every field. tests/reports/golden/regenerate
// writes the JSON inputs again (after a schema change) and then the
// approved renderings.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/files.h"
#include "reports/report.h"
#include "tests/approved_file.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

std::string GoldenDir() { return std::string(XACKLY_SOURCE_DIR) + "/tests/reports/golden/"; }

void ExpectApproved(const std::string& name, const std::string& rendered) {
  ExpectMatchesApprovedFile(GoldenDir() + name, rendered);
}

Report Input(const std::string& name) {
  const std::string path = GoldenDir() + name + ".json";
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  Result<Report> r = ParseJsonReport(text.ok() ? *text : "");
  EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString()
                      << " (a schema change? tests/reports/golden/regenerate writes the inputs again)";
  return r.ok() ? *r : Report{};
}

// The approved JSON is name.json. For a run's report that is its input
// itself: its JSON written again must be the very text the run wrote, and
// updating never rewrites it.
enum class Json { kApproved, kTheInput };
void ExpectEveryRenderingApproved(const std::string& name, const Report& report, Json json) {
  ExpectApproved(name + ".txt", RenderText(report, /*color=*/false));
  ExpectApproved(name + ".color.txt", RenderText(report, /*color=*/true));
  ExpectApproved(name + ".mismatches.txt", RenderText(report, /*color=*/false, /*mismatches_only=*/true));
  ExpectApproved(name + ".md", RenderMarkdown(report));
  ExpectApproved(name + ".html", RenderHtml(report));
  ExpectApproved(name + ".junit.xml", RenderJunit(report));
  if (json == Json::kTheInput && UpdatingApprovedFiles()) return;
  ExpectApproved(name + ".json", RenderJson(report));
}

TEST(GoldenTest, ASuiteOfSevenChecksRendersAsApproved) {
  Report suite = Input("suite");
  ASSERT_EQ(suite.checks.size(), 7u);
  ExpectEveryRenderingApproved("suite", suite, Json::kTheInput);
}

TEST(GoldenTest, AShardWithAMismatchGapsAndAnUnshrunkCaseRendersAsApproved) {
  Report shard = Input("shard-mismatch");
  ASSERT_EQ(shard.checks.size(), 2u);
  ExpectEveryRenderingApproved("shard-mismatch", shard, Json::kTheInput);
}

TEST(GoldenTest, TwoSingleRunsRenderAsApproved) {
  for (const char* name : {"run-handler-pool", "run-faults"}) {
    Report run = Input(name);
    ASSERT_EQ(run.checks.size(), 1u) << name;
    ExpectEveryRenderingApproved(name, run, Json::kTheInput);
  }
}

TEST(GoldenTest, EveryFieldSetRendersAsApproved) {
  ExpectEveryRenderingApproved("everything", EverythingReport(), Json::kApproved);
}

// Two servers: the suite on one, and on the other the same suite with its
// first check's verdict turned into a mismatch (what a server that differs
// shows).
TEST(GoldenTest, AServerMatrixWhereOneServerDiffersRendersAsApproved) {
  Report suite = Input("suite");
  ASSERT_FALSE(suite.checks.empty());
  Report other = suite;
  other.server_version = "valkey 8.0.2";
  other.checks[0].observed = "ok";
  other.checks[0].matched = false;
  other.checks[0].counterexample.reset();
  std::vector<ServerResult> servers = {{"redis-7.0.15", "xackly-out/redis-7.0.15", suite, 0},
                                       {"valkey-8.0.2", "xackly-out/valkey-8.0.2", other, 1}};
  ExpectApproved("matrix.txt", RenderMatrixText(servers, /*color=*/false));
  ExpectApproved("matrix.color.txt", RenderMatrixText(servers, /*color=*/true));
  ExpectApproved("matrix.rows.txt", RenderMatrixText(servers, /*color=*/false, /*rows_only=*/true));
  ExpectApproved("matrix.json", RenderMatrixJson(servers));
}

// The same shard on two servers: the matrix says how to merge each
// server's shards, by its own directory.
TEST(GoldenTest, AShardsServerMatrixRendersAsApproved) {
  Report shard = Input("shard-mismatch");
  ASSERT_FALSE(shard.shard.empty());
  Report other = shard;
  other.server_version = "valkey 8.0.2";
  std::vector<ServerResult> servers = {{"redis-7.0.15", "out/redis-7.0.15", shard, 1},
                                       {"valkey-8.0.2", "out/valkey-8.0.2", other, 1}};
  ExpectApproved("matrix-shard.txt", RenderMatrixText(servers, /*color=*/false));
  ExpectApproved("matrix-shard.json", RenderMatrixJson(servers));
}

}  // namespace
}  // namespace xackly::report
