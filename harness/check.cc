#include "harness/check.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "sim/rng.h"

namespace xackly {

namespace {

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
  const std::vector<std::string>& points = m.CrashSites();
  const std::vector<std::string>& sites = m.LostSites();
  // Scheduled faults land anywhere in the longest fault phase a case of
  // these bounds has (a smaller case ignores those past its own end).
  auto at = rc::gen::inRange<int64_t>(0, FaultPhaseEndMs(base.timing, b.max_events, base.producers));
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

// Draws from one of `gens` (FaultGens' order: base.faults.kinds). Worker
// crashes between protocol steps are what the catalog is about, so when a
// model has other kinds too, half of all drawn faults are crashes; the other
// kinds share the rest equally. Shrinks towards the first kind.
rc::Gen<FaultSpec> PickWeighted(const FaultModel& model, std::vector<rc::Gen<FaultSpec>> gens) {
  const size_t others = gens.size() - 1;
  std::vector<size_t> upto;  // upto[i]: draws below this value pick gens[i]
  size_t total = 0;
  for (FaultKind kind : model.kinds) {
    total += kind == FaultKind::kCrash ? std::max<size_t>(1, others) : 1;
    upto.push_back(total);
  }
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, total), [gens, upto](size_t draw) {
    size_t i = 0;
    while (draw >= upto[i]) ++i;
    return gens[i];
  });
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
                                PickWeighted(base.faults, gens))));
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
  // Faults are drawn before the case's size is known: fold worker slots and
  // event numbers into the case, so that every generated fault can fire.
  std::vector<FaultSpec> faults = c.faults;
  for (FaultSpec& f : faults) {
    if (IsPointFault(f.kind) && f.actor[0] == 'w') {
      int slot = std::stoi(f.actor.substr(1));
      f.actor = "w" + std::to_string((slot - 1) % c.workers + 1);
    }
    if (f.kind == FaultKind::kPoison) f.event = (f.event - 1) % c.events + 1;
  }
  config.fault_schedule = std::move(faults);
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


bool ParseShard(const std::string& text, int* index, int* count) {
  size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  try {
    size_t used = 0;
    int i = std::stoi(text.substr(0, slash), &used);
    if (used != slash) return false;
    std::string tail = text.substr(slash + 1);
    int n = std::stoi(tail, &used);
    if (used != tail.size() || n < 1 || i < 1 || i > n) return false;
    *index = i - 1;
    *count = n;
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<int> ShardCaseIndexes(const CheckOptions& options) {
  std::vector<int> indexes;
  for (int i = options.shard_index; i < options.cases; i += options.shard_count) indexes.push_back(i);
  return indexes;
}

Result<CheckOutcome> RunCheck(const RunConfig& base, CasePool& pool, const CheckOptions& options) {
  auto started = std::chrono::steady_clock::now();
  CheckOutcome out;
  rc::Gen<GeneratedCase> gen = GenCase(base, options.bounds);
  CheckProgress progress;
  auto report = [&] {
    if (options.on_progress) options.on_progress(progress);
  };
  const size_t batch_size = static_cast<size_t>(pool.threads());

  // Search: cases in index order, a batch of `threads` at a time; results
  // are walked in index order and everything after the first hit is
  // discarded, so the outcome is the one a single thread would find.
  const std::vector<int> indexes = ShardCaseIndexes(options);
  std::optional<rc::Shrinkable<GeneratedCase>> hit;
  for (size_t b = 0; b < indexes.size() && !hit; b += batch_size) {
    std::vector<rc::Shrinkable<GeneratedCase>> cases;
    std::vector<RunConfig> configs;
    for (size_t k = b; k < std::min(indexes.size(), b + batch_size); ++k) {
      int i = indexes[k];
      int size = options.cases > 1 ? i * 100 / (options.cases - 1) : 100;
      cases.push_back(NthCase(gen, options.seed, i, size));
      configs.push_back(ApplyCase(base, cases.back().value()));
    }
    std::vector<Result<RunResult>> results = pool.RunAll(configs);
    for (size_t k = 0; k < results.size(); ++k) {
      if (!results[k].ok()) return results[k].status();
      const RunResult& r = *results[k];
      ++out.cases_run;
      out.observed_classes[r.observed]++;
      if (!r.violations.empty()) ++out.cases_with_violations;
      out.coverage.Add(r.coverage);
      if (IsHit(base.expected, r)) {
        ++progress.hits;
        out.hit_index = indexes[b + k];
        hit = cases[k];
        break;
      }
    }
    progress.cases_done = out.cases_run;
    report();
  }

  if (hit) {
    // Greedy shrinking over RapidCheck's shrink tree: the first smaller case
    // (in the tree's order) that still hits becomes the current one. A batch
    // of candidates runs in parallel; only those up to the first hit count.
    progress.shrinking = true;
    rc::Shrinkable<GeneratedCase> current = *hit;
    for (bool adopted = true; adopted && out.shrink_runs < options.max_shrink_runs;) {
      adopted = false;
      rc::Seq<rc::Shrinkable<GeneratedCase>> shrinks = current.shrinks();
      bool exhausted = false;
      while (!adopted && !exhausted && out.shrink_runs < options.max_shrink_runs) {
        size_t room = std::min(batch_size, static_cast<size_t>(options.max_shrink_runs - out.shrink_runs));
        std::vector<rc::Shrinkable<GeneratedCase>> candidates;
        std::vector<RunConfig> configs;
        while (candidates.size() < room) {
          rc::Maybe<rc::Shrinkable<GeneratedCase>> next = shrinks.next();
          if (!next) {
            exhausted = true;
            break;
          }
          configs.push_back(ApplyCase(base, next->value()));
          candidates.push_back(std::move(*next));
        }
        std::vector<Result<RunResult>> results = pool.RunAll(configs);
        for (size_t k = 0; k < results.size(); ++k) {
          if (!results[k].ok()) return results[k].status();
          ++out.shrink_runs;
          if (IsHit(base.expected, *results[k])) {
            current = candidates[k];
            ++out.shrink_steps;
            adopted = true;
            break;
          }
        }
        progress.shrink_runs = out.shrink_runs;
        progress.shrink_steps = out.shrink_steps;
        report();
      }
    }
    out.minimal = current.value();
    out.minimal_config = ApplyCase(base, out.minimal);
    out.minimal_config.keep_trace = true;
    std::vector<Result<RunResult>> final_run = pool.RunAll({out.minimal_config});
    if (!final_run[0].ok()) return final_run[0].status();
    out.minimal_result = std::move(final_run[0]).value();
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
