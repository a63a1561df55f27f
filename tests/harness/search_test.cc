// Issue 15: a search users can trust at its defaults. Swarm ranges come from
// the protocol's own timers; what a check finds does not depend on --cases;
// a scenario's seed and workload are used; bad `expect` text and the step
// guard are reported as what they are (exit 2, exit 3), never as verdicts.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/check_rc.h"
#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/scenario_files.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

RunConfig Base(const std::string& protocol) { return RunConfig::For(*FindProtocol(protocol)); }

TEST(SearchTest, SwarmRangesReachTheProtocolsOwnTimers) {
  // eager-claim claims entries idle 50 ms every 100 ms.
  SwarmRanges eager = SwarmRangesFor(Base("eager-claim"), CaseBounds{});
  EXPECT_GE(eager.fault_phase_ms, 2 * (100 + 50));
  EXPECT_GE(eager.effect_max_ms, 50) << "effects must be able to outlast the claim threshold";
  EXPECT_LE(eager.stall_min_ms, 50);
  EXPECT_GE(eager.stall_max_ms, 50);
  // txn-dedupe: 30 s claim window every 5 s; two cycles fit in the phase.
  SwarmRanges txn = SwarmRangesFor(Base("txn-dedupe"), CaseBounds{});
  EXPECT_GE(txn.fault_phase_ms, 2 * (30000 + 5000));
  EXPECT_GE(txn.clock_jump_max_ms, 30000);
  EXPECT_GE(txn.produce_every_max_ms * 8, txn.fault_phase_ms / 2) << "events can spread over the phase";
  // dlq-after-3: the third redelivery happens with faults on.
  SwarmRanges dlq = SwarmRangesFor(Base("dlq-after-3"), CaseBounds{});
  EXPECT_GE(dlq.fault_phase_ms, 3 * (30000 + 5000));
  // short-ttl-dedupe: the 10 s TTL expires inside the phase, and a claim follows.
  SwarmRanges ttl = SwarmRangesFor(Base("short-ttl-dedupe"), CaseBounds{});
  EXPECT_GE(ttl.fault_phase_ms, 10000 + 35000);
  // A slow janitor: three of its rounds, and the idle time after which it
  // deletes a consumer, pass with faults on (a worker can die before each).
  RunConfig janitor = Base("delconsumer-cleanup");
  ASSERT_TRUE(janitor.protocol.janitor.delete_idle_consumers);
  janitor.protocol.janitor.every_ms = 200000;
  SwarmRanges slow = SwarmRangesFor(janitor, CaseBounds{});
  EXPECT_GE(slow.fault_phase_ms,
            3 * 200000 + janitor.protocol.janitor.consumer_idle_ms + janitor.timing.restart_delay_ms);
}

// The shortest timer a protocol can have: a 1 ms block and no claim. Half
// of it rounds down to 0, yet every stall and clock jump a swarm draws is
// at least 1 ms: a 0 ms one is refused as a spec (ValidateFaultSpec), so a
// case that drew it could not run at all.
TEST(SearchTest, EveryDrawnFaultIsValidEvenForAOneMillisecondTimer) {
  RunConfig base = Base("no-claim");
  ASSERT_FALSE(base.protocol.loop.claim);
  base.protocol.loop.block_ms = 1;
  base.protocol.dedupe_ttl_ms = 0;
  base.faults.kinds = {FaultKind::kStall, FaultKind::kClockJump, FaultKind::kStoreOutage};
  const SwarmRanges ranges = SwarmRangesFor(base, CaseBounds{});
  EXPECT_EQ(ranges.stall_min_ms, 1);
  EXPECT_EQ(ranges.clock_jump_min_ms, 1);
  EXPECT_EQ(ranges.clock_jump_max_ms, 2);
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  int drawn = 0, shortest_jump = std::numeric_limits<int>::max();
  for (int i = 0; i < 400; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      ++drawn;
      EXPECT_TRUE(ValidateFaultSpec(f).ok()) << f.ToString() << ": " << ValidateFaultSpec(f).ToString();
      if (f.kind == FaultKind::kClockJump) shortest_jump = std::min<int>(shortest_jump, static_cast<int>(f.duration_ms));
    }
  }
  EXPECT_GT(drawn, 200);
  EXPECT_EQ(shortest_jump, 1) << "the range's lower end is drawn too";
}

