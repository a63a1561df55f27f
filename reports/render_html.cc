// One self-contained HTML page: inline CSS, inline SVG timelines and a few
// lines of JS, no external reference of any kind, so it can be attached to a
// CI run or mailed and still open offline. Every piece of data goes through
// EscapeXml(); no data is ever placed inside the <script>.
//
// The timeline draws one lane per actor and one glyph per trace line, in
// trace order. Virtual time is compressed: gaps under 1 s take a few pixels
// on a log scale, longer gaps are cut (//) and labelled with their length, and
// runs of steps off the violating path are squeezed into grey bands. The
// legend says so.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/commands.h"
#include "reports/report.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

// --- Geometry (px) -----------------------------------------------------------
constexpr double kAxisHeight = 46;
constexpr double kLaneHeight = 62;
constexpr size_t kBottomRows = 4;      // rows of labels under the lanes
constexpr double kBottomHeight = 62;
constexpr double kLeftPad = 30;
constexpr double kRightPad = 100;
constexpr double kPathSlot = 52;       // width of a step on the violating path
constexpr double kStepSlot = 24;       // width of any other step
constexpr double kQuietSlot = 5;       // width of a step inside a short squeezed run
constexpr double kQuietBandMax = 60;   // most width a squeezed run takes, however long
constexpr double kPhaseSlot = 18;      // width of a phase marker
constexpr double kBreakGap = 44;       // a cut gap of 1 s .. 10 s
constexpr int64_t kBreakMs = 1000;     // gaps from here on are cut
constexpr size_t kQuietRun = 8;        // off-path steps in a row before they are squeezed
constexpr size_t kTimelineLinesMax = 4000;  // past this, only path, fault and lifecycle lines are drawn
constexpr size_t kTraceRowsMax = 5000;

std::string E(std::string_view s) { return EscapeXml(s); }
std::string A(std::string_view s) { return EscapeXml(Printable(s)); }  // one-line attribute
// Squeezed or undrawn steps: "12 steps off the violating path", or in a
// run without one "12 quiet steps".
std::string QuietSteps(int64_t n, const std::set<int64_t>& path) {
  return path.empty() ? Count(n, "quiet step") : Count(n, "step") + " off the violating path";
}
std::string Num(double v) { return fmt::format("{:.1f}", v); }

// Lane order: producers, workers (each slot followed by its incarnations),
// janitors, fault injection, anything else; numbers compared as numbers.
std::tuple<int, int, int, std::string> LaneKey(const std::string& actor) {
  const ActorIdentity id = DescribeActor(actor);
  int group = 4;
  switch (id.role) {
    case ActorRole::kProducer: group = 0; break;
    case ActorRole::kWorker: group = 1; break;
    case ActorRole::kJanitor: group = 2; break;
    case ActorRole::kFaultInjector: group = 3; break;
    default: break;
  }
  return {group, id.number, id.incarnation, actor};
}

std::string LaneRole(const CaseReport& c, const std::string& actor) {
  const ActorIdentity id = DescribeActor(actor);
  std::string role = ActorRoleName(id.role);
  auto group = c.worker_groups.find(id.role == ActorRole::kWorker ? ActorName(ActorRole::kWorker, id.number)
                                                                  : std::string(id.slot));
  if (group != c.worker_groups.end()) role += ", " + group->second;  // a further consumer group's worker
  if (id.lane > 1) role += fmt::format(", handler lane {}", id.lane);
  if (id.role == ActorRole::kWorker && id.incarnation > 1) role += ", restarted";
  return role;
}

bool OnLane(const TraceLine& t) {
  const ActorRole role = DescribeActor(t.actor).role;
  return role != ActorRole::kHarness && role != ActorRole::kSimulator;
}

bool IsPhase(const TraceLine& t) { return t.event == LineEvent::kNote; }

// The glyph class of a trace line.
std::string Category(const TraceLine& t, bool effect_line) {
  const ReportCategory command = t.argv.empty() ? ReportCategory::kOther : CommandOf(t.argv).category;
  const bool deletes = command == ReportCategory::kDelete;
  switch (t.kind) {
    case LineKind::kFault: {
      // The kind's descriptor names its glyph: a scheduled fault's line
      // names its kind, a point fault's event is named after its kind.
      const FaultKindInfo* f = FaultKindNamed(t.fault.empty() ? LineEventName(t.event) : t.fault);
      return f == nullptr ? "fault" : f->lane;
    }
    case LineKind::kLifecycle:
      if (t.event == LineEvent::kStart) return "restart";
      if (t.event == LineEvent::kReconnect) return "reconnect";
      return "other";
    case LineKind::kExternal:
      return "effect";
    case LineKind::kLocal:
      return "local";
    case LineKind::kSql:
      return effect_line ? "effect" : "other";
    case LineKind::kRedis:
    case LineKind::kHarness:
      if (effect_line) return "effect";
      if (deletes) return "delete";
      if (t.kind == LineKind::kHarness) return "other";
      return ReportCategoryName(command);
  }
  return "other";
}

// A short label for a step on the violating path.
std::string Label(const TraceLine& t, const std::string& category, int effect_number) {
  const std::vector<std::string>& w = t.argv;
  const std::string first = w.empty() ? "" : w[0];
  if (category == "read") return "XREADGROUP " + (w.empty() ? "" : w.back());
  if (category == "effect") return effect_number > 0 ? fmt::format("effect #{}", effect_number) : "effect";
  if (category == "crash" || category == "stall") {
    if (t.event == LineEvent::kReplicaLag) return "replica lags";
    return category + (t.site.empty() ? "" : " " + t.site);  // "crash after-effect"
  }
  if (category == "lost") {
    if (t.event == LineEvent::kErrorReply) return "error reply";
    return t.event == LineEvent::kLostReply ? "reply lost" : "request lost";
  }
  if (category == "restart") return t.replaces.empty() ? "starts again" : "starts";
  if (category == "reconnect") return "reconnects";
  if (category == "server-restart") return "server restart";
  if (category == "local") return "";
  if (t.event == LineEvent::kScheduledFault) return t.fault;
  return first;
}

// The tooltip: line number, time, actor, exact request and reply.
std::string Tooltip(int64_t line, const TraceLine& t) {
  std::string out = fmt::format("#{} · t = {} ms · {} · {}\n{}", line, t.t_ms, t.actor, LineKindName(t.kind), t.request);
  if (!t.reply.empty()) out += "\n→ " + t.reply;
  return out;
}

