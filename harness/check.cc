#include "harness/check.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "sim/rng.h"

namespace xackly {

namespace {

const std::vector<std::string> kDefaultLostSites = {"XACK", "XADD", "COMMIT", "EVAL"};

std::string Plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

rc::Gen<std::string> WorkerSlot(int max_workers) {
  return rc::gen::map(rc::gen::inRange(1, max_workers + 1),
                      [](int i) { return "w" + std::to_string(i); });
}

// One generator per enabled fault kind; a case draws its faults from them.
std::vector<rc::Gen<FaultSpec>> FaultGens(const RunConfig& base, const CaseBounds& b) {
  const FaultModel& m = base.faults;
  std::vector<std::string> points = m.crash_points.empty() ? AllCrashPoints() : m.crash_points;
  std::vector<std::string> sites = m.lost_sites.empty() ? kDefaultLostSites : m.lost_sites;
  int64_t phase_ms = base.timing.fault_phase_ms > 0 ? base.timing.fault_phase_ms : 2000;
  auto at = rc::gen::inRange<int64_t>(0, phase_ms);
  auto nth = rc::gen::inRange(1, 4);
  std::vector<rc::Gen<FaultSpec>> gens;
  for (FaultKind kind : m.kinds) {
    switch (kind) {
      case FaultKind::kCrash:
      case FaultKind::kStall:
        gens.push_back(rc::gen::map(
            rc::gen::tuple(WorkerSlot(b.max_workers), rc::gen::elementOf(points), nth),
            [kind, stall_ms = m.stall_ms](const std::tuple<std::string, std::string, int>& t) {
              FaultSpec s;
              s.kind = kind;
              s.actor = std::get<0>(t);
              s.site = std::get<1>(t);
              s.nth = std::get<2>(t);
              if (kind == FaultKind::kStall) s.duration_ms = stall_ms;
              return s;
            }));
        break;
      case FaultKind::kLostRequest:
      case FaultKind::kLostReply:
        gens.push_back(rc::gen::map(
            rc::gen::tuple(WorkerSlot(b.max_workers), rc::gen::elementOf(sites), nth),
            [kind](const std::tuple<std::string, std::string, int>& t) {
              FaultSpec s;
              s.kind = kind;
              s.site = std::get<1>(t);
              s.actor = s.site == "XADD" ? "p1" : std::get<0>(t);
              s.nth = std::get<2>(t);
              return s;
            }));
        break;
      case FaultKind::kPoison:
        gens.push_back(rc::gen::map(rc::gen::inRange(1, b.max_events + 1), [](int event) {
          FaultSpec s;
          s.kind = FaultKind::kPoison;
          s.event = event;
          return s;
        }));
        break;
      default:  // scheduled faults
        gens.push_back(rc::gen::map(at, [kind, m](int64_t at_ms) {
          FaultSpec s;
          s.kind = kind;
          s.at_ms = at_ms;
          if (kind == FaultKind::kXdel) s.target = m.xdel_target;
          if (kind == FaultKind::kXtrim) s.target = m.xtrim_target;
          if (kind == FaultKind::kClockJump) s.duration_ms = m.clock_jump_ms;
          if (kind == FaultKind::kStoreOutage) s.duration_ms = m.store_outage_ms;
          return s;
        }));
    }
  }
  return gens;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

std::string GeneratedCase::SizeText() const {
  return fmt::format("{}, {}, {}", Plural(events, "event"), Plural(workers, "worker"),
                     Plural(static_cast<int>(faults.size()), "fault"));
}

std::string GeneratedCase::ToString() const {
  std::string out = fmt::format("{}, {}, seed {}", Plural(workers, "worker"),
                                Plural(events, "event"), seed);
  if (!faults.empty()) {
    out += ", faults: ";
    for (size_t i = 0; i < faults.size(); ++i) out += (i ? "; " : "") + faults[i].ToString();
  }
  return out;
}

void showValue(const GeneratedCase& c, std::ostream& os) { os << c.ToString(); }

rc::Gen<GeneratedCase> GenCase(const RunConfig& base, const CaseBounds& b) {
  std::vector<rc::Gen<FaultSpec>> gens = FaultGens(base, b);
  rc::Gen<std::vector<FaultSpec>> faults =
      gens.empty()
          ? rc::gen::just(std::vector<FaultSpec>{})
          // The list's length is bounded by the size given to the container;
          // each fault is drawn at full size (RapidCheck's ranges scale with
          // size, so a small size would always pick the first of everything).
          : rc::gen::resize(b.max_faults,
                            rc::gen::container<std::vector<FaultSpec>>(rc::gen::resize(
                                rc::kNominalSize,
                                rc::gen::mapcat(rc::gen::inRange<size_t>(0, gens.size()),
                                                [gens](size_t i) { return gens[i]; }))));
  // Sizes grow with the generation size, so early cases are small.
  auto sized = [](int max) {
    return rc::gen::withSize([max](int size) {
      return rc::gen::inRange(1, 1 + std::max(1, std::min(max, 1 + size * max / 100)));
    });
  };
  return rc::gen::map(
      rc::gen::tuple(sized(b.max_workers), sized(b.max_events),
                     rc::gen::inRange<uint32_t>(0, 1u << 20), faults),
      [](const std::tuple<int, int, uint32_t, std::vector<FaultSpec>>& t) {
        GeneratedCase c;
        c.workers = std::get<0>(t);
        c.events = std::get<1>(t);
        c.seed = std::get<2>(t);
        c.faults = std::get<3>(t);
        return c;
      });
}

rc::Shrinkable<GeneratedCase> NthCase(const rc::Gen<GeneratedCase>& gen, uint64_t seed, int index,
                                      int size) {
  Rng rng = Rng(seed).Split("check-case").Split(std::to_string(index));
  return gen(rc::Random(rng.Next()), size);
}

RunConfig ApplyCase(const RunConfig& base, const GeneratedCase& c) {
  RunConfig config = base;
  config.workers = c.workers;
  config.events = c.events;
  config.seed = c.seed;
  config.fault_schedule = c.faults;
  config.picks.clear();
  return config;
}

bool IsHit(const Expectation& expected, const RunResult& result) {
  if (expected.kind == VerdictKind::kOk) return !result.violations.empty();
  return std::any_of(result.violations.begin(), result.violations.end(), [&](const Violation& v) {
    return v.kind == expected.kind &&
           v.cause.compare(0, expected.cause.size(), expected.cause) == 0;
  });
}

std::vector<std::string> CheckOutcome::NeverFired() const {
  std::vector<std::string> out;
  for (const std::string& site : enabled_sites) {
    auto it = fired_totals.find(site);
    if (it == fired_totals.end() || it->second == 0) out.push_back(site);
  }
  return out;
}

Result<CheckOutcome> RunCheck(const RunConfig& base, CaseExecutor& executor,
                              const CheckOptions& options) {
  auto started = std::chrono::steady_clock::now();
  CheckOutcome out;
  rc::Gen<GeneratedCase> gen = GenCase(base, options.bounds);
  CheckProgress progress;
  progress.cases_total = options.cases;
  auto report = [&] {
    if (options.on_progress) options.on_progress(progress);
  };

  std::optional<rc::Shrinkable<GeneratedCase>> hit;
  for (int i = 0; i < options.cases; ++i) {
    if (i % options.shard_count != options.shard_index) continue;
    int size = options.cases > 1 ? i * 100 / (options.cases - 1) : 100;
    rc::Shrinkable<GeneratedCase> candidate = NthCase(gen, options.seed, i, size);
    RunConfig config = ApplyCase(base, candidate.value());
    Result<RunResult> r = executor.Run(config);
    if (!r.ok()) return r.status();
    ++out.cases_run;
    out.observed_classes[r->observed]++;
    if (!r->violations.empty()) ++out.cases_with_violations;
    for (const auto& [site, n] : r->coverage.fired) out.fired_totals[site] += n;
    out.enabled_sites.insert(r->coverage.enabled.begin(), r->coverage.enabled.end());
    progress.cases_done = out.cases_run;
    if (IsHit(base.expected, *r)) {
      ++progress.hits;
      out.hit_index = i;
      hit = candidate;
      report();
      break;
    }
    report();
  }

  if (hit) {
    // Greedy shrinking over RapidCheck's shrink tree: take the first smaller
    // case that still hits, and start again from it.
    progress.shrinking = true;
    rc::Shrinkable<GeneratedCase> current = *hit;
    bool shrunk = true;
    while (shrunk && out.shrink_runs < options.max_shrink_runs) {
      shrunk = false;
      rc::Seq<rc::Shrinkable<GeneratedCase>> shrinks = current.shrinks();
      while (rc::Maybe<rc::Shrinkable<GeneratedCase>> next = shrinks.next()) {
        if (out.shrink_runs >= options.max_shrink_runs) break;
        ++out.shrink_runs;
        Result<RunResult> r = executor.Run(ApplyCase(base, next->value()));
        if (!r.ok()) return r.status();
        progress.shrink_runs = out.shrink_runs;
        if (IsHit(base.expected, *r)) {
          current = *next;
          ++out.shrink_steps;
          progress.shrink_steps = out.shrink_steps;
          shrunk = true;
          report();
          break;
        }
        report();
      }
    }
    out.minimal = current.value();
    out.minimal_config = ApplyCase(base, out.minimal);
    out.minimal_config.keep_trace = true;
    Result<RunResult> final_run = executor.Run(out.minimal_config);
    if (!final_run.ok()) return final_run.status();
    out.minimal_result = std::move(final_run).value();
    out.observed = out.minimal_result.observed;
    out.matched = base.expected.kind != VerdictKind::kOk &&
                  Matches(base.expected, out.minimal_result.violations);
  } else {
    // Nothing of what was looked for. Report the most frequent class seen.
    out.observed = "ok";
    int best = 0;
    for (const auto& [cls, n] : out.observed_classes) {
      if (cls != "ok" && n > best) {
        best = n;
        out.observed = cls;
      }
    }
    out.matched = base.expected.kind == VerdictKind::kOk;
  }
  out.seconds = Seconds(started);
  return out;
}

}  // namespace xackly
