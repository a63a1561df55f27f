// The shared derivations of reports/model.h other than the story.
#include "reports/model.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "reports/text_util.h"
#include "sim/commands.h"
#include "sim/sites.h"
#include "sim/trace.h"

namespace xackly::report {
namespace {

// A fault that hit the worker holding the event (a point fault: crash,
// stall, lost request or reply), as the fault kind's descriptor says.
bool IsHolderFault(const HistoryItem& item) {
  const FaultKindInfo* f = FaultOf(item);
  return f != nullptr && f->fault_class == FaultClass::kPoint;
}

// Whether one of `t`'s arguments names one of `names` inside it (a key).
bool ArgumentNames(const TraceLine& t, const std::set<std::string, std::less<>>& names) {
  for (const std::string& arg : t.argv) {
    for (const std::string& name : names) {
      if (arg.size() > name.size() && HasIdToken(arg, name)) return true;
    }
  }
  return false;
}

}  // namespace

// A statement that waited this long for another worker's transaction is on
// the path: it is why the holder acted late (the story's "15 s later").
constexpr int64_t kStoreWaitOnPathMs = 1000;

bool WaitedForATransaction(const TraceLine& t) {
  return t.kind == LineKind::kSql && !t.waited_for.empty() && t.duration_ms >= kStoreWaitOnPathMs;
}

bool IsDecisive(const TraceLine& t) {
  if (WaitedForATransaction(t)) return true;
  switch (t.kind) {
    case LineKind::kFault: return true;
    case LineKind::kRedis:
      if (t.event == LineEvent::kIoError || t.event == LineEvent::kNotSent) return true;
      if (t.reply.starts_with('-')) return true;  // an error reply (NOGROUP after a restart...)
      if (t.argv.empty() || t.reply != "nil") return false;
      // A write answered nil (SET NX: the key was there); a read's nil is
      // only "nothing new".
      return CommandOf(t.argv).writes && CommandOf(t.argv).category != ReportCategory::kRead;
    case LineKind::kSql: {
      return StatementVerb(BusinessRequest(t)) == "ROLLBACK" || t.reply.starts_with("error") ||
             t.reply.starts_with("failed") || t.reply == "unavailable";
    }
    case LineKind::kExternal:
      return t.reply.starts_with("failed") || t.reply.starts_with("error") || t.reply == "unavailable";
    default: return false;
  }
}

const FaultKindInfo* FaultOf(const HistoryItem& item) {
  return item.kind == HistoryKind::kFault ? FaultKindNamed(item.site) : FaultKindOfHistory(HistoryKindName(item.kind));
}

std::vector<int64_t> PathLines(const CaseReport& c) {
  const auto size = static_cast<int64_t>(c.trace.size());
  std::set<int64_t> lines;
  std::set<std::string, std::less<>> names;  // event ids and their stream ids
  for (const Violation& v : c.violations) {
    if (v.event_id.empty()) continue;
    names.insert(v.event_id);
    auto it = c.histories.find(HistoryKey(v));
    if (it == c.histories.end()) continue;
    for (const HistoryItem& item : it->second) {
      if (!item.stream_id.empty()) names.insert(item.stream_id);
      if (item.line < 0 || item.line >= size) continue;
      lines.insert(item.line);
      if (!IsHolderFault(item)) continue;
      // The holder's lifecycle lines after the fault, up to its next start.
      for (int64_t l = item.line + 1; l < size; ++l) {
        const TraceLine& t = c.trace[static_cast<size_t>(l)];
        if (t.kind != LineKind::kLifecycle || Slot(t.actor) != Slot(item.actor)) continue;
        lines.insert(l);
        if (t.event == LineEvent::kStart) break;
      }
    }
  }
  if (names.empty()) return {};
  for (int64_t l = 0; l < size; ++l) {
    const TraceLine& t = c.trace[static_cast<size_t>(l)];
    for (const std::string& id : t.ids) {
      if (names.count(id) > 0) lines.insert(l);
    }
    if (t.kind != LineKind::kHarness && ArgumentNames(t, names)) lines.insert(l);
  }
  for (int64_t l : DecisiveLines(c)) lines.insert(l);
  return {lines.begin(), lines.end()};
}

std::string_view BusinessRequest(const TraceLine& t) {
  std::string_view request = t.request;
  if (request.starts_with("sql ") || request.starts_with("ext ")) request.remove_prefix(4);
  return request;
}

std::vector<int64_t> DecisiveLines(const CaseReport& c) {
  const auto size = static_cast<int64_t>(c.trace.size());
  std::set<int64_t> out;
  std::set<std::string> seen;
  for (const Violation& v : c.violations) {
    if (v.event_id.empty() || !seen.insert(HistoryKey(v)).second) continue;
    auto it = c.histories.find(HistoryKey(v));
    if (it == c.histories.end()) continue;
    const std::vector<HistoryItem>& history = it->second;
    for (size_t i = 0; i < history.size(); ++i) {
      const HistoryItem& item = history[i];
      if (item.line < 0 || item.line >= size || item.actor.empty()) continue;
      int64_t end = std::min(size, item.line + 1 + kDecisiveWindowLines);
      for (size_t j = i + 1; j < history.size(); ++j) {
        if (history[j].line > item.line) {
          end = std::min(end, history[j].line);
          break;
        }
      }
      for (int64_t l = item.line + 1; l < end; ++l) {
        const TraceLine& t = c.trace[static_cast<size_t>(l)];
        if (Slot(t.actor) != Slot(item.actor)) continue;
        if (t.event == LineEvent::kStart) break;
        if (IsDecisive(t)) out.insert(l);
      }
    }
  }
  return {out.begin(), out.end()};
}

std::vector<PathRow> FoldedPath(const CaseReport& c) {
  std::vector<PathRow> rows;
  auto same = [&](int64_t a, int64_t b) {
    const TraceLine& x = c.trace[static_cast<size_t>(a)];
    const TraceLine& y = c.trace[static_cast<size_t>(b)];
    return x.actor == y.actor && x.kind == y.kind && x.request == y.request && x.reply == y.reply;
  };
  for (int64_t line : PathLines(c)) {
    if (!rows.empty() && same(rows.back().last, line)) {
      rows.back().last = line;
      ++rows.back().repeats;
    } else {
      rows.push_back({line, line, 0});
    }
  }
  return rows;
}

std::string RepeatsText(const CaseReport& c, const PathRow& row) {
  if (row.repeats == 0) return "";
  const int64_t span = c.trace[static_cast<size_t>(row.last)].t_ms - c.trace[static_cast<size_t>(row.line)].t_ms;
  return fmt::format(" … and {} more identical to #{} ({})", row.repeats, row.last, FormatDuration(span));
}

std::string SearchSettings::DifferenceFrom(const SearchSettings& other) const {
  auto flag = [](bool on) { return on ? "on" : "off"; };
  if (cases != other.cases) return fmt::format("--cases {} / {}", cases, other.cases);
  if (max_workers != other.max_workers) return fmt::format("--max-workers {} / {}", max_workers, other.max_workers);
  if (max_events != other.max_events) return fmt::format("--max-events {} / {}", max_events, other.max_events);
  if (max_faults != other.max_faults) return fmt::format("--max-faults {} / {}", max_faults, other.max_faults);
  if (fixed_workload != other.fixed_workload) {
    return fmt::format("--fixed-workload {} / {}", flag(fixed_workload), flag(other.fixed_workload));
  }
  if (swarm != other.swarm) return fmt::format("--no-swarm {} / {}", flag(!swarm), flag(!other.swarm));
  return "";
}

std::vector<CoverageRow> CoverageRows(const CheckReport& check) {
  std::map<std::string, int> fired = check.fired_totals;
  std::set<std::string> never(check.never_fired.begin(), check.never_fired.end());
  // A single run's counts are its own (SingleRunCheck): an explicit plan's
  // run that fired nothing has none, and the model's sites it never aimed
  // at are no gap of it.
  if (fired.empty() && never.empty() && check.counterexample && !check.single_run) {
    const FaultCoverage& cov = check.counterexample->coverage;
    fired = cov.fired;
    for (const std::string& site : cov.enabled) {
      auto it = fired.find(site);
      if (it == fired.end() || it->second == 0) never.insert(site);
    }
  }
  std::vector<CoverageRow> rows;
  std::set<std::string> sites = never;
  for (const auto& [site, n] : fired) sites.insert(site);
  for (const std::string& site : sites) {
    auto it = fired.find(site);
    const int n = it == fired.end() ? 0 : it->second;
    rows.push_back({site, n, never.count(site) > 0});
  }
  return rows;
}

std::vector<std::string> UnfiredPlannedLines(const CheckReport& check) {
  std::vector<std::string> out;
  for (const CheckReport::UnfiredFault& u : check.unfired_planned) {
    out.push_back(fmt::format("planned fault never fired: '{}': {}", u.fault, u.why));
  }
  return out;
}

std::vector<std::string> GapLines(const CheckReport& check) {
  if (!FailedOnlyByGaps(check)) return {};
  std::vector<std::string> out;
  if (!check.gaps_allowed) {
    for (const std::string& site : check.coverage_gaps) {
      out.push_back("fault site that never fired although a case reached it: " + site);
    }
  }
  if (GreenWithUnfiredPlan(check)) {
    for (std::string& line : UnfiredPlannedLines(check)) out.push_back(std::move(line));
  }
  return out;
}

std::string CaseCountsText(const CheckReport& check) {
  std::string out = fmt::format("{} run, {} violated", check.cases_run, check.cases_failed);
  if (check.cases_unjudged > 0) {
    out += fmt::format(", {} stopped by the harness limit (not judged)", check.cases_unjudged);
  }
  if (check.cases_for_coverage > 0) {
    out += fmt::format(" ({} of them drawn at sites that had not fired yet)", check.cases_for_coverage);
  }
  return out;
}

std::string WorkersText(int64_t workers, int handlers) {
  std::string out = Count(workers, "worker");
  if (handlers > 1) out += fmt::format(" x {} lanes", handlers);
  return out;
}

std::string ShrinkNote(const CheckReport& check) {
  std::string steps = check.shrink_steps > 0 ? "after " + Count(check.shrink_steps, "shrink") : "";
  if (!check.shrink_cut) return steps.empty() ? "" : " (" + steps + ")";
  if (steps.empty()) return " (not shrunk: --max-shrinks stopped it; may not be minimal)";
  return " (" + steps + "; --max-shrinks stopped it, may not be minimal)";
}

const char* UndecidedWhy(const CheckReport& check) {
  return check.cases_unjudged > 0 && check.first_hit_case < 0
             ? "cases stopped by the harness limit were not judged and may hold it"
             : "in this shard: merge the shards to decide";
}

const char* ResultWord(const CheckReport& check) {
  if (GreenWithUnfiredPlan(check)) return "matched with gaps";
  if (check.matched && !check.coverage_gaps.empty()) return check.gaps_allowed ? "matched (gaps allowed)" : "matched with gaps";
  if (check.matched) return "matched";
  return check.undecided ? "undecided" : "MISMATCH";
}

const char* CaseTitle(const CheckReport& check) {
  return check.single_run ? "run" : "minimal counterexample";
}

const char* CaseColumnTitle(const Report& report) {
  const bool runs = !report.checks.empty() &&
                    std::all_of(report.checks.begin(), report.checks.end(),
                                [](const CheckReport& k) { return k.single_run; });
  return runs ? "run" : "minimal counterexample";
}

std::string CoverageScope(const CheckReport& check) {
  if (check.single_run) return "in this run";
  return "over the " + Count(check.cases_run, "case") + " searched" +
         (check.counterexample ? ", not in the counterexample" : "");
}

bool NeedsDetail(const CheckReport& check) {
  return !Passed(check) || check.counterexample.has_value();
}

namespace {

// "duplicate [crash:after-effect]": what a matrix compares across servers.
std::string MatrixVerdict(const CheckReport& k) {
  std::set<std::string> causes;
  if (k.counterexample) {
    for (const Violation& v : k.counterexample->violations) causes.insert(v.cause);
  }
  const std::string observed = k.observed.empty() ? "?" : k.observed;
  return causes.empty() ? observed : fmt::format("{} [{}]", observed, fmt::join(causes, ", "));
}

}  // namespace

std::vector<MatrixRow> MatrixRows(const std::vector<ServerResult>& servers) {
  std::vector<MatrixRow> rows;
  if (servers.empty()) return rows;
  for (const CheckReport& first : servers[0].report.checks) {
    MatrixRow row{first.name, first.expected.ToString(), {}, {}, {}, false};
    for (const ServerResult& s : servers) {
      const auto k = std::find_if(s.report.checks.begin(), s.report.checks.end(),
                                  [&](const CheckReport& c) { return c.name == first.name; });
      row.verdicts.push_back(k == s.report.checks.end() ? "-" : MatrixVerdict(*k));
      row.passed.push_back(k != s.report.checks.end() && Passed(*k));
      const bool found = k != s.report.checks.end();
      row.marks.push_back(found && k->undecided         ? "UNDECIDED"
                          : row.passed.back()           ? ""
                          : found && FailedOnlyByGaps(*k) ? "GAPS"
                                                        : "MISMATCH");
      row.differs = row.differs || row.verdicts.back() != row.verdicts.front();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string Summary(const Report& report) {
  const size_t total = report.checks.size();
  const auto matched = static_cast<size_t>(
      std::count_if(report.checks.begin(), report.checks.end(),
                    [](const CheckReport& c) { return c.matched; }));
  size_t undecided = 0;
  const CheckReport* an_undecided = nullptr;
  for (const CheckReport& c : report.checks) {
    if (!c.undecided) continue;
    ++undecided;
    an_undecided = &c;
  }
  const auto gaps = static_cast<size_t>(std::count_if(report.checks.begin(), report.checks.end(), FailedOnlyByGaps));
  return fmt::format("{} of {} {} matched {} expectation{}{}", matched, total, total == 1 ? "check" : "checks",
                     total == 1 ? "its" : "their",
                     undecided == 0 ? "" : fmt::format(", {} undecided ({})", undecided, UndecidedWhy(*an_undecided)),
                     gaps == 0 ? ""
                               : fmt::format(", {} with coverage gaps (reachable fault sites that never fired: "
                                             "evidence only for the sites that did)",
                                             gaps));
}

std::string FormatDuration(int64_t ms) {
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms < 10'000) {
    const int64_t tenths = (ms + 50) / 100;
    if (tenths % 10 == 0) return fmt::format("{} s", tenths / 10);
    return fmt::format("{}.{} s", tenths / 10, tenths % 10);
  }
  if (ms < 600'000) return fmt::format("{} s", (ms + 500) / 1000);
  return fmt::format("{} min", (ms + 30'000) / 60'000);
}

std::string Count(int64_t n, const std::string& noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace xackly::report