std::string Glyph(const std::string& category, double x, double y) {
  const std::string cx = Num(x), cy = Num(y);
  if (category == "read") return fmt::format(R"(<circle cx="{}" cy="{}" r="7" class="g-read"/>)", cx, cy);
  if (category == "ack") {
    return fmt::format(R"(<circle cx="{0}" cy="{1}" r="7.5" class="g-ack"/><path d="M{2},{1} l3,3 l5,-6" class="g-tick"/>)",
                       cx, cy, Num(x - 4));
  }
  if (category == "claim") {
    return fmt::format(R"(<polygon points="{},{} {},{} {},{} {},{}" class="g-claim"/>)", Num(x), Num(y - 9),
                       Num(x + 9), Num(y), Num(x), Num(y + 9), Num(x - 9), Num(y));
  }
  if (category == "produce") {
    return fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" rx="2" class="g-produce"/>)", Num(x - 6), Num(y - 6));
  }
  if (category == "effect") {
    std::string points;
    for (int i = 0; i < 10; ++i) {
      const double r = i % 2 == 0 ? 11 : 5;
      const double a = std::numbers::pi / 5 * i - std::numbers::pi / 2;
      points += fmt::format("{},{} ", Num(x + r * std::cos(a)), Num(y + r * std::sin(a)));
    }
    return fmt::format(R"(<polygon points="{}" class="g-effect"/>)", points);
  }
  if (category == "crash") {
    return fmt::format(R"(<circle cx="{0}" cy="{1}" r="11" class="g-crash-bg"/><path d="M{2},{3} L{4},{5} M{2},{5} L{4},{3}" class="g-crash"/>)",
                       cx, cy, Num(x - 7), Num(y - 7), Num(x + 7), Num(y + 7));
  }
  if (category == "stall") {
    return fmt::format(R"(<rect x="{}" y="{}" width="4" height="14" class="g-stall"/><rect x="{}" y="{}" width="4" height="14" class="g-stall"/>)",
                       Num(x - 6), Num(y - 7), Num(x + 2), Num(y - 7));
  }
  if (category == "lost") {
    return fmt::format(R"(<circle cx="{0}" cy="{1}" r="8" class="g-lost"/><path d="M{2},{3} L{4},{5}" class="g-lost-slash"/>)",
                       cx, cy, Num(x - 6), Num(y + 6), Num(x + 6), Num(y - 6));
  }
  if (category == "delete") {
    return fmt::format(R"(<rect x="{0}" y="{1}" width="16" height="16" rx="2" class="g-delete"/><path d="M{2},{3} L{4},{5} M{2},{5} L{4},{3}" class="g-delete-x"/>)",
                       Num(x - 8), Num(y - 8), Num(x - 4), Num(y - 4), Num(x + 4), Num(y + 4));
  }
  if (category == "restart") {
    return fmt::format(R"(<polygon points="{},{} {},{} {},{}" class="g-restart"/>)", Num(x - 6), Num(y - 8),
                       Num(x + 8), Num(y), Num(x - 6), Num(y + 8));
  }
  if (category == "reconnect") {
    return fmt::format(R"(<polygon points="{},{} {},{} {},{}" class="g-reconnect"/>)", Num(x - 5), Num(y - 7),
                       Num(x + 7), Num(y), Num(x - 5), Num(y + 7));
  }
  if (category == "server-restart") {
    return fmt::format(R"(<circle cx="{0}" cy="{1}" r="10" class="g-server-restart"/><text x="{0}" y="{2}" class="g-server-restart-t">↻</text>)",
                       cx, cy, Num(y + 4.5));
  }
  if (category == "fault") {
    std::string points;
    for (int i = 0; i < 6; ++i) {
      const double a = std::numbers::pi / 3 * i;
      points += fmt::format("{},{} ", Num(x + 9 * std::cos(a)), Num(y + 9 * std::sin(a)));
    }
    return fmt::format(R"(<polygon points="{}" class="g-fault"/>)", points);
  }
  if (category == "local") return fmt::format(R"(<circle cx="{}" cy="{}" r="2.5" class="g-local"/>)", cx, cy);
  return fmt::format(R"(<circle cx="{}" cy="{}" r="4.5" class="g-other"/>)", cx, cy);
}

struct Step {
  int64_t line = 0;
  const TraceLine* t = nullptr;
  std::string category;
  bool on_path = false;
  bool quiet = false;
  bool phase = false;
  double x = 0;
  double slot = 0;
  int lane = -1;
  int effect_number = 0;
  bool repeat = false;  // on the path, but the same actor, request and reply as an earlier path step
  bool key = false;     // the last step of the violating events' histories: where the violation happens
};

struct Break {
  double x;
  int64_t gap_ms;
};

struct QuietBand {
  double x0, x1;
  size_t steps;
  int64_t ms;
};

double GapWidth(int64_t dt_ms) {
  if (dt_ms <= 0) return 0;
  if (dt_ms < kBreakMs) return 4 * std::log10(1.0 + static_cast<double>(dt_ms));
  return kBreakGap + 8 * std::log10(static_cast<double>(dt_ms) / kBreakMs);
}

std::string AxisTime(int64_t ms) {
  if (ms < 1000) return fmt::format("{} ms", ms);
  return fmt::format("{:.3f} s", static_cast<double>(ms) / 1000);
}

// The lines drawn on the timeline with their places.
struct Layout {
  std::vector<Step> steps;
  std::vector<std::string> lanes;
  std::vector<Break> breaks;
  std::vector<QuietBand> bands;
  double width = 0;
  size_t not_drawn = 0;
};

