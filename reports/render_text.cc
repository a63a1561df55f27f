// The terminal summary. Every piece of data goes through Printable(), so a
// command or Lua script can never move the cursor or change colours; the
// only control characters are '\n' and, when asked for, our own SGR codes.
#include <algorithm>

#include <fmt/format.h>

#include "reports/report.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

constexpr size_t kPathLinesShown = 40;

// ANSI SGR codes, or nothing.
class Paint {
 public:
  explicit Paint(bool on) : on_(on) {}
  std::string Bold(std::string_view s) const { return Wrap("1", s); }
  std::string Dim(std::string_view s) const { return Wrap("2", s); }
  std::string Red(std::string_view s) const { return Wrap("1;31", s); }
  std::string Green(std::string_view s) const { return Wrap("32", s); }
  std::string Yellow(std::string_view s) const { return Wrap("33", s); }
  std::string Cyan(std::string_view s) const { return Wrap("36", s); }

 private:
  std::string Wrap(const char* code, std::string_view s) const {
    if (!on_) return std::string(s);
    return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
  }
  bool on_;
};

// Display width in code points (every character we print is one column wide
// except the rare East Asian wide ones, which only misalign a table).
size_t Width(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

std::string Pad(std::string_view s, size_t width) {
  std::string out(s);
  out.append(width > Width(s) ? width - Width(s) : 0, ' ');
  return out;
}

// A table: the header and the cells are plain (already Printable) text;
// `paint_row(row, cell)` may colour a cell after padding.
template <typename PaintCell>
std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  PaintCell paint_cell, const Paint& paint) {
  std::vector<size_t> widths(header.size());
  for (size_t i = 0; i < header.size(); ++i) widths[i] = Width(header[i]);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  std::string out;
  std::string line;
  for (size_t i = 0; i < header.size(); ++i) line += (i ? "  " : "") + Pad(header[i], widths[i]);
  out += paint.Bold(line.substr(0, line.find_last_not_of(' ') + 1)) + "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    line.clear();
    for (size_t i = 0; i < rows[r].size(); ++i) {
      const bool last = i + 1 == rows[r].size();
      line += (i ? "  " : "") + paint_cell(r, i, last ? rows[r][i] : Pad(rows[r][i], widths[i]));
    }
    out += line + "\n";
  }
  return out;
}

std::string CaseFacts(const CaseReport& c) {
  return fmt::format("protocol {}, seed {}, {}, {}, {}, persistence {}, "
                     "restart naming {}, {} steps, {} virtual, trace hash {}",
                     c.protocol, c.seed, Count(c.producers, "producer"), WorkersText(c), Count(c.events, "event"), Or(c.persistence, "?"),
                     Or(c.restart_naming, "?"), c.steps, FormatDuration(std::max<int64_t>(c.virtual_ms, 0)),
                     Or(c.trace_hash, "?"));
}

// Why a violated case has no counterexample of its own: it showed another
// violation than the one the check looks for ("" when there is none).
std::string OtherViolationsNote(const CheckReport& k) {
  if (k.other_violations.empty()) return "";
  std::vector<std::string> parts;
  int n = 0;
  for (const auto& [cls, count] : k.other_violations) {
    parts.push_back(fmt::format("{} {}", count, Printable(cls)));
    n += count;
  }
  const std::string which = fmt::format("{}", fmt::join(parts, ", "));
  if (k.first_hit_case >= 0) {
    return fmt::format("{} of them showed a violation other than {} ({}): not shrunk, the counterexample below "
                       "is the first case that showed {}\n",
                       n, Printable(k.expected.ToString()), which, Printable(k.expected.ToString()));
  }
  return fmt::format("no case showed {}; {} showed another violation ({}): the counterexample below is the "
                     "first of them\n",
                     Printable(k.expected.ToString()), n == 1 ? "1 case" : fmt::format("{} cases", n), which);
}

