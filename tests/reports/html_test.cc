// HTML: self-contained and escaped, and, rendered by a real browser
// (headless Chromium), a timeline a person can read: a lane per actor, the
// crash between the effect and the XACK, the violating path highlighted,
// the story and the replay command.
#include <algorithm>
#include <regex>

#include <gtest/gtest.h>

#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

Report NoDedupeReport() {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  return ReportOf({CheckFromCase(config, NoDedupeCase())});
}

// Every value of attribute `name` in `html`.
std::vector<std::string> AttributeValues(const std::string& html, const std::string& name) {
  std::vector<std::string> out;
  const std::regex re("\\s" + name + "\\s*=\\s*\"([^\"]*)\"", std::regex::icase);
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

void ExpectSelfContained(const std::string& html) {
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("//cdn"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_TRUE(AttributeValues(html, "src").empty());
  for (const std::string& href : AttributeValues(html, "href")) EXPECT_TRUE(href.starts_with("#")) << href;
  for (size_t at = html.find("url("); at != std::string::npos; at = html.find("url(", at + 1)) {
    EXPECT_EQ(html.compare(at, 5, "url(#"), 0) << html.substr(at, 30);
  }
}

TEST(HtmlTest, HasNoExternalReferences) {
  ExpectSelfContained(RenderHtml(NoDedupeReport()));
  ExpectSelfContained(RenderHtml(EverythingReport()));
}

TEST(HtmlTest, EscapesEverything) {
  Report report = NoDedupeReport();
  ASSERT_TRUE(report.checks[0].counterexample.has_value());
  CaseReport& c = *report.checks[0].counterexample;
  ASSERT_GT(c.trace.size(), 1u);
  c.trace[1].request = "EVAL \"</script><script>alert(1)</script>\" 0 '<b>' & \"q\"";
  c.replay_command = "xackly replay '</code><img src=x>'";
  report.checks[0].name = "<i>name</i>";
  const std::string html = RenderHtml(report);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<i>name"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 1u);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  const std::string hostile = RenderHtml(EverythingReport());
  EXPECT_EQ(hostile.find('\x1b'), std::string::npos);
  EXPECT_EQ(hostile.find("<tag>"), std::string::npos);
}

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string path = FindOnPath(name);
    if (!path.empty()) return path;
  }
  return "";
}

struct StepInDom {
  std::string classes;
  int64_t line;
  double x;
};