Layout Lay(const CaseReport& c, const std::set<int64_t>& path) {
  Layout layout;
  std::set<int64_t> effect_lines;
  std::map<int64_t, int> effect_number;  // line → n-th effect of its event
  for (const auto& [event, items] : c.histories) {
    int n = 0;
    for (const HistoryItem& i : items) {
      if (i.kind != HistoryKind::kEffect || i.line < 0) continue;
      effect_lines.insert(i.line);
      effect_number[i.line] = ++n;
    }
  }
  const bool sparse = c.trace.size() > kTimelineLinesMax;
  std::map<std::string, int> lane_of;
  for (size_t l = 0; l < c.trace.size(); ++l) {
    const TraceLine& t = c.trace[l];
    const auto line = static_cast<int64_t>(l);
    const bool phase = IsPhase(t);
    if (!phase && !OnLane(t)) continue;
    const bool on_path = path.count(line) > 0;
    if (sparse && !on_path && t.kind != LineKind::kFault && t.kind != LineKind::kLifecycle) {
      ++layout.not_drawn;
      continue;
    }
    Step s;
    s.line = line;
    s.t = &t;
    s.phase = phase;
    s.on_path = on_path;
    s.category = phase ? "phase" : Category(t, effect_lines.count(line) > 0);
    auto it = effect_number.find(line);
    s.effect_number = it == effect_number.end() ? 0 : it->second;
    if (!phase) lane_of.emplace(t.actor, 0);
    layout.steps.push_back(std::move(s));
  }
  for (auto& [actor, index] : lane_of) layout.lanes.push_back(actor);
  std::sort(layout.lanes.begin(), layout.lanes.end(),
            [](const std::string& a, const std::string& b) { return LaneKey(a) < LaneKey(b); });
  for (size_t i = 0; i < layout.lanes.size(); ++i) lane_of[layout.lanes[i]] = static_cast<int>(i);

  // A path step that only repeats an earlier one (a janitor polling the
  // entry every tick) is squeezed like an off-path step; the key step never.
  int64_t key_line = -1;
  for (const auto& [event, items] : c.histories) {
    for (const HistoryItem& i : items) key_line = std::max(key_line, i.line);
  }
  std::set<std::string> path_seen;
  for (Step& s : layout.steps) {
    s.key = s.line == key_line;
    if (!s.on_path || s.phase || s.key) continue;
    s.repeat = !path_seen.insert(s.t->actor + '\x1f' + s.t->request + '\x1f' + s.t->reply).second;
  }

  // Squeeze runs of kQuietRun or more off-path (or repeated) lane steps
  // (faults and lifecycle changes always stay full size).
  const auto quiet_candidate = [](const Step& s) {
    return (!s.on_path || s.repeat) && !s.phase &&
           (s.t->kind == LineKind::kRedis || s.t->kind == LineKind::kLocal || s.t->kind == LineKind::kSql ||
            s.t->kind == LineKind::kHarness);
  };
  for (size_t i = 0; i < layout.steps.size();) {
    size_t j = i;
    while (j < layout.steps.size() && quiet_candidate(layout.steps[j])) ++j;
    if (j - i >= kQuietRun) {
      // A long run shares kQuietBandMax, so the violating steps after it stay on screen.
      const double slot = std::min(kQuietSlot, kQuietBandMax / static_cast<double>(j - i));
      for (size_t k = i; k < j; ++k) {
        layout.steps[k].quiet = true;
        layout.steps[k].slot = slot;
      }
    }
    i = j == i ? i + 1 : j;
  }

  double x = kLeftPad;
  const Step* prev = nullptr;
  size_t band_start = 0;
  for (size_t i = 0; i < layout.steps.size(); ++i) {
    Step& s = layout.steps[i];
    if (!s.phase) s.lane = lane_of[s.t->actor];
    if (!s.quiet) s.slot = s.phase ? kPhaseSlot : s.on_path ? kPathSlot : kStepSlot;
    if (prev == nullptr) {
      x += s.slot / 2;
    } else {
      const int64_t dt = s.t->t_ms - prev->t->t_ms;
      const bool squeezed = s.quiet && prev->quiet;
      const double gap = squeezed ? std::min(GapWidth(dt), s.slot * 0.4) : GapWidth(dt);
      if (!squeezed && dt >= kBreakMs) layout.breaks.push_back({x + prev->slot / 2 + gap / 2, dt});
      x += prev->slot / 2 + gap + s.slot / 2;
    }
    s.x = x;
    if (s.quiet && (prev == nullptr || !prev->quiet)) band_start = i;
    const bool band_ends = s.quiet && (i + 1 == layout.steps.size() || !layout.steps[i + 1].quiet);
    if (band_ends) {
      const Step& first = layout.steps[band_start];
      layout.bands.push_back({first.x - 4, s.x + 4, i - band_start + 1, s.t->t_ms - first.t->t_ms});
    }
    prev = &s;
  }
  layout.width = x + kRightPad + (prev ? prev->slot / 2 : 0);
  return layout;
}

double LaneY(int lane) { return kAxisHeight + kLaneHeight * lane + kLaneHeight / 2; }

// The next step after `from` (a step index) whose actor is in `slot` and
// that satisfies `pred`; nullptr when none.
template <typename Pred>
const Step* NextStep(const Layout& layout, size_t from, Pred pred) {
  for (size_t i = from + 1; i < layout.steps.size(); ++i) {
    if (!layout.steps[i].phase && pred(layout.steps[i])) return &layout.steps[i];
  }
  return nullptr;
}

// About how wide `text` is at the timeline's 11 px label font.
double TextWidth(const std::string& text) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;  // UTF-8 code points
  return 6.2 * static_cast<double>(chars);
}

// Rows of labels under the lanes: each label goes to the first row where it
// starts after the last label of that row ends.
class BottomRows {
 public:
  explicit BottomRows(double lanes_bottom) : lanes_bottom_(lanes_bottom) {}
  // The baseline y of a label spanning x0 .. x0 + width.
  double Place(double x0, double width) {
    size_t row = 0;
    while (row < ends_.size() && ends_[row] + 6 > x0) ++row;
    if (row == ends_.size()) {
      if (ends_.size() < kBottomRows) {
        ends_.push_back(-1e9);
      } else {  // every row is taken here: the one that ends first
        row = static_cast<size_t>(std::min_element(ends_.begin(), ends_.end()) - ends_.begin());
      }
    }
    ends_[row] = x0 + width;
    return lanes_bottom_ + 15 + 13 * static_cast<double>(row);
  }

 private:
  double lanes_bottom_;
  std::vector<double> ends_;
};

