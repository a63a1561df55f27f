// How check turns a generated case into a run and decides that a run is what
// it looks for. Both are pure functions; a slip in either changes what every
// check finds without any test of a single run noticing.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"

namespace xackly {
namespace {

RunResult WithViolations(std::vector<Violation> v) {
  RunResult r;
  r.violations = std::move(v);
  return r;
}

Violation V(VerdictKind kind, std::string cause) { return {kind, "order:1", std::move(cause), "", 2}; }

TEST(IsHitTest, ACorrectProtocolsCheckLooksForAnyViolation) {
  Expectation ok{VerdictKind::kOk, ""};
  EXPECT_FALSE(IsHit(ok, WithViolations({})));
  EXPECT_TRUE(IsHit(ok, WithViolations({V(VerdictKind::kPelLeak, "done-but-pending")})));
}

TEST(IsHitTest, ABrokenProtocolsCheckLooksForItsKindAndCause) {
  Expectation crash{VerdictKind::kDuplicate, "crash:after-effect"};
  EXPECT_TRUE(IsHit(crash, WithViolations({V(VerdictKind::kDuplicate, "crash:after-effect")})));
  // The right kind for the wrong reason is not what the check looks for.
  EXPECT_FALSE(IsHit(crash, WithViolations({V(VerdictKind::kDuplicate, "stall")})));
  EXPECT_FALSE(IsHit(crash, WithViolations({V(VerdictKind::kDuplicate, "crash:after-read")})));
  // The cause on another kind neither.
  EXPECT_FALSE(IsHit(crash, WithViolations({V(VerdictKind::kLost, "crash:after-effect")})));
  EXPECT_FALSE(IsHit(crash, WithViolations({})));
  // One matching violation among others is a hit; the cause is a prefix.
  EXPECT_TRUE(IsHit({VerdictKind::kDuplicate, "crash"},
                    WithViolations({V(VerdictKind::kLost, "stranded"), V(VerdictKind::kDuplicate, "crash:mid-batch")})));
  EXPECT_TRUE(IsHit({VerdictKind::kLost, ""}, WithViolations({V(VerdictKind::kLost, "stranded")})));
}

TEST(ApplyCaseTest, FaultsAreFoldedIntoTheCasesWorkersAndEvents) {
  RunConfig base = RunConfig::For(*FindProtocol("dlq-after-3"));
  GeneratedCase c;
  c.workers = 2;
  c.events = 3;
  c.seed = 17;
  for (const char* f : {"crash w1 after-read #1", "crash w2 after-ack #2", "crash w3 after-read #1",
                        "stall w4 after-read #1 60000ms", "lost-reply w5 XACK #1", "lost-reply p1 XADD #1",
                        "poison event 3", "poison event 4", "poison event 8", "xdel pending @40ms"}) {
    c.faults.push_back(*ParseFaultSpec(f));
  }
  RunConfig config = ApplyCase(base, c);
  EXPECT_EQ(config.workers, 2);
  EXPECT_EQ(config.events, 3);
  EXPECT_EQ(config.seed, 17u);
  ASSERT_TRUE(config.fault_schedule);
  std::vector<std::string> folded;
  for (const FaultSpec& f : *config.fault_schedule) folded.push_back(f.ToString());
  EXPECT_EQ(folded, (std::vector<std::string>{
                        "crash w1 after-read #1", "crash w2 after-ack #2", "crash w1 after-read #1",
                        "stall w2 after-read #1 60000ms", "lost-reply w1 XACK #1", "lost-reply p1 XADD #1",
                        "poison event 3", "poison event 1", "poison event 2", "xdel pending @40ms"}));
  EXPECT_TRUE(config.picks.empty());
}

// A drawn value of 0 keeps the base's; any drawn value, down to 1 ms,
// replaces it; and the case's text names every value it drew.
TEST(ApplyCaseTest, AZeroKeepsTheBasesTimingAndOneMillisecondIsAValue) {
  RunConfig base = RunConfig::For(*FindProtocol("txn-dedupe"));
  base.timing.effect_ms = 40;
  base.timing.produce_every_ms = 7;
  base.timing.produce_burst = 3;
  base.timing.restart_delay_ms = 900;
  GeneratedCase kept;
  kept.workers = 1;
  kept.events = 2;
  RunConfig same = ApplyCase(base, kept);
  EXPECT_EQ(same.timing.effect_ms, 40);
  EXPECT_EQ(same.timing.produce_every_ms, 7);
  EXPECT_EQ(same.timing.produce_burst, 3);
  EXPECT_EQ(same.timing.restart_delay_ms, 900);
  EXPECT_EQ(kept.ToString(), "1 worker, 2 events, seed 0");

  GeneratedCase ones = kept;
  ones.effect_ms = 1;
  ones.produce_every_ms = 1;
  ones.restart_delay_ms = 1;
  RunConfig drawn = ApplyCase(base, ones);
  EXPECT_EQ(drawn.timing.effect_ms, 1);
  EXPECT_EQ(drawn.timing.produce_every_ms, 1);
  EXPECT_EQ(drawn.timing.restart_delay_ms, 1);
  EXPECT_EQ(ones.ToString(), "1 worker, 2 events, seed 0, effects 1 ms, an event every 1 ms, restarts after 1 ms");
}

}  // namespace
}  // namespace xackly
