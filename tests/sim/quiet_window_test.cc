// The quiet window and idle waits (sim/quiet_window.h), without a server:
// every rule the scheduler ends a drain by, from the config alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "sim/quiet_window.h"
#include "sim/script_world.h"

namespace xackly {
namespace {

// A protocol script as the window sees one: only its presence matters.
class NoScript final : public ProtocolScript {
 public:
  const std::string& path() const override { return path_; }
  bool Defines(ScriptRole) const override { return true; }
  Task<Status> Run(ScriptActorInfo, ScriptWorld&) const override { co_return Status::Ok(); }

 private:
  std::string path_ = "consumer.lua";
};

// A protocol without claims, dead letters or a janitor: the window is its
// block, a restart, a reconnect, a second, and one batch of effects.
RunConfig Plain() {
  ProtocolDef p;
  p.name = "plain";
  p.loop.claim = false;
  p.loop.block_ms = 2000;
  p.loop.read_count = 10;
  RunConfig c = RunConfig::For(p);
  c.faults.kinds.clear();
  c.timing.restart_delay_ms = 5000;
  c.timing.reconnect_ms = 1000;
  c.timing.effect_ms = 10;
  c.timing.step_ms = 1;
  return c;
}
constexpr int64_t kPlainMs = 2000 + 5000 + 1000 + 1000 + 10 * (10 + 10 * 1);

RunConfig Script(RunConfig c) {
  c.protocol.script = std::make_shared<NoScript>();
  return c;
}

TEST(QuietWindowTest, ABuiltInProtocolsWindowIsTheSumOfItsTimers) {
  const QuietWindow w(Plain());
  EXPECT_EQ(w.timers_window_ms(), kPlainMs);
  EXPECT_EQ(w.window_ms(), kPlainMs);
}

TEST(QuietWindowTest, ClaimsDeadLettersAndAJanitorEachWidenTheWindow) {
  RunConfig claim = Plain();
  claim.protocol.loop.claim = true;
  claim.protocol.loop.claim_min_idle_ms = 30000;
  claim.protocol.loop.claim_every_ms = 5000;
  const int64_t batch = 10 * (10 + 10);
  EXPECT_EQ(QuietWindow(claim).window_ms(), kPlainMs + 2 * (30000 + 5000 + batch));

  RunConfig dlq = Plain();
  dlq.protocol.loop.dead_letter_after = 3;
  dlq.protocol.loop.claim_min_idle_ms = 100;
  dlq.protocol.loop.claim_every_ms = 50;
  EXPECT_EQ(QuietWindow(dlq).window_ms(), kPlainMs + 3 * (100 + 50 + batch));

  RunConfig janitor = Plain();
  janitor.protocol.janitor.trim = TrimPolicy::kMaxLen;
  janitor.protocol.janitor.every_ms = 10;
  janitor.protocol.janitor.consumer_idle_ms = 7000;
  ASSERT_TRUE(janitor.protocol.janitor.enabled());
  EXPECT_EQ(QuietWindow(janitor).window_ms(), kPlainMs + 10 + 7000);
}

TEST(QuietWindowTest, TheLongestStallOrOutageOfTheModelOrTheScheduleCounts) {
  RunConfig model = Plain();
  model.faults.kinds = {FaultKind::kStall, FaultKind::kStoreOutage};
  model.faults.stall_ms = 60000;
  model.faults.store_outage_ms = 3000;
  EXPECT_EQ(QuietWindow(model).window_ms(), kPlainMs + 60000);

  RunConfig scheduled = Plain();  // a replay's plan: the kinds need not be in the model
  scheduled.fault_schedule = std::vector<FaultSpec>{*ParseFaultSpec("store-outage 90000ms @5ms"),
                                                   *ParseFaultSpec("stall w1 after-read #1 2000ms")};
  EXPECT_EQ(QuietWindow(scheduled).window_ms(), kPlainMs + 90000);

  RunConfig stalled = Plain();  // a scheduled stall counts; a clock jump is no silence
  stalled.fault_schedule = std::vector<FaultSpec>{*ParseFaultSpec("stall w1 after-read #1 90000ms"),
                                                 *ParseFaultSpec("clock-jump +600000ms @5ms")};
  EXPECT_EQ(QuietWindow(stalled).window_ms(), kPlainMs + 90000);
}

TEST(QuietWindowTest, ASetWindowOverridesEveryRuleAndTheScriptFloor) {
  RunConfig c = Script(Plain());
  c.timing.quiet_window_ms = 1234;
  const QuietWindow w(c);
  EXPECT_EQ(w.timers_window_ms(), 1234);
  EXPECT_EQ(w.window_ms(), 1234);
}

TEST(QuietWindowTest, AScriptWaitsAtLeastTheFloorForTimersItMayKeepInVariables) {
  const QuietWindow w(Script(Plain()));
  EXPECT_EQ(w.timers_window_ms(), kPlainMs);
  EXPECT_EQ(w.window_ms(), kScriptQuietFloorMs);
}

TEST(QuietWindowTest, AScriptTimerBeyondTheDeclaredOnesWidensTheWindowTwice) {
  const RunConfig c = Plain();
  const ProtocolDef& p = c.protocol;
  const QuietWindow w(c);
  EXPECT_EQ(w.declared_timer_ms(), std::max({p.loop.block_ms, p.loop.claim_min_idle_ms + p.loop.claim_every_ms,
                                             p.dedupe_ttl_ms, p.janitor.every_ms + p.janitor.consumer_idle_ms}));
  EXPECT_EQ(w.CurrentMs(0), w.window_ms());
  EXPECT_EQ(w.CurrentMs(w.declared_timer_ms()), w.window_ms());
  EXPECT_EQ(w.CurrentMs(w.declared_timer_ms() + 500), w.window_ms() + 1000);
  EXPECT_EQ(w.CurrentMs(INT64_MAX), INT64_MAX);  // saturates
}

TEST(QuietWindowTest, AnUnsettledRunIsJudgedAfterADayOrTenWindows) {
  const QuietWindow w(Plain());
  EXPECT_EQ(w.UnsettledHorizonMs(0), kUnsettledHorizonMs);
  const int64_t long_timer = kUnsettledHorizonMs;  // a window of over two days
  EXPECT_EQ(w.UnsettledHorizonMs(long_timer), 10 * w.CurrentMs(long_timer));
}

TEST(QuietWindowTest, OnlyAQuietScriptRunAfterItsFaultPhaseStretchesItsIdleWaits) {
  const QuietWindow script(Script(Plain()));
  const int64_t past = script.timers_window_ms() + 1;
  EXPECT_EQ(script.IdleWaitMs(1, past, /*fault_phase=*/true), 1);                   // faults still on
  EXPECT_EQ(script.IdleWaitMs(1, script.timers_window_ms(), false), 1);             // not quiet long enough
  EXPECT_EQ(script.IdleWaitMs(1, 1'000'000, false), 1'000'000 / kIdleStretchDivisor);  // stretched
  EXPECT_EQ(script.IdleWaitMs(50'000, 1'000'000, false), 50'000);                   // never shorter than asked
  const QuietWindow builtin(Plain());
  EXPECT_EQ(builtin.IdleWaitMs(1, 1'000'000, false), 1);  // the catalog's traces keep their length
}

TEST(QuietWindowTest, OnlyWorkLongerThanTheEffectTimeIsLongWork) {
  const QuietWindow w(Plain());
  EXPECT_FALSE(w.IsLongWork(10));
  EXPECT_TRUE(w.IsLongWork(11));
}

TEST(QuietWindowTest, TheSilenceStartsAtTheLatestOfDrainProgressAndLongWork) {
  EXPECT_EQ((Silence{100, 50, 70}).SinceMs(), 100);
  EXPECT_EQ((Silence{100, 150, 70}).SinceMs(), 150);
  EXPECT_EQ((Silence{100, 150, 900}).SinceMs(), 900);
}

}  // namespace
}  // namespace xackly
