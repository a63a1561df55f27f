// HTML: self-contained and escaped, and, rendered by a real browser
// (headless Chromium), a timeline a person can read: a lane per actor, the
// crash between the effect and the XACK, the violating path highlighted,
// the story and the replay command.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
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

// Each step on the violating path has a label under its glyph: an effect
// by its number (a duplicate's second is "effect #2"), every other step by
// what it did.
TEST(HtmlTest, TheViolatingPathsStepsAreLabelledByWhatTheyDid) {
  const std::string html = RenderHtml(NoDedupeReport());
  std::vector<std::string> labels;
  const std::regex label("class=\"step-label\">([^<]*)<");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), label); it != std::sregex_iterator(); ++it) {
    labels.push_back((*it)[1]);
  }
  SCOPED_TRACE(::testing::PrintToString(labels));
  auto count = [&](const std::string& text) { return std::count(labels.begin(), labels.end(), text); };
  EXPECT_EQ(count("effect #1"), 1);
  EXPECT_EQ(count("effect #2"), 1);
  EXPECT_EQ(count("crash after-effect"), 1);
  EXPECT_GE(count("XREADGROUP &gt;"), 1);
  EXPECT_EQ(count("effect"), 0) << "an effect always has its number";
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

// A label under the lanes: its text and where it is drawn, as wide as its
// text at 6.2 px a character.
struct BottomLabel {
  double x0, x1, y;
  std::string text;
};
// The labels under the lanes of `html`: phase markers' (starting at their
// x) and squeezed runs' (centred on theirs).
std::vector<BottomLabel> BottomLabels(const std::string& html) {
  std::vector<BottomLabel> out;
  const std::regex phase("<g class=\"phase\">[\\s\\S]*?<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), phase); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]);
    out.push_back({x, x + 6.2 * static_cast<double>((*it)[3].length()), std::stod((*it)[2]), (*it)[3]});
  }
  const std::regex band("<g class=\"squeezed\">[\\s\\S]*?<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), band); it != std::sregex_iterator(); ++it) {
    const double half = 3.1 * static_cast<double>((*it)[3].length());
    const double x = std::stod((*it)[1]);
    out.push_back({x - half, x + half, std::stod((*it)[2]), (*it)[3]});
  }
  return out;
}

void ExpectNoTwoOverlapOnARow(const std::vector<BottomLabel>& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[i].y != labels[j].y) continue;
      EXPECT_TRUE(labels[i].x1 <= labels[j].x0 || labels[j].x1 <= labels[i].x0)
          << "'" << labels[i].text << "' and '" << labels[j].text << "' overlap at y " << labels[i].y;
    }
  }
}

// `c` with phase markers 1 ms apart after its last line, one per name.
CaseReport WithPhaseMarkers(CaseReport c, const std::vector<std::string>& names) {
  int64_t t = c.trace.back().t_ms;
  for (const std::string& name : names) {
    c.trace.push_back({++t, "sim", LineKind::kLifecycle, name, "", LineEvent::kNote, {}, name});
  }
  return c;
}

