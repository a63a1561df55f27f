// Fault specs are what replay files and generated cases are made of: their
// text form must round-trip, bad ones must be refused with a reason, and a
// plan must fire exactly what it says, at exactly the visit it names.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "sim/faults.h"
#include "sim/injectors.h"
#include "sim/oracle.h"
#include "sim/protocol.h"

namespace xackly {
namespace {

TEST(FaultSpecTest, EveryKindRoundTripsThroughItsTextForm) {
  const char* lines[] = {
      "crash w1 after-effect #1",        "stall w2 after-read #3 60000ms",
      "lost-reply w1 XACK #2",           "lost-request p1 XADD #1",
      "xdel pending @1200ms",            "xdel unread @0ms",
      "xtrim maxlen:2 @300ms",           "xtrim minid:last-delivered @5ms",
      "restart @3000ms",                 "save @10ms",
      "delconsumer @99ms",               "clock-jump +60000ms @3000ms",
      "store-outage 3000ms @40ms",       "poison event 3",
      "error-reply w1 XACK #1 LOADING",  "error-reply w2 EXEC #2 BUSY @5000ms",
      "replica-lag w1 WAIT #1 2000ms",   "replica-lag p1 WAIT #3 500ms @100ms",
      "replica-lag p1 WAIT #2 500ms failover", "replica-lag w2 WAIT #1 2000ms failover @300ms",
      "failover lag:0 @1500ms",          "failover lag:1000 @20ms",  // a replica's lag: 0 .. 1000 writes
      "failover lagging @700ms",
  };
  for (const char* line : lines) {
    Result<FaultSpec> spec = ParseFaultSpec(line);
    ASSERT_TRUE(spec.ok()) << line << ": " << spec.status().ToString();
    EXPECT_EQ(spec->ToString(), line);
  }
}

TEST(FaultSpecTest, BadSpecsAreRefusedWithTheReason) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"explode w1 after-effect #1", "unknown fault kind"},
      {"crash w1 after-lunch #1", "unknown crash point 'after-lunch'"},
      {"crash w1 after-effect #0", "nth must be >= 1"},
      // Never narrowed into a different, valid fault (#4294967297 is not #1).
      {"crash w1 after-effect #4294967297", "expected 'crash <actor> <site> #<n> [@<time>ms]'"},
      {"poison event 4294967297", "event must be in 1..100000"},
      {"crash x1 after-effect #1", "actor must be"},
      {"lost-reply w1 ping #1", "unknown request 'ping'"},  // any COMMAND name is a site; lowercase is not
      {"xdel everything @1ms", "xdel target must be"},
      {"xtrim maxlen:-1 @1ms", "xtrim target must be"},
      {"stall w1 after-read #1 0ms", "positive duration"},
      // A duration or a time without its unit, or the unit alone, is no number of ms.
      {"stall w1 after-read #1 500", "expected 'stall <actor> <point> #<n> <duration>ms [@<time>ms]'"},
      {"stall w1 after-read #1 ms", "expected 'stall <actor> <point> #<n> <duration>ms [@<time>ms]'"},
      {"crash w1 after-effect #1 @100", "expected 'crash <actor> <site> #<n> [@<time>ms]'"},
      {"restart @5s", "expected 'restart @<time>ms'"},
      {"restart", "expected 'restart @<time>ms'"},
      {"error-reply w1 XACK #1 OOM", "error-reply target must be LOADING, READONLY or BUSY"},
      {"error-reply w1 XACK #1", "expected 'error-reply <actor> <site> #<n> <error> [@<time>ms]'"},
      {"replica-lag w1 XACK #1 2000ms", "replica-lag fires at WAIT only"},
      {"replica-lag w1 WAIT #1 0ms", "positive duration"},
      {"replica-lag w1 WAIT #1 2000ms promote",
       "expected 'replica-lag <actor> WAIT #<n> <duration>ms [failover] [@<time>ms]'"},
      {"lost-reply w1 XACK #1 failover", "expected 'lost-reply <actor> <site> #<n> [@<time>ms]'"},
  };
  for (const Case& c : cases) {
    Result<FaultSpec> spec = ParseFaultSpec(c.text);
    ASSERT_FALSE(spec.ok()) << c.text;
    EXPECT_NE(spec.status().message().find(c.reason), std::string::npos)
        << c.text << " -> " << spec.status().message();
  }
}

