// --format lists and file names.
#include <gtest/gtest.h>

#include "reports/report.h"

namespace xackly::report {
namespace {

TEST(FormatsTest, ParsesAListKeepingOrderAndDroppingDuplicates) {
  std::string error = "stale";
  EXPECT_EQ(ParseFormats("text,md,html,junit,json", &error),
            (std::vector<std::string>{"text", "md", "html", "junit", "json"}));
  EXPECT_EQ(error, "");
  EXPECT_EQ(ParseFormats(" json , text,json,", &error), (std::vector<std::string>{"json", "text"}));
}

TEST(FormatsTest, UnknownNamesListTheValidOnes) {
  std::string error;
  EXPECT_TRUE(ParseFormats("text,xml", &error).empty());
  EXPECT_EQ(error, "unknown report format 'xml'; valid formats: text, md, html, junit, json");
  EXPECT_TRUE(ParseFormats(" , ", &error).empty());
  EXPECT_EQ(error, "no report format given; valid formats: text, md, html, junit, json");
}

TEST(FormatsTest, FileNames) {
  EXPECT_EQ(ReportFileName("text"), "report.txt");
  EXPECT_EQ(ReportFileName("md"), "report.md");
  EXPECT_EQ(ReportFileName("html"), "report.html");
  EXPECT_EQ(ReportFileName("junit"), "junit.xml");
  EXPECT_EQ(ReportFileName("json"), "report.json");
}

TEST(FormatsTest, RenderFormatPicksTheRenderer) {
  Report r;
  EXPECT_EQ(RenderFormat(r, "json"), RenderJson(r));
  EXPECT_EQ(RenderFormat(r, "junit"), RenderJunit(r));
  EXPECT_EQ(RenderFormat(r, "md"), RenderMarkdown(r));
  EXPECT_EQ(RenderFormat(r, "html"), RenderHtml(r));
  EXPECT_EQ(RenderFormat(r, "text"), RenderText(r, /*color=*/false));
}

// What every format says after "counterexample" about its shrinking: how
// many steps, and whether --max-shrinks cut it short (so the case may not
// be minimal), in each of the four combinations.
TEST(FormatsTest, TheShrinkNoteSaysHowManyStepsAndWhetherTheCapStoppedThem) {
  CheckReport k;
  EXPECT_EQ(ShrinkNote(k), "");
  k.shrink_steps = 1;
  EXPECT_EQ(ShrinkNote(k), " (after 1 shrink)");
  k.shrink_steps = 3;
  EXPECT_EQ(ShrinkNote(k), " (after 3 shrinks)");
  k.shrink_cut = true;
  EXPECT_EQ(ShrinkNote(k), " (after 3 shrinks; --max-shrinks stopped it, may not be minimal)");
  k.shrink_steps = 0;
  EXPECT_EQ(ShrinkNote(k), " (not shrunk: --max-shrinks stopped it; may not be minimal)");
}

}  // namespace
}  // namespace xackly::report