void RenderDetail(const CheckReport& k, const Paint& paint, std::string& out) {
  const std::string verdict = Passed(k) ? paint.Green(ResultWord(k)) : paint.Red(ResultWord(k));
  out += "\n" + paint.Bold(fmt::format("── {}: expected {}, observed {}", Printable(k.name),
                                       Printable(k.expected.ToString()), Printable(Or(k.observed, "?")))) +
         " — " + verdict + "\n";
  if (!k.description.empty()) out += Printable(k.description) + "\n";
  if (!k.fault_model.empty()) out += "fault model: " + Printable(k.fault_model) + "\n";
  out += "cases: " + CaseCountsText(k) + "\n";
  out += OtherViolationsNote(k);
  for (const std::string& line : UnfiredPlannedLines(k)) out += paint.Yellow(Printable(line)) + "\n";
  const std::vector<CoverageRow> coverage = CoverageRows(k);
  if (!k.counterexample) {
    if (!coverage.empty()) {
      std::vector<std::string> parts;
      for (const CoverageRow& row : coverage) {
        parts.push_back(fmt::format("{} {}{}", Printable(row.site), row.fired,
                                    row.never_fired ? " (never fired)" : ""));
      }
      out += "coverage: " + fmt::format("{}", fmt::join(parts, ", ")) + "\n";
    }
    out += paint.Yellow("no case violated, so there is no counterexample to replay") + "\n";
    return;
  }
  const CaseReport& c = *k.counterexample;
  out += fmt::format("{}: {}{}\n", CaseTitle(k), Printable(Or(k.counterexample_size, "?")), ShrinkNote(k));
  out += Printable(CaseFacts(c)) + "\n";
  if (!c.fired.empty()) {
    std::vector<std::string> faults;
    for (const FaultSpec& f : c.fired) faults.push_back(Printable(f.ToString()));
    out += "faults fired: " + fmt::format("{}", fmt::join(faults, "; ")) + "\n";
  }

  if (!c.violations.empty()) {
    out += paint.Bold("story:") + "\n";
    const std::vector<StorySentence> story = StorySentences(c);
    for (size_t i = 0; i < story.size(); ++i) {
      std::string line = Printable(story[i].text);
      if (story[i].kind == StorySentence::Kind::kVerdict) line = paint.Red(line);
      out += fmt::format("  {:>2}. {}\n", i + 1, line);
    }
    out += paint.Bold("violations:") + "\n";
    for (const Violation& v : c.violations) {
      out += "  " + paint.Red(VerdictKindName(v.kind)) + " " + Printable(ViolationSubject(v)) + " [" +
             Printable(v.cause) + "] " + Printable(v.detail) + "\n";
    }
  }
  const std::vector<PathRow> path = FoldedPath(c);
  if (!path.empty()) {
    out += paint.Bold(fmt::format("violating path ({} of {} trace lines):", PathLines(c).size(), c.trace.size())) +
           "\n";
    for (size_t i = 0; i < path.size() && i < kPathLinesShown; ++i) {
      const TraceLine& line = c.trace[static_cast<size_t>(path[i].line)];
      std::string text = fmt::format("  #{:<4}{}", path[i].line, Printable(Trace::Render(line)));
      out += (line.kind == LineKind::kFault ? paint.Red(text) : text) + paint.Dim(RepeatsText(c, path[i])) + "\n";
    }
    if (path.size() > kPathLinesShown) {
      out += paint.Dim(fmt::format("  … {} more path rows in the JSON and HTML reports",
                                   path.size() - kPathLinesShown)) + "\n";
    }
  }
  if (!coverage.empty()) {
    std::vector<std::string> parts;
    for (const CoverageRow& row : coverage) {
      std::string part = fmt::format("{} {}", Printable(row.site), row.fired);
      parts.push_back(row.never_fired ? paint.Yellow(part + " (never fired)") : part);
    }
    out += fmt::format("coverage (times each site fired {}): {}\n", CoverageScope(k), fmt::join(parts, ", "));
  }
  if (!c.replay_file.empty()) out += "replay file: " + Printable(c.replay_file) + "\n";
  out += paint.Bold("replay: ") + paint.Cyan(Printable(Or(c.replay_command, "(no replay command recorded)"))) +
         "\n";
}

}  // namespace