TEST(FaultPlanTest, ExplicitPlanFiresAtTheNamedVisitOnly) {
  FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w2 after-effect #2")});
  EXPECT_FALSE(plan.AtPoint("w2", "after-effect", SiteFamily::kCrashPoint));   // 1st visit
  EXPECT_FALSE(plan.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint));   // other worker
  EXPECT_FALSE(plan.AtPoint("w2", "after-read", SiteFamily::kCrashPoint));     // other point
  std::optional<FaultSpec> hit = plan.AtPoint("w2", "after-effect", SiteFamily::kCrashPoint);  // 2nd visit
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->ToString(), "crash w2 after-effect #2");
  EXPECT_FALSE(plan.AtPoint("w2", "after-effect", SiteFamily::kCrashPoint));   // 3rd visit
  ASSERT_EQ(plan.fired().size(), 1u);
}

TEST(FaultPlanTest, AnErrorReplyFiresOnlyWhereOneCanHappenAndCountsOnlyThoseSitesAsReachable) {
  // Explicit: the visit where no error reply can happen (a built-in step,
  // a store request) is counted, but the fault waits for its own visit.
  FaultPlan plan(FaultModel{}, {*ParseFaultSpec("error-reply w1 XACK #2 READONLY")});
  EXPECT_FALSE(plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{.error_reply = true}));
  EXPECT_FALSE(plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{}));  // 2nd visit: cannot
  std::optional<FaultSpec> hit = plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{.error_reply = true});
  EXPECT_FALSE(hit);  // the 3rd visit is not the 2nd
  // Rates: every visit could fire; only those where one can happen do, and
  // coverage reaches only them.
  FaultModel m;
  m.kinds = {FaultKind::kErrorReply};
  m.lost_sites = {"XACK", "XADD"};
  m.error_reply_ppm = 1000000;
  m.error_reply_target = "BUSY";
  FaultPlan rates(m, Rng(7), 1000, 1);
  EXPECT_FALSE(rates.AtPoint("p1", "XADD", SiteFamily::kRequest, 0, VisitCan{}));
  std::optional<FaultSpec> fired = rates.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{.error_reply = true});
  ASSERT_TRUE(fired);
  EXPECT_EQ(fired->ToString(), "error-reply w1 XACK #1 BUSY");
  const FaultCoverage c = rates.Coverage();
  EXPECT_EQ(c.reachable, (std::set<std::string>{"error-reply@XACK"}));
  EXPECT_EQ(c.enabled, (std::set<std::string>{"error-reply@XACK"}));
  EXPECT_TRUE(c.Gaps().empty());
}

// replica-lag fires at WAIT only, whatever sites the model lists for the
// lost-* kinds, and only at a WAIT the harness answers (VisitCan: not one
// queued in MULTI, where a lag would change nothing and the evidence would
// overstate it); its coverage names WAIT only once a run visited one that
// could lag: a protocol that never waits so has no replica-lag site to miss.
TEST(FaultPlanTest, AReplicaLagFiresAtWaitOnlyAndIsReachableOnlyThere) {
  FaultModel m;
  m.kinds = {FaultKind::kReplicaLag, FaultKind::kLostReply};
  m.lost_sites = {"XACK", "XADD"};
  m.replica_lag_ppm = 1000000;
  m.lost_reply_ppm = 0;
  m.replica_lag_ms = 700;
  EXPECT_EQ(m.ToString(), "lost-reply(XACK,XADD) replica-lag(WAIT)");
  FaultPlan quiet(m, Rng(3), 1000, 1);
  EXPECT_FALSE(quiet.AtPoint("w1", "XACK", SiteFamily::kRequest));
  EXPECT_TRUE(quiet.Coverage().enabled.count("replica-lag@WAIT") == 0) << "enabled before any WAIT";
  EXPECT_TRUE(quiet.Coverage().Gaps().size() == 1) << "only lost-reply@XACK may be a gap";
  EXPECT_FALSE(quiet.AtPoint("w1", "WAIT", SiteFamily::kRequest)) << "a WAIT inside MULTI";
  EXPECT_TRUE(quiet.Coverage().enabled.count("replica-lag@WAIT") == 0) << "enabled by a WAIT that cannot lag";
  EXPECT_TRUE(quiet.Coverage().reachable.count("replica-lag@WAIT") == 0) << "reached by a WAIT that cannot lag";
  std::optional<FaultSpec> fired = quiet.AtPoint("w1", "WAIT", SiteFamily::kRequest, 0, {.replica_lag = true});
  ASSERT_TRUE(fired);
  EXPECT_EQ(fired->ToString(), "replica-lag w1 WAIT #2 700ms");
  const FaultCoverage c = quiet.Coverage();
  EXPECT_TRUE(c.reachable.contains("replica-lag@WAIT"));
  EXPECT_FALSE(c.reachable.contains("replica-lag@XACK"));
  EXPECT_EQ(c.fired.at("replica-lag@WAIT"), 1);
  // Explicit: a spec naming a visit that cannot lag does not fire there.
  FaultPlan plan(m, {*ParseFaultSpec("replica-lag w1 WAIT #1 700ms")});
  EXPECT_FALSE(plan.AtPoint("w1", "WAIT", SiteFamily::kRequest));
  EXPECT_TRUE(plan.fired().empty());
}