TEST(SearchTest, SwarmCasesDrawTimingButKeepTheProtocolsSettings) {
  RunConfig base = Base("eager-claim");
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  const SwarmRanges ranges = SwarmRangesFor(base, CaseBounds{});
  std::set<int64_t> effects;
  int spread_cases = 0, burst_cases = 0;
  for (int i = 0; i < 40; ++i) {
    GeneratedCase c = NthCase(gen, 1, i, CaseSize(i)).value();
    RunConfig config = ApplyCase(base, c);
    EXPECT_EQ(config.protocol.loop, base.protocol.loop) << "the protocol's own settings never change";
    EXPECT_EQ(config.timing.fault_phase_ms, ranges.fault_phase_ms);
    effects.insert(config.timing.effect_ms);
    // Per-event durations: a spread of at most the case's longest effect.
    EXPECT_GE(config.timing.effect_spread_ms, 0);
    EXPECT_LE(config.timing.effect_spread_ms, config.timing.effect_ms) << c.ToString();
    spread_cases += config.timing.effect_spread_ms > 0 ? 1 : 0;
    EXPECT_GE(config.timing.produce_burst, 1);
    EXPECT_LE(config.timing.produce_burst, ranges.produce_burst_max) << c.ToString();
    burst_cases += config.timing.produce_burst > 1 ? 1 : 0;
    EXPECT_TRUE(ValidateRunConfig(config).ok()) << c.ToString();
  }
  EXPECT_GT(effects.size(), 3u) << "effect durations vary between cases";
  EXPECT_GE(spread_cases, 5) << "and between the events of a case";
  EXPECT_GE(burst_cases, 5) << "events come in bursts in some cases";
  EXPECT_LT(burst_cases, 40) << "and evenly in others";
}

// A swarm case produces evenly or in bursts of 2 up to produce_burst_max
// events (--max-events): the largest burst is drawn, and nothing larger.
TEST(SearchTest, BurstsAreDrawnUpToTheirLimitAndNeverPastIt) {
  RunConfig base = Base("txn-dedupe");
  CaseBounds bounds;
  bounds.max_events = 3;
  const SwarmRanges ranges = SwarmRangesFor(base, bounds);
  ASSERT_EQ(ranges.produce_burst_max, 3);
  rc::Gen<GeneratedCase> gen = GenCase(base, bounds);
  std::set<int64_t> bursts;
  for (int i = 0; i < 200; ++i) bursts.insert(NthCase(gen, 1, i, CaseSize(i)).value().produce_burst);
  EXPECT_EQ(bursts, (std::set<int64_t>{0, 2, 3})) << "0: evenly";
}

// The smallest limit that has a burst: at --max-events 2 a swarm case comes
// evenly or in a burst of 2.
TEST(SearchTest, TwoEventsAtMostCanComeInABurstOfTwo) {
  RunConfig base = Base("txn-dedupe");
  CaseBounds bounds;
  bounds.max_events = 2;
  ASSERT_EQ(SwarmRangesFor(base, bounds).produce_burst_max, 2);
  rc::Gen<GeneratedCase> gen = GenCase(base, bounds);
  std::set<int64_t> bursts;
  for (int i = 0; i < 100; ++i) bursts.insert(NthCase(gen, 1, i, CaseSize(i)).value().produce_burst);
  EXPECT_EQ(bursts, (std::set<int64_t>{0, 2}));
}