std::string RenderText(const Report& report, bool color, bool mismatches_only) {
  const Paint paint(color);
  std::string out;
  std::vector<std::string> head = {"xackly " + Or(report.command, "report")};
  if (!report.tool_version.empty()) head.push_back("version " + report.tool_version);
  head.push_back(fmt::format("seed {}", report.seed));
  if (!report.server_version.empty()) head.push_back(report.server_version);
  if (!report.shard.empty()) head.push_back("shard " + report.shard);
  out += paint.Bold(Printable(fmt::format("{}", fmt::join(head, " · ")))) + "\n";
  if (!report.command_line.empty()) out += "command: " + Printable(report.command_line) + "\n";
  if (!report.options.empty()) out += "options: " + Printable(report.options) + "\n";
  out += "\n";

  std::vector<std::vector<std::string>> rows;
  for (const CheckReport& k : report.checks) {
    const std::string replay = k.counterexample ? Or(k.counterexample->replay_file, "-") : "-";
    rows.push_back({ResultWord(k), Printable(k.name), Printable(k.expected.ToString()),
                    Printable(Or(k.observed, "?")),
                    fmt::format("{} ({} violated)", k.cases_run, k.cases_failed),
                    k.counterexample ? Printable(Or(k.counterexample_size, "?")) : "-", Printable(replay)});
  }
  out += Table({"result", "protocol", "expected", "observed", "cases", CaseColumnTitle(report), "replay file"},
               rows,
               [&](size_t r, size_t col, const std::string& cell) {
                 if (col != 0) return cell;
                 return Passed(report.checks[r]) ? paint.Green(cell) : paint.Red(cell);
               },
               paint);
  out += "\n" + (report.all_matched ? paint.Green(Summary(report)) : paint.Red(Summary(report))) + "\n";

  // Evidence before green: a check that found nothing says what it injected.
  std::vector<std::string> evidence;
  for (const CheckReport& k : report.checks) {
    if (NeedsDetail(k)) continue;
    std::vector<std::string> fired;
    for (const CoverageRow& row : CoverageRows(k)) {
      if (!row.never_fired) fired.push_back(fmt::format("{} {}", Printable(row.site), row.fired));
    }
    evidence.push_back(Printable(k.name) + ": " +
                       (fired.empty() ? std::string("none") : fmt::format("{}", fmt::join(fired, ", "))));
  }
  if (!evidence.empty()) {
    out += "faults fired in the checks that found nothing (times each site fired over their cases):\n";
    for (const std::string& e : evidence) out += "  " + e + "\n";
  }

  std::vector<std::string> gaps;
  for (const CheckReport& k : report.checks) {
    std::vector<std::string> never;
    for (const CoverageRow& row : CoverageRows(k)) {
      if (row.never_fired) never.push_back(Printable(row.site));
    }
    if (never.empty()) continue;
    // A search that stopped at its first counterexample ran few cases; its
    // gaps say little, so say why.
    std::string stopped = k.first_hit_case >= 0 ? fmt::format(" (search stopped at case {})", k.first_hit_case) : "";
    gaps.push_back(Printable(k.name) + ": " + fmt::format("{}", fmt::join(never, ", ")) + stopped);
  }
  if (!gaps.empty()) {
    out += paint.Yellow("fault sites that never fired:") + "\n";
    for (const std::string& g : gaps) out += "  " + g + "\n";
  }

  // Matched checks with a counterexample first, mismatches last: the end of
  // the output, nearest the prompt, is what needs attention.
  for (const bool mismatches : {false, true}) {
    if (mismatches_only && !mismatches) continue;
    for (const CheckReport& k : report.checks) {
      if (NeedsDetail(k) && Passed(k) != mismatches) RenderDetail(k, paint, out);
    }
  }
  return out;
}

std::string RenderMatrixText(const std::vector<ServerResult>& servers, bool color, bool rows_only) {
  const Paint paint(color);
  std::vector<std::string> header = {"servers", "check", "expected"};
  for (const ServerResult& s : servers) header.push_back(Printable(Or(s.report.server_version, s.label.c_str())));
  const std::vector<MatrixRow> rows = MatrixRows(servers);
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> differing;
  for (const MatrixRow& r : rows) {
    std::vector<std::string> line = {r.differs ? "DIFFERS" : "same", Printable(r.name), Printable(r.expected)};
    for (size_t i = 0; i < r.verdicts.size(); ++i) {
      line.push_back(Printable(r.verdicts[i]) + (r.marks[i].empty() ? "" : " " + r.marks[i]));
    }
    cells.push_back(std::move(line));
    if (r.differs) differing.push_back(Printable(r.name));
  }
  std::string out = Table(header, cells,
                          [&](size_t r, size_t col, const std::string& cell) {
                            if (col == 0) return rows[r].differs ? paint.Yellow(cell) : cell;
                            if (col < 3) return cell;
                            return rows[r].passed[col - 3] ? cell : paint.Red(cell);
                          },
                          paint);
  if (rows_only) return out.substr(out.find('\n') + 1);  // without the header line
  out += "\n" + (differing.empty()
                     ? fmt::format("every check gives the same verdict on all {} servers\n", servers.size())
                     : paint.Yellow(fmt::format("{} of {} differ by server: {}", Count(differing.size(), "check"),
                                                rows.size(), fmt::join(differing, ", "))) +
                           "\n");
  for (const ServerResult& s : servers) {
    out += fmt::format("{}: {} (exit {}), reports in {}\n", Printable(Or(s.report.server_version, s.label.c_str())),
                       Summary(s.report), s.exit_code, Printable(Or(s.dir, s.label.c_str())));
  }
  if (!servers.empty() && !servers[0].report.shard.empty()) {
    out += fmt::format(
        "shard {}: these are the verdicts of this shard's cases only; merge each server's directory across the "
        "shards (xackly merge SHARD1/{} SHARD2/{} ...), never two servers together\n",
        Printable(servers[0].report.shard), Printable(servers[0].label), Printable(servers[0].label));
  }
  return out;
}

}  // namespace xackly::report
