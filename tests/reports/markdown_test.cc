// Markdown: GitHub tables, the story as a numbered list, coverage with gaps
// flagged, and data that cannot break the table or the code blocks.
#include <gtest/gtest.h>

#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

TEST(MarkdownTest, TablesStoryCoverageAndReplay) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const Report report = ReportOf({CheckFromCase(config, NoDedupeCase())});
  const std::string md = RenderMarkdown(report);
  EXPECT_NE(md.find("| result | protocol | expected | observed | cases | minimal counterexample | replay file |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("### Story\n\n1. w1 reads 0-1 (order:1) with XREADGROUP >.\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| fault site | times fired |\n|---|---:|\n"), std::string::npos) << md;  // no empty column
  EXPECT_NE(md.find("| `crash@after-effect` | 1 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0 ⚠️ never fired |"), std::string::npos) << md;
  EXPECT_NE(md.find("```sh\n" + report.checks[0].counterexample->replay_command + "\n```\n"), std::string::npos);
}

// A shard's report says which shard it is beside the seed; a whole run's
// names none.
TEST(MarkdownTest, TheHeaderNamesTheShardOnlyOfAShardsReport) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  Report report = ReportOf({CheckFromCase(config, NoDedupeCase())});
  EXPECT_EQ(RenderMarkdown(report).find("shard"), std::string::npos);
  report.shard = "2/3";
  const std::string md = RenderMarkdown(report);
  const size_t facts = md.find("\n\nseed ");
  ASSERT_NE(facts, std::string::npos) << md;
  EXPECT_NE(md.substr(facts, md.find('\n', facts + 2) - facts).find(" · shard 2/3"), std::string::npos) << md;
}

TEST(MarkdownTest, DataCannotBreakTablesOrFences) {
  Report report = EverythingReport();
  report.checks[0].counterexample->replay_command = "echo ```` done";
  const std::string md = RenderMarkdown(report);
  // Every table row has the header's number of unescaped pipes.
  size_t rows = 0;
  size_t at = md.find("| result |");
  ASSERT_NE(at, std::string::npos);
  const size_t header_end = md.find('\n', at);
  const auto pipes = [](std::string_view line) {
    size_t n = 0;
    for (size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    return n;
  };
  const size_t expected = pipes(std::string_view(md).substr(at, header_end - at));
  for (size_t line = header_end + 1; md.compare(line, 1, "|") == 0; line = md.find('\n', line) + 1) {
    EXPECT_EQ(pipes(std::string_view(md).substr(line, md.find('\n', line) - line)), expected);
    ++rows;
  }
  EXPECT_EQ(rows, 3u);  // separator + 2 checks
  EXPECT_NE(md.find("`````sh\necho ```` done\n`````\n"), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
}

// A check with a counterexample has its coverage in its own section; the
// coverage of the other checks (those without one) follows under its own
// heading, one subsection each, never the violated check's again.
TEST(MarkdownTest, TheOtherChecksCoverageListsOnlyTheChecksWithoutADetailSection) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  CheckReport passed;
  passed.name = "txn-dedupe";
  passed.matched = true;
  passed.cases_run = 10;
  passed.fired_totals = {{"crash@after-read", 3}};
  const std::string md = RenderMarkdown(ReportOf({CheckFromCase(config, NoDedupeCase()), passed}));
  const size_t others = md.find("\n## Fault-point coverage of the other checks\n");
  ASSERT_NE(others, std::string::npos) << md;
  const std::string tail = md.substr(others);
  EXPECT_NE(tail.find("\n### txn-dedupe\n"), std::string::npos) << tail;
  EXPECT_EQ(tail.find("\n### no-dedupe\n"), std::string::npos) << tail;
  EXPECT_NE(tail.find("| `crash@after-read` | 3 |"), std::string::npos) << tail;
}

}  // namespace
}  // namespace xackly::report
