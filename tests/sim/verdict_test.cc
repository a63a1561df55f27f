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

TEST(VerdictTest, AlternativesMatchAnyOneOfThem) {
  Expectation e;
  ASSERT_TRUE(Expectation::Parse("lost|stuck", &e));
  EXPECT_EQ(e.ToString(), "lost|stuck");
  EXPECT_TRUE(Matches(e, {V(VerdictKind::kLost, "stranded")}));
  EXPECT_TRUE(Matches(e, {V(VerdictKind::kStuck, "never-settled")}));
  EXPECT_FALSE(Matches(e, {V(VerdictKind::kLost, "stranded"), V(VerdictKind::kStuck, "never-settled")}));
  EXPECT_FALSE(Matches(e, {}));
  EXPECT_FALSE(e.IsOk());
}

TEST(VerdictTest, CombinationsNeedEveryKindAndNoOther) {
  Expectation e;
  ASSERT_TRUE(Expectation::Parse("duplicate:crash+pel-leak", &e));
  EXPECT_EQ(e.ToString(), "duplicate:crash+pel-leak");
  EXPECT_TRUE(Matches(e, {V(VerdictKind::kPelLeak, "done-but-pending"), V(VerdictKind::kDuplicate, "crash:after-effect")}));
  EXPECT_FALSE(Matches(e, {V(VerdictKind::kDuplicate, "crash:after-effect")}));
  EXPECT_FALSE(Matches(e, {V(VerdictKind::kPelLeak, "x"), V(VerdictKind::kDuplicate, "stall")}));
  // What a search looks for: every term shown, whatever else happened.
  EXPECT_TRUE(Shows(e, {V(VerdictKind::kPelLeak, "x"), V(VerdictKind::kDuplicate, "crash:after-ack"),
                        V(VerdictKind::kLost, "stranded")}));
  EXPECT_FALSE(Shows(e, {V(VerdictKind::kPelLeak, "x")}));
}

TEST(VerdictTest, UnknownCausesAreRejectedWithTheList) {
  Expectation e;
  std::string why;
  EXPECT_FALSE(Expectation::Parse("lost:typo-cause", &e, &why));
  EXPECT_NE(why.find("'typo-cause' is not a cause of lost"), std::string::npos) << why;
  EXPECT_NE(why.find("payload-deleted"), std::string::npos) << why;
  EXPECT_FALSE(Expectation::Parse("duplicate:crash:after-nothing", &e, &why));
  EXPECT_FALSE(Expectation::Parse("duplicate|", &e, &why));
  EXPECT_FALSE(Expectation::Parse("ok+lost", &e, &why));
  EXPECT_FALSE(Expectation::Parse("lost+lost", &e, &why));
  // Families and known sites are causes.
  EXPECT_TRUE(Expectation::Parse("duplicate:crash", &e));
  EXPECT_TRUE(Expectation::Parse("duplicate:lost-reply:XACK", &e));
  EXPECT_TRUE(Expectation::Parse("lost:payload-deleted|stuck:never-settled", &e));
  // A script's sites are sites too, and a position-based reader's loss is
  // caused by the crash or lost reply after its XREAD.
  EXPECT_TRUE(Expectation::Parse("duplicate:crash:after-COMMIT", &e));
  EXPECT_TRUE(Expectation::Parse("lost:crash:after-INSERT", &e));
  EXPECT_TRUE(Expectation::Parse("lost:lost-reply:INSERT|lost:effect-failed", &e));
  EXPECT_FALSE(Expectation::Parse("lost:crash:after-commitx", &e, &why));
  EXPECT_FALSE(Expectation::Parse("stuck:crash:after-effect", &e, &why));
  EXPECT_TRUE(Expectation::Parse("ok", &e));
  EXPECT_TRUE(e.IsOk());
}

}  // namespace
}  // namespace xackly