// Labels under the lanes (squeezed runs, phase markers) never overlap on
// one row, and time labels stay inside the drawing.
TEST(HtmlTest, LabelsUnderTheLanesDoNotOverlap) {
  ASSERT_GE(NoDedupeCase().trace.size(), 3u);
  // Two more phase markers one millisecond apart at the end of the trace.
  const CaseReport c = WithPhaseMarkers(NoDedupeCase(), {"fault phase over", "quiescent"});
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  const std::vector<BottomLabel> labels = BottomLabels(html);
  ASSERT_GE(labels.size(), 2u);
  ExpectNoTwoOverlapOnARow(labels);
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

// A squeezed run's label is centred on the run; a phase marker right
// after the run, whose label starts under the run's, takes the next row.
TEST(HtmlTest, ASqueezedRunsLabelAndAPhaseMarkerRightAfterItDoNotOverlap) {
  CaseReport c = NoDedupeCase();
  AppendIdenticalPolls(&c, 1 + 8, 1);  // the first full size, its eight repeats squeezed
  c = WithPhaseMarkers(std::move(c), {"the marker after the run"});
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::vector<BottomLabel> labels = BottomLabels(RenderHtml(ReportOf({CheckFromCase(config, c)})));
  // The last of each: the run and the marker come last in the trace.
  const auto labelled = [&](std::string_view start) {
    return std::find_if(labels.rbegin(), labels.rend(), [&](const BottomLabel& l) { return l.text.starts_with(start); });
  };
  const auto marker = labelled("the marker after the run");
  const auto run = labelled("8 steps");
  ASSERT_NE(marker, labels.rend());
  ASSERT_NE(run, labels.rend());
  ASSERT_LT(marker->x0, run->x1) << "the marker's label starts under the run's";
  ExpectNoTwoOverlapOnARow(labels);
}

// Off-path or repeated steps are squeezed from eight in a row on: seven
// repeats of a poll stay full size, eight become one squeezed run.
TEST(HtmlTest, EightQuietStepsInARowAreSqueezedAndSevenAreNot) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const auto squeezed_runs = [&](int repeats) {
    CaseReport c = NoDedupeCase();
    if (repeats > 0) AppendIdenticalPolls(&c, 1 + repeats, 1);  // the first poll full size
    const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
    size_t n = 0;
    for (size_t at = html.find("<g class=\"squeezed\">"); at != std::string::npos;
         at = html.find("<g class=\"squeezed\">", at + 1)) {
      ++n;
    }
    return n;
  };
  const size_t before = squeezed_runs(0);
  EXPECT_EQ(squeezed_runs(7), before);
  EXPECT_EQ(squeezed_runs(8), before + 1);
}

// The rows of labels under the lanes are four. More labels crowding one
// place share the row that ends first; none is drawn below the drawing's
// bottom edge, where it would be cut off.
TEST(HtmlTest, LabelsCrowdingMoreThanFourRowsStayInsideTheDrawing) {
  std::vector<std::string> names;
  for (int i = 1; i <= 6; ++i) names.push_back(fmt::format("phase {} of 6 over", i));
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, WithPhaseMarkers(NoDedupeCase(), names))}));
  std::smatch height;
  ASSERT_TRUE(std::regex_search(html, height, std::regex("class=\"timeline\"[^>]* height=\"([0-9.]+)\"")));
  int drawn = 0;
  for (const BottomLabel& l : BottomLabels(html)) {
    drawn += std::find(names.begin(), names.end(), l.text) != names.end();
    EXPECT_LE(l.y + 3, std::stod(height[1])) << "'" << l.text << "' (its baseline and descenders)";
  }
  EXPECT_EQ(drawn, 6);
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

// A timeline of more than 4000 trace lines draws the violating path, the
// faults and the lifecycle only, and says how many steps it left out; a
// short one leaves out nothing and says nothing about it.
TEST(HtmlTest, ALongTimelineSaysHowManyStepsItLeftOutAndAShortOneSaysNothing) {
  EXPECT_EQ(RenderHtml(NoDedupeReport()).find("are not drawn"), std::string::npos);
  CaseReport c = NoDedupeCase();
  const int64_t t = c.trace.back().t_ms;
  for (int i = 0; i < 4100; ++i) {
    TraceLine len;
    len.t_ms = t + 1 + i;
    len.actor = "p1";
    len.kind = LineKind::kRedis;
    len.request = "XLEN events";
    len.reply = "1";
    len.argv = {"XLEN", "events"};
    c.trace.push_back(len);
  }
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string html = RenderHtml(ReportOf({CheckFromCase(config, c)}));
  EXPECT_TRUE(std::regex_search(html, std::regex("<p class=\"note\">[1-9][0-9]* steps off the violating path are not "
                                                 "drawn \\(trace of " + std::to_string(c.trace.size()) + " lines\\)")))
      << "no note of the steps left out";
}