// The step groups inside the lane of `actor` in the rendered DOM.
std::vector<StepInDom> StepsOfLane(const std::string& dom, const std::string& actor) {
  const size_t begin = dom.find("<g class=\"lane\" data-actor=\"" + actor + "\">");
  if (begin == std::string::npos) return {};
  size_t end = dom.find("<g class=\"lane\"", begin + 1);
  if (end == std::string::npos) end = dom.find("</svg>", begin);
  const std::string lane = dom.substr(begin, end - begin);
  std::vector<StepInDom> out;
  const std::regex re(R"re(<g class="step ([^"]*)" id="c1-l(\d+)" data-line="\d+" data-t="\d+" data-x="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(lane.begin(), lane.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back({(*it)[1], std::stoll((*it)[2]), std::stod((*it)[3])});
  }
  return out;
}

// The x of every step on the violating path, in drawing order.
std::vector<double> ViolationXs(const std::string& html) {
  std::vector<double> xs;
  const std::regex re("<g class=\"step [^\"]*violation[^\"]*\"[^>]*data-x=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) {
    xs.push_back(std::stod((*it)[1]));
  }
  return xs;
}

// ack-before-dlq's counterexample waits 30 s twice between its deliveries,
// each wait ~40 off-path steps: squeezed, they must leave the violating XACK
// and crash inside a 1280 px window (about 1000 px of timeline), and the
// script scrolls any wider timeline to its last violating step.
TEST(HtmlTest, TheViolatingStepOfALongCaseFitsA1280PxWindow) {
  const CaseReport c = RunCase("ack-before-dlq", 1, 1, std::vector<std::string>{"poison event 1", "crash w1 after-ack #1"});
  ASSERT_GT(c.trace.size(), 150u);
  RunConfig config = RunConfig::For(*FindProtocol("ack-before-dlq"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  const std::vector<double> xs = ViolationXs(html);
  ASSERT_FALSE(xs.empty());
  std::smatch crash;
  ASSERT_TRUE(std::regex_search(html, crash, std::regex("<g class=\"step crash violation[^\"]*\"[^>]*data-x=\"([-0-9.]+)\"")));
  EXPECT_LT(std::stod(crash[1]), 1000.0) << "the XACK and the crash after it";
  EXPECT_LT(*std::max_element(xs.begin(), xs.end()), 1100.0);
  EXPECT_NE(html.find("box.scrollLeft = last + 90 - box.clientWidth"), std::string::npos);
}

// Labels under the lanes (squeezed runs, phase markers) never overlap on
// one row, and time labels stay inside the drawing.
TEST(HtmlTest, LabelsUnderTheLanesDoNotOverlap) {
  CaseReport c = NoDedupeCase();
  ASSERT_GE(c.trace.size(), 3u);
  // Two more phase markers one millisecond apart at the end of the trace.
  const int64_t t = c.trace.back().t_ms;
  c.trace.push_back({t + 1, "sim", LineKind::kLifecycle, "fault phase over: faults off", "", LineEvent::kNote, {},
                     "fault phase over"});
  c.trace.push_back({t + 2, "sim", LineKind::kLifecycle, "quiescent: nothing pending", "", LineEvent::kNote, {},
                     "quiescent"});
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  struct Span {
    double x0, x1, y;
    std::string text;
  };
  std::vector<Span> spans;
  const std::regex phase("<g class=\"phase\">[\\s\\S]*?<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), phase); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    spans.push_back({x, x + 6.2 * static_cast<double>((*it)[3].length()), std::stod((*it)[2]), (*it)[3]});
  }
  const std::regex band("<g class=\"squeezed\">[\\s\\S]*?<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), band); it != std::sregex_iterator(); ++it) {
    const double half = 3.1 * static_cast<double>((*it)[3].length());
    const double x = std::stod((*it)[1]);
    spans.push_back({x - half, x + half, std::stod((*it)[2]), (*it)[3]});
  }
  ASSERT_GE(spans.size(), 2u);
  for (size_t i = 0; i < spans.size(); ++i) {
    for (size_t j = i + 1; j < spans.size(); ++j) {
      if (spans[i].y != spans[j].y) continue;
      EXPECT_TRUE(spans[i].x1 <= spans[j].x0 || spans[j].x1 <= spans[i].x0)
          << "'" << spans[i].text << "' and '" << spans[j].text << "' overlap at y " << spans[i].y;
    }
  }
  // Every time label's centre leaves room for half of it inside the drawing.
  std::smatch width;
  ASSERT_TRUE(std::regex_search(html, width, std::regex("class=\"timeline\"[^>]* width=\"([0-9.]+)\"")));
  const std::regex label("<text x=\"([-0-9.]+)\" y=\"13\" class=\"axis-t\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), label); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    const double half = 6.2 * static_cast<double>((*it)[2].length()) / 2;
    EXPECT_GE(x - half, 0) << (*it)[2];
    EXPECT_LE(x + half, std::stod(width[1])) << (*it)[2];
  }
}

// racy-trim's counterexample has ~2300 path lines, almost all a janitor
// polling the entry with the same request and reply: drawn full size they
// made a 125 000 px timeline. Repeats are squeezed like off-path steps.
TEST(HtmlTest, RepeatedPathStepsAreSqueezed) {
  CaseReport c = NoDedupeCase();
  ASSERT_FALSE(c.trace.empty());
  AppendIdenticalPolls(&c, 300, 1);
  ASSERT_GT(PathLines(c).size(), 300u);
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  std::smatch width;
  ASSERT_TRUE(std::regex_search(html, width, std::regex("class=\"timeline\"[^>]* width=\"([0-9.]+)\"")));
  EXPECT_LT(std::stod(width[1]), 2000.0);
  EXPECT_NE(html.find("class=\"squeezed\""), std::string::npos);
  EXPECT_NE(html.find(" key\""), std::string::npos) << "the key step is marked for the scroll";
}

// A lane's label says "restarted" for a worker's later incarnations only:
// no-dedupe's w1 crashes once; its first incarnation's lane is a plain
// worker.
TEST(HtmlTest, AFirstIncarnationsLaneIsNotLabelledRestarted) {
  const CaseReport& c = NoDedupeCase();
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  EXPECT_NE(html.find("<b>w1</b><small>worker</small>"), std::string::npos) << "the first incarnation";
}

TEST(HtmlTest, CoverageOfASingleCheckIsNotCalledTheOtherChecks) {
  CheckReport k;
  k.name = "txn-dedupe";
  k.matched = true;
  k.cases_run = 10;
  k.fired_totals = {{"crash@after-read", 3}};
  k.never_fired = {"crash@after-ack"};
  const std::string html = RenderHtml(ReportOf({k}));
  EXPECT_NE(html.find("<h2>Fault-point coverage</h2>"), std::string::npos) << html;
  EXPECT_EQ(html.find("other checks"), std::string::npos);
  EXPECT_EQ(html.find("<th></th>"), std::string::npos) << "an empty coverage column";
  EXPECT_NE(html.find("0 (never fired)"), std::string::npos);
}

TEST(HtmlTest, ChromiumRendersAReadableTimeline) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "no chromium binary on PATH (chromium, chromium-browser, google-chrome); "
                    "install Debian's chromium to run the browser test";
  }
  const Report report = NoDedupeReport();
  TempDir dir;
  const std::string file = dir.Write("report.html", RenderHtml(report));
  ToolOutput out = RunTool(chromium,
                           {"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            "--user-data-dir=" + dir.path() + "/profile", "--dump-dom", "file://" + file},
                           120'000);
  ASSERT_EQ(out.exit_code, 0) << out.out;
  const std::string& dom = out.out;
  ASSERT_NE(dom.find("id=\"timeline-1\""), std::string::npos) << dom.substr(0, 2000);

  // A lane per actor.
  for (const char* actor : {"p1", "w1"}) {
    EXPECT_NE(dom.find(std::string("<g class=\"lane\" data-actor=\"") + actor + "\">"), std::string::npos) << actor;
    EXPECT_NE(dom.find(std::string("<b>") + actor + "</b>"), std::string::npos) << "lane label " << actor;
  }

  // On w1's lane: effect, crash, effect again, XACK, in that order; the
  // crash sits between the first effect and the XACK.
  const std::vector<StepInDom> w1 = StepsOfLane(dom, "w1");
  ASSERT_FALSE(w1.empty());
  const auto first = [&](const std::string& cls) -> const StepInDom* {
    for (const StepInDom& s : w1) {
      if ((" " + s.classes + " ").find(" " + cls + " ") != std::string::npos) return &s;
    }
    return nullptr;
  };
  const StepInDom* effect = first("effect");
  const StepInDom* crash = first("crash");
  const StepInDom* ack = first("ack");
  ASSERT_NE(effect, nullptr);
  ASSERT_NE(crash, nullptr);
  ASSERT_NE(ack, nullptr);
  EXPECT_LT(effect->x, crash->x);
  EXPECT_LT(crash->x, ack->x);
  EXPECT_NE(crash->classes.find("violation"), std::string::npos);
  EXPECT_NE(dom.find("class=\"down\""), std::string::npos) << "the time w1 was down";

  // The violating path is highlighted, and every step says what it did.
  size_t violations = 0;
  for (const StepInDom& s : w1) violations += s.classes.find("violation") != std::string::npos;
  EXPECT_GE(violations, 5u);
  EXPECT_NE(dom.find("<polyline class=\"path\""), std::string::npos);
  EXPECT_NE(dom.find("<title>#"), std::string::npos);
  EXPECT_NE(dom.find("XACK events workers 0-1\n→ 1</title>"), std::string::npos);

  // Story, replay command, verdicts, coverage.
  const size_t story = dom.find("id=\"story-1\"");
  ASSERT_NE(story, std::string::npos);
  EXPECT_NE(dom.find("w1 crashes at after-effect, before XACK.", story), std::string::npos);
  EXPECT_NE(dom.find("→ duplicate of order:1 (2 effects)", story), std::string::npos);
  EXPECT_NE(dom.find("id=\"replay-1\" class=\"replay\">" + report.checks[0].counterexample->replay_command +
                     "</code>"),
            std::string::npos);
  EXPECT_NE(dom.find("id=\"verdicts\""), std::string::npos);
  EXPECT_NE(dom.find("id=\"coverage-1\""), std::string::npos);
}

}  // namespace
}  // namespace xackly::report