// In a swarm, a drawn failover promotes a replica that misses the model's
// writes (lag:1) or 0 to 3 of them: one fully caught up (lag:0) is drawn,
// and so is the largest lag, and nothing past it.
TEST(SearchTest, AFailoversPromotedReplicaMissesNoneToThreeWrites) {
  RunConfig base = Base("txn-dedupe");
  base.replicas = 1;
  base.faults.kinds = {FaultKind::kFailover};
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  std::set<std::string> targets;
  for (int i = 0; i < 300; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      if (f.kind == FaultKind::kFailover) targets.insert(f.target);
    }
  }
  EXPECT_EQ(targets, (std::set<std::string>{"lag:0", "lag:1", "lag:2", "lag:3"}));
}

// --no-swarm runs every case at the base config's timing: events evenly
// spaced, never in bursts. A swarm case of at most one event (--max-events
// 1) has no burst to draw, and drawing one is no error.
TEST(SearchTest, NoBurstIsDrawnWithoutSwarmOrForASingleEvent) {
  RunConfig base = Base("txn-dedupe");
  CaseBounds no_swarm;
  no_swarm.swarm = false;
  no_swarm.max_events = 3;
  CaseBounds one_event;
  one_event.max_events = 1;
  ASSERT_EQ(SwarmRangesFor(base, one_event).produce_burst_max, 1);
  for (const CaseBounds& bounds : {no_swarm, one_event}) {
    rc::Gen<GeneratedCase> gen = GenCase(base, bounds);
    for (int i = 0; i < 100; ++i) {
      EXPECT_EQ(NthCase(gen, 1, i, CaseSize(i)).value().produce_burst, 0)
          << (bounds.swarm ? "--max-events 1" : "--no-swarm") << ", case " << i;
    }
  }
}

// Which visit of its site a drawn point fault takes (check.cc): the first
// in half of the draws, a later one (the 2nd or 3rd) in a sixth, and in a
// third the first visit from a time in the fault phase on, which reaches
// recovery paths however many ordinary visits came first.
TEST(SearchTest, APointFaultTakesItsSitesFirstVisitHalfTheTimeAndATimedOneAThird) {
  RunConfig base = Base("txn-dedupe");
  base.faults.kinds = {FaultKind::kCrash};
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  int points = 0, first = 0, later = 0, timed = 0;
  std::set<int> later_visits;
  for (int i = 0; i < 400; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      if (f.kind != FaultKind::kCrash) continue;
      ++points;
      (f.at_ms > 0 ? timed : f.nth > 1 ? later : first) += 1;
      if (f.at_ms > 0) {
        EXPECT_EQ(f.nth, 1) << f.ToString() << ": a timed fault takes the first visit from its time";
      }
      if (f.at_ms == 0 && f.nth > 1) later_visits.insert(f.nth);
    }
  }
  EXPECT_EQ(later_visits, (std::set<int>{2, 3})) << "a later visit is the 2nd or the 3rd, never a 4th";
  ASSERT_GT(points, 300);
  EXPECT_NEAR(static_cast<double>(first) / points, 1.0 / 2, 0.1) << first << " of " << points;
  EXPECT_NEAR(static_cast<double>(later) / points, 1.0 / 6, 0.05) << later << " of " << points;
  EXPECT_NEAR(static_cast<double>(timed) / points, 1.0 / 3, 0.08) << timed << " of " << points;
}

// A lost XADD is the producer's (xackly's own producer adds every event),
// but an error reply never reaches xackly's producer: an error-reply at
// XADD is a worker's (its dead-letter XADD), or it could never fire and a
// correct consumer's check would end with that site as a coverage gap.
TEST(SearchTest, AnErrorReplyAtXaddIsDrawnForAWorkerALostOneForTheProducer) {
  RunConfig base = Base("txn-dedupe");
  base.faults.kinds = {FaultKind::kLostRequest, FaultKind::kErrorReply};
  base.faults.lost_sites = {"XADD"};
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  int lost = 0, erring = 0;
  for (int i = 0; i < 200; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      if (f.kind == FaultKind::kLostRequest) {
        ++lost;
        EXPECT_EQ(f.actor, "p1") << f.ToString();
      } else if (f.kind == FaultKind::kErrorReply) {
        ++erring;
        EXPECT_EQ(f.actor[0], 'w') << f.ToString();
      }
    }
  }
  EXPECT_GT(lost, 20);
  EXPECT_GT(erring, 20);
}

