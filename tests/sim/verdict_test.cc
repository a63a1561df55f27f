// The exit code of every run hangs on Matches(): a broken protocol's
// expectation is met only by exactly its violation kind (and cause, when the
// expectation names one).
#include <gtest/gtest.h>

#include "sim/verdict.h"

namespace xackly {
namespace {

Violation V(VerdictKind k, std::string cause) { return {k, "order:1", std::move(cause), "", 2}; }

TEST(VerdictTest, ExpectationTextRoundTrips) {
  Expectation e;
  ASSERT_TRUE(Expectation::Parse("duplicate:crash:after-effect", &e));
  EXPECT_EQ(e.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(e.cause, "crash:after-effect");
  EXPECT_EQ(e.ToString(), "duplicate:crash:after-effect");
  EXPECT_FALSE(Expectation::Parse("duplicated", &e));
  EXPECT_FALSE(Expectation::Parse("ok:anything", &e));
}

TEST(VerdictTest, OkMatchesOnlyNoViolations) {
  EXPECT_TRUE(Matches({VerdictKind::kOk, ""}, {}));
  EXPECT_FALSE(Matches({VerdictKind::kOk, ""}, {V(VerdictKind::kPelLeak, "done-but-pending")}));
}

TEST(VerdictTest, KindMustBeTheOnlyOneAndCauseIsAPrefix) {
  Expectation dup{VerdictKind::kDuplicate, "crash"};
  EXPECT_TRUE(Matches(dup, {V(VerdictKind::kDuplicate, "crash:after-effect")}));
  EXPECT_FALSE(Matches(dup, {V(VerdictKind::kDuplicate, "stall")}));
  EXPECT_FALSE(Matches(dup, {V(VerdictKind::kDuplicate, "crash:after-effect"),
                             V(VerdictKind::kLost, "stranded")}));
  EXPECT_FALSE(Matches(dup, {}));
  EXPECT_EQ(ObservedClass({V(VerdictKind::kLost, "x"), V(VerdictKind::kDuplicate, "y")}),
            "duplicate+lost");
}

TEST(VerdictTest, AnotherKindNeverMatchesEvenWithTheExpectedCause) {
  EXPECT_FALSE(Matches({VerdictKind::kLost, ""}, {V(VerdictKind::kDuplicate, "crash:after-effect")}));
  EXPECT_FALSE(Matches({VerdictKind::kDuplicate, "crash"}, {V(VerdictKind::kLost, "crash:after-ack")}));
  EXPECT_TRUE(Matches({VerdictKind::kLost, "crash"}, {V(VerdictKind::kLost, "crash:after-ack")}));
}

}  // namespace
}  // namespace xackly