// Drawn from rates (`run` without a schedule), a lag in a model with
// failover has the primary fail over to the lagging replica in about half
// of the draws, as a swarm's do; without failover in the model, never.
TEST(FaultPlanTest, ARatePlansLagFailsOverHalfOfTheTimeWhenTheModelHasFailover) {
  for (bool failover : {false, true}) {
    SCOPED_TRACE(failover ? "with failover" : "without failover");
    FaultModel m;
    m.kinds = {FaultKind::kReplicaLag};
    if (failover) m.kinds.insert(FaultKind::kFailover);
    m.replica_lag_ppm = 1000000;
    int lags = 0, then_failover = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      FaultPlan plan(m, Rng(seed), 1000, 1);
      std::optional<FaultSpec> fired = plan.AtPoint("p1", "WAIT", SiteFamily::kRequest, 0, {.replica_lag = true});
      ASSERT_TRUE(fired);
      ++lags;
      then_failover += fired->target == kThenFailover;
    }
    if (failover) {
      EXPECT_NEAR(then_failover, lags / 2, lags / 8);
    } else {
      EXPECT_EQ(then_failover, 0);
    }
  }
}

// Where a worker's own XACK can be cut: a handler that XACKs by itself has a
// crash after it and a lost XACK, whether or not its duplicate branch acks
// (no-dedupe; dup-no-ack, whose only XACK is the handler's); one whose XACK
// is inside its single EVAL (lua-dedupe, nothing deleting payloads) has
// neither, so the swarm never spends a fault on a site it cannot reach.
TEST(FaultSitesTest, AnOwnXackIsACrashPointAndALostSiteAnXackInsideTheEvalIsNeither) {
  auto has = [](const std::vector<std::string>& v, const char* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (const char* name : {"no-dedupe", "dup-no-ack"}) {
    const ProtocolDef* own = FindProtocol(name);
    ASSERT_NE(own, nullptr) << name;
    EXPECT_TRUE(has(CrashPointsOf(*own), "after-ack")) << name;
    EXPECT_TRUE(has(LostSitesOf(*own), "XACK")) << name;
  }
  const ProtocolDef* in_eval = FindProtocol("lua-dedupe");
  ASSERT_NE(in_eval, nullptr);
  EXPECT_FALSE(has(CrashPointsOf(*in_eval), "after-ack"));
  EXPECT_FALSE(has(LostSitesOf(*in_eval), "XACK"));
  EXPECT_TRUE(has(LostSitesOf(*in_eval), "EVAL"));
}

TEST(FaultSpecTest, AnErrorReplyIsWordedAsTheServerWordsIt) {
  EXPECT_EQ(ErrorReplyText("LOADING"), "LOADING Redis is loading the dataset in memory");
  EXPECT_EQ(ErrorReplyText("READONLY"), "READONLY You can't write against a read only replica.");
  EXPECT_EQ(ErrorReplyText("BUSY").rfind("BUSY Redis is busy running a script.", 0), 0u);
}

TEST(FaultPlanTest, ATimedPointFaultTakesTheNthVisitFromItsTimeOnAndIsRecordedAsThatVisit) {
  Result<FaultSpec> spec = ParseFaultSpec("crash w1 after-ack #2 @60000ms");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->at_ms, 60000);
  EXPECT_EQ(spec->ToString(), "crash w1 after-ack #2 @60000ms");
  FaultPlan plan(FaultModel{}, {*spec});
  EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 100));    // visit 1, before the time
  EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 59999));  // visit 2, before the time
  EXPECT_FALSE(plan.AtPoint("w2", "after-ack", SiteFamily::kCrashPoint, 60000));  // other worker
  EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 60000));  // visit 3: the 1st from 60 s on
  std::optional<FaultSpec> hit = plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 61000);  // the 2nd from 60 s on
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->ToString(), "crash w1 after-ack #4");
  EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 62000));
  ASSERT_EQ(plan.fired().size(), 1u);

  // The recorded visit replays the same run without the time.
  FaultPlan replay(FaultModel{}, plan.fired());
  for (int visit = 1; visit <= 3; ++visit) EXPECT_FALSE(replay.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint));
  EXPECT_TRUE(replay.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint));

  const Result<FaultSpec> stall = ParseFaultSpec("stall w2 after-read #1 5000ms @30000ms");
  ASSERT_TRUE(stall.ok()) << stall.status().message();
  EXPECT_EQ(stall->duration_ms, 5000);
  EXPECT_EQ(stall->at_ms, 30000);
  EXPECT_FALSE(ParseFaultSpec("crash w1 after-ack #1 @-5ms").ok());
  EXPECT_FALSE(ParseFaultSpec("crash w1 after-ack #1 @soonms").ok());
}

