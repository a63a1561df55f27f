#include "harness/check.h"
#include "harness/check_rc.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <set>
#include <ostream>

#include <fmt/format.h>

#include "harness/real_consumer.h"
#include "reports/model.h"
#include "sim/actor_name.h"
#include "sim/commands.h"
#include "sim/script_world.h"
#include "sim/rng.h"
#include "sim/text.h"

namespace xackly {

namespace {

rc::Gen<std::string> WorkerSlot(int max_workers) {
  return rc::gen::map(rc::gen::inRange(1, max_workers + 1),
                      [](int i) { return ActorName(ActorRole::kWorker, i); });
}

int64_t Clamp(int64_t v, int64_t lo) { return std::max(lo, v); }

// A scheduled fault's time in [0, phase_ms]: half of the draws uniform over
// the fault phase, half on a logarithmic scale (a power-of-two band, then
// uniform in it), so that the first milliseconds, where a small case does
// most of its work, are as likely as the last minute. Shrinks towards 0.
rc::Gen<int64_t> FaultTime(int64_t phase_ms) {
  int bands = 0;
  while (bands < 62 && (int64_t{1} << bands) <= phase_ms) ++bands;
  auto banded = rc::gen::mapcat(rc::gen::inRange(0, bands + 1), [phase_ms](int band) {
    if (band == 0) return rc::gen::just<int64_t>(0);
    const int64_t lo = int64_t{1} << (band - 1);
    return rc::gen::inRange<int64_t>(lo, std::min(phase_ms, 2 * lo - 1) + 1);
  });
  return rc::gen::oneOf(rc::gen::inRange<int64_t>(0, phase_ms + 1), banded);
}

// A duration in [lo, hi] at full size (RapidCheck's ranges scale with size,
// so a small case would otherwise always draw the minimum). Shrinks to lo.
rc::Gen<int64_t> Duration(int64_t lo, int64_t hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<int64_t>(lo, std::max(lo, hi) + 1));
}

// `drawn`'s request faults, each for an actor that sends its request: when
// the probe runs saw only a producer send it (`senders`), the producer;
// when only workers, a worker (`worker`, unless it was one already). A
// fault at a request both kinds (or neither: a site listed but never
// probed) send keeps its drawn actor. A
// producer counts as a sender only when `producer_can_take` (an error
// reply never reaches xackly's own producer).
rc::Gen<FaultSpec> ToASender(rc::Gen<FaultSpec> drawn,
                             const std::map<std::string, RequestSenders, std::less<>>& senders,
                             bool producer_can_take, rc::Gen<std::string> worker) {
  if (senders.empty()) return drawn;
  return rc::gen::mapcat(std::move(drawn), [senders, producer_can_take, worker](FaultSpec s) {
    auto sent = senders.find(s.site);
    if (sent == senders.end()) return rc::gen::just(s);
    const bool producer = sent->second.producer && producer_can_take;
    if (producer == sent->second.worker) return rc::gen::just(s);
    if (producer) {
      s.actor = ActorName(ActorRole::kProducer, 1);
      return rc::gen::just(s);
    }
    if (DescribeActor(s.actor).role == ActorRole::kWorker) return rc::gen::just(s);
    return rc::gen::map(worker, [s](std::string actor) {
      FaultSpec out = s;
      out.actor = std::move(actor);
      return out;
    });
  });
}

// One generator per fault kind of `kinds` (in that order); a case draws its
// faults from them. Durations come from `r` (swarm) or the model's values.
std::vector<rc::Gen<FaultSpec>> FaultGens(const RunConfig& base, const std::vector<FaultKind>& kinds,
                                          const CaseBounds& b, const SwarmRanges& r) {
  const FaultModel& m = base.faults;
  // Scheduled faults land anywhere in the case's fault phase (a smaller
  // case ignores those past its own end).
  auto at = FaultTime(r.fault_phase_ms);
  // Which visit of its site a point fault takes, as (nth, from time):
  // most bugs need a site's first visit (half of the draws), some a later
  // one; the rest (a third) take the first visit from a time in the fault phase on,
  // which reaches recovery paths (a claim, a dead-lettering, the retry
  // after a restart) however many ordinary visits came first. Shrinks to
  // the first visit.
  using Visit = std::pair<int, int64_t>;
  auto visit = rc::gen::weightedOneOf<Visit>(
      {{3, rc::gen::just(Visit{1, 0})},
       {1, rc::gen::map(rc::gen::inRange(2, 4), [](int n) { return Visit{n, 0}; })},
       {2, rc::gen::map(at, [](int64_t t) { return Visit{1, t}; })}});
  // A kind's duration parameter: in a swarm, within the range its search
  // scale gives, or the model's own value; else the model's value.
  auto duration = [&](FaultKind kind) {
    const int64_t model_ms = m.ModelDurationMs(kind);
    const SearchScale scale = InfoOf(kind).search;
    if (!b.swarm || scale == SearchScale::kModelValue) return rc::gen::just(model_ms);
    const auto [lo, hi] = r.RangeOf(scale);
    return rc::gen::oneOf(Duration(lo, hi), rc::gen::just(model_ms));
  };
  // A kind's target: the model's; in a swarm, a failover's lag is drawn
  // too (0..3 writes missing, or the model's), an error reply's error, and
  // whether a replica-lag has the primary fail over to the lagging replica
  // when its WAIT answers (half of the draws, when the case's kinds have
  // failover too: a failover drawn at a random time comes right after a
  // lag too rarely to find a protocol that ignores WAIT's answer), each
  // shrinking to the model's.
  const bool failover_drawn = std::find(kinds.begin(), kinds.end(), FaultKind::kFailover) != kinds.end();
  auto target = [&](FaultKind kind) {
    const std::string model = m.ModelTarget(kind);
    if (b.swarm && kind == FaultKind::kReplicaLag && failover_drawn) {
      return rc::gen::element(model, std::string(kThenFailover));
    }
    if (b.swarm && kind == FaultKind::kFailover) {
      return rc::gen::oneOf(rc::gen::just(model), rc::gen::map(rc::gen::inRange(0, 4), [](int n) {
                              return "lag:" + std::to_string(n);
                            }));
    }
    if (b.swarm && kind == FaultKind::kErrorReply) {
      return rc::gen::oneOf(rc::gen::just(model),
                            rc::gen::elementOf(std::vector<std::string>{"LOADING", "READONLY", "BUSY"}));
    }
    return rc::gen::just(model);
  };
  std::vector<rc::Gen<FaultSpec>> gens;
  for (FaultKind kind : kinds) {
    const FaultKindInfo& info = InfoOf(kind);
    switch (info.fault_class) {
      case FaultClass::kPoint: {
        // Lost requests at XADD are the producer's; every other site a
        // worker's, or, when the script has a producer of its own (which may
        // send more than XADD: its SQL, a WAIT), in a quarter of the draws
        // its producer's.
        const SiteFamily family = info.Sites();
        // Further groups' workers (RunConfig::groups) are drawn too: their
        // slots follow the run's group's (folded by ApplyCase).
        rc::Gen<std::string> actor = WorkerSlot(b.max_workers + base.TotalWorkers() - base.workers);
        if (family == SiteFamily::kRequest && base.protocol.script != nullptr &&
            base.protocol.script->Defines(ScriptRole::kProducer)) {
          actor = rc::gen::weightedOneOf<std::string>(
              {{3, std::move(actor)}, {1, rc::gen::just(ActorName(ActorRole::kProducer, 1))}});
        }
        auto drawn = rc::gen::map(
            rc::gen::tuple(std::move(actor), rc::gen::elementOf(m.SitesOf(kind)), visit, duration(kind), target(kind)),
            [kind, family](const std::tuple<std::string, std::string, Visit, int64_t, std::string>& t) {
              FaultSpec s;
              s.kind = kind;
              s.site = std::get<1>(t);
              // An error reply never reaches xackly's own producer: at XADD
              // it is a worker's (a dead-letter XADD) or a script producer's.
              const bool producers_xadd =
                  family == SiteFamily::kRequest && s.site == "XADD" && kind != FaultKind::kErrorReply;
              s.actor = producers_xadd ? ActorName(ActorRole::kProducer, 1) : std::get<0>(t);
              std::tie(s.nth, s.at_ms) = std::get<2>(t);
              s.duration_ms = std::get<3>(t);
              s.target = std::get<4>(t);
              return s;
            });
        if (family != SiteFamily::kRequest) {
          gens.push_back(std::move(drawn));
          break;
        }
        const bool script_producer =
            base.protocol.script != nullptr && base.protocol.script->Defines(ScriptRole::kProducer);
        drawn = ToASender(std::move(drawn), m.request_senders, kind != FaultKind::kErrorReply || script_producer,
                          WorkerSlot(b.max_workers + base.TotalWorkers() - base.workers));
        if (base.replicas == 0) {
          gens.push_back(std::move(drawn));
          break;
        }
        // With a replica, xackly's producer sends WAIT after each XADD: half
        // of the draws at WAIT are its (a script's workers may WAIT too),
        // unless the probes saw only one kind of actor send WAIT (then
        // ToASender chose it).
        auto wait = m.request_senders.find("WAIT");
        const bool one_wait_sender = wait != m.request_senders.end() && wait->second.producer != wait->second.worker;
        gens.push_back(rc::gen::mapcat(std::move(drawn), [one_wait_sender](FaultSpec s) {
          if (s.site != "WAIT" || one_wait_sender) return rc::gen::just(s);
          return rc::gen::map(rc::gen::inRange(0, 2), [s](int producer) {
            FaultSpec out = s;
            if (producer == 1) out.actor = ActorName(ActorRole::kProducer, 1);
            return out;
          });
        }));
        break;
      }
      case FaultClass::kEvent:
        gens.push_back(rc::gen::map(rc::gen::inRange(1, b.max_events + 1), [kind](int event) {
          FaultSpec s;
          s.kind = kind;
          s.event = event;
          return s;
        }));
        break;
      case FaultClass::kScheduled:
        gens.push_back(rc::gen::map(rc::gen::tuple(at, duration(kind), target(kind)),
                                    [kind](const std::tuple<int64_t, int64_t, std::string>& t) {
          FaultSpec s;
          s.kind = kind;
          s.at_ms = std::get<0>(t);
          s.duration_ms = std::get<1>(t);
          s.target = std::get<2>(t);
          return s;
        }));
        break;
    }
  }
  return gens;
}

// Draws from one of `gens` (FaultGens' order: `kinds`). Worker crashes
// between protocol steps are what the catalog is about, so when a subset has
// other kinds too, half of all drawn faults are crashes; the other kinds
// share the rest equally. Shrinks towards the first kind.
rc::Gen<FaultSpec> PickWeighted(const std::vector<FaultKind>& kinds, std::vector<rc::Gen<FaultSpec>> gens) {
  const size_t others = gens.size() - 1;
  std::vector<size_t> upto;  // upto[i]: draws below this value pick gens[i]
  size_t total = 0;
  for (FaultKind kind : kinds) {
    total += kind == FaultKind::kCrash ? std::max<size_t>(1, others) : 1;
    upto.push_back(total);
  }
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, total), [gens, upto](size_t draw) {
    size_t i = 0;
    while (draw >= upto[i]) ++i;
    return gens[i];
  });
}