// A request fault is drawn for an actor that sends the request, as the
// probe runs saw it. In failover-wait-ignored-producer only the producer
// sends WAIT and only workers XACK; both send INSERT (the producer's
// `published` row, the workers' dedupe row). Before, a quarter of the
// faults at a worker's request went to the script's producer and most at
// WAIT to a worker: faults that could never fire, which left a producer
// that ignores WAIT's answer unfound by 4 of 10 seeds at defaults.
TEST(SearchTest, ARequestFaultIsDrawnForAnActorThatSendsTheRequest) {
  Result<Scenario> s =
      LoadScenarioFile(std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/failover-wait-ignored-producer.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  CasePool pool(1, TestServerOptions());
  Result<ProbedConfig> probed = WithVisitedSites(s->config, pool, 1);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  const auto& senders = probed->config.faults.request_senders;
  ASSERT_TRUE(senders.contains("WAIT") && senders.contains("XACK") && senders.contains("INSERT"));
  EXPECT_EQ(senders.at("WAIT"), (RequestSenders{.producer = true, .worker = false}));
  EXPECT_EQ(senders.at("XACK"), (RequestSenders{.producer = false, .worker = true}));
  EXPECT_EQ(senders.at("INSERT"), (RequestSenders{.producer = true, .worker = true}));
  rc::Gen<GeneratedCase> gen = GenCase(probed->config, CaseBounds{}, probed->timers);
  std::map<std::string, std::set<char>> actors;  // site -> 'p' / 'w'
  int at_wait = 0;
  for (int i = 0; i < 400; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      if (!IsPointFault(f.kind) || InfoOf(f.kind).Sites() != SiteFamily::kRequest) continue;
      actors[f.site].insert(f.actor[0]);
      at_wait += f.site == "WAIT";
    }
  }
  EXPECT_GT(at_wait, 20);
  EXPECT_EQ(actors["WAIT"], std::set<char>{'p'});
  EXPECT_EQ(actors["XACK"], std::set<char>{'w'});
  EXPECT_EQ(actors["INSERT"], (std::set<char>{'p', 'w'}));
}

// A scheduled fault (an outage, a trim, a restart) matters when it hits the
// few milliseconds in which a small case does its work; a time drawn
// uniformly over a 75 s fault phase almost never does. Half of the draws
// are on a logarithmic scale, so early times are common and late ones
// still happen.
TEST(SearchTest, ScheduledFaultsLandInTheFirstMillisecondsAsOftenAsLate) {
  RunConfig base = Base("txn-dedupe");
  base.faults.kinds = {FaultKind::kStoreOutage};
  const SwarmRanges ranges = SwarmRangesFor(base, CaseBounds{});
  ASSERT_GE(ranges.fault_phase_ms, 60000);
  rc::Gen<GeneratedCase> gen = GenCase(base, CaseBounds{});
  int scheduled = 0, first_100_ms = 0, last_half = 0;
  for (int i = 0; i < 400; ++i) {
    for (const FaultSpec& f : NthCase(gen, 1, i, CaseSize(i)).value().faults) {
      ++scheduled;
      EXPECT_GE(f.at_ms, 0);
      EXPECT_LE(f.at_ms, ranges.fault_phase_ms);
      first_100_ms += f.at_ms < 100 ? 1 : 0;
      last_half += f.at_ms > ranges.fault_phase_ms / 2 ? 1 : 0;
    }
  }
  ASSERT_GT(scheduled, 200);
  EXPECT_GT(first_100_ms * 20, scheduled) << "over 5% in the first 100 ms (uniform: 0.13%)";
  EXPECT_GT(last_half * 5, scheduled) << "and over 20% in the second half of the phase";
}

