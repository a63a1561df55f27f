// JUnit XML: valid against the schema CI systems read (tests/reports/
// junit.xsd, checked with xmllint), one testcase per check, and a failure
// that carries the story and the replay command.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>

#include "reports/report.h"
#include "reports/text_util.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Validates `xml` with xmllint against junit.xsd; skips when xmllint is missing.
void ExpectValid(const std::string& xml) {
  const std::string xmllint = FindOnPath("xmllint");
  if (xmllint.empty()) {
    GTEST_SKIP() << "xmllint not found on PATH; install Debian's libxml2-utils to validate JUnit XML";
  }
  TempDir dir;
  const std::string file = dir.Write("junit.xml", xml);
  ToolOutput out = RunTool(xmllint, {"--noout", "--schema", XACKLY_TEST_JUNIT_XSD, file}, 60'000,
                           /*merge_stderr=*/true);
  EXPECT_EQ(out.exit_code, 0) << out.out << "\n" << xml;
  EXPECT_NE(out.out.find("validates"), std::string::npos) << out.out;
}

Report RealReport() {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  CheckReport found = CheckFromCase(config, NoDedupeCase());
  // The same case judged against an expectation it does not meet.
  CheckReport mismatch = found;
  mismatch.name = "no-dedupe-expecting-ok";
  mismatch.expected = {VerdictKind::kOk, ""};
  mismatch.matched = false;
  CheckReport clean;
  clean.name = "txn-dedupe";
  clean.expected = {VerdictKind::kOk, ""};
  clean.observed = "ok";
  clean.matched = true;
  clean.cases_run = 40;
  return ReportOf({found, mismatch, clean});
}

TEST(JunitTest, ValidatesAgainstTheSchema) {
  ExpectValid(RenderJunit(RealReport()));
}

TEST(JunitTest, HostileTextStillValidates) {
  ExpectValid(RenderJunit(EverythingReport()));
}

TEST(JunitTest, EmptyReportValidates) {
  ExpectValid(RenderJunit(Report{}));
}

TEST(JunitTest, OneTestcasePerCheck) {
  const Report report = RealReport();
  const std::string xml = RenderJunit(report);
  EXPECT_EQ(Count(xml, "<testcase "), report.checks.size());
  EXPECT_NE(xml.find("<testcase name=\"no-dedupe\" classname=\"xackly\" time=\"0.250\">"), std::string::npos);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos);
}

TEST(JunitTest, FailureCarriesTheStoryAndTheReplayCommand) {
  const Report report = RealReport();
  const std::string xml = RenderJunit(report);
  ASSERT_EQ(Count(xml, "<failure "), 1u);
  const size_t begin = xml.find("<failure ");
  const std::string failure = xml.substr(begin, xml.find("</failure>", begin) - begin);
  EXPECT_NE(failure.find("message=\"expected ok, observed duplicate\" type=\"mismatch\""), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("w1 crashes at after-effect, before XACK."), std::string::npos) << failure;
  EXPECT_NE(failure.find("→ duplicate of order:1 (2 effects)"), std::string::npos) << failure;
  const std::string replay = report.checks[1].counterexample->replay_command;
  EXPECT_NE(failure.find("Replay: " + replay + "\n"), std::string::npos) << failure;
}

// A counterexample's violating path: its first 60 rows, then how many more
// the JSON and HTML reports hold.
TEST(JunitTest, AViolatingPathOfMoreThanSixtyRowsShowsSixtyAndCountsTheRest) {
  CaseReport c = NoDedupeCase();
  for (int i = 0; i < 100; ++i) {
    AppendIdenticalPolls(&c, 1, 1);
    c.trace.back().reply = fmt::format("[{}]", i);  // each poll its own row: no two fold into one
  }
  const size_t rows = FoldedPath(c).size();
  ASSERT_GT(rows, 100u);
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string xml = RenderJunit(ReportOf({CheckFromCase(config, c)}));
  EXPECT_EQ(Count(xml, fmt::format("… {} more path rows in the JSON and HTML reports", rows - 60)), 1u) << xml;
}