// Above the timeline: which event's steps are highlighted, and the entry
// it sat in (no-dedupe's order:1, entry 0-1).
TEST(HtmlTest, TheHighlightNamesTheViolatingEventAndItsEntry) {
  EXPECT_NE(RenderHtml(NoDedupeReport()).find("every step that touched <b>order:1</b> (entry 0-1)."), std::string::npos);
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

// --- Timeline geometry: what a reader of the drawing relies on -------------

// The svg of the first timeline in `html`.
std::string TimelineSvg(const std::string& html) {
  const size_t begin = html.find("<svg id=\"timeline-");
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</svg>", begin) - begin);
}

// Every step group of a timeline by trace line: its classes, data-x and
// what is drawn inside it.
struct DrawnStep {
  std::string classes;
  double x = 0;
  std::string inside;
};
std::map<int64_t, DrawnStep> DrawnSteps(const std::string& svg) {
  std::map<int64_t, DrawnStep> out;
  const std::regex re(R"re(<g class="step ([^"]*)" id="c\d+-l\d+" data-line="(\d+)" data-t="\d+" data-x="([-0-9.]+)" tabindex="0"><title>[^<]*</title>([\s\S]*?)</g>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out[std::stoll((*it)[2])] = {(*it)[1], std::stod((*it)[3]), (*it)[4]};
  }
  return out;
}

// Each lane group's text in `svg`, top lane first.
std::vector<std::string> LaneGroups(const std::string& svg) {
  std::vector<std::string> lanes;
  const std::string open = "<g class=\"lane\" data-actor=\"";
  for (size_t at = svg.find(open); at != std::string::npos;) {
    const size_t next = svg.find(open, at + 1);
    lanes.push_back(svg.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return lanes;
}

// The centre of a glyph's shapes (circles, rects, polygons, paths with M, L
// and l): the mean of the vertices when it is only polygons (a star's or a
// triangle's points), else the middle of the shapes' bounding box. The
// halo of a path step and text are not part of the glyph.
struct Centre {
  double x = 0, y = 0;
  bool found = false;
};
Centre GlyphCentre(std::string glyph) {
  glyph = std::regex_replace(glyph, std::regex(R"(<circle [^>]*class="halo"/>)"), "");
  glyph = std::regex_replace(glyph, std::regex(R"(<text[\s\S]*?</text>)"), "");
  double x0 = 1e18, y0 = 1e18, x1 = -1e18, y1 = -1e18;
  const auto box = [&](double ax, double ay, double bx, double by) {
    x0 = std::min(x0, ax), y0 = std::min(y0, ay), x1 = std::max(x1, bx), y1 = std::max(y1, by);
  };
  const std::regex circle(R"re(<circle cx="([-0-9.]+)" cy="([-0-9.]+)" r="([0-9.]+)")re");
  const std::regex rect(R"re(<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)")re");
  const std::regex path(R"re(<path d="([^"]*)")re");
  const std::regex polygon(R"re(<polygon points="([^"]*)")re");
  const std::regex pair(R"(([MLl]?)\s*(-?[0-9.]+),(-?[0-9.]+))");
  bool only_polygons = true;
  for (auto it = std::sregex_iterator(glyph.begin(), glyph.end(), circle); it != std::sregex_iterator(); ++it) {
    const double cx = std::stod((*it)[1]), cy = std::stod((*it)[2]), r = std::stod((*it)[3]);
    box(cx - r, cy - r, cx + r, cy + r);
    only_polygons = false;
  }
  for (auto it = std::sregex_iterator(glyph.begin(), glyph.end(), rect); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    box(x, y, x + std::stod((*it)[3]), y + std::stod((*it)[4]));
    only_polygons = false;
  }
  for (auto it = std::sregex_iterator(glyph.begin(), glyph.end(), path); it != std::sregex_iterator(); ++it) {
    const std::string d = (*it)[1];
    double px = 0, py = 0;
    for (auto p = std::sregex_iterator(d.begin(), d.end(), pair); p != std::sregex_iterator(); ++p) {
      const double a = std::stod((*p)[2]), b = std::stod((*p)[3]);
      px = (*p)[1] == "l" ? px + a : a;
      py = (*p)[1] == "l" ? py + b : b;
      box(px, py, px, py);
    }
    only_polygons = false;
  }
  double sx = 0, sy = 0;
  int n = 0;
  for (auto it = std::sregex_iterator(glyph.begin(), glyph.end(), polygon); it != std::sregex_iterator(); ++it) {
    const std::string points = (*it)[1];
    for (auto p = std::sregex_iterator(points.begin(), points.end(), pair); p != std::sregex_iterator(); ++p) {
      const double a = std::stod((*p)[2]), b = std::stod((*p)[3]);
      sx += a, sy += b, ++n;
      box(a, b, a, b);
    }
  }
  if (x0 > x1) return {};
  if (only_polygons) return {sx / n, sy / n, true};
  return {(x0 + x1) / 2, (y0 + y1) / 2, true};
}

// no-dedupe's counterexample and, after it, one step of each other glyph:
// a stall, a claim, a request lost, a crash, a start, a reconnect, an XDEL,
// a local step, a server restart and another scheduled fault.
CaseReport EveryGlyphCase() {
  CaseReport c = NoDedupeCase();
  int64_t t = c.trace.back().t_ms;
  const auto add = [&](const std::string& actor, LineKind kind, LineEvent event, std::vector<std::string> argv,
                       std::string site = "", std::string fault = "") {
    TraceLine line;
    line.t_ms = t += 10;
    line.actor = actor;
    line.kind = kind;
    line.request = argv.empty() ? LineEventName(event) : argv[0];
    line.event = event;
    line.argv = std::move(argv);
    line.site = std::move(site);
    line.fault = std::move(fault);
    c.trace.push_back(std::move(line));
  };
  add("w1", LineKind::kFault, LineEvent::kStall, {}, "after-read");
  add("w1", LineKind::kRedis, LineEvent::kCommand, {"XCLAIM", "events", "workers", "w1", "0", "0-1"});
  add("w1", LineKind::kFault, LineEvent::kLostRequest, {}, "XACK");
  add("w1", LineKind::kFault, LineEvent::kCrash, {}, "after-read");
  add("w1", LineKind::kLifecycle, LineEvent::kStart, {});
  add("w1", LineKind::kLifecycle, LineEvent::kReconnect, {});
  add("w1", LineKind::kRedis, LineEvent::kCommand, {"XDEL", "events", "0-1"});
  add("w1", LineKind::kLocal, LineEvent::kCommand, {});
  add("fault", LineKind::kFault, LineEvent::kScheduledFault, {}, "", "restart");
  add("fault", LineKind::kFault, LineEvent::kScheduledFault, {}, "", "clock-jump");
  return c;
}

// Every glyph sits on its lane: centred on the lane's line (the line the
// violating path's polyline joins), and on its step's x, the (re)start
// and reconnect triangles aside (they point right from it, as in the
// legend). A glyph drawn a pixel off its lane, or a lane line drawn off
// the middle of its lane, breaks the row a reader follows.
TEST(HtmlTest, EveryGlyphIsCentredOnItsLanesLine) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, EveryGlyphCase())})));
  ASSERT_FALSE(svg.empty());
  std::vector<double> lane_y;
  const std::regex lane_line(R"re(<line x1="0" y1="([-0-9.]+)" x2="[-0-9.]+" y2="[-0-9.]+" class="lane-line"/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), lane_line); it != std::sregex_iterator(); ++it) {
    lane_y.push_back(std::stod((*it)[1]));
  }
  const std::vector<std::string> lanes = LaneGroups(svg);  // in the order of the lane lines
  ASSERT_EQ(lanes.size(), lane_y.size());
  ASSERT_GE(lanes.size(), 3u) << "p1, w1 and fault injection";
  std::set<std::string> categories;
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    for (const auto& [line, step] : DrawnSteps(lanes[lane])) {
      const std::string category = step.classes.substr(0, step.classes.find(' '));
      categories.insert(category);
      const Centre centre = GlyphCentre(step.inside);
      ASSERT_TRUE(centre.found) << "line " << line << ": " << step.inside;
      EXPECT_NEAR(centre.y, lane_y[lane], 0.1) << category << " glyph of line " << line << ": " << step.inside;
      if (category == "restart" || category == "reconnect") continue;
      EXPECT_NEAR(centre.x, step.x, 0.1) << category << " glyph of line " << line << ": " << step.inside;
    }
  }
  for (const char* c : {"produce", "read", "effect", "crash", "restart", "ack", "stall", "claim", "lost", "delete",
                        "reconnect", "local", "server-restart", "fault"}) {
    EXPECT_EQ(categories.count(c), 1u) << "no " << c << " glyph drawn";
  }
}

// Each step is drawn with its own category's glyph (a read as a read's
// circle, an XACK as the ticked circle), never another's: the legend reads
// the shapes, so an ack drawn for every step would tell a reader every
// step acknowledged something.
TEST(HtmlTest, EveryStepIsDrawnWithItsCategorysGlyph) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, EveryGlyphCase())})));
  ASSERT_FALSE(svg.empty());
  int acks = 0;
  for (const std::string& lane : LaneGroups(svg)) {
    for (const auto& [line, step] : DrawnSteps(lane)) {
      const std::string category = step.classes.substr(0, step.classes.find(' '));
      if (category == "phase") continue;
      std::smatch first;
      std::regex_search(step.inside, first, std::regex(R"re(class="(g-[a-z-]+)")re"));
      ASSERT_FALSE(first.empty()) << "line " << line << ": " << step.inside;
      // (A crash's cross is drawn over its own backdrop, g-crash-bg.)
      EXPECT_TRUE(first[1].str() == "g-" + category || first[1].str() == "g-" + category + "-bg")
          << "line " << line << ": " << step.inside;
      const bool ticked = step.inside.find("class=\"g-tick\"") != std::string::npos;
      EXPECT_EQ(ticked, category == "ack") << "line " << line << ": " << step.inside;
      acks += category == "ack";
    }
  }
  EXPECT_GE(acks, 1);
}