// The list of faults of one case, drawn from the kinds of `mask` (bit i:
// the model's i-th kind).
rc::Gen<std::vector<FaultSpec>> FaultList(const RunConfig& base, const CaseBounds& b,
                                          const SwarmRanges& r, uint32_t mask) {
  std::vector<FaultKind> kinds;
  size_t i = 0;
  for (FaultKind k : base.faults.kinds) {
    if (mask & (1u << i++)) kinds.push_back(k);
  }
  if (kinds.empty()) return rc::gen::just(std::vector<FaultSpec>{});
  // The list's length is bounded by the size given to the container; each
  // fault is drawn at full size.
  return rc::gen::resize(b.max_faults,
                         rc::gen::container<std::vector<FaultSpec>>(rc::gen::resize(
                             rc::kNominalSize, PickWeighted(kinds, FaultGens(base, kinds, b, r)))));
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

std::string CaseSizeText(int64_t events, int64_t workers, int64_t faults, int handlers) {
  return fmt::format("{}, {}, {}", Plural(events, "event"), report::WorkersText(workers, handlers),
                     Plural(faults, "fault"));
}

std::string GeneratedCase::SizeText() const {
  return CaseSizeText(events, workers, static_cast<int64_t>(faults.size()));
}

std::string GeneratedCase::ToString() const {
  std::string out = fmt::format("{}, {}, seed {}", Plural(workers, "worker"),
                                Plural(events, "event"), seed);
  if (effect_ms > 0) out += fmt::format(", effects {} ms", effect_ms);
  if (effect_spread_ms > 0) out += fmt::format(" (each event's up to {} ms shorter)", effect_spread_ms);
  if (produce_every_ms > 0) out += fmt::format(", an event every {} ms", produce_every_ms);
  if (produce_burst > 1) out += fmt::format(" in bursts of {}", produce_burst);
  if (restart_delay_ms > 0) out += fmt::format(", restarts after {} ms", restart_delay_ms);
  if (!faults.empty()) {
    out += ", faults: ";
    for (size_t i = 0; i < faults.size(); ++i) out += (i ? "; " : "") + faults[i].ToString();
  }
  return out;
}

void showValue(const GeneratedCase& c, std::ostream& os) { os << c.ToString(); }

namespace {

// c.ToString() with its faults as ApplyCase folds them into the case (the
// worker each one really hits: "w3" of a 2-worker case is w1).
std::string CaseText(const RunConfig& base, const GeneratedCase& c) {
  GeneratedCase shown = c;
  if (std::optional<std::vector<FaultSpec>> faults = ApplyCase(base, c).fault_schedule) shown.faults = *faults;
  return shown.ToString();
}

}  // namespace

ProtocolDef TimedProtocol(const RunConfig& base, const ScriptTimers& seen) {
  ProtocolDef p = base.protocol;
  if (p.script == nullptr) return p;
  const LoopConfig builtin;
  auto declared = [](int64_t value, int64_t default_value) { return value != default_value ? value : 0; };
  const int64_t idle_ms = std::max(seen.claim_threshold_ms,
                                   declared(p.loop.claim_min_idle_ms, builtin.claim_min_idle_ms));
  const int64_t pass_ms = std::max<int64_t>({1, seen.wait_ms, declared(p.loop.block_ms, builtin.block_ms)});
  p.loop.claim = idle_ms > 0;
  p.loop.claim_min_idle_ms = idle_ms;
  p.loop.claim_every_ms = std::max(pass_ms, declared(p.loop.claim_every_ms, builtin.claim_every_ms));
  p.loop.block_ms = pass_ms;
  p.loop.dead_letter_after = p.loop.claim ? 3 : 0;
  p.dedupe_ttl_ms = std::max(seen.key_expiry_ms, p.dedupe_ttl_ms);
  p.janitor = JanitorConfig{};  // a script's janitor paces itself with sleeps: pass_ms
  return p;
}

std::string SwarmRangesText(const SwarmRanges& r) {
  return fmt::format("fault phase {} ms; effects {}..{} ms (per event), an event every {}..{} ms in bursts of "
                     "1..{}, restarts after {}..{} ms, stalls {}..{} ms, clock jumps {}..{} ms, outages {}..{} ms",
                     r.fault_phase_ms, r.effect_min_ms, r.effect_max_ms, r.produce_every_min_ms,
                     r.produce_every_max_ms, r.produce_burst_max, r.restart_delay_min_ms,
                     r.restart_delay_max_ms, r.stall_min_ms,
                     r.stall_max_ms, r.clock_jump_min_ms, r.clock_jump_max_ms, r.outage_min_ms, r.outage_max_ms);
}

std::pair<int64_t, int64_t> SwarmRanges::RangeOf(SearchScale scale) const {
  switch (scale) {
    case SearchScale::kStall: return {stall_min_ms, stall_max_ms};
    case SearchScale::kClockJump: return {clock_jump_min_ms, clock_jump_max_ms};
    case SearchScale::kOutage: return {outage_min_ms, outage_max_ms};
    case SearchScale::kModelValue: break;
  }
  XACKLY_CHECK(false);  // REQUIRES
  return {0, 0};
}

SwarmRanges SwarmRangesFor(const RunConfig& base, const CaseBounds& b, const ScriptTimers& seen) {
  const ProtocolDef p = TimedProtocol(base, seen);
  const Timing& t = base.timing;
  SwarmRanges r;
  // The protocol's own clock: how long until an idle entry is taken over.
  const int64_t cycle_ms = p.loop.claim ? p.loop.claim_every_ms + p.loop.claim_min_idle_ms : 0;
  const int64_t idle_ms = p.loop.claim ? p.loop.claim_min_idle_ms : p.loop.block_ms;
  // Fault phase: the workload's own, and at least two full claim cycles after
  // a restart, every redelivery up to the dead-letter threshold, a dedupe
  // TTL plus a claim cycle, and a few janitor rounds.
  int64_t phase = FaultPhaseEndMs(t, b.max_events, base.producers);
  if (p.loop.claim) phase = std::max(phase, 2 * cycle_ms + t.restart_delay_ms);
  if (p.loop.dead_letter_after > 0) {
    phase = std::max(phase, (p.loop.dead_letter_after + 1) * std::max(cycle_ms, p.loop.block_ms) +
                                t.restart_delay_ms);
  }
  if (p.dedupe_ttl_ms > 0) phase = std::max(phase, p.dedupe_ttl_ms + cycle_ms + t.restart_delay_ms);
  if (p.janitor.enabled()) {
    int64_t rounds = 3 * p.janitor.every_ms;
    if (p.janitor.delete_idle_consumers) rounds += p.janitor.consumer_idle_ms;
    phase = std::max(phase, rounds + t.restart_delay_ms);
  }
  r.fault_phase_ms = phase;
  // Effects: quick, or about as long as the claim threshold (so a claimer
  // and a slow, healthy worker overlap).
  // Each event's effect is shorter than the case's longest by a drawn
  // spread (Timing::effect_spread_ms), so one case mixes quick and slow
  // events. A protocol script's effects stay below its claim threshold: an
  // effect that always outlasts it makes a script that redelivers slow
  // entries (dapr) redeliver that event forever, a handler slower than the
  // design allows rather than a fault; stalls still straddle the threshold.
  r.effect_min_ms = 1;
  r.effect_max_ms = base.protocol.script != nullptr ? std::max<int64_t>(20, idle_ms - 1)
                                                    : std::max<int64_t>(20, 2 * idle_ms);
  // Production: a burst (1 ms apart) up to spread over the whole phase.
  r.produce_every_min_ms = 1;
  r.produce_every_max_ms = std::max<int64_t>(5, phase / std::max(1, b.max_events));
  r.produce_burst_max = std::max(1, b.max_events);
  // The longest of the protocol's timers: the claim threshold, the TTL of
  // its dedupe records, the consumer-idle limit of its janitor. Restarts,
  // stalls and clock jumps reach past it, so that a worker can be away
  // longer than its dedupe record lives.
  const int64_t longest = std::max({idle_ms, p.dedupe_ttl_ms,
                                    p.janitor.delete_idle_consumers ? p.janitor.consumer_idle_ms : 0});
  r.restart_delay_min_ms = 100;
  r.restart_delay_max_ms = std::max<int64_t>(t.restart_delay_ms, 2 * longest);
  // Stalls: from half the claim threshold to past a full cycle (and past
  // the longest timer).
  r.stall_min_ms = Clamp(idle_ms / 2, 1);
  r.stall_max_ms = Clamp(2 * longest + (p.loop.claim ? p.loop.claim_every_ms : p.loop.block_ms), 2);
  // Clock jumps: past the claim threshold, the TTL, the consumer-idle limit.
  r.clock_jump_min_ms = Clamp(idle_ms / 2, 1);
  r.clock_jump_max_ms = Clamp(2 * longest, 2);
  r.outage_min_ms = 100;
  r.outage_max_ms = std::max<int64_t>(3000, cycle_ms);
  return r;
}

int CaseSize(int index) { return (index % 5) * 25; }

bool IsRecheckCase(uint64_t seed, int index) {
  return Rng(seed).Split("recheck").Split(std::to_string(index)).Below(20) == 0;
}

rc::Gen<GeneratedCase> GenCase(const RunConfig& base, const CaseBounds& b, const ScriptTimers& seen) {
  const SwarmRanges r = SwarmRangesFor(base, b, seen);
  const size_t kinds = base.faults.kinds.size();
  const uint32_t all = kinds == 0 ? 0 : static_cast<uint32_t>((uint64_t{1} << kinds) - 1);
  // A swarm case enables, half of the time, every kind of the model (bugs
  // that need two kinds together, e.g. a poison event and a crash, stay
  // common), else a non-empty subset (shrinks towards the first kind
  // alone); without swarm, every kind.
  rc::Gen<uint32_t> mask =
      b.swarm && kinds > 1
          ? rc::gen::oneOf(rc::gen::just(all),
                           rc::gen::resize(rc::kNominalSize, rc::gen::inRange<uint32_t>(1, all + 1)))
          : rc::gen::just(all);
  rc::Gen<std::vector<FaultSpec>> drawn_faults =
      rc::gen::mapcat(mask, [base, b, r](uint32_t m) { return FaultList(base, b, r, m); });
  // A poison event is the workload's, not the infrastructure's: when the
  // model has it, half of the swarm cases carry one besides their drawn
  // faults, so that retry and dead-letter paths (which only a failing event
  // takes) run in every other case whatever else the case drew. Shrinks to
  // none.
  rc::Gen<std::vector<FaultSpec>> poison =
      b.swarm && base.faults.Has(FaultKind::kPoison)
          ? rc::gen::oneOf(rc::gen::just(std::vector<FaultSpec>{}),
                           rc::gen::map(rc::gen::inRange(1, b.max_events + 1),
                                        [](int event) {
                                          FaultSpec s;
                                          s.kind = FaultKind::kPoison;
                                          s.event = event;
                                          return std::vector<FaultSpec>{s};
                                        }))
          : rc::gen::just(std::vector<FaultSpec>{});
  rc::Gen<std::vector<FaultSpec>> faults = rc::gen::map(
      rc::gen::tuple(drawn_faults, poison),
      [](const std::tuple<std::vector<FaultSpec>, std::vector<FaultSpec>>& t) {
        std::vector<FaultSpec> list = std::get<0>(t);
        list.insert(list.end(), std::get<1>(t).begin(), std::get<1>(t).end());
        return list;
      });
  // Sizes grow with the generation size, so early cases are small.
  auto sized = [fixed = b.fixed](int max) {
    if (fixed) return rc::gen::just(max);
    return rc::gen::withSize([max](int size) {
      return rc::gen::inRange(1, 1 + std::max(1, std::min(max, 1 + size * max / 100)));
    });
  };
  // The environment: each value shrinks to the base config's (0).
  auto env = [swarm = b.swarm](int64_t lo, int64_t hi) {
    if (!swarm) return rc::gen::just<int64_t>(0);
    return rc::gen::oneOf(rc::gen::just<int64_t>(0), Duration(lo, hi));
  };
  // Bursts of 2..produce_burst_max events, or evenly spaced (0).
  auto burst = [swarm = b.swarm](int64_t most) {
    if (!swarm || most < 2) return rc::gen::just<int64_t>(0);
    return rc::gen::oneOf(rc::gen::just<int64_t>(0), rc::gen::inRange<int64_t>(2, most + 1));
  };
  // The spread shrinks to 0 (every effect equally long), not to 1 ms.
  auto timing = rc::gen::tuple(env(r.effect_min_ms, r.effect_max_ms), env(0, r.effect_max_ms),
                               env(r.produce_every_min_ms, r.produce_every_max_ms),
                               burst(r.produce_burst_max),
                               env(r.restart_delay_min_ms, r.restart_delay_max_ms));
  const int64_t phase_ms = b.swarm ? r.fault_phase_ms : 0;
  return rc::gen::map(
      rc::gen::tuple(sized(b.max_workers), sized(b.max_events),
                     rc::gen::inRange<uint32_t>(0, 1u << 20), faults, timing),
      [phase_ms](const std::tuple<int, int, uint32_t, std::vector<FaultSpec>,
                                  std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>& t) {
        GeneratedCase c;
        c.workers = std::get<0>(t);
        c.events = std::get<1>(t);
        c.seed = std::get<2>(t);
        c.faults = std::get<3>(t);
        std::tie(c.effect_ms, c.effect_spread_ms, c.produce_every_ms, c.produce_burst,
                 c.restart_delay_ms) = std::get<4>(t);
        c.fault_phase_ms = phase_ms;
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
  const int slots = config.TotalWorkers();  // the case's workers and every further group's
  for (FaultSpec& f : faults) {
    const ActorIdentity who = DescribeActor(f.actor);
    if (IsPointFault(f.kind) && who.role == ActorRole::kWorker) {
      f.actor = ActorName(ActorRole::kWorker, (who.number - 1) % slots + 1);
    }
    if (f.kind == FaultKind::kPoison) f.event = (f.event - 1) % c.events + 1;
  }
  config.fault_schedule = std::move(faults);
  config.picks.clear();
  if (c.effect_ms > 0) config.timing.effect_ms = c.effect_ms;
  if (c.effect_spread_ms > 0) {
    config.timing.effect_spread_ms = std::min(c.effect_spread_ms, config.timing.effect_ms);
  }
  if (c.produce_every_ms > 0) config.timing.produce_every_ms = c.produce_every_ms;
  if (c.produce_burst > 0) config.timing.produce_burst = c.produce_burst;
  if (c.restart_delay_ms > 0) config.timing.restart_delay_ms = c.restart_delay_ms;
  if (c.fault_phase_ms > 0) config.timing.fault_phase_ms = c.fault_phase_ms;
  return config;
}

bool IsHit(const Expectation& expected, const RunResult& result) {
  return Shows(expected, result.violations);
}

std::vector<std::string> UnreachableSites(const RunConfig& c) {
  std::vector<std::string> out;
  // A script's sites are named by what it does, a C++ handler's by the
  // steps it really takes; the probes of WithVisitedSites find them, and no
  // operation list can say otherwise.
  if (SitesFoundByRunning(c.protocol)) return out;
  for (FaultKind k : c.faults.kinds) {
    const SiteFamily family = InfoOf(k).Sites();
    if (family == SiteFamily::kNone) continue;
    const bool crash_point = family == SiteFamily::kCrashPoint;
    const std::vector<std::string> reachable = crash_point ? CrashPointsOf(c.protocol) : LostSitesOf(c.protocol);
    for (const std::string& site : crash_point ? AllCrashPoints() : AllLostSites()) {
      if (std::find(reachable.begin(), reachable.end(), site) == reachable.end()) out.push_back(SiteKey(k, site));
    }
  }
  return out;
}

Status CompareRerun(const Result<RunResult>& first, const Result<RunResult>& again, const std::string& which) {
  if (!first.ok() && !again.ok()) return Status::Ok();  // a harness limit both times: nothing to compare
  if (!first.ok() || !again.ok()) {
    return Status::Internal(fmt::format(
        "determinism self-check failed: {} ran twice and stopped at the harness limit only on its {} run; "
        "replaying it cannot be trusted",
        which, first.ok() ? "second" : "first"));
  }
  if (first->trace_hash != again->trace_hash) {
    return Status::Internal(fmt::format(
        "determinism self-check failed: {} ran twice with different traces: trace hash {} then {}; replaying it "
        "cannot be trusted",
        which, first->TraceHashHex(), again->TraceHashHex()));
  }
  return Status::Ok();
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

std::string ShardSpec::Text() const { return fmt::format("{}/{}", index + 1, count); }

namespace {

// A decimal number of at most nine digits and nothing else: no sign, no
// space (a CI variable is written by a machine; anything else is a mistake).
std::optional<int> ParseEnvNumber(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// NAME='value' for a message: at most 60 characters of the value, on one line.
std::string EnvShown(const char* name, std::string_view value) {
  std::string shown(value.substr(0, 60));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return fmt::format("{}='{}'{}", name, shown, value.size() > 60 ? "..." : "");
}

}  // namespace

Result<ShardSpec> ShardFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  if (std::optional<std::string> shard = get(kShardEnv)) {
    const size_t slash = shard->find('/');
    std::optional<int> i = ParseEnvNumber(std::string_view(*shard).substr(0, slash));
    std::optional<int> n = slash == std::string::npos ? std::nullopt : ParseEnvNumber(shard->substr(slash + 1));
    if (!i || !n || *i < 1 || *i > *n) {
      return Status::InvalidArgument(
          fmt::format("{}: expected I/N with 1 <= I <= N, e.g. {}=2/3", EnvShown(kShardEnv, *shard), kShardEnv));
    }
    return ShardSpec{*i - 1, *n, fmt::format("{}={}", kShardEnv, *shard)};
  }
  // An index variable and the count beside it, as one CI system sets them.
  struct Pair {
    const char* index_name;
    const char* count_name;
    int first_index;  // 1 (GitLab) or 0 (Kubernetes)
    const char* who;  // where the pair comes from, for a message
  };
  const Pair pairs[] = {
      {kGitLabNodeIndexEnv, kGitLabNodeTotalEnv, 1, "GitLab sets both for a job with `parallel: N`"},
      {kJobCompletionIndexEnv, kShardCountEnv, 0,
       "a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX; Kubernetes does not export the Job's completions, "
       "so set XACKLY_SHARD_COUNT to it in the Job's env"},
  };
  for (const Pair& p : pairs) {
    std::optional<std::string> index = get(p.index_name);
    std::optional<std::string> count = get(p.count_name);
    if (!index && !count) continue;
    if (!index || !count) {
      const std::string set = index ? EnvShown(p.index_name, *index) : EnvShown(p.count_name, *count);
      return Status::InvalidArgument(
          fmt::format("{} is set but {} is not ({})", set, index ? p.count_name : p.index_name, p.who));
    }
    std::optional<int> n = ParseEnvNumber(*count);
    if (!n || *n < 1) {
      return Status::InvalidArgument(
          fmt::format("{}: expected a shard count of at least 1", EnvShown(p.count_name, *count)));
    }
    std::optional<int> i = ParseEnvNumber(*index);
    if (!i || *i < p.first_index || *i > *n - 1 + p.first_index) {
      return Status::InvalidArgument(fmt::format("{}: expected {}..{}, a {}-based index of {}={} shards",
                                                 EnvShown(p.index_name, *index), p.first_index,
                                                 *n - 1 + p.first_index, p.first_index, p.count_name, *n));
    }
    return ShardSpec{*i - p.first_index, *n,
                     fmt::format("{}={}, {}={}", p.index_name, *index, p.count_name, *count)};
  }
  return Status::InvalidArgument(fmt::format(
      "no shard in the environment: set {}=I/N, or run as a GitLab job with `parallel: N` ({}, {}) or as a "
      "Kubernetes Indexed Job ({} and {}, the Job's completions)",
      kShardEnv, kGitLabNodeIndexEnv, kGitLabNodeTotalEnv, kJobCompletionIndexEnv, kShardCountEnv));
}

std::vector<int> ShardCaseIndexes(const CheckOptions& options) {
  std::vector<int> indexes;
  for (int i = options.shard_index; i < options.cases; i += options.shard_count) indexes.push_back(i);
  return indexes;
}

namespace {

// What a probe run with a poison event shows the protocol doing with an
// effect that keeps failing. A protocol with a path only poison takes (it
// dead-letters the event, or gives up on it: acks or deletes it without an
// effect) gets poison in its default model; one that retries forever does
// not (a poison event would only stay pending, `stuck`, which is what a
// protocol without a dead-letter path is built to do), and is told so.
struct PoisonPath {
  bool add = false;  // the protocol has a path only poison takes
  std::string what;  // what it does, for the check's notes; "" if nothing
};

PoisonPath WhatPoisonReaches(const RunResult& r) {
  PoisonPath out;
  for (const auto& [event, history] : r.poison_histories) {
    int failed = 0;
    for (const HistoryItem& item : history) {
      if (item.kind == HistoryKind::kEffect) break;  // a poison effect that ran: not poison after all
      if (item.kind == HistoryKind::kDeadLettered) {
        return {true, "dead-letters an event whose effect keeps failing"};
      }
      if (item.kind == HistoryKind::kEffectFailed) ++failed;
      const bool gives_up = item.kind == HistoryKind::kAcked || item.kind == HistoryKind::kPayloadDeleted ||
                            item.kind == HistoryKind::kConsumerDeleted;
      if (failed > 0 && gives_up) {
        return {true, fmt::format("gives up on an event whose effect keeps failing ({} after {} failed attempt{} at {})",
                                  HistoryKindName(item.kind), failed, failed == 1 ? "" : "s", event)};
      }
    }
    if (failed >= 2) {
      out.what = fmt::format("retries a failing effect without giving up ({} attempts at {}, still pending)", failed,
                             event);
    }
  }
  return out;
}

}  // namespace

Result<ProbedConfig> WithVisitedSites(const RunConfig& given, CasePool& pool, uint64_t seed) {
  const FaultModel& m = given.faults;
  ProbedConfig out{given, {}};
  if (!SitesFoundByRunning(given.protocol)) return out;
  RunConfig quiet = given;  // fault-free
  quiet.fault_schedule = std::vector<FaultSpec>{};
  quiet.probe = true;       // lingers after settling: periodic code shows too
  RunConfig rated = quiet;  // the model's rates: recovery paths too
  rated.fault_schedule.reset();
  rated.seed = seed;
  std::vector<RunConfig> runs = {quiet, rated};
  constexpr size_t kPoisonProbe = 2;  // runs' index of the poison probe, when it runs
  // A default model leaves poison out; a script that dead-letters or
  // retries a failing effect has a path only poison takes. A third probe
  // with one poison event finds out whether it has one.
  const bool may_add_poison = m.kinds_are_default && !m.kinds.empty() && !m.Has(FaultKind::kPoison);
  if (may_add_poison) {
    RunConfig poisoned = quiet;
    FaultSpec poison;
    poison.kind = FaultKind::kPoison;
    poison.event = 1;
    poisoned.fault_schedule = std::vector<FaultSpec>{poison};
    runs.push_back(poisoned);
  }
  std::vector<Result<RunResult>> probes = pool.RunAll(runs);
  const char* const kProbeNames[] = {"fault-free", "drawn from the model's rates", "with poison event 1"};
  PoisonPath poison;
  std::set<std::string> crash, lost;
  int judged = 0;
  bool business = false;  // a probe sent a request to the SQL store or the external service
  for (size_t i = 0; i < probes.size(); ++i) {
    const Result<RunResult>& r = probes[i];
    const std::string which = fmt::format("the probe run {} (seed {})", kProbeNames[i], i == 0 ? given.seed : seed);
    if (!r.ok() && r.status().code() == Status::Code::kHarnessLimit) {
      // The other probe's sites still count; the search is not stopped.
      out.notes.push_back(which + " stopped at the harness limit, so only the sites of the other probe count: " +
                          r.status().message());
      continue;
    }
    if (!r.ok()) return r.status().WithContext(which);
    ++judged;
    const ScriptTimers& used = r->script_timers;
    out.timers.claim_threshold_ms = std::max(out.timers.claim_threshold_ms, used.claim_threshold_ms);
    out.timers.key_expiry_ms = std::max(out.timers.key_expiry_ms, used.key_expiry_ms);
    out.timers.wait_ms = std::max(out.timers.wait_ms, used.wait_ms);
    for (const std::string& note : r->notes) {
      if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) out.notes.push_back(note);
    }
    for (const std::string& key : r->coverage.reachable) {
      const std::optional<ParsedSiteKey> site = ParseSiteKey(key);
      if (!site) continue;
      (InfoOf(site->kind).Sites() == SiteFamily::kCrashPoint ? crash : lost).insert(site->site);
    }
    for (const auto& [site, sent] : r->request_senders) {
      RequestSenders& senders = out.config.faults.request_senders[site];
      senders.producer = senders.producer || sent.producer;
      senders.worker = senders.worker || sent.worker;
    }
    if (i == kPoisonProbe) poison = WhatPoisonReaches(*r);
    business = business || r->business_requests > 0;
  }
  if (judged == 0) {
    return Status::HarnessLimit(
        "both probe runs that find the script's fault sites stopped at the step guard (timing.max_steps), "
        "so no case can be drawn: " + out.notes.back());
  }
  out.visited_crash_points = crash;
  out.visited_requests = lost;
  FaultModel& sites = out.config.faults;
  if (poison.add) {
    sites.kinds.insert(FaultKind::kPoison);
    out.notes.push_back("poison is in this check's model (the default model adds it): the protocol " + poison.what +
                        " (probe run with poison event 1); `kinds` in [faults] sets the model instead");
  } else if (!poison.what.empty()) {
    out.notes.push_back("poison is not in this check's model: the protocol " + poison.what +
                        " (probe run with poison event 1), so a poison event would only stay pending (stuck); "
                        "add \"poison\" to `kinds` in [faults] to judge that too");
  }

  // A lagging replica shows only in a WAIT's answer: without a WAIT the
  // kind has nowhere to fire (a failover's lag still drops writes).
  if (sites.Has(FaultKind::kReplicaLag) && !lost.contains("WAIT")) sites.kinds.erase(FaultKind::kReplicaLag);

  // An outage of a store nothing uses would fire and change nothing: a
  // green with it counted would claim evidence it does not have.
  if (m.kinds_are_default && sites.Has(FaultKind::kStoreOutage) && !business) {
    sites.kinds.erase(FaultKind::kStoreOutage);
    out.notes.push_back(
        "store-outage is not in this check's model: no probe run sent a request to the SQL store (w:sql) or the "
        "external service (w:effect, XACKLY.EFFECT), so an outage would change nothing; `kinds` in [faults] sets the "
        "model instead");
  }
  if (m.crash_points.empty() && !crash.empty()) sites.crash_points.assign(crash.begin(), crash.end());
  if (m.lost_sites.empty()) {
    // Lost requests and replies at every visited request that changes
    // something (a lost read is a reconnect, which crashes cover already):
    // whatever commands the consumer uses, not only the default sites.
    for (const std::string& site : lost) {
      if (SiteChangesState(site)) sites.lost_sites.push_back(site);
    }
    if (sites.lost_sites.empty()) {
      sites.kinds.erase(FaultKind::kLostRequest);
      sites.kinds.erase(FaultKind::kLostReply);
      sites.kinds.erase(FaultKind::kErrorReply);
    }
  }
  return out;
}

namespace {

// The model a coverage case draws its aimed faults from: `base`'s,
// narrowed to the kinds and sites of `gaps` (FaultCoverage::Gaps).
RunConfig AimedAt(const RunConfig& base, const std::vector<std::string>& gaps) {
  RunConfig aimed = base;
  FaultModel& m = aimed.faults;
  m.kinds.clear();
  std::set<std::string> crash_points, lost_sites;
  for (const std::string& gap : gaps) {
    const std::optional<ParsedSiteKey> key = ParseSiteKey(gap);
    if (!key) continue;
    m.kinds.insert(key->kind);
    switch (InfoOf(key->kind).Sites()) {
      case SiteFamily::kCrashPoint: crash_points.insert(key->site); break;
      case SiteFamily::kRequest: lost_sites.insert(key->site); break;
      case SiteFamily::kNone: break;
    }
  }
  if (!crash_points.empty()) m.crash_points.assign(crash_points.begin(), crash_points.end());
  if (!lost_sites.empty()) m.lost_sites.assign(lost_sites.begin(), lost_sites.end());
  return aimed;
}

// Coverage cases: faults drawn only at `gaps`, or (`opening`) an ordinary
// case of `base` with those aimed faults added. Some sites are reached
// only on a path another fault opens (an XCLAIM after a crash left an
// entry idle, a dead-letter XADD after a poison event), so the search
// alternates between the two. Their faults are explicit specs, so the case
// runs on `base` itself (ApplyCase).
rc::Gen<GeneratedCase> CoverageCases(const RunConfig& base, const std::vector<std::string>& gaps,
                                     const CaseBounds& bounds, const ScriptTimers& timers, bool opening) {
  rc::Gen<GeneratedCase> aimed = GenCase(AimedAt(base, gaps), bounds, timers);
  if (!opening) return aimed;
  return rc::gen::map(rc::gen::tuple(GenCase(base, bounds, timers), aimed),
                      [](const std::tuple<GeneratedCase, GeneratedCase>& t) {
                        GeneratedCase c = std::get<0>(t);
                        const std::vector<FaultSpec>& more = std::get<1>(t).faults;
                        c.faults.insert(c.faults.end(), more.begin(), more.end());
                        return c;
                      });
}

// The sites `given`'s model names (a protocol whose sites are found by
// running it) that neither probe nor any case visited.
std::vector<CheckOutcome::UnvisitedSite> UnvisitedNamedSites(const RunConfig& given, const ProbedConfig& probed,
                                                             const FaultCoverage& cases) {
  std::vector<CheckOutcome::UnvisitedSite> out;
  if (!SitesFoundByRunning(given.protocol)) return out;  // the scenario file checked them against its operations
  std::set<std::string> crash = probed.visited_crash_points, lost = probed.visited_requests;
  for (const std::string& key : cases.reachable) {
    if (std::optional<ParsedSiteKey> site = ParseSiteKey(key)) {
      (InfoOf(site->kind).Sites() == SiteFamily::kCrashPoint ? crash : lost).insert(site->site);
    }
  }
  auto check = [&](const char* field, const std::vector<std::string>& named, const std::set<std::string>& visited,
                   SiteFamily family) {
    // Without a kind of the family no run records its sites, and the list
    // is moot (`kinds = []` with a crash_points list).
    const bool used = std::any_of(given.faults.kinds.begin(), given.faults.kinds.end(),
                                  [&](FaultKind k) { return InfoOf(k).Sites() == family; });
    if (!used) return;
    const std::vector<std::string> candidates(visited.begin(), visited.end());
    for (const std::string& site : named) {
      if (visited.count(site) == 0) out.push_back({field, site, NearestSites(site, candidates), candidates});
    }
  };
  check("faults.crash_points", given.faults.crash_points, crash, SiteFamily::kCrashPoint);
  check("faults.lost_sites", given.faults.lost_sites, lost, SiteFamily::kRequest);
  return out;
}

// One check's search over one pool: batches of generated cases with the
// determinism self-check, the coverage rule's aimed cases, and the
// shrinker. It fills `out`.
class Search {
 public:
  Search(const RunConfig& base, const ScriptTimers& timers, CasePool& pool, const CheckOptions& options,
         CheckOutcome* out)
      : base_(base), timers_(timers), pool_(pool), options_(options), out_(*out),
        batch_size_(static_cast<size_t>(pool.threads())) {}

  // Cases `indexes` of `gen`, in index order, a batch of the pool's
  // threads at a time, until one shows what the check looks for: results
  // are walked in index order and everything after the first hit is
  // discarded, so the outcome is the one a single thread would find. Fails
  // on a harness error other than a harness limit (naming the case) and on
  // a failed determinism self-check.
  Status Run(const rc::Gen<GeneratedCase>& gen, const std::vector<int>& indexes);
  // The coverage rule: while the search found nothing and sites of the
  // model that some case could reach have not fired, cases aimed at them,
  // up to the cap.
  Status Cover();
  // Shrinks the hit (else the first other violation) and reruns the
  // minimal case with its trace kept.
  Status ShrinkAndRerun();

 private:
  // The determinism self-check of one batch: a rerun on (possibly) another
  // server must give the same trace, byte for byte.
  // Where two runs of a case that gave two traces first differ, for the
  // self-check's message: `pair_difference` (the two runs' own, when they
  // kept their traces), then two more runs of the case, keeping theirs.
  std::string FirstDifference(RunConfig config, const std::string& pair_difference);
  Status SelfCheck(const std::vector<Result<RunResult>>& results, size_t searched, const std::vector<size_t>& rechecked,
                   const std::vector<int>& batch, const std::vector<rc::Shrinkable<GeneratedCase>>& cases);
  // Greedy shrinking over RapidCheck's shrink tree: the first smaller case
  // (in the tree's order) that still `shows` becomes the current one. A
  // batch of candidates runs in parallel; only those up to the first that
  // shows count.
  Result<GeneratedCase> Shrink(rc::Shrinkable<GeneratedCase> current,
                               const std::function<bool(const RunResult&)>& shows);
  bool IsOther(const RunResult& r) const { return !r.violations.empty() && !IsHit(base_.expected, r); }
  void Report() {
    if (options_.on_progress) options_.on_progress(progress_);
  }

  const RunConfig& base_;
  const ScriptTimers& timers_;
  CasePool& pool_;
  const CheckOptions& options_;
  CheckOutcome& out_;
  const size_t batch_size_;
  CheckProgress progress_;
  std::optional<rc::Shrinkable<GeneratedCase>> hit_;
  // The first case with a violation that is not what the check looks for
  // (a broken protocol's other violation, or one outside an expectation's
  // alternatives): shrunk and written when no hit is found, so no counted
  // violation goes without a replay file.
  std::optional<rc::Shrinkable<GeneratedCase>> other_;
};

Status Search::Run(const rc::Gen<GeneratedCase>& gen, const std::vector<int>& indexes) {
  for (size_t b = 0; b < indexes.size() && !hit_; b += batch_size_) {
    const std::vector<int> batch(indexes.begin() + static_cast<std::ptrdiff_t>(b),
                                 indexes.begin() + static_cast<std::ptrdiff_t>(std::min(indexes.size(), b + batch_size_)));
    std::vector<rc::Shrinkable<GeneratedCase>> cases;
    std::vector<RunConfig> configs;
    std::vector<size_t> rechecked;  // positions in `configs` of cases to run twice
    for (int i : batch) {
      cases.push_back(NthCase(gen, options_.seed, i, CaseSize(i)));
      configs.push_back(ApplyCase(base_, cases.back().value()));
      if (IsRecheckCase(options_.seed, i)) {
        rechecked.push_back(configs.size() - 1);
        // A real consumer's run costs processes, not trace lines: its pair
        // keeps them, so a difference that comes and goes is still shown.
        if (!configs.back().protocol.consumer_command.empty()) configs.back().keep_trace = true;
      }
    }
    const size_t searched = configs.size();
    for (size_t k : rechecked) configs.push_back(configs[k]);
    std::vector<Result<RunResult>> results = pool_.RunAll(configs);
    for (size_t k = 0; k < results.size(); ++k) {
      if (results[k].ok()) continue;
      const size_t at = k < searched ? k : rechecked[k - searched];
      // A harness limit leaves the case unjudged (below; the self-check
      // sees whether its rerun stopped too).
      if (results[k].status().code() == Status::Code::kHarnessLimit) continue;
      // Any other harness failure names its case, so that it can be rerun.
      if (options_.on_harness_failure) options_.on_harness_failure(configs[k], batch[at]);
      return results[k].status().WithContext(fmt::format("case {} of seed {} ({}{})", batch[at], options_.seed,
                                                         CaseText(base_, cases[at].value()),
                                                         k < searched ? "" : ", its determinism rerun"));
    }
    if (Status s = SelfCheck(results, searched, rechecked, batch, cases); !s.ok()) return s;
    for (size_t k = 0; k < searched; ++k) {
      if (!results[k].ok()) {  // a harness limit: not judged, and the search goes on
        if (!out_.unjudged_index) {
          out_.unjudged_index = batch[k];
          out_.unjudged_config = configs[k];
          out_.unjudged_why = results[k].status().message();
        }
        ++out_.cases_unjudged;
        continue;
      }
      const RunResult& r = *results[k];
      ++out_.cases_run;
      out_.observed_classes[r.observed]++;
      if (!r.violations.empty()) ++out_.cases_with_violations;
      out_.coverage.Add(r.coverage);
      if (IsHit(base_.expected, r)) {
        ++progress_.hits;
        out_.hit_index = batch[k];
        hit_ = cases[k];
        break;
      }
      if (IsOther(r)) {
        out_.other_violations[r.observed]++;
        if (!other_) {
          out_.other_index = batch[k];
          other_ = cases[k];
        }
      }
    }
    progress_.cases_done = out_.cases_run + out_.cases_unjudged;
    progress_.unjudged = out_.cases_unjudged;
    Report();
  }
  return Status::Ok();
}

Status Search::SelfCheck(const std::vector<Result<RunResult>>& results, size_t searched,
                         const std::vector<size_t>& rechecked, const std::vector<int>& batch,
                         const std::vector<rc::Shrinkable<GeneratedCase>>& cases) {
  for (size_t n = 0; n < rechecked.size(); ++n) {
    const size_t k = rechecked[n];
    const std::string which =
        fmt::format("case {} of seed {} ({})", batch[k], options_.seed, CaseText(base_, cases[k].value()));
    if (Status s = CompareRerun(results[k], results[searched + n], which); !s.ok()) {
      if (!results[k].ok() || !results[searched + n].ok()) return s;
      std::string where = FirstTraceDifference(results[k]->trace, results[searched + n]->trace);
      if (!where.empty()) where = "the two runs " + where;
      return Status::Internal(s.message() + "; " + FirstDifference(ApplyCase(base_, cases[k].value()), where));
    }
    if (results[k].ok()) ++out_.determinism_reruns;
  }
  return Status::Ok();
}

std::string Search::FirstDifference(RunConfig config, const std::string& pair_difference) {
  // Searches keep no trace lines: run the case twice more, keeping them.
  config.keep_trace = true;
  std::vector<Result<RunResult>> twice = pool_.RunAll({config, config});
  std::string out = pair_difference.empty() ? "" : pair_difference + "; ";
  if (!twice[0].ok() || !twice[1].ok()) {
    out += "two more runs keeping their traces did not both finish";
  } else {
    const std::string where = FirstTraceDifference(twice[0]->trace, twice[1]->trace);
    out += where.empty() ? "two more runs keeping their traces agreed: the difference comes and goes"
                         : "two more runs " + where;
  }
  if (!config.protocol.consumer_command.empty()) out += "; " + NondeterministicConsumerHint();
  return out;
}

// Coverage cases run in batches of this many, whatever -j is.
constexpr size_t kCoverageBatchCases = 8;

Status Search::Cover() {
  CheckOptions capped = options_;
  capped.cases = options_.coverage_cap > 0 ? options_.coverage_cap : kDefaultCoverageCapFactor * options_.cases;
  std::vector<int> indexes = ShardCaseIndexes(capped);  // this shard's share, past `cases`
  std::erase_if(indexes, [&](int i) { return i < options_.cases; });
  const int before = out_.cases_run + out_.cases_unjudged;
  int batch = 0;
  for (size_t next = 0; next < indexes.size() && !hit_;) {
    const std::vector<std::string> gaps = out_.coverage.Gaps();
    if (gaps.empty()) break;
    progress_.covering = true;
    progress_.gaps = static_cast<int>(gaps.size());
    // Aimed anew for every batch: each one's cases draw only where the
    // model has not fired yet.
    const bool opening = (batch++ % 2) == 1;
    const rc::Gen<GeneratedCase> gen = CoverageCases(base_, gaps, options_.bounds, timers_, opening);
    // A batch's size must not depend on the pool's threads: the gaps are
    // read anew between batches, so the cases drawn would (-j changes
    // nothing a check finds).
    const size_t end = std::min(indexes.size(), next + kCoverageBatchCases);
    if (Status s = Run(gen, std::vector<int>(indexes.begin() + static_cast<std::ptrdiff_t>(next),
                                             indexes.begin() + static_cast<std::ptrdiff_t>(end)));
        !s.ok()) {
      return s;
    }
    next = end;
  }
  out_.cases_for_coverage = out_.cases_run + out_.cases_unjudged - before;
  progress_.covering = false;
  return Status::Ok();
}

Result<GeneratedCase> Search::Shrink(rc::Shrinkable<GeneratedCase> current,
                                     const std::function<bool(const RunResult&)>& shows) {
  progress_.shrinking = true;
  for (bool adopted = true; adopted && out_.shrink_runs < options_.max_shrink_runs;) {
    adopted = false;
    rc::Seq<rc::Shrinkable<GeneratedCase>> shrinks = current.shrinks();
    bool exhausted = false;
    while (!adopted && !exhausted && out_.shrink_runs < options_.max_shrink_runs) {
      size_t room = std::min(batch_size_, static_cast<size_t>(options_.max_shrink_runs - out_.shrink_runs));
      std::vector<rc::Shrinkable<GeneratedCase>> candidates;
      std::vector<RunConfig> configs;
      while (candidates.size() < room) {
        rc::Maybe<rc::Shrinkable<GeneratedCase>> next = shrinks.next();
        if (!next) {
          exhausted = true;
          break;
        }
        configs.push_back(ApplyCase(base_, next->value()));
        candidates.push_back(std::move(*next));
      }
      std::vector<Result<RunResult>> results = pool_.RunAll(configs);
      for (size_t k = 0; k < results.size(); ++k) {
        if (!results[k].ok() && results[k].status().code() == Status::Code::kHarnessLimit) {
          ++out_.shrink_runs;  // a smaller case the harness could not judge does not show
          continue;
        }
        if (!results[k].ok()) {
          if (options_.on_harness_failure) options_.on_harness_failure(configs[k], -1);
          return results[k].status().WithContext(
              fmt::format("while shrinking, the smaller case ({})", CaseText(base_, candidates[k].value())));
        }
        ++out_.shrink_runs;
        if (shows(*results[k])) {
          current = candidates[k];
          ++out_.shrink_steps;
          adopted = true;
          break;
        }
      }
      progress_.shrink_runs = out_.shrink_runs;
      progress_.shrink_steps = out_.shrink_steps;
      Report();
    }
  }
  // At the bound with a pass not finished (or not started): smaller cases
  // may be left untried.
  out_.shrink_cut = out_.shrink_runs >= options_.max_shrink_runs;
  return current.value();
}

Status Search::ShrinkAndRerun() {
  if (!hit_ && !other_) {
    // No violation at all.
    out_.observed = "ok";
    out_.matched = Matches(base_.expected, {});
    return Status::Ok();
  }
  Result<GeneratedCase> minimal =
      hit_ ? Shrink(*hit_, [&](const RunResult& r) { return IsHit(base_.expected, r); })
           : Shrink(*other_, [&](const RunResult& r) { return IsOther(r); });
  if (!minimal.ok()) return minimal.status();
  out_.counterexample_index = hit_ ? out_.hit_index : out_.other_index;
  out_.minimal = *minimal;
  out_.minimal_config = ApplyCase(base_, out_.minimal);
  out_.minimal_config.keep_trace = true;
  std::vector<Result<RunResult>> final_run = pool_.RunAll({out_.minimal_config});
  if (!final_run[0].ok()) {
    if (options_.on_harness_failure) options_.on_harness_failure(out_.minimal_config, *out_.counterexample_index);
    return final_run[0].status();
  }
  out_.minimal_result = std::move(final_run[0]).value();
  out_.observed = out_.minimal_result.observed;
  // A minimal case shows exactly the expected classes; one whose shrinking
  // was cut short may carry more (the faults not yet shrunk away), and
  // matches when it shows what is expected.
  out_.matched = hit_ && !base_.expected.IsOk() &&
                 (out_.shrink_cut ? IsHit(base_.expected, out_.minimal_result)
                                  : Matches(base_.expected, out_.minimal_result.violations));
  return Status::Ok();
}

}  // namespace

Result<CheckOutcome> RunCheck(const RunConfig& given, CasePool& pool, const CheckOptions& options) {
  auto started = std::chrono::steady_clock::now();
  Result<ProbedConfig> probed = WithVisitedSites(given, pool, options.seed);
  if (!probed.ok()) return probed.status();
  const RunConfig& base = probed->config;
  if (options.on_ranges) options.on_ranges(SwarmRangesFor(base, options.bounds, probed->timers), base.faults, probed->notes);
  CheckOutcome out;
  Search search(base, probed->timers, pool, options, &out);
  if (Status s = search.Run(GenCase(base, options.bounds, probed->timers), ShardCaseIndexes(options)); !s.ok()) {
    return s;
  }
  if (Status s = search.Cover(); !s.ok()) return s;
  if (!out.hit_index) out.coverage_gaps = out.coverage.Gaps();
  out.unvisited_sites = UnvisitedNamedSites(given, *probed, out.coverage);
  out.fault_model = base.faults.ToString();
  if (Status s = search.ShrinkAndRerun(); !s.ok()) return s;
  if (out.Undecided()) out.matched = false;
  out.seconds = Seconds(started);
  return out;
}

}  // namespace xackly