// Each format that cuts a long path (text at 40 rows, Markdown and JUnit at
// 60) shows a path of exactly its limit whole, and one row more as the
// limit and "1 more".
TEST(JunitTest, EveryFormatShowsAPathOfItsLimitWholeAndCutsOneRowMore) {
  struct Format {
    const char* name;
    size_t limit;
    std::function<std::string(const Report&)> render;
  };
  const std::vector<Format> formats = {
      {"text", 40, [](const Report& r) { return RenderText(r, /*color=*/false); }},
      {"md", 60, [](const Report& r) { return RenderMarkdown(r); }},
      {"junit", 60, [](const Report& r) { return RenderJunit(r); }},
  };
  const RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  for (const Format& f : formats) {
    for (const size_t rows : {f.limit, f.limit + 1}) {
      SCOPED_TRACE(fmt::format("{}, {} rows", f.name, rows));
      CaseReport c = NoDedupeCase();
      for (int i = 0; FoldedPath(c).size() < rows; ++i) {
        AppendIdenticalPolls(&c, 1, 1);
        c.trace.back().reply = fmt::format("[{}]", i);  // each poll its own row
      }
      ASSERT_EQ(FoldedPath(c).size(), rows);
      const std::string out = f.render(ReportOf({CheckFromCase(config, c)}));
      EXPECT_EQ(Count(out, "more path rows in the JSON and HTML reports"), rows > f.limit ? 1u : 0u) << out;
      if (rows > f.limit) {
        EXPECT_EQ(Count(out, "… 1 more path rows in the JSON and HTML reports"), 1u) << out;
      }
    }
  }
}

TEST(JunitTest, MatchedChecksPassWithTheirDetailsInSystemOut) {
  const std::string xml = RenderJunit(RealReport());
  const size_t begin = xml.find("<testcase name=\"no-dedupe\"");
  const std::string testcase = xml.substr(begin, xml.find("</testcase>", begin) - begin);
  EXPECT_EQ(testcase.find("<failure"), std::string::npos);
  EXPECT_NE(testcase.find("<system-out>"), std::string::npos);
  EXPECT_NE(testcase.find("story:"), std::string::npos);
  EXPECT_NE(testcase.find("replay: xackly replay"), std::string::npos);
}