// The verdict table of a report's HTML ("" when there is none).
std::string VerdictTable(const std::string& html) {
  const size_t from = html.find("<table id=\"verdicts\">");
  if (from == std::string::npos) return "";
  return html.substr(from, html.find("</table>", from) - from);
}

// A violated check's section opens with its first violation's sentence,
// and the verdict table's replay column names the replay file, or shows a
// dash when there is none (never an empty <code></code>).
TEST(HtmlTest, TheHeadlineIsTheFirstViolationAndTheReplayColumnNamesTheFileOrADash) {
  Report report = NoDedupeReport();
  ASSERT_TRUE(report.checks[0].counterexample.has_value());
  const CaseReport& c = *report.checks[0].counterexample;
  ASSERT_FALSE(c.violations.empty());
  const std::string html = RenderHtml(report);
  const std::string open = "<p class=\"headline\">";
  const size_t headline = html.find(open);
  ASSERT_NE(headline, std::string::npos);
  EXPECT_EQ(html.find(open, headline + 1), std::string::npos) << "one headline per section";
  const std::string& detail = c.violations.front().detail;
  const std::string first = detail.substr(0, detail.find_first_of("<>&'\""));  // what HTML does not escape
  ASSERT_GE(first.size(), 5u) << detail;
  EXPECT_EQ(html.compare(headline + open.size(), first.size(), first), 0) << html.substr(headline, 200);

  report.checks[0].counterexample->replay_file = "out/no-dedupe.replay.toml";
  EXPECT_NE(RenderHtml(report).find("<td><code>out/no-dedupe.replay.toml</code></td>"), std::string::npos);
  report.checks[0].counterexample->replay_file.clear();
  const std::string without = VerdictTable(RenderHtml(report));
  EXPECT_EQ(without.find("<code></code>"), std::string::npos) << without;
  EXPECT_NE(without.find("</td><td>–</td><td class=\"num\">"), std::string::npos) << without;

  CheckReport passed;
  passed.name = "txn-dedupe";
  passed.matched = true;
  passed.cases_run = 10;
  const std::string ok = RenderHtml(ReportOf({passed}));
  EXPECT_EQ(ok.find("<p class=\"headline\">"), std::string::npos) << "no violation, no headline";
  EXPECT_NE(VerdictTable(ok).find("</td><td>–</td><td class=\"num\">"), std::string::npos) << ok;
}

