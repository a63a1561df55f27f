// Approval tests: every rendering of three fixed reports, byte for byte.
//
// The other report tests each assert one fact a user relies on (a glyph, a
// headline, a table's column); a change nobody thought to assert (a word of
// a story, a count in a summary, a row left out of a table) passes them
// all. Here each rendering a user reads or a CI tool parses (text, with and
// without colour, Markdown, HTML, JUnit, JSON, the server matrix) is
// compared whole with its approved copy in tests/reports/golden/, so any
// change to what a report says fails until a person has read the new text
// and approved it:
//
//   XACKLY_UPDATE_GOLDEN=1 build/tests/reports/xackly_report_tests --gtest_filter='GoldenTest.*'
//   git diff tests/reports/golden/    # read it: is every change meant?
//
// The inputs are JSON reports that real runs wrote, read with
// ParseJsonReport: `xackly check` of a suite of seven checks (duplicates, a
// failover's, a handler pool's, passes with coverage) and of a shard with
// coverage gaps and a mismatch whose counterexample is unshrunk; `xackly
// run` of a handler pool over six events and of a no-dedupe case under five
// fault kinds; and
// EverythingReport(), which sets every field. tests/reports/golden/regenerate
// writes the JSON inputs again (after a schema change) and then the
// approved renderings.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

std::string GoldenDir() { return std::string(XACKLY_SOURCE_DIR) + "/tests/reports/golden/"; }

bool Updating() {
  const char* v = std::getenv("XACKLY_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Line `n` (from 1) of `text`, or "(end of text)".
std::string LineOf(const std::string& text, size_t n) {
  std::istringstream in(text);
  std::string line;
  for (size_t i = 0; i < n; ++i) {
    if (!std::getline(in, line)) return "(end of text)";
  }
  return line;
}

// Compares `rendered` with the approved file `name` (or, when updating,
// writes it), naming the first line that differs.
void ExpectApproved(const std::string& name, const std::string& rendered) {
  const std::string path = GoldenDir() + name;
  if (Updating()) {
    std::ofstream(path, std::ios::binary) << rendered;
    return;
  }
  const std::string approved = ReadFile(path);
  ASSERT_FALSE(approved.empty()) << path << " is missing: run with XACKLY_UPDATE_GOLDEN=1 and read the diff";
  if (rendered == approved) return;
  size_t line = 1;
  for (size_t i = 0; i < std::min(rendered.size(), approved.size()) && rendered[i] == approved[i]; ++i) {
    if (rendered[i] == '\n') ++line;
  }
  ADD_FAILURE() << name << " differs from its approved copy at line " << line << ":\n  approved: "
                << LineOf(approved, line) << "\n  rendered: " << LineOf(rendered, line)
                << "\n(if the change is meant: XACKLY_UPDATE_GOLDEN=1, then read `git diff " << path << "`)";
}

Report Input(const std::string& name) {
  const std::string path = GoldenDir() + name + ".json";
  Result<Report> r = ParseJsonReport(ReadFile(path));
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
  if (json == Json::kTheInput && Updating()) return;
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