// A shard that has not met a broken protocol's violation in its cases has
// not failed: CI sees a skipped testcase, not a failure (`xackly merge`
// decides), and every format says "undecided" rather than MISMATCH.
TEST(JunitTest, AnUndecidedShardCheckIsSkippedNotFailed) {
  CheckReport undecided;
  undecided.name = "no-dedupe";
  undecided.expected = {VerdictKind::kDuplicate, ""};
  undecided.observed = "ok";
  undecided.undecided = true;
  undecided.cases_run = 33;
  Report report = ReportOf({undecided});
  report.shard = "2/3";
  ASSERT_TRUE(report.all_matched);
  const std::string xml = RenderJunit(report);
  ExpectValid(xml);
  EXPECT_NE(xml.find("failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"undecided in this shard"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_NE(text.find("undecided  no-dedupe"), std::string::npos) << text;
  EXPECT_NE(text.find("0 of 1 check matched its expectation, 1 undecided (in this shard"), std::string::npos) << text;
  EXPECT_EQ(text.find("MISMATCH"), std::string::npos) << text;
  const std::string html = RenderHtml(report);
  EXPECT_NE(html.find("<span class=\"badge ok\">"), std::string::npos);
  EXPECT_EQ(html.find("MISMATCH"), std::string::npos);
}

// A check that matched but did not pass (coverage gaps not allowed; a green
// run whose planned fault never fired) is counted a failure, and CI tools
// that read the elements rather than the count see a failure element that
// names each gap. Allowed gaps, and a matched violation whose plan named a
// fault that never fired, pass.
TEST(JunitTest, AMatchThatDidNotPassForItsGapsIsAFailureNamingEachGap) {
  auto check = [](const std::string& name, const std::string& observed) {
    CheckReport k;
    k.name = name;
    k.expected = {observed == "ok" ? VerdictKind::kOk : VerdictKind::kDuplicate, ""};
    k.observed = observed;
    k.matched = true;
    k.cases_run = 1;
    return k;
  };
  const CheckReport::UnfiredFault unfired{"crash w1 after-effect #5",
                                          "w1 reached after-effect only 2 times while faults could fire"};
  CheckReport gaps = check("gaps", "ok");
  gaps.coverage_gaps = {"crash@after-XCLAIM"};
  CheckReport allowed = gaps;
  allowed.name = "allowed";
  allowed.gaps_allowed = true;
  // Single runs, as SingleRunCheck makes them: their case is always shown.
  CheckReport green = check("green-unfired", "ok");
  green.unfired_planned = {unfired};
  green.counterexample = CaseReport{};
  CheckReport found = check("found-unfired", "duplicate");
  found.unfired_planned = {unfired};
  found.counterexample = CaseReport{};
  const Report report = ReportOf({gaps, allowed, green, found});
  EXPECT_FALSE(report.all_matched);
  EXPECT_EQ(std::vector<std::string>({ResultWord(gaps), ResultWord(allowed), ResultWord(green), ResultWord(found)}),
            std::vector<std::string>({"matched with gaps", "matched (gaps allowed)", "matched with gaps", "matched"}));
  const std::string line =
      "planned fault never fired: 'crash w1 after-effect #5': w1 reached after-effect only 2 times while faults "
      "could fire";
  EXPECT_EQ(GapLines(gaps),
            std::vector<std::string>{"fault site that never fired although a case reached it: crash@after-XCLAIM"});
  EXPECT_EQ(GapLines(green), std::vector<std::string>{line});
  EXPECT_TRUE(GapLines(allowed).empty());
  EXPECT_TRUE(GapLines(found).empty());
  EXPECT_EQ(UnfiredPlannedLines(found), std::vector<std::string>{line});

  const std::string xml = RenderJunit(report);
  ExpectValid(xml);
  EXPECT_NE(xml.find("tests=\"4\" failures=\"2\""), std::string::npos) << xml;
  EXPECT_EQ(Count(xml, "<failure "), 2u) << xml;
  EXPECT_NE(xml.find("<failure message=\"matched with gaps: expected ok, observed ok\" type=\"coverage-gaps\">fault "
                     "site that never fired although a case reached it: crash@after-XCLAIM\n</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("type=\"coverage-gaps\">" + EscapeXml(line) + "\n</failure>"), std::string::npos) << xml;
  // No format shows the run that did not pass as a plain match.
  EXPECT_NE(RenderMarkdown(report).find("## ⚠️ green-unfired"), std::string::npos);
  EXPECT_NE(RenderMarkdown(report).find("| ⚠️ **matched with gaps** | green-unfired |"), std::string::npos);
  EXPECT_NE(RenderHtml(report).find("<span class=\"badge fail\">matched with gaps</span> green-unfired"),
            std::string::npos);
  EXPECT_NE(RenderText(report, false).find("── green-unfired: expected ok, observed ok — matched with gaps"),
            std::string::npos);
  // Every format says it of both runs whose plan it was, the passing one too
  // (JUnit in each system-out, and in the failure; JSON as fields).
  for (const std::string& format : FormatNames()) {
    const std::string text = RenderFormat(report, format);
    const size_t times = format == "junit" ? 3 : 2;
    EXPECT_EQ(Count(text, "planned fault never fired"), format == "json" ? 0u : times) << format << "\n" << text;
    EXPECT_EQ(Count(text, "w1 reached after-effect only 2 times while faults could fire"), times) << format;
  }
}

}  // namespace
}  // namespace xackly::report