// `path`: the violating path's trace lines (PathLines); `title`: what the
// case is (CaseTitle).
void Timeline(const CaseReport& c, int n, const std::set<int64_t>& path, const char* title, std::string& out) {
  const Layout layout = Lay(c, path);
  if (layout.steps.empty()) {
    out += "<p class=\"note\">The trace of this case was not kept, so there is no timeline.</p>\n";
    return;
  }
  const double height = kAxisHeight + kLaneHeight * static_cast<double>(layout.lanes.size()) + kBottomHeight;
  const double lanes_bottom = height - kBottomHeight;

  out += fmt::format("<div class=\"timeline-box\">\n<div class=\"lane-labels\" style=\"padding-top:{}px\">\n",
                     Num(kAxisHeight));
  for (const std::string& actor : layout.lanes) {
    out += fmt::format("<div class=\"lane-label\" style=\"height:{}px\"><b>{}</b><small>{}</small></div>\n",
                       Num(kLaneHeight), E(actor), E(LaneRole(c, actor)));
  }
  out += "</div>\n<div class=\"scroll\">\n";
  out += fmt::format(
      "<svg id=\"timeline-{0}\" class=\"timeline\" data-detail=\"step-detail-{0}\" width=\"{1}\" height=\"{2}\" "
      "viewBox=\"0 0 {1} {2}\" role=\"img\" aria-label=\"timeline of the {3}\">\n",
      n, Num(layout.width), Num(height), title);
  out += fmt::format(
      "<defs><pattern id=\"hatch-{}\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#fef2f2\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#fca5a5\" stroke-width=\"3\"/></pattern></defs>\n",
      n);

  // Lanes (background), with their steps added below.
  for (size_t i = 0; i < layout.lanes.size(); ++i) {
    const double y = kAxisHeight + kLaneHeight * static_cast<double>(i);
    out += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"lane-bg {}\"/>\n", Num(y),
                       Num(layout.width), Num(kLaneHeight), i % 2 == 0 ? "even" : "odd");
    out += fmt::format("<line x1=\"0\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" class=\"lane-line\"/>\n",
                       Num(y + kLaneHeight / 2), Num(layout.width));
  }

  // Labels under the lanes (squeezed runs, phase markers) take the first
  // row where they do not overlap the one before them.
  BottomRows rows(lanes_bottom);

  // Squeezed runs and cut gaps.
  for (const QuietBand& b : layout.bands) {
    const std::string label = fmt::format("{} · {}", Count(static_cast<int64_t>(b.steps), "step"), FormatDuration(b.ms));
    const double mid = (b.x0 + b.x1) / 2;
    out += fmt::format(
        "<g class=\"squeezed\"><title>{}, squeezed</title>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text></g>\n",
        E(QuietSteps(static_cast<int64_t>(b.steps), path)), Num(b.x0), Num(kAxisHeight), Num(std::max(b.x1 - b.x0, 2.0)),
        Num(lanes_bottom - kAxisHeight), Num(mid), Num(rows.Place(mid - TextWidth(label) / 2, TextWidth(label))),
        E(label));
  }
  for (const Break& b : layout.breaks) {
    out += fmt::format(
        "<g class=\"gap-cut\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
        "<path d=\"M{3},{6} L{4},{7} M{5},{6} L{8},{7}\" class=\"cut-mark\"/>"
        "<text x=\"{0}\" y=\"{9}\" class=\"cut-label\">+{10}</text></g>\n",
        Num(b.x), Num(kAxisHeight - 6), Num(lanes_bottom), Num(b.x - 6), Num(b.x - 1), Num(b.x + 1),
        Num(kAxisHeight - 2), Num(kAxisHeight - 12), Num(b.x + 6), Num(kAxisHeight - 16), FormatDuration(b.gap_ms));
  }

  // Time labels: the first step, and the first full-size step after every
  // cut or squeezed run.
  double last_label_x = -1e9;  // where the last time label ends
  const Step* prev = nullptr;
  for (const Step& s : layout.steps) {
    const bool after_jump = prev != nullptr && !s.quiet &&
                            (s.t->t_ms - prev->t->t_ms >= kBreakMs || prev->quiet);
    const std::string label = "t = " + AxisTime(s.t->t_ms);
    const double half = TextWidth(label) / 2 + 2;
    // Kept whole inside the drawing at both ends.
    const double x = std::clamp(s.x, half, std::max(half, layout.width - half));
    if ((prev == nullptr || after_jump) && x - half > last_label_x + 6) {
      out += fmt::format("<text x=\"{}\" y=\"13\" class=\"axis-t\">{}</text>\n", Num(x), E(label));
      last_label_x = x + half;
    }
    prev = &s;
  }

  // Phase markers, their labels on two alternating rows under the squeezed
  // runs' labels.
  for (const Step& s : layout.steps) {
    if (!s.phase) continue;
    const std::string& text = s.t->site;
    const double label_y = rows.Place(s.x + 3, TextWidth(text));
    out += fmt::format(
        "<g class=\"phase\"><title>{}</title><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
        E(Tooltip(s.line, *s.t)), Num(s.x), Num(kAxisHeight), Num(s.x), Num(label_y - 10), Num(s.x + 3),
        Num(label_y), E(text));
  }

  // Down and stalled bands on the lanes.
  for (size_t i = 0; i < layout.steps.size(); ++i) {
    const Step& s = layout.steps[i];
    if (s.category != "crash" && s.category != "stall") continue;
    const bool crash = s.category == "crash";
    const Step* end = NextStep(layout, i, [&](const Step& o) {
      if (crash) {
        return o.t->event == LineEvent::kStart &&
               Slot(o.t->actor) == Slot(s.t->actor);
      }
      return o.t->actor == s.t->actor;
    });
    const double x1 = end != nullptr ? end->x : layout.width - kRightPad / 2;
    const int64_t ms = (end != nullptr ? end->t->t_ms : c.virtual_ms) - s.t->t_ms;
    const double y = LaneY(s.lane);
    out += fmt::format(
        "<g class=\"{0}\"><rect x=\"{1}\" y=\"{2}\" width=\"{3}\" height=\"18\" {4}/>"
        "<text x=\"{5}\" y=\"{6}\">{7} {8}</text></g>\n",
        crash ? "down" : "stalled", Num(s.x), Num(y - 9), Num(std::max(x1 - s.x, 1.0)),
        crash ? fmt::format("fill=\"url(#hatch-{})\"", n) : std::string(), Num((s.x + x1) / 2), Num(y + 24),
        crash ? "down" : "stalled", FormatDuration(std::max<int64_t>(ms, 0)));
  }

  // The violating path, under the glyphs.
  std::string points;
  for (const Step& s : layout.steps) {
    if (s.on_path && !s.phase) points += fmt::format("{},{} ", Num(s.x), Num(LaneY(s.lane)));
  }
  if (!points.empty()) out += "<polyline class=\"path\" points=\"" + points + "\"/>\n";

  // Steps, grouped by lane.
  for (size_t lane = 0; lane < layout.lanes.size(); ++lane) {
    out += fmt::format("<g class=\"lane\" data-actor=\"{}\">\n", A(layout.lanes[lane]));
    int label_row = 0;
    for (const Step& s : layout.steps) {
      if (s.phase || s.lane != static_cast<int>(lane)) continue;
      const double y = LaneY(s.lane);
      out += fmt::format(
          "<g class=\"step {}{}{}{}\" id=\"c{}-l{}\" data-line=\"{}\" data-t=\"{}\" data-x=\"{}\" tabindex=\"0\">"
          "<title>{}</title>",
          s.category, s.on_path ? " violation" : "", s.quiet ? " quiet" : "", s.key ? " key" : "", n, s.line, s.line,
          s.t->t_ms, Num(s.x), E(Tooltip(s.line, *s.t)));
      if (s.on_path && !s.quiet) out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"15\" class=\"halo\"/>", Num(s.x), Num(y));
      out += s.quiet ? fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2\" class=\"g-other\"/>", Num(s.x), Num(y))
                     : Glyph(s.category, s.x, y);
      if (s.on_path && !s.quiet) {
        const std::string label = Label(*s.t, s.category, s.effect_number);
        if (!label.empty()) {
          out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"step-label\">{}</text>", Num(s.x),
                             Num(y - (label_row % 2 == 0 ? 19 : 30)), E(label));
          ++label_row;
        }
      }
      out += "</g>\n";
    }
    out += "</g>\n";
  }
  out += "</svg>\n</div>\n</div>\n";
  if (layout.not_drawn > 0) {
    out += fmt::format("<p class=\"note\">{} are not drawn (trace of {} lines).</p>\n",
                       QuietSteps(static_cast<int64_t>(layout.not_drawn), path), c.trace.size());
  }
  out += fmt::format(
      "<pre class=\"step-detail\" id=\"step-detail-{}\">Hover over or click a step to see its exact command and "
      "reply.</pre>\n",
      n);
}

