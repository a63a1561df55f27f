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

}  // namespace
}  // namespace xackly