// A plan's fault that never fired is named with why, so that a run that
// matched without it is not taken for evidence about it: each reason at
// its edge, and nothing once every fault fired.
TEST(FaultPlanTest, AnExplicitPlansFaultsThatNeverFiredAreListedWithWhy) {
  auto unfired = [](const FaultPlan& plan) {
    std::vector<std::string> out;
    for (const FaultPlan::Unfired& u : plan.UnfiredPlanned()) out.push_back(u.spec.ToString() + ": " + u.why);
    return out;
  };
  using Lines = std::vector<std::string>;
  {  // one visit short of its nth, then the nth
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w1 after-effect #2")});
    EXPECT_EQ(unfired(plan), Lines{"crash w1 after-effect #2: w1 never reached after-effect while faults could fire"});
    EXPECT_FALSE(plan.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint));
    EXPECT_FALSE(plan.AtPoint("w2", "after-effect", SiteFamily::kCrashPoint));  // another worker's visit
    EXPECT_EQ(unfired(plan),
              Lines{"crash w1 after-effect #2: w1 reached after-effect only 1 time while faults could fire"});
    EXPECT_TRUE(plan.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint));
    EXPECT_TRUE(unfired(plan).empty());
  }
  {  // visits after the fault phase do not count
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w1 after-effect #1")});
    plan.Disable();
    EXPECT_FALSE(plan.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint));
    EXPECT_EQ(unfired(plan), Lines{"crash w1 after-effect #1: w1 never reached after-effect while faults could fire"});
  }
  {  // the named visit could not take an error reply; a later one could
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("error-reply w1 XACK #1 READONLY")});
    EXPECT_FALSE(plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{}));
    EXPECT_FALSE(plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{.error_reply = true}));
    const Lines got = unfired(plan);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].find("error-reply w1 XACK #1 READONLY: w1's visit #1 of XACK could not take error-reply ("),
              0u)
        << got[0];
  }
  {  // no visit could take it at all
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("error-reply w1 XACK #3 READONLY")});
    EXPECT_FALSE(plan.AtPoint("w1", "XACK", SiteFamily::kRequest, 0, VisitCan{}));
    const Lines got = unfired(plan);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_NE(got[0].find("w1 reached XACK, but no visit of it could take error-reply"), std::string::npos) << got[0];
  }
  {  // a timed fault counts its visits from its time on
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w1 after-ack #2 @1000ms")});
    EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 999));
    EXPECT_FALSE(plan.AtPoint("w1", "after-ack", SiteFamily::kCrashPoint, 1000));
    EXPECT_EQ(unfired(plan), Lines{"crash w1 after-ack #2 @1000ms: w1 reached after-ack 2 times while faults could "
                                   "fire, 1 of them at or after 1000 ms"});
  }
  {  // two faults named at one visit: the first fires, the second is crowded out
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w1 after-read #1"), *ParseFaultSpec("stall w1 after-read #1 500ms")});
    EXPECT_TRUE(plan.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));
    EXPECT_EQ(unfired(plan), Lines{"stall w1 after-read #1 500ms: another fault of the plan fired at that visit"});
  }
  {  // a scheduled fault fires when the run records it
    FaultPlan plan(FaultModel{}, {*ParseFaultSpec("restart @500ms"), *ParseFaultSpec("restart @200ms")});
    EXPECT_EQ(unfired(plan), (Lines{"restart @200ms: the fault phase ended before 200 ms",
                                    "restart @500ms: the fault phase ended before 500 ms"}));
    plan.RecordFired(plan.scheduled()[0]);
    EXPECT_EQ(unfired(plan), Lines{"restart @500ms: the fault phase ended before 500 ms"});
  }
  // A drawn plan names no faults of its own.
  FaultModel every;
  every.kinds = {FaultKind::kCrash, FaultKind::kRestart};
  every.crash_ppm = 500000;
  FaultPlan rates(every, Rng(3), 1000, 1);
  for (int i = 0; i < 50; ++i) rates.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint);
  EXPECT_TRUE(rates.UnfiredPlanned().empty());
}