TEST(SearchTest, CaseSizesRampAndRestartEveryFiveCases) {
  EXPECT_EQ(CaseSize(0), 0);
  EXPECT_EQ(CaseSize(4), 100);
  EXPECT_EQ(CaseSize(5), 0);
  int rechecks = 0;
  for (int i = 0; i < 2000; ++i) rechecks += IsRecheckCase(1, i) ? 1 : 0;
  EXPECT_GT(rechecks, 60);   // about 5%
  EXPECT_LT(rechecks, 140);
}

TEST(SearchTest, TheFirstHitDoesNotDependOnHowManyCasesWereAskedFor) {
  CasePool pool(1, TestServerOptions());
  for (const char* protocol : {"naive-trim", "eager-claim", "no-dedupe", "racy-trim"}) {
    std::optional<int> first;
    for (int cases : {30, 300}) {
      CheckOptions options;
      options.cases = cases;
      options.seed = 3;
      options.max_shrink_runs = 0;  // where the hit is, not how small it shrinks
      Result<CheckOutcome> r = RunCheck(Base(protocol), pool, options);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(r->hit_index.has_value()) << protocol << " not found in " << cases << " cases";
      if (!first) first = r->hit_index;
      EXPECT_EQ(*r->hit_index, *first) << protocol << " with --cases " << cases;
      EXPECT_TRUE(r->matched) << protocol;
    }
  }
}

TEST(SearchTest, EveryCheckRerunsAShareOfItsCasesForDeterminism) {
  CasePool pool(1, TestServerOptions());
  CheckOptions options;
  options.cases = 100;
  Result<CheckOutcome> r = RunCheck(Base("txn-dedupe"), pool, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int want = 0;
  for (int i = 0; i < 100; ++i) want += IsRecheckCase(options.seed, i) ? 1 : 0;
  EXPECT_GT(want, 0);
  EXPECT_EQ(r->determinism_reruns, want);
  EXPECT_TRUE(r->matched);
}

// --- The command line ------------------------------------------------------

class SearchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xackly-search-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(SearchCliTest, AnUnknownExpectedCauseIsAnInputErrorListingTheKnownOnes) {
  std::string file = Write("typo.toml", "protocol = \"txn-dedupe\"\nexpect = \"lost:typo-cause\"\n");
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "5", "--out", (dir_ / "out").string()});
  EXPECT_EQ(out.exit_code, kExitUsage) << out.output;
  EXPECT_TRUE(Contains(out.output, "typo.toml:2: expect")) << out.output;
  EXPECT_TRUE(Contains(out.output, "'typo-cause' is not a cause of lost")) << out.output;
  EXPECT_TRUE(Contains(out.output, "payload-deleted")) << out.output;
}

TEST_F(SearchCliTest, TheStepGuardIsExitThreeNamingTheKnob) {
  std::string file = Write("tight.toml",
                           "protocol = \"txn-dedupe\"\n[workload]\nevents = 50\n[timing]\nmax_steps = 30\n");
  CommandOutput out = RunXackly({"run", "--scenario", file, "--faults", "none"});
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  EXPECT_TRUE(Contains(out.output, "harness limit")) << out.output;
  EXPECT_TRUE(Contains(out.output, "max_steps")) << out.output;
  EXPECT_FALSE(Contains(out.output, "stuck")) << out.output;
}

