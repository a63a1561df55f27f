// The report for people, as GitHub-flavoured Markdown (job summaries, PR
// comments). Data goes into prose and table cells backslash-escaped, and into
// code blocks fenced longer than any backtick run it contains.
#include <algorithm>

#include <fmt/format.h>

#include "reports/report.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

constexpr size_t kPathLinesShown = 60;

// Inline text: one line, with the Markdown punctuation escaped that could
// start emphasis, code, links, HTML, table cells or entities mid-line (our
// inline text never starts a line, so '#', '>' and '-' are safe).
std::string Md(std::string_view s) {
  std::string out;
  for (char c : Printable(s)) {
    if (std::string_view("\\`*_[]<|~&").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

size_t LongestBacktickRun(std::string_view s) {
  size_t best = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// Inline code: `x`, with a longer fence when x holds backticks.
std::string Code(std::string_view s) {
  const std::string text = Printable(s);
  const std::string fence(LongestBacktickRun(text) + 1, '`');
  const bool pad = text.starts_with('`') || text.ends_with('`');
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

// A fenced block of already-Printable lines.
std::string Block(const std::vector<std::string>& lines, const char* info) {
  size_t longest = 0;
  for (const std::string& l : lines) longest = std::max(longest, LongestBacktickRun(l));
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string out = fence + info + "\n";
  for (const std::string& l : lines) out += l + "\n";
  return out + fence + "\n";
}

std::string Row(const std::vector<std::string>& cells) {
  return "| " + fmt::format("{}", fmt::join(cells, " | ")) + " |\n";
}

void CoverageTable(const CheckReport& k, std::string& out) {
  const std::vector<CoverageRow> rows = CoverageRows(k);
  if (rows.empty()) {
    out += k.single_run ? "No fault fired in this run.\n" : "No fault site was enabled.\n";
    return;
  }
  out += "Times each site fired " + Md(CoverageScope(k)) + ":\n\n";
  out += Row({"fault site", "times fired"}) + "|---|---:|\n";
  for (const CoverageRow& row : rows) {
    out += Row({Code(row.site), row.never_fired ? "0 ⚠️ never fired" : std::to_string(row.fired)});
  }
}

// A check's cell in the results table.
const char* ResultCell(const CheckReport& k) {
  if (FailedOnlyByGaps(k)) return "⚠️ **matched with gaps**";
  if (k.matched) return "✅ ok";
  return k.undecided ? "⏸ undecided" : "❌ **MISMATCH**";
}

void RenderDetail(const CheckReport& k, std::string& out) {
  out += fmt::format("\n## {} {}: expected {}, observed {}\n\n", Passed(k) ? "✅" : k.matched ? "⚠️" : "❌", Md(k.name),
                     Code(k.expected.ToString()), Code(Or(k.observed, "?")));
  if (!k.description.empty()) out += Md(k.description) + "\n\n";
  out += fmt::format("- **Result:** {}\n", FailedOnlyByGaps(k) ? "**matched with gaps**: not a pass (below)"
                                            : k.matched       ? "matched its expectation"
                                                              : "**MISMATCH**");
  if (!k.fault_model.empty()) out += "- **Fault model:** " + Code(k.fault_model) + "\n";
  out += "- **Cases:** " + CaseCountsText(k) + "\n";
  for (const std::string& line : UnfiredPlannedLines(k)) out += "- ⚠️ " + Md(line) + "\n";
  if (!k.counterexample) {
    out += "- No case violated, so there is no counterexample to replay.\n\n### Fault-point coverage\n\n";
    CoverageTable(k, out);
    return;
  }
  const CaseReport& c = *k.counterexample;
  out += fmt::format("- **{}:** {}{}\n", Capitalized(CaseTitle(k)), Md(Or(k.counterexample_size, "?")),
                     ShrinkNote(k));
  out += fmt::format("- **Case:** protocol {}, seed {}, {}, {}, {}, "
                     "persistence {}, restart naming {}, {} steps, {} virtual, trace hash {}\n",
                     Code(c.protocol), c.seed, Count(c.producers, "producer"), WorkersText(c), Count(c.events, "event"), Code(Or(c.persistence, "?")),
                     Code(Or(c.restart_naming, "?")), c.steps,
                     FormatDuration(std::max<int64_t>(c.virtual_ms, 0)), Code(Or(c.trace_hash, "?")));
  if (!c.fired.empty()) {
    std::vector<std::string> faults;
    for (const FaultSpec& f : c.fired) faults.push_back(Code(f.ToString()));
    out += "- **Faults fired:** " + fmt::format("{}", fmt::join(faults, ", ")) + "\n";
  }

  if (!c.violations.empty()) {
    out += "\n### Story\n\n";
    const std::vector<std::string> story = Story(c);
    for (size_t i = 0; i < story.size(); ++i) out += fmt::format("{}. {}\n", i + 1, Md(story[i]));

    out += "\n### Violations\n\n";
    for (const Violation& v : c.violations) {
      out += fmt::format("- **{}** {} ({}): {}\n", VerdictKindName(v.kind),
                         v.event_id.empty() ? ViolationSubject(v, "run-wide")
                                            : Code(v.event_id) + (v.group.empty() ? "" : " in group " + Code(v.group)),
                         Code(v.cause), Md(v.detail));
    }
  }

  const std::vector<PathRow> path = FoldedPath(c);
  if (!path.empty()) {
    out += fmt::format("\n### Violating path ({} of {} trace lines)\n\n", PathLines(c).size(), c.trace.size());
    std::vector<std::string> lines;
    for (size_t i = 0; i < path.size() && i < kPathLinesShown; ++i) {
      lines.push_back(fmt::format("#{:<4}{}{}", path[i].line,
                                  Printable(Trace::Render(c.trace[static_cast<size_t>(path[i].line)])),
                                  Printable(RepeatsText(c, path[i]))));
    }
    if (path.size() > kPathLinesShown) {
      lines.push_back(fmt::format("… {} more path rows in the JSON and HTML reports",
                                  path.size() - kPathLinesShown));
    }
    out += Block(lines, "text");
  }

  out += "\n### Fault-point coverage\n\n";
  CoverageTable(k, out);

  out += "\n### Replay\n\n";
  if (!c.replay_file.empty()) out += "Replay file: " + Code(c.replay_file) + "\n\n";
  out += Block({Printable(Or(c.replay_command, "(no replay command recorded)"))}, "sh");
}

}  // namespace

std::string RenderMarkdown(const Report& report) {
  std::string out = fmt::format("# xackly {}: {}\n\n", Md(Or(report.command, "report")), Md(Summary(report)));
  std::vector<std::string> facts = {fmt::format("seed {}", report.seed)};
  if (!report.server_version.empty()) facts.push_back(Md(report.server_version));
  if (!report.tool_version.empty()) facts.push_back("xackly " + Md(report.tool_version));
  if (!report.shard.empty()) facts.push_back("shard " + Md(report.shard));
  out += fmt::format("{}", fmt::join(facts, " · ")) + "\n\n";
  if (!report.command_line.empty()) out += "Command: " + Code(report.command_line) + "\n\n";
  if (!report.options.empty()) out += "Options: " + Code(report.options) + "\n\n";

  out += Row({"result", "protocol", "expected", "observed", "cases", CaseColumnTitle(report), "replay file"});
  out += "|---|---|---|---|---:|---|---|\n";
  for (const CheckReport& k : report.checks) {
    const std::string replay = k.counterexample && !k.counterexample->replay_file.empty()
                                   ? Code(k.counterexample->replay_file)
                                   : "–";
    out += Row({ResultCell(k), Md(k.name), Code(k.expected.ToString()),
                Code(Or(k.observed, "?")), fmt::format("{} ({} violated)", k.cases_run, k.cases_failed),
                k.counterexample ? Md(Or(k.counterexample_size, "?")) : "–", replay});
  }

  bool details = false;
  for (const CheckReport& k : report.checks) {
    if (NeedsDetail(k)) RenderDetail(k, out);
    details = details || NeedsDetail(k);
  }

  bool header = false;
  for (const CheckReport& k : report.checks) {
    if (NeedsDetail(k)) continue;
    if (!header) out += details ? "\n## Fault-point coverage of the other checks\n" : "\n## Fault-point coverage\n";
    header = true;
    out += "\n### " + Md(k.name) + "\n\n";
    CoverageTable(k, out);
  }
  return out;
}

}  // namespace xackly::report
