// The environment's timing a swarm case draws (issue 15, item 3): each
// event's effect has its own duration, and producers may add events in
// bursts. Both are properties of the run (seed and event), never of the
// protocol, so a replay reproduces them.
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sim/worker.h"
#include "tests/sim/fault_lab_util.h"

namespace xackly {
namespace {

TEST(EffectMsOfTest, WithoutASpreadEveryEffectLastsEffectMs) {
  Timing t;
  t.effect_ms = 250;
  for (int e = 1; e <= 20; ++e) EXPECT_EQ(EffectMsOf(t, 7, EventId(e)), 250);
}

TEST(EffectMsOfTest, ASpreadGivesEachEventItsOwnDurationWithinRange) {
  Timing t;
  t.effect_ms = 1000;
  t.effect_spread_ms = 900;
  std::set<int64_t> seen;
  for (int e = 1; e <= 20; ++e) {
    const int64_t ms = EffectMsOf(t, 7, EventId(e));
    EXPECT_GE(ms, 100);
    EXPECT_LE(ms, 1000);
    EXPECT_EQ(ms, EffectMsOf(t, 7, EventId(e))) << "an event's duration is the same at every delivery";
    seen.insert(ms);
  }
  EXPECT_GE(seen.size(), 10u) << "20 events draw (mostly) different durations";
  bool seed_matters = false;
  for (int e = 1; e <= 20; ++e) seed_matters |= EffectMsOf(t, 7, EventId(e)) != EffectMsOf(t, 8, EventId(e));
  EXPECT_TRUE(seed_matters);
}

TEST(EffectMsOfTest, ASpreadLargerThanTheEffectStopsAtZero) {
  Timing t;
  t.effect_ms = 5;
  t.effect_spread_ms = 1000;
  for (int e = 1; e <= 50; ++e) {
    const int64_t ms = EffectMsOf(t, 3, EventId(e));
    EXPECT_GE(ms, 0);
    EXPECT_LE(ms, 5);
  }
}

class EnvironmentTimingTest : public FaultLabTest {
 protected:
  // Virtual time of the first trace line whose request starts with `prefix`
  // and mentions `id` (-1: none).
  int64_t FirstAt(const RunResult& r, std::string_view prefix, const std::string& id) const {
    for (const TraceLine& l : r.trace) {
      if (l.request.rfind(prefix, 0) != 0) continue;
      for (const std::string& i : l.ids) {
        if (i == id) return l.t_ms;
      }
    }
    return -1;
  }
};

TEST_F(EnvironmentTimingTest, EachEventsEffectKeepsTheWorkerBusyForItsOwnDuration) {
  // no-dedupe: external effect, then XACK; one worker, no faults. The time
  // from an event's effect to its XACK is that event's effect duration.
  Timing timing;
  timing.effect_ms = 1000;
  timing.effect_spread_ms = 900;
  RunResult r = Run("no-dedupe", {}, [&](RunConfig& c) {
    c.events = 6;
    c.seed = 11;
    c.timing.effect_ms = timing.effect_ms;
    c.timing.effect_spread_ms = timing.effect_spread_ms;
  });
  ASSERT_TRUE(r.violations.empty()) << trace_;
  std::set<int64_t> busy;
  for (int e = 1; e <= 6; ++e) {
    const std::string event = EventId(e);
    const int64_t effect_at = FirstAt(r, "ext apply", event);
    int64_t ack_at = -1;
    for (const TraceLine& l : r.trace) {
      if (l.t_ms > effect_at && l.actor == "w1" && l.request.rfind("XACK", 0) == 0) {
        ack_at = l.t_ms;
        break;
      }
    }
    ASSERT_GE(effect_at, 0) << event << "\n" << trace_;
    ASSERT_GT(ack_at, effect_at) << event << "\n" << trace_;
    const int64_t expected = EffectMsOf(timing, 11, event);
    // The XACK is the worker's next step once its effect is over.
    EXPECT_GE(ack_at - effect_at, expected) << event << "\n" << trace_;
    EXPECT_LE(ack_at - effect_at, expected + 5) << event << "\n" << trace_;
    busy.insert(ack_at - effect_at);
  }
  EXPECT_GE(busy.size(), 3u) << "six events, one spread: their effects do not all take as long\n" << trace_;
}

TEST_F(EnvironmentTimingTest, ABurstAddsItsEventsBackToBackThenWaitsForThemAll) {
  RunResult r = Run("no-dedupe", {}, [](RunConfig& c) {
    c.events = 8;
    c.timing.produce_every_ms = 100;
    c.timing.produce_burst = 4;
  });
  ASSERT_TRUE(r.violations.empty()) << trace_;
  std::map<int, int64_t> added;
  for (int e = 1; e <= 8; ++e) {
    added[e] = FirstAt(r, "XADD", EventId(e));
    ASSERT_GE(added[e], 0) << e << "\n" << trace_;
  }
  // Within a burst: one step apart (a few ms at most, other actors' steps
  // between); between bursts: the burst's whole interval, 4 x 100 ms.
  EXPECT_LE(added[4] - added[1], 20) << trace_;
  EXPECT_LE(added[8] - added[5], 20) << trace_;
  EXPECT_GE(added[5] - added[4], 400) << trace_;
}

}  // namespace
}  // namespace xackly