// A run stopped by the step guard is not judged, but it can be inspected:
// `run --trace` writes the trace up to the stop and `explain --all-steps`
// prints it, both saying it stopped at the guard. (Both wrote nothing.)
TEST_F(SearchCliTest, AStepGuardStopLeavesItsTraceForRunAndExplain) {
  std::string file = Write("tight-trace.toml",
                           "protocol = \"txn-dedupe\"\n[workload]\nevents = 50\n[timing]\nmax_steps = 30\n");
  const std::string trace = (dir_ / "cut.trace").string();
  CommandOutput out = RunXackly({"run", "--scenario", file, "--faults", "none", "--trace", trace});
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  EXPECT_TRUE(Contains(out.output, "written to " + trace)) << out.output;
  Result<std::string> text = ReadFile(trace);
  ASSERT_TRUE(text.ok()) << text.status().ToString() << "\n" << out.output;
  EXPECT_GE(std::count(text->begin(), text->end(), '\n'), 30) << *text;  // every step up to the stop
  EXPECT_TRUE(Contains(text->substr(text->rfind('\n', text->size() - 2)), "step guard")) << *text;
  EXPECT_TRUE(Contains(*text, "XADD")) << *text;

  CommandOutput explain = RunXackly({"explain", file, "--all-steps"});
  EXPECT_EQ(explain.exit_code, kExitHarnessFailure) << explain.output;
  EXPECT_TRUE(Contains(explain.output, "Timeline up to the stop, every step")) << explain.output;
  EXPECT_TRUE(Contains(explain.output, "timing.max_steps = 30 reached")) << explain.output;
}

// Under check the same guard leaves the case unjudged without ending the
// search: every case is tried, the first stopped one is written as a
// replay file that reruns it alone, and a check that found nothing exits 3
// (incomplete), not 0.
TEST_F(SearchCliTest, TheStepGuardUnderCheckLeavesTheCaseUnjudgedAndWritesIt) {
  std::string file = Write("tight-check.toml", "protocol = \"txn-dedupe\"\n[timing]\nmax_steps = 30\n");
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "3", "-j", "1", "--out",
                                 (dir_ / "out").string()});
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  EXPECT_TRUE(Contains(out.output, "3 cases stopped by the harness limit, not judged (the first, case 0: "))
      << out.output;
  // No case judged is no verdict: undecided, not "matched" with 0 cases.
  EXPECT_TRUE(Contains(out.output, "0 of 1 check matched its expectation, 1 undecided (cases stopped by the "
                                   "harness limit were not judged"))
      << out.output;
  EXPECT_TRUE(Contains(out.output, "max_steps")) << out.output;
  EXPECT_FALSE(Contains(out.output, "stuck")) << out.output;
  const std::string replay = (dir_ / "out" / "tight-check-harness-limit.replay.toml").string();
  EXPECT_TRUE(Contains(out.output, "`xackly replay " + replay + "` reruns that case alone")) << out.output;
  CommandOutput again = RunXackly({"replay", replay});
  EXPECT_EQ(again.exit_code, kExitHarnessFailure) << again.output;
  EXPECT_TRUE(Contains(again.output, "timing.max_steps = 30")) << again.output;
}

// A broken protocol whose violation is found is judged even when other
// cases stopped at the harness limit: exit 1 or 0 by the verdict, the
// unjudged cases named.
TEST_F(SearchCliTest, AHitDecidesACheckWithUnjudgedCases) {
  std::string file = Write("tight-broken.toml", "protocol = \"no-dedupe\"\n[timing]\nmax_steps = 80\n");
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "40", "-j", "1", "--out",
                                 (dir_ / "out").string()});
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "1 case stopped by the harness limit, not judged (the first, case 0: "))
      << out.output;
  EXPECT_TRUE(Contains(out.output, "first hit at case 1")) << out.output;
  // Every format says so.
  EXPECT_TRUE(Contains(out.output, "cases: 1 run, 1 violated, 1 stopped by the harness limit (not judged)"))
      << out.output;
}