// A step's label on the violating path is drawn above its glyph, inside
// its lane. Only a lane with more than one label alternates them between
// two heights, the upper one reaching into the lane above, so that
// neighbours do not overlap; a lane's lone label (no-dedupe's producer
// has one, its XADD) has no neighbour and stays inside.
TEST(HtmlTest, ALanesOnlyStepLabelIsDrawnInsideItsLane) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, NoDedupeCase())})));
  std::vector<double> lane_top;
  const std::regex lane_bg(R"re(<rect x="0" y="([-0-9.]+)" width="[-0-9.]+" height="[-0-9.]+" class="lane-bg )re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), lane_bg); it != std::sregex_iterator(); ++it) {
    lane_top.push_back(std::stod((*it)[1]));
  }
  const std::vector<std::string> lanes = LaneGroups(svg);
  ASSERT_EQ(lanes.size(), lane_top.size());
  const std::regex step_label(R"re(<text x="[-0-9.]+" y="([-0-9.]+)" class="step-label">([^<]*)</text>)re");
  int lone = 0;
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    std::vector<std::pair<double, std::string>> labels;
    for (auto it = std::sregex_iterator(lanes[lane].begin(), lanes[lane].end(), step_label); it != std::sregex_iterator();
         ++it) {
      labels.emplace_back(std::stod((*it)[1]), (*it)[2]);
    }
    if (labels.size() != 1) continue;
    ++lone;
    // Its top: the baseline less the 11 px font.
    EXPECT_GE(labels[0].first - 11, lane_top[lane]) << "'" << labels[0].second << "' reaches into the lane above";
  }
  EXPECT_GE(lone, 1);
}

