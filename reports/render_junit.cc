// JUnit XML in the shape CI systems read (Jenkins/Ant junit-10.xsd):
// testsuites > testsuite > testcase, one testcase per check. A check is a
// test that passes when the protocol behaved as its expectation says; a
// mismatch is a <failure>. errors and skipped are always 0: a harness
// failure ends the run before any report is written.
#include <fmt/format.h>

#include "reports/report.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

constexpr size_t kPathLinesShown = 60;

// Attribute values: one line, escaped.
std::string Attr(std::string_view s) { return EscapeXml(Printable(s)); }

std::string Seconds(double s) { return fmt::format("{:.3f}", s < 0 ? 0.0 : s); }

std::string StoryText(const CaseReport& c) {
  std::string out;
  const std::vector<std::string> story = Story(c);
  for (size_t i = 0; i < story.size(); ++i) out += fmt::format("{:>2}. {}\n", i + 1, story[i]);
  return out;
}

std::string ViolationsText(const CaseReport& c) {
  std::string out;
  for (const Violation& v : c.violations) {
    out += fmt::format("{} {} [{}] {}\n", VerdictKindName(v.kind),
                       ViolationSubject(v), v.cause, v.detail);
  }
  return out;
}

// The story and the violations of a counterexample, as text; built once per
// check and shared by its failure and its system-out.
struct CaseTexts {
  std::string story;
  std::string violations;
};

CaseTexts TextsOf(const CheckReport& k) {
  if (!k.counterexample) return {};
  return {StoryText(*k.counterexample), ViolationsText(*k.counterexample)};
}

// The failure text: what went wrong, ending with the replay command.
std::string FailureText(const CheckReport& k, const CaseTexts& texts) {
  std::string out = fmt::format("{}: expected {}, observed {} over {}\n", k.name,
                                k.expected.ToString(), Or(k.observed, "?"), Count(k.cases_run, "case"));
  if (!k.counterexample) return out + "No case violated, so there is no counterexample to replay.\n";
  const CaseReport& c = *k.counterexample;
  if (c.violations.empty()) {
    out += fmt::format("\nNo event was violated in the {} ({}).\n", CaseTitle(k), Or(k.counterexample_size, "?"));
  } else {
    out += fmt::format("\nStory of the {} ({}):\n", CaseTitle(k), Or(k.counterexample_size, "?")) + texts.story;
    out += "\nViolations:\n" + texts.violations;
  }
  out += "\nReplay: " + Or(c.replay_command, "(no replay command recorded)") + "\n";
  return out;
}

std::string SystemOut(const CheckReport& k, const CaseTexts& texts) {
  std::string out;
  if (!k.description.empty()) out += k.description + "\n";
  if (!k.fault_model.empty()) out += "fault model: " + k.fault_model + "\n";
  out += fmt::format("expected {}, observed {}: {}\n", k.expected.ToString(), Or(k.observed, "?"),
                     ResultWord(k));
  out += "cases: " + CaseCountsText(k) + "\n";
  for (const std::string& line : UnfiredPlannedLines(k)) out += line + "\n";
  if (k.counterexample) {
    const CaseReport& c = *k.counterexample;
    out += fmt::format("{}: {}{}\n", CaseTitle(k), Or(k.counterexample_size, "?"), ShrinkNote(k));
    out += fmt::format("case: protocol {}, seed {}, {}, {}, {}, persistence {}, "
                       "restart naming {}, {} steps, {} virtual, trace hash {}\n",
                       c.protocol, c.seed, Count(c.producers, "producer"), WorkersText(c), Count(c.events, "event"), Or(c.persistence, "?"),
                       Or(c.restart_naming, "?"), c.steps, FormatDuration(std::max<int64_t>(c.virtual_ms, 0)),
                       Or(c.trace_hash, "?"));
    for (const FaultSpec& f : c.fired) out += "fault fired: " + f.ToString() + "\n";
    if (!c.violations.empty()) out += "\nstory:\n" + texts.story + "\nviolations:\n" + texts.violations;
    const std::vector<PathRow> path = FoldedPath(c);
    if (!path.empty()) {
      out += fmt::format("\nviolating path ({} of {} trace lines):\n", PathLines(c).size(), c.trace.size());
      for (size_t i = 0; i < path.size() && i < kPathLinesShown; ++i) {
        out += fmt::format("#{:<4}{}{}\n", path[i].line, Trace::Render(c.trace[static_cast<size_t>(path[i].line)]),
                           RepeatsText(c, path[i]));
      }
      if (path.size() > kPathLinesShown) {
        out += fmt::format("… {} more path rows in the JSON and HTML reports\n", path.size() - kPathLinesShown);
      }
    }
  }
  out += fmt::format("\nfault-point coverage (times each site fired {}):\n", CoverageScope(k));
  for (const CoverageRow& row : CoverageRows(k)) {
    out += fmt::format("  {} {}{}\n", row.site, row.fired, row.never_fired ? " (never fired)" : "");
  }
  if (k.counterexample) {
    const CaseReport& c = *k.counterexample;
    if (!c.replay_file.empty()) out += "\nreplay file: " + c.replay_file + "\n";
    out += "replay: " + Or(c.replay_command, "(no replay command recorded)") + "\n";
  }
  return out;
}

}  // namespace

std::string RenderJunit(const Report& report) {
  int failures = 0;
  int skipped = 0;
  double seconds = 0;
  for (const CheckReport& k : report.checks) {
    failures += Passed(k) ? 0 : 1;
    skipped += k.undecided ? 1 : 0;
    seconds += k.seconds;
  }
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\"",
                  report.checks.size(), failures, skipped, Seconds(seconds));
  const std::string suite = "xackly " + Or(report.command, "report") +
                            (report.shard.empty() ? "" : " (shard " + report.shard + ")");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"xackly\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"{}\" {}>\n", Attr(suite), counts);
  out += "    <properties>\n";
  const std::pair<const char*, std::string> properties[] = {
      {"seed", std::to_string(report.seed)},  {"server_version", report.server_version},
      {"tool_version", report.tool_version},  {"command_line", report.command_line},
      {"options", report.options},            {"shard", report.shard},
  };
  for (const auto& [name, value] : properties) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, Attr(value));
  }
  out += "    </properties>\n";
  for (const CheckReport& k : report.checks) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"xackly\" time=\"{}\">\n", Attr(k.name),
                       Seconds(k.seconds));
    const CaseTexts texts = TextsOf(k);
    if (k.undecided) {
      out += fmt::format("      <skipped message=\"undecided {}\"/>\n", Attr(UndecidedWhy(k)));
    } else if (!k.matched) {
      out += fmt::format("      <failure message=\"{}\" type=\"mismatch\">{}</failure>\n",
                         Attr(fmt::format("expected {}, observed {}", k.expected.ToString(), Or(k.observed, "?"))),
                         EscapeXml(FailureText(k, texts)));
    } else if (const std::vector<std::string> gaps = GapLines(k); !gaps.empty()) {
      // Counted a failure above: a CI tool that reads the element sees why.
      out += fmt::format("      <failure message=\"{}\" type=\"coverage-gaps\">{}</failure>\n",
                         Attr(fmt::format("{}: expected {}, observed {}", ResultWord(k), k.expected.ToString(),
                                          Or(k.observed, "?"))),
                         EscapeXml(fmt::format("{}\n", fmt::join(gaps, "\n"))));
    }
    out += "      <system-out>" + EscapeXml(SystemOut(k, texts)) + "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace xackly::report