TEST_F(SearchCliTest, CheckUsesTheScenariosSeedAndWorkloadAndSaysSo) {
  std::string file = Write("mine.toml", "protocol = \"no-dedupe\"\nseed = 77\n[workload]\nworkers = 2\nevents = 5\n");
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "20", "--out", (dir_ / "out").string()});
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "seed 77 (the file's seed)")) << out.output;
  EXPECT_TRUE(Contains(out.output, "at most 2 workers and 5 events (the file's [workload])")) << out.output;
  CommandOutput flag = RunXackly({"check", "--scenario", file, "--cases", "20", "--seed", "4", "--out", (dir_ / "out").string()});
  EXPECT_TRUE(Contains(flag.output, "seed 4 (--seed)")) << flag.output;
  // A file without a seed or a [workload] is not said to have one.
  std::string bare = Write("bare.toml", "protocol = \"no-dedupe\"\n");
  CommandOutput defaults = RunXackly({"check", "--scenario", bare, "--cases", "5", "--out", (dir_ / "out").string()});
  EXPECT_TRUE(Contains(defaults.output, "seed 1 (the default seed)")) << defaults.output;
  EXPECT_TRUE(Contains(defaults.output, "(the defaults of a scenario file)")) << defaults.output;
}

TEST_F(SearchCliTest, AnInlineProtocolWithoutFaultsGetsTheDefaultModelAndSaysSo) {
  std::string file = Write("inline.toml",
                           "[protocol]\nsteps = [\"effect\", \"ack\"]\n");
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "30", "--out", (dir_ / "out").string()});
  EXPECT_TRUE(Contains(out.output, "fault model crash")) << out.output;
  // No dedupe: the default model finds the duplicate, not a silent green.
  EXPECT_EQ(out.exit_code, kExitVerdictMismatch) << out.output;
  std::string none = Write("none.toml",
                           "[protocol]\nsteps = [\"begin\", \"mark-done\", \"effect\", \"commit\", \"ack\"]\n"
                           "dedupe = \"sql\"\neffect = \"sql\"\n[faults]\nkinds = []\n");
  CommandOutput quiet = RunXackly({"check", "--scenario", none, "--cases", "5", "--out", (dir_ / "out").string()});
  EXPECT_EQ(quiet.exit_code, kExitOk) << quiet.output;
  EXPECT_TRUE(Contains(quiet.output, "injects NO faults")) << quiet.output;
}