// A gap in time is drawn wider the longer it lasts, and a cut gap (1 s or
// more, marked // and labelled with its length) wider than any gap under
// 1 s by at least its // mark: a cut never reads as a shorter wait than
// the uncut gaps beside it.
TEST(HtmlTest, ACutGapIsDrawnWiderThanAnyGapUnderASecond) {
  CaseReport c = NoDedupeCase();
  const size_t first = c.trace.size();
  const std::vector<int64_t> gaps_ms = {1, 10, 100, 500, 999, 1000, 1001, 2000, 10'000, 100'000};
  int64_t t = c.trace.back().t_ms + 10;
  c.trace.push_back({t, "w1", LineKind::kLifecycle, "reconnects", "", LineEvent::kReconnect});
  for (int64_t gap : gaps_ms) {
    t += gap;
    c.trace.push_back({t, "w1", LineKind::kLifecycle, "reconnects", "", LineEvent::kReconnect});
  }
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, c)})));
  const std::map<int64_t, DrawnStep> steps = DrawnSteps(svg);
  std::vector<double> cuts;
  const std::regex cut(R"re(<g class="gap-cut"><line x1="([-0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cut); it != std::sregex_iterator(); ++it) {
    cuts.push_back(std::stod((*it)[1]));
  }
  std::smatch mark;
  ASSERT_TRUE(std::regex_search(svg, mark, std::regex(R"re(<path d="M([-0-9.]+),[-0-9.]+ L[-0-9.]+,[-0-9.]+ M[-0-9.]+,[-0-9.]+ L([-0-9.]+),[-0-9.]+" class="cut-mark"/>)re")));
  const double mark_width = std::stod(mark[2]) - std::stod(mark[1]);
  double widest_uncut = 0, narrowest_cut = 1e18, previous = 0;
  for (size_t i = 0; i < gaps_ms.size(); ++i) {
    const int64_t a = static_cast<int64_t>(first + i), b = a + 1;
    ASSERT_EQ(steps.count(a) + steps.count(b), 2u) << "lines " << a << ", " << b;
    // Both reconnects are off the path and full size: their distance is
    // the gap plus one slot.
    const double x0 = steps.at(a).x, x1 = steps.at(b).x, width = x1 - x0;
    const bool is_cut = std::any_of(cuts.begin(), cuts.end(), [&](double x) { return x0 < x && x < x1; });
    EXPECT_EQ(is_cut, gaps_ms[i] >= 1000) << gaps_ms[i] << " ms";
    EXPECT_GE(width, previous) << gaps_ms[i] << " ms is drawn narrower than a shorter gap";
    previous = width;
    (is_cut ? narrowest_cut : widest_uncut) = is_cut ? std::min(narrowest_cut, width) : std::max(widest_uncut, width);
  }
  EXPECT_GE(narrowest_cut - widest_uncut, mark_width)
      << "the narrowest cut gap, " << narrowest_cut << " px, against " << widest_uncut << " px under 1 s";
}