const char* kLegend = R"(<div class="legend">
<span><svg width="18" height="18"><circle cx="9" cy="9" r="6" class="g-read"/></svg>XREADGROUP</span>
<span><svg width="18" height="18"><circle cx="9" cy="9" r="6.5" class="g-ack"/></svg>XACK</span>
<span><svg width="18" height="18"><polygon points="9,1 17,9 9,17 1,9" class="g-claim"/></svg>claim</span>
<span><svg width="18" height="18"><rect x="3" y="3" width="12" height="12" rx="2" class="g-produce"/></svg>XADD</span>
<span><svg width="20" height="20"><polygon points="10,0 12.9,6 19.5,6.9 14.8,11.5 15.9,18.1 10,15 4.1,18.1 5.2,11.5 0.5,6.9 7.1,6" class="g-effect"/></svg>side effect</span>
<span><svg width="20" height="20"><circle cx="10" cy="10" r="9" class="g-crash-bg"/><path d="M4,4 L16,16 M4,16 L16,4" class="g-crash"/></svg>crash</span>
<span><svg width="18" height="18"><rect x="3" y="2" width="4" height="14" class="g-stall"/><rect x="11" y="2" width="4" height="14" class="g-stall"/></svg>stall</span>
<span><svg width="18" height="18"><circle cx="9" cy="9" r="7" class="g-lost"/><path d="M4,14 L14,4" class="g-lost-slash"/></svg>lost request/reply</span>
<span><svg width="18" height="18"><rect x="1" y="1" width="16" height="16" rx="2" class="g-delete"/><path d="M5,5 L13,13 M5,13 L13,5" class="g-delete-x"/></svg>XDEL / XTRIM / DELCONSUMER</span>
<span><svg width="18" height="18"><polygon points="3,1 17,9 3,17" class="g-restart"/></svg>(re)start</span>
<span><svg width="20" height="20"><circle cx="10" cy="10" r="9" class="g-server-restart"/></svg>server restart</span>
{}<span><svg width="24" height="14"><rect width="24" height="14" class="legend-hatch"/></svg>worker down</span>
</div>
<p class="scale-note">Steps are in trace order, placed on virtual time with gaps compressed: a gap under 1 s takes a
few pixels on a log scale; a longer gap is cut (//) and labelled with its real length; {} into grey bands. Hover over or click a step for its exact command and reply.</p>
)";

// The legend of a case's timeline: a run without a violation has no
// violating path, so its legend names none. (kLegend's two holes.)
std::string Legend(bool has_path) {
  constexpr std::string_view kPathItem =
      "<span><svg width=\"20\" height=\"20\"><circle cx=\"10\" cy=\"10\" r=\"9\" class=\"halo\"/><circle "
      "cx=\"10\" cy=\"10\" r=\"5\" class=\"g-other\"/></svg>on the violating path</span>\n";
  return fmt::format(fmt::runtime(kLegend), has_path ? kPathItem : "",
                     has_path ? "runs of steps off the\nviolating path are squeezed" : "runs of quiet steps are\nsqueezed");
}

void StoryList(const CaseReport& c, int n, std::string& out) {
  out += fmt::format("<ol id=\"story-{}\" class=\"story\">\n", n);
  for (const StorySentence& s : StorySentences(c)) {
    const bool verdict = s.kind == StorySentence::Kind::kVerdict;
    const bool cut = s.kind == StorySentence::Kind::kCut;
    out += fmt::format("<li{}>{}</li>\n", verdict ? " class=\"verdict-line\"" : cut ? " class=\"cut\"" : "", E(s.text));
  }
  out += "</ol>\n";
}