TEST(FaultPlanTest, DisabledPlanFiresNothing) {
  // Positive control: the same plan, enabled, fires at that visit.
  FaultPlan enabled(FaultModel{}, {*ParseFaultSpec("crash w1 after-read #1")});
  ASSERT_TRUE(enabled.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));
  FaultPlan plan(FaultModel{}, {*ParseFaultSpec("crash w1 after-read #1")});
  plan.Disable();
  EXPECT_FALSE(plan.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));
  EXPECT_TRUE(plan.fired().empty());
}

FaultModel CrashEverywhere() {
  FaultModel m;
  m.kinds = {FaultKind::kCrash, FaultKind::kStall, FaultKind::kXdel, FaultKind::kRestart};
  m.crash_ppm = 200000;
  m.stall_ppm = 100000;
  return m;
}

std::vector<std::string> Drive(FaultPlan& plan) {
  std::vector<std::string> out;
  for (int i = 0; i < 200; ++i) {
    std::string slot = "w" + std::to_string(i % 3 + 1);
    if (auto f = plan.AtPoint(slot, i % 2 ? "after-effect" : "after-read", SiteFamily::kCrashPoint)) {
      out.push_back(f->ToString());
    }
  }
  for (const FaultSpec& s : plan.scheduled()) out.push_back(s.ToString());
  return out;
}

TEST(FaultPlanTest, RatePlanIsAFunctionOfTheSeed) {
  FaultPlan a(CrashEverywhere(), Rng(7).Split("faults"), 2000, 10);
  FaultPlan b(CrashEverywhere(), Rng(7).Split("faults"), 2000, 10);
  FaultPlan c(CrashEverywhere(), Rng(8).Split("faults"), 2000, 10);
  std::vector<std::string> fa = Drive(a);
  EXPECT_FALSE(fa.empty());
  EXPECT_EQ(fa, Drive(b));
  EXPECT_NE(fa, Drive(c));
}

// faults.scheduled_count: a rate plan schedules that many faults of every
// enabled scheduled kind (the default, one each), inside the fault phase.
TEST(FaultPlanTest, ARatePlanSchedulesEachScheduledKindAsOftenAsTheModelSays) {
  FaultModel m;
  for (const FaultKindInfo& k : AllFaultKinds()) {
    if (k.fault_class == FaultClass::kScheduled) m.kinds.insert(k.kind);
  }
  ASSERT_GT(m.kinds.size(), 1u);
  for (int count : {0, 1, 3}) {
    m.scheduled_count = count;
    FaultPlan plan(m, Rng(7).Split("faults"), 2000, 10);
    std::map<FaultKind, int> scheduled;
    for (const FaultSpec& s : plan.scheduled()) {
      ++scheduled[s.kind];
      EXPECT_GE(s.at_ms, 0);
      EXPECT_LT(s.at_ms, 2000);
    }
    for (FaultKind k : m.kinds) EXPECT_EQ(scheduled[k], count) << FaultKindName(k) << ", scheduled_count " << count;
  }
}