// The time labels over the axis: the first step's, and the first full-size
// step's after every cut, each dropped only where it would come closer
// than 6 px to the label before it (the clearance the rows of labels under
// the lanes keep). A label is as wide as its text at 6.2 px a character,
// plus 2 px either side. Swept over gaps of 1 s .. 20 000 s after a step
// whose label is drawn, so some labels fit and some do not.
TEST(HtmlTest, ATimeLabelAfterACutIsDrawnWheneverItFits) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const auto half_of = [](const std::string& label) { return 6.2 * static_cast<double>(label.size()) / 2 + 2; };
  int drawn = 0, dropped = 0;
  for (int k = 0; k <= 200; ++k) {
    const auto gap = static_cast<int64_t>(1000 * std::pow(20'000.0, k / 200.0));
    CaseReport c = NoDedupeCase();
    const auto a = static_cast<int64_t>(c.trace.size());
    c.trace.push_back({2'000'000, "w1", LineKind::kLifecycle, "reconnects", "", LineEvent::kReconnect});
    c.trace.push_back({2'000'000 + gap, "w1", LineKind::kLifecycle, "reconnects", "", LineEvent::kReconnect});
    const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, c)})));
    const std::map<int64_t, DrawnStep> steps = DrawnSteps(svg);
    ASSERT_EQ(steps.count(a) + steps.count(a + 1), 2u);
    const double b_x = steps.at(a + 1).x;
    const std::string b_label = "t = " + fmt::format("{:.3f} s", static_cast<double>(2'000'000 + gap) / 1000);
    // The labels drawn, in order; the one before B's place.
    double before_end = -1e9;
    bool b_drawn = false;
    const std::regex label(R"re(<text x="([-0-9.]+)" y="13" class="axis-t">([^<]*)</text>)re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator(); ++it) {
      const double x = std::stod((*it)[1]);
      if ((*it)[2] == b_label) {
        b_drawn = true;
        EXPECT_DOUBLE_EQ(x, b_x) << b_label;
      } else if (x < b_x) {
        before_end = std::max(before_end, x + half_of((*it)[2]));
      }
    }
    // Positions are printed to 0.1 px: a clearance within that of 6 px
    // cannot be judged from the page.
    const double clearance = b_x - half_of(b_label) - before_end;
    if (std::abs(clearance - 6) < 0.15) continue;
    EXPECT_EQ(b_drawn, clearance > 6) << b_label << " at " << b_x << ", the label before it ends at " << before_end;
    ++(b_drawn ? drawn : dropped);
  }
  EXPECT_GT(drawn, 0);
  EXPECT_GT(dropped, 0);
}

// A worker that crashes and is never started again, and one that stalls
// and takes no later step, are drawn down (stalled) from their step to the
// end of the drawing, labelled with the time to the end of the run.
TEST(HtmlTest, AWorkerDownOrStalledUntilTheEndIsDrawnSoToTheEnd) {
  CaseReport c = NoDedupeCase();
  const int64_t t = c.trace.back().t_ms;
  const auto stall = static_cast<int64_t>(c.trace.size());
  c.trace.push_back({t + 5, "p1", LineKind::kFault, "stall", "", LineEvent::kStall, {}, "after-XADD"});
  const auto crash = stall + 1;
  c.trace.push_back({t + 10, "w1", LineKind::kFault, "crash", "", LineEvent::kCrash, {}, "after-read"});
  c.virtual_ms = t + 4010;
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string svg = TimelineSvg(RenderHtml(ReportOf({CheckFromCase(config, c)})));
  const std::map<int64_t, DrawnStep> steps = DrawnSteps(svg);
  ASSERT_EQ(steps.count(stall) + steps.count(crash), 2u);
  const struct {
    const char* cls;
    int64_t line;
    std::string text;
  } kBands[] = {{"stalled", stall, "stalled " + FormatDuration(4005)}, {"down", crash, "down " + FormatDuration(4000)}};
  for (const auto& band : kBands) {
    const std::regex re(std::string("<g class=\"") + band.cls +
                        R"re("><rect x="([-0-9.]+)" y="[-0-9.]+" width="([-0-9.]+)"[^>]*/><text x="[-0-9.]+" y="[-0-9.]+">([^<]*)</text></g>)re");
    bool found = false;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
      if (std::stod((*it)[1]) != steps.at(band.line).x) continue;
      found = true;
      EXPECT_GT(std::stod((*it)[1]) + std::stod((*it)[2]), steps.rbegin()->second.x) << band.cls << ": past the last step";
      EXPECT_EQ((*it)[3], band.text);
    }
    EXPECT_TRUE(found) << "no " << band.cls << " band from line " << band.line;
  }
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
