// The oracle's explanations where they are easiest to get subtly wrong: the
// TTL boundary of a dedupe record, which of several workers a duplicate is
// blamed on, and the PEL self-check that must speak up when the oracle's
// model and Redis disagree. Observations are fed by hand; no server.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/oracle.h"
#include "sim/store.h"

namespace xackly {
namespace {

StreamEntry Entry(const std::string& id, const std::string& event_id) {
  return StreamEntry{id, false, {{"event_id", event_id}}};
}

// One event, produced as 0-1 and delivered to w1 at 1 ms.
class OracleCausesTest : public ::testing::Test {
 protected:
  OracleCausesTest() : oracle_(1) {
    oracle_.Produced(0, "p1", "order:1", "0-1", Oracle::ProduceOutcome::kAcknowledged);
    oracle_.Delivered(1, "w1", {Entry("0-1", "order:1")}, DeliveryVia::kNew);
  }

  void EffectBy(const std::string& consumer, int64_t t) {
    EffectRecord e{"order:1", "0-1", consumer, t, "redis"};
    oracle_.Effect(e);
    ledger_.Record(e);
  }

  Violation OnlyViolation() {
    std::vector<Violation> v = oracle_.Judge(Oracle::FinalState{}, ledger_);
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? Violation{} : v[0];
  }

  Oracle oracle_;
  EffectLedger ledger_;
};

// Redis keeps a key through its expire time (expired only when now > when).
TEST_F(OracleCausesTest, ADedupeRecordStillHoldsAtExactlyItsExpiryTime) {
  EffectBy("w1", 10);
  oracle_.DedupeRecord(10, "w1", "order:1", 1000);
  oracle_.Delivered(1010, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  EffectBy("w2", 1010);  // at 10 + 1000 ms: the record was still there
  Violation v = OnlyViolation();
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_NE(v.cause, "dedupe-expired") << v.detail;
}

TEST_F(OracleCausesTest, ADedupeRecordIsGoneOneMillisecondAfterItsExpiryTime) {
  EffectBy("w1", 10);
  oracle_.DedupeRecord(10, "w1", "order:1", 1000);
  oracle_.Delivered(1011, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  EffectBy("w2", 1011);
  Violation v = OnlyViolation();
  EXPECT_EQ(v.cause, "dedupe-expired") << v.detail;
  EXPECT_NE(v.detail.find("expired after 1000 ms"), std::string::npos) << v.detail;
}

TEST_F(OracleCausesTest, ACrashIsBlamedOnTheWorkerThatRanTheFirstEffect) {
  // w1 runs the effect; w2 claims the entry and crashes after the claim
  // (earlier), then w1 crashes before XACK; w3 runs the effect again. The
  // duplicate is w1's crash: w2 never ran the effect.
  EffectBy("w1", 10);
  oracle_.Delivered(11, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  oracle_.WorkerFault(HistoryKind::kCrash, 12, "w2", "after-claim", {"order:1"});
  oracle_.WorkerFault(HistoryKind::kCrash, 13, "w1", "after-effect", {"order:1"});
  oracle_.Delivered(40000, "w3", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  EffectBy("w3", 40010);
  Violation v = OnlyViolation();
  EXPECT_EQ(v.cause, "crash:after-effect") << v.detail;
  EXPECT_NE(v.detail.find("w1 crashed at after-effect"), std::string::npos) << v.detail;
}

TEST_F(OracleCausesTest, AnotherWorkersCrashDoesNotHideAStall) {
  // w1 stalls after its effect; w2 claims and crashes after the claim; w2's
  // replacement runs the effect again. The cause is w1's stall.
  EffectBy("w1", 10);
  oracle_.WorkerFault(HistoryKind::kStall, 11, "w1", "after-effect", {"order:1"}, 60000);
  oracle_.Delivered(30020, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  oracle_.WorkerFault(HistoryKind::kCrash, 30021, "w2", "after-claim", {"order:1"});
  oracle_.Delivered(40000, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kOwnPending);
  EffectBy("w2", 40010);
  Violation v = OnlyViolation();
  EXPECT_EQ(v.cause, "stall") << v.detail;
  EXPECT_NE(v.detail.find("w1 stalled at after-effect"), std::string::npos) << v.detail;
}

TEST_F(OracleCausesTest, AnotherWorkersLostReplyDoesNotHideALostRequest) {
  EffectBy("w1", 10);
  oracle_.Delivered(11, "w2", {Entry("0-1", "order:1")}, DeliveryVia::kClaim);
  oracle_.WorkerFault(HistoryKind::kLostReply, 12, "w2", "XAUTOCLAIM", {"order:1"});
  oracle_.WorkerFault(HistoryKind::kLostRequest, 13, "w1", "XACK", {"order:1"});
  oracle_.Delivered(2000, "w1", {Entry("0-1", "order:1")}, DeliveryVia::kOwnPending);
  EffectBy("w1", 2010);
  EXPECT_EQ(OnlyViolation().cause, "lost-request:XACK");
}

TEST(OracleSelfCheckTest, ThePelModelAgreeingWithRedisReportsNothing) {
  Oracle oracle(2);
  oracle.Delivered(1, "w1", {Entry("0-1", "order:1"), Entry("0-2", "order:2")}, DeliveryVia::kNew);
  oracle.Acked(2, "w1", {"0-1"});
  Oracle::FinalState fs;
  fs.pending = {{"0-2", "w1", 5, 1}};
  EXPECT_TRUE(oracle.ModelMismatches(fs).empty());
}

TEST(OracleSelfCheckTest, EveryKindOfPelDisagreementIsReported) {
  Oracle oracle(3);
  oracle.Delivered(1, "w1", {Entry("0-1", "order:1"), Entry("0-2", "order:2"), Entry("0-3", "order:3")},
                   DeliveryVia::kNew);
  Oracle::FinalState fs;
  fs.pending = {{"0-1", "w2", 5, 1},   // another owner
                {"0-3", "w1", 5, 1},   // agrees
                {"0-9", "w3", 5, 1}};  // unknown to the model
  // 0-2: in the model only.
  std::vector<std::string> m = oracle.ModelMismatches(fs);
  EXPECT_EQ(m, (std::vector<std::string>{
                   "0-1 is owned by w2 in Redis but by w1 in the oracle's model",
                   "0-9 is pending with w3 in Redis but not in the oracle's model",
                   "0-2 is pending with w1 in the oracle's model but not in Redis",
               }));
}

}  // namespace
}  // namespace xackly