TEST(FaultPlanTest, RatePlanRecordsAnExplicitPlanThatReplaysIt) {
  FaultPlan rated(CrashEverywhere(), Rng(3).Split("faults"), 2000, 10);
  std::vector<std::string> first = Drive(rated);
  FaultPlan replay(CrashEverywhere(), rated.fired());
  // Scheduled faults are replayed by the scheduler from fired(); the point
  // faults must fire at the same visits.
  std::vector<std::string> again;
  for (int i = 0; i < 200; ++i) {
    std::string slot = "w" + std::to_string(i % 3 + 1);
    if (auto f = replay.AtPoint(slot, i % 2 ? "after-effect" : "after-read", SiteFamily::kCrashPoint)) {
      again.push_back(f->ToString());
    }
  }
  std::vector<std::string> point_faults(first.begin(), first.end() - static_cast<long>(rated.scheduled().size()));
  ASSERT_FALSE(point_faults.empty());  // else the comparison proves nothing
  EXPECT_EQ(again, point_faults);
}

// rng.h's promise: each actor draws its point faults from its own stream, so
// another worker's visits (a run with one more worker) never shift them.
TEST(FaultPlanTest, AnotherActorsVisitsDoNotShiftAnActorsFaults) {
  FaultPlan alone(CrashEverywhere(), Rng(5).Split("faults"), 2000, 10);
  FaultPlan crowded(CrashEverywhere(), Rng(5).Split("faults"), 2000, 10);
  std::vector<std::string> w1_alone;
  std::vector<std::string> w1_crowded;
  int w2_fired = 0;
  for (int i = 0; i < 100; ++i) {
    const char* site = i % 2 ? "after-effect" : "after-read";
    if (auto f = alone.AtPoint("w1", site, SiteFamily::kCrashPoint)) w1_alone.push_back(f->ToString());
    if (crowded.AtPoint("w2", site, SiteFamily::kCrashPoint)) ++w2_fired;
    if (auto f = crowded.AtPoint("w1", site, SiteFamily::kCrashPoint)) w1_crowded.push_back(f->ToString());
  }
  ASSERT_FALSE(w1_alone.empty());  // else the comparison proves nothing
  ASSERT_GT(w2_fired, 0);
  EXPECT_EQ(w1_alone, w1_crowded);
}

TEST(FaultPlanTest, IneligiblePointsNeverFire) {
  FaultModel m;
  m.kinds = {FaultKind::kCrash};
  m.crash_points = {"after-commit"};
  m.crash_ppm = 1'000'000;  // always, where eligible
  FaultPlan plan(m, Rng(1), 1000, 5);
  EXPECT_FALSE(plan.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));
  EXPECT_TRUE(plan.AtPoint("w1", "after-commit", SiteFamily::kCrashPoint));
  FaultCoverage cov = plan.Coverage();
  EXPECT_EQ(cov.fired["crash@after-commit"], 1);
  EXPECT_EQ(cov.enabled.count("crash@after-commit"), 1u);
  EXPECT_EQ(cov.enabled.count("crash@after-read"), 0u);
}

// The descriptor is the one place a kind is described: every scheduled kind
// must have an injector, and every history kind a descriptor names must
// exist (reports find a history item's fault kind by that name).
TEST(FaultKindInfoTest, EveryScheduledKindHasAnInjectorAndEveryHistoryExists) {
  for (const FaultKindInfo& k : AllFaultKinds()) {
    SCOPED_TRACE(k.name);
    if (k.fault_class == FaultClass::kScheduled) {
      EXPECT_NE(InjectorOf(k.kind), nullptr);
    }
    if (*k.history == '\0') continue;
    bool found = false;
    for (int h = 0; h <= static_cast<int>(kLastHistoryKind); ++h) {
      found = found || std::string_view(HistoryKindName(static_cast<HistoryKind>(h))) == k.history;
    }
    EXPECT_TRUE(found) << "history '" << k.history << "' is no HistoryKind";
    EXPECT_EQ(FaultKindOfHistory(k.history)->history, std::string_view(k.history));
  }
  EXPECT_EQ(FaultKindOfHistory(""), nullptr);
  EXPECT_EQ(FaultKindOfHistory("acked"), nullptr);
}

}  // namespace
}  // namespace xackly