void CoverageTable(const CheckReport& k, const std::string& id, std::string& out) {
  const std::vector<CoverageRow> rows = CoverageRows(k);
  if (rows.empty()) {
    out += k.single_run ? "<p class=\"note\">No fault fired in this run.</p>\n"
                        : "<p class=\"note\">No fault site was enabled.</p>\n";
    return;
  }
  out += "<p class=\"note\">Times each site fired " + E(CoverageScope(k)) + ".</p>\n";
  out += fmt::format("<table{} class=\"coverage\"><thead><tr><th>fault site</th><th>times fired</th></tr></thead><tbody>\n",
                     id.empty() ? "" : " id=\"" + id + "\"");
  for (const CoverageRow& row : rows) {
    out += fmt::format("<tr{}><td><code>{}</code></td><td class=\"num\">{}</td></tr>\n",
                       row.never_fired ? " class=\"never-fired\"" : "", E(row.site),
                       row.never_fired ? "0 (never fired)" : std::to_string(row.fired));
  }
  out += "</tbody></table>\n";
}

// `folded`: the rows of `lines` that stand for a run of identical steps
// (FoldedPath), by first line; their repeats are said after the reply.
void TraceRows(const CaseReport& c, int n, const std::vector<int64_t>& lines, const std::set<int64_t>& path,
               bool ids, std::string& out, const std::map<int64_t, PathRow>& folded = {}) {
  out += "<table class=\"trace\"><thead><tr><th>#</th><th>t (ms)</th><th>actor</th><th>request</th><th>reply</th></tr></thead><tbody>\n";
  for (const int64_t l : lines) {
    const TraceLine& t = c.trace[static_cast<size_t>(l)];
    std::string cls = t.kind == LineKind::kFault ? "fault" : "";
    if (path.count(l) > 0) cls += cls.empty() ? "violation" : " violation";
    auto run = folded.find(l);
    const std::string repeats = run == folded.end() ? "" : RepeatsText(c, run->second);
    out += fmt::format("<tr{}{}><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code>{}</td></tr>\n",
                       ids ? fmt::format(" id=\"row-{}-{}\"", n, l) : "",
                       cls.empty() ? "" : " class=\"" + cls + "\"", l, t.t_ms, E(t.actor), E(t.request), E(t.reply),
                       repeats.empty() ? "" : "<span class=\"note\">" + E(repeats) + "</span>");
  }
  out += "</tbody></table>\n";
}

void CaseSection(const CheckReport& k, int n, std::string& out) {
  out += fmt::format("<section class=\"case {}\" id=\"case-{}\" data-check=\"{}\">\n",
                     k.matched ? "matched" : "mismatch", n, A(k.name));
  out += fmt::format("<h2><span class=\"badge {}\">{}</span> {}</h2>\n", Passed(k) ? "ok" : "fail",
                     ResultWord(k), E(k.name));
  out += fmt::format("<p class=\"expect\">expected <code>{}</code>, observed <code>{}</code> over {}, {} violated</p>\n",
                     E(k.expected.ToString()), E(Or(k.observed, "?")), Count(k.cases_run, "case"), k.cases_failed);
  if (!k.description.empty()) out += "<p class=\"description\">" + E(k.description) + "</p>\n";
  for (const std::string& line : UnfiredPlannedLines(k)) out += "<p class=\"never-fired\">" + E(line) + "</p>\n";
  if (!k.counterexample) {
    out += "<p class=\"note\">No case violated, so there is no counterexample to replay.</p>\n";
    out += "<h3>Fault-point coverage</h3>\n";
    CoverageTable(k, fmt::format("coverage-{}", n), out);
    out += "</section>\n";
    return;
  }
  const CaseReport& c = *k.counterexample;
  if (!c.violations.empty()) out += "<p class=\"headline\">" + E(c.violations.front().detail) + "</p>\n";

  const std::vector<int64_t> path_lines = PathLines(c);
  const std::set<int64_t> path(path_lines.begin(), path_lines.end());
  out += fmt::format("<h3>Timeline of the {}</h3>\n", CaseTitle(k));
  out += Legend(!path.empty());
  std::vector<std::string> followed;
  for (const Violation& v : c.violations) {
    if (v.event_id.empty()) continue;
    std::set<std::string> ids;
    auto it = c.histories.find(HistoryKey(v));
    if (it != c.histories.end()) {
      for (const HistoryItem& i : it->second) {
        if (!i.stream_id.empty()) ids.insert(i.stream_id);
      }
    }
    std::string name = "<b>" + E(v.event_id) + "</b>";
    if (!ids.empty()) name += fmt::format(" (entry {})", E(fmt::format("{}", fmt::join(ids, ", "))));
    if (std::find(followed.begin(), followed.end(), name) == followed.end()) followed.push_back(name);
  }
  if (!followed.empty()) {
    out += "<p class=\"followed\">Highlighted: every step that touched " +
           fmt::format("{}", fmt::join(followed, " and ")) + ".</p>\n";
  }
  Timeline(c, n, path, CaseTitle(k), out);

  out += "<div class=\"grid\">\n<div>\n";
  if (!c.violations.empty()) {
    out += "<h3>Story</h3>\n";
    StoryList(c, n, out);
    out += "<h3>Violations</h3>\n<ul class=\"violations\">\n";
    for (const Violation& v : c.violations) {
      out += fmt::format("<li><b class=\"kind\">{}</b> {} <code>{}</code>: {}</li>\n", VerdictKindName(v.kind),
                         E(ViolationSubject(v)), E(v.cause), E(v.detail));
    }
    out += "</ul>\n";
  }
  out += "<h3>Replay</h3>\n";
  out += fmt::format("<pre><code id=\"replay-{}\" class=\"replay\">{}</code></pre>\n", n,
                     E(Or(c.replay_command, "(no replay command recorded)")));
  if (!c.replay_file.empty()) out += "<p>Replay file: <code>" + E(c.replay_file) + "</code></p>\n";
  out += "</div>\n<div>\n<h3>Verdict</h3>\n<table class=\"verdict\"><tbody>\n";
  const std::vector<std::pair<std::string, std::string>> facts = {
      {"expected", k.expected.ToString()},
      {"observed", Or(k.observed, "?")},
      {"cases", CaseCountsText(k)},
      {CaseTitle(k), Or(k.counterexample_size, "?") + ShrinkNote(k)},
      {"protocol", c.protocol},
      {"scenario file", Or(c.scenario_file, "–")},
      {"seed", std::to_string(c.seed)},
      {"actors", fmt::format("{}, {}, {}", Count(c.producers, "producer"), WorkersText(c), Count(c.events, "event"))},
      {"persistence", Or(c.persistence, "?")},
      {"restart naming", Or(c.restart_naming, "?")},
      {"steps", fmt::format("{} steps, {} virtual", c.steps, FormatDuration(std::max<int64_t>(c.virtual_ms, 0)))},
      {"trace hash", Or(c.trace_hash, "?")},
      {"fault model", Or(k.fault_model, "–")},
  };
  for (const auto& [name, value] : facts) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", E(name), E(value));
  }
  out += "<tr><th>faults fired</th><td>";
  for (const FaultSpec& f : c.fired) out += "<code>" + E(f.ToString()) + "</code><br>";
  out += c.fired.empty() ? "none" : "";
  out += "</td></tr>\n</tbody></table>\n<h3>Fault-point coverage</h3>\n";
  CoverageTable(k, fmt::format("coverage-{}", n), out);
  out += "</div>\n</div>\n";

  if (!path_lines.empty()) {
    out += fmt::format("<h3>Steps on the violating path ({} of {} trace lines)</h3>\n", path_lines.size(),
                       c.trace.size());
    std::vector<int64_t> shown;
    std::map<int64_t, PathRow> folded;
    for (const PathRow& row : FoldedPath(c)) {
      shown.push_back(row.line);
      if (row.repeats > 0) folded[row.line] = row;
    }
    TraceRows(c, n, shown, path, /*ids=*/true, out, folded);
  }
  if (!c.trace.empty()) {
    std::vector<int64_t> all;
    for (size_t l = 0; l < c.trace.size() && l < kTraceRowsMax; ++l) all.push_back(static_cast<int64_t>(l));
    out += fmt::format("<details><summary>Full trace ({} lines{})</summary>\n", c.trace.size(),
                       c.trace.size() > kTraceRowsMax ? fmt::format(", first {} shown", kTraceRowsMax) : "");
    TraceRows(c, n, all, path, /*ids=*/false, out);
    out += "</details>\n";
  }
  out += "</section>\n";
}