// Every violation a check counts has a replay file, or the summary says why
// not. no-dedupe expected to lose events never does, but it duplicates: the
// check counts those cases, shrinks the first one, writes it, and says it is
// another violation than the one looked for (a mismatch, exit 1).
TEST_F(SearchCliTest, AViolationOtherThanTheOneLookedForIsShrunkAndWrittenNotJustCounted) {
  std::string file = Write("wrong-expect.toml", "protocol = \"no-dedupe\"\nexpect = \"lost\"\n");
  std::string out_dir = (dir_ / "out").string();
  CommandOutput out = RunXackly({"check", "--scenario", file, "--cases", "30", "--out", out_dir});
  EXPECT_EQ(out.exit_code, kExitVerdictMismatch) << out.output;
  EXPECT_TRUE(Contains(out.output, "no case showed lost;")) << out.output;
  EXPECT_TRUE(Contains(out.output, "another violation at case")) << out.output;
  EXPECT_FALSE(Contains(out.output, "no case violated")) << out.output;
  EXPECT_FALSE(Contains(out.output, "first hit at case")) << "a duplicate is not a hit of `lost`:\n" << out.output;
  Result<report::Report> json = report::ParseJsonReport(*ReadFile(out_dir + "/report.json"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  ASSERT_EQ(json->checks.size(), 1u);
  const report::CheckReport& k = json->checks[0];
  EXPECT_GT(k.cases_failed, 0);
  EXPECT_EQ(k.first_hit_case, -1);
  ASSERT_TRUE(k.counterexample.has_value()) << "counted violations need a counterexample";
  ASSERT_FALSE(k.counterexample->replay_file.empty());
  EXPECT_TRUE(std::filesystem::exists(k.counterexample->replay_file));
  EXPECT_TRUE(Contains(k.observed, "duplicate")) << k.observed;
  int others = 0;
  for (const auto& [cls, n] : k.other_violations) others += n;
  EXPECT_EQ(others, k.cases_failed) << "every violated case was another violation";
  // The replay file reproduces the duplicate.
  CommandOutput replay = RunXackly({"replay", k.counterexample->replay_file, "--out", out_dir + "/replay"});
  EXPECT_TRUE(Contains(replay.output, "duplicate")) << replay.output;
}

// lua-dedupe's only XACK runs inside its EVAL: a crash "after-ack" can
// never fire, and coverage must not call it a search gap; txn-dedupe acks
// with its own XACK, so the same site is reachable there.
TEST(SearchTest, SitesAProtocolCannotVisitAreDerivedFromItsOperations) {
  const RunConfig lua = Base("lua-dedupe");
  const RunConfig txn = Base("txn-dedupe");
  ASSERT_TRUE(lua.faults.Has(FaultKind::kCrash));
  auto has = [](const std::vector<std::string>& v, const char* site) {
    return std::find(v.begin(), v.end(), site) != v.end();
  };
  EXPECT_TRUE(has(UnreachableSites(lua), "crash@after-ack"));
  EXPECT_FALSE(has(UnreachableSites(lua), "crash@after-eval"));
  EXPECT_FALSE(has(UnreachableSites(txn), "crash@after-ack"));
}

// UnreachableSites against what runs actually do: over a short check of
// every catalog protocol, no site it calls unreachable is ever visited or
// fired (a wrong derivation would hide a real search gap), every site it
// names belongs to a kind the model enables and lies outside the
// protocol's own operations, and a site the runs visit is never listed.
TEST(SearchTest, NoSiteCalledUnreachableIsEverVisitedByARun) {
  CasePool pool(2, TestServerOptions());
  int unreachable_total = 0;
  for (const ProtocolDef& p : Catalog()) {
    const RunConfig base = Base(p.name);
    const std::vector<std::string> unreachable = UnreachableSites(base);
    unreachable_total += static_cast<int>(unreachable.size());
    const std::vector<std::string> crash_points = CrashPointsOf(base.protocol);
    const std::vector<std::string> lost_sites = LostSitesOf(base.protocol);
    for (const std::string& key : unreachable) {
      const std::string kind = key.substr(0, key.find('@'));
      const std::string site = key.substr(key.find('@') + 1);
      const bool point = kind == "crash" || kind == "stall";
      const std::vector<std::string>& own = point ? crash_points : lost_sites;
      EXPECT_EQ(std::find(own.begin(), own.end(), site), own.end()) << p.name << ": " << key << " is its own";
      EXPECT_TRUE(kind == "crash" || kind == "stall" || kind == "lost-request" || kind == "lost-reply") << key;
    }
    CheckOptions options;
    options.cases = 20;
    options.max_shrink_runs = 0;  // where sites fire, not how small a hit shrinks
    Result<CheckOutcome> r = RunCheck(base, pool, options);
    ASSERT_TRUE(r.ok()) << p.name << ": " << r.status().ToString();
    ASSERT_FALSE(r->coverage.reachable.empty()) << p.name << ": the runs visit sites";
    for (const std::string& key : unreachable) {
      EXPECT_EQ(r->coverage.reachable.count(key), 0u) << p.name << ": " << key << " called unreachable but visited";
      EXPECT_EQ(r->coverage.fired.count(key), 0u) << p.name << ": " << key << " called unreachable but fired";
    }
  }
  EXPECT_GT(unreachable_total, 0) << "some catalog protocol has sites it cannot visit (lua-dedupe's XACK)";
}

}  // namespace
}  // namespace xackly