const char* kStyle = R"(
:root { --red:#dc2626; --green:#15803d; --muted:#6b7280; --line:#e5e7eb; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:#111827; margin:0; background:#f9fafb; }
main { max-width: 2400px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 0 0 6px; } h3 { font-size: 15px; margin: 18px 0 6px; }
code, pre { font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { white-space: pre-wrap; word-break: break-all; }
.meta { color: var(--muted); margin: 0 0 4px; }
table { border-collapse: collapse; background:#fff; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background:#f3f4f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display:inline-block; padding: 1px 8px; border-radius: 10px; font-size: 13px; color:#fff; vertical-align: 2px; }
.badge.ok { background: var(--green); } .badge.fail { background: var(--red); }
tr.mismatch td:first-child { color: var(--red); font-weight: 600; } tr.matched td:first-child { color: var(--green); }
section.case { background:#fff; border:1px solid var(--line); border-left: 5px solid var(--green); border-radius: 6px; padding: 16px 20px; margin: 22px 0; }
section.case.mismatch { border-left-color: var(--red); }
.headline { font-size: 15px; background:#fef2f2; border:1px solid #fecaca; border-radius:4px; padding:8px 12px; }
.expect, .description { margin: 2px 0; }
.note { color: var(--muted); }
.legend { display:flex; flex-wrap:wrap; gap: 4px 16px; font-size: 12.5px; }
.legend span { display:inline-flex; align-items:center; gap:4px; }
.legend-hatch { fill: #fecaca; }
.scale-note { color: var(--muted); font-size: 12.5px; margin: 4px 0 8px; }
.followed { margin: 4px 0 8px; }
.timeline-box { display:flex; border:1px solid var(--line); border-radius:4px; background:#fff; }
.lane-labels { flex: 0 0 118px; border-right:1px solid var(--line); background:#f9fafb; }
.lane-label { display:flex; flex-direction:column; justify-content:center; padding: 0 10px; border-top:1px solid var(--line); }
.lane-label b { font: 600 14px ui-monospace, "DejaVu Sans Mono", monospace; }
.lane-label small { color: var(--muted); font-size: 11px; }
.scroll { overflow-x: auto; flex: 1 1 auto; }
svg.timeline { display:block; font-family: system-ui, sans-serif; }
.lane-bg.even { fill:#ffffff; } .lane-bg.odd { fill:#f9fafb; }
.lane-line { stroke:#e5e7eb; stroke-width:1; }
.axis-t { font-size: 11px; fill:#374151; text-anchor: middle; }
.gap-cut line { stroke:#9ca3af; stroke-dasharray: 2 4; }
.cut-mark { stroke:#6b7280; stroke-width:1.5; fill:none; }
.cut-label { font-size: 11px; fill:#6b7280; text-anchor: middle; font-weight:600; }
.squeezed rect { fill:#e5e7eb; opacity:.55; }
.squeezed text, .phase text { font-size: 11px; fill:#6b7280; }
.squeezed text { text-anchor: middle; }
.phase line { stroke:#6366f1; stroke-dasharray: 6 3; }
.phase text { fill:#4f46e5; }
.down text, .stalled text { font-size: 11px; fill:#b91c1c; text-anchor: middle; }
.stalled rect { fill:#ffedd5; stroke:#fb923c; }
.stalled text { fill:#c2410c; }
polyline.path { fill:none; stroke:#ef4444; stroke-width:3; stroke-opacity:.45; stroke-linejoin: round; }
.step { cursor: pointer; }
.step:not(.violation) { opacity: .5; }
.step:focus { outline: none; }
.step.sel .halo, .step:hover .halo { stroke-width: 3; }
.halo { fill:#fef9c3; stroke:#ef4444; stroke-width:1.5; }
.step-label { font-size: 11px; text-anchor: middle; fill:#111827; font-weight:600; paint-order: stroke; stroke:#fff; stroke-width:3px; }
.g-read { fill:#2563eb; } .g-ack { fill:#16a34a; } .g-tick { fill:none; stroke:#fff; stroke-width:2; }
.g-claim { fill:#7c3aed; } .g-produce { fill:#0d9488; }
.g-effect { fill:#f59e0b; stroke:#b45309; stroke-width:1; }
.g-crash-bg { fill:#fff; stroke:#dc2626; stroke-width:1.5; } .g-crash { stroke:#dc2626; stroke-width:3.5; stroke-linecap: round; }
.g-stall { fill:#ea580c; }
.g-lost { fill:#fff; stroke:#dc2626; stroke-width:2; stroke-dasharray:3 2; } .g-lost-slash { stroke:#dc2626; stroke-width:2; }
.g-delete { fill:#fee2e2; stroke:#991b1b; stroke-width:1.5; } .g-delete-x { stroke:#991b1b; stroke-width:2; }
.g-restart { fill:#16a34a; } .g-reconnect { fill:#fff; stroke:#6b7280; stroke-width:1.5; }
.g-server-restart { fill:#991b1b; } .g-server-restart-t { fill:#fff; font-size:13px; text-anchor:middle; }
.g-fault { fill:#f97316; } .g-local { fill:#9ca3af; } .g-other { fill:#9ca3af; }
.step-detail { background:#111827; color:#f9fafb; border-radius:4px; padding:8px 12px; margin:6px 0 0; min-height: 2.6em; }
.grid { display:grid; grid-template-columns: minmax(0, 1.25fr) minmax(0, 1fr); gap: 8px 32px; }
@media (max-width: 1000px) { .grid { grid-template-columns: 1fr; } }
ol.story { padding-left: 26px; margin: 0; } ol.story li { margin: 3px 0; }
ol.story li.verdict-line { color: var(--red); font-weight: 600; }
ol.story li.cut { color: var(--muted); list-style: none; }
.violations b.kind { color: var(--red); }
code.replay { display:block; background:#f3f4f6; border:1px solid var(--line); border-radius:4px; padding:8px 10px; }
table.verdict { width: 100%; }
table.verdict th { background:#f9fafb; white-space: nowrap; width: 1%; }
table.verdict td { overflow-wrap: anywhere; }
tr.never-fired td { background:#fffbeb; color:#92400e; }
table.trace { width:100%; font-size: 12.5px; }
table.trace tr.violation td { background:#fef9c3; } table.trace tr.fault td { color: var(--red); }
table.trace tr.sel td { outline: 2px solid #ef4444; }
details { margin-top: 12px; } summary { cursor:pointer; color:#374151; }
)";

const char* kScript = R"(
for (const svg of document.querySelectorAll('svg.timeline')) {
  // A timeline wider than its box opens scrolled so that the key step (where
  // the violation happens; else the last step of the path) is in view.
  const box = svg.parentElement;
  const key = svg.querySelector('.step.key');
  let last = key ? parseFloat(key.dataset.x) : -1;
  if (!key) for (const g of svg.querySelectorAll('.step.violation')) last = Math.max(last, parseFloat(g.dataset.x));
  if (box && last + 90 > box.clientWidth) box.scrollLeft = last + 90 - box.clientWidth;
  const panel = document.getElementById(svg.dataset.detail);
  const n = svg.id.split('-')[1];
  const show = (g) => {
    const title = g.querySelector('title');
    if (panel && title) panel.textContent = title.textContent;
    for (const e of document.querySelectorAll('.sel')) e.classList.remove('sel');
    g.classList.add('sel');
    const row = document.getElementById('row-' + n + '-' + g.dataset.line);
    if (row) row.classList.add('sel');
  };
  for (const g of svg.querySelectorAll('.step')) {
    g.addEventListener('mouseenter', () => show(g));
    g.addEventListener('focus', () => show(g));
    g.addEventListener('click', () => show(g));
  }
}
)";

}  // namespace

std::string RenderHtml(const Report& report) {
  const std::string title = "xackly " + Or(report.command, "report") + ": " + Summary(report);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + E(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  out += fmt::format("<header>\n<h1>xackly {} <span class=\"badge {}\">{}</span></h1>\n", E(Or(report.command, "report")),
                     report.all_matched ? "ok" : "fail", E(Summary(report)));
  std::vector<std::string> meta = {fmt::format("seed {}", report.seed)};
  if (!report.server_version.empty()) meta.push_back(report.server_version);
  if (!report.tool_version.empty()) meta.push_back("xackly " + report.tool_version);
  if (!report.shard.empty()) meta.push_back("shard " + report.shard);
  out += "<p class=\"meta\">" + E(fmt::format("{}", fmt::join(meta, " · "))) + "</p>\n";
  if (!report.command_line.empty()) out += "<p class=\"meta\">command: <code>" + E(report.command_line) + "</code></p>\n";
  if (!report.options.empty()) out += "<p class=\"meta\">options: <code>" + E(report.options) + "</code></p>\n";
  out += "</header>\n";

  out += "<h2>Verdicts</h2>\n<table id=\"verdicts\"><thead><tr><th>result</th><th>protocol</th><th>expected</th>"
         "<th>observed</th><th>cases</th><th>" + std::string(CaseColumnTitle(report)) +
         "</th><th>replay file</th><th>time</th></tr></thead><tbody>\n";
  int n = 0;
  for (const CheckReport& k : report.checks) {
    const std::string name = NeedsDetail(k) ? fmt::format("<a href=\"#case-{}\">{}</a>", ++n, E(k.name)) : E(k.name);
    const std::string replay = k.counterexample && !k.counterexample->replay_file.empty()
                                   ? "<code>" + E(k.counterexample->replay_file) + "</code>"
                                   : "–";
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td>"
        "<td class=\"num\">{} ({} violated)</td><td>{}</td><td>{}</td><td class=\"num\">{:.1f} s</td></tr>\n",
        Passed(k) ? "matched" : "mismatch", ResultWord(k), name, E(k.expected.ToString()),
        E(Or(k.observed, "?")), k.cases_run, k.cases_failed,
        k.counterexample ? E(Or(k.counterexample_size, "?")) : "–", replay, k.seconds);
  }
  out += "</tbody></table>\n";

  n = 0;
  for (const CheckReport& k : report.checks) {
    if (NeedsDetail(k)) CaseSection(k, ++n, out);
  }
  bool header = false;
  for (const CheckReport& k : report.checks) {
    if (NeedsDetail(k)) continue;
    if (!header) {
      out += fmt::format("<section id=\"coverage-other\"><h2>Fault-point coverage{}</h2>\n",
                         n > 0 ? " of the other checks" : "");
    }
    header = true;
    out += "<h3>" + E(k.name) + "</h3>\n";
    CoverageTable(k, "", out);
  }
  if (header) out += "</section>\n";
  out += "</main>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace xackly::report
