// The judge on its own, without a server: each test feeds the oracle the
// observations a run would make (what Redis replied, what the ledger saw,
// what faults fired), then checks the verdict and, above all, the cause a
// user reads. Every verdict kind and every cause the oracle can give has a
// test here; together they run in milliseconds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/oracle.h"
#include "sim/worker.h"

namespace xackly {
namespace {

StreamEntry Entry(const std::string& id, int event) {
  return StreamEntry{id, false, {{"event_id", EventId(event)}}};
}

// A small world of `events` events, one ledger, one final state, and
// helpers that say what happened in the words of a run.
class OracleTest : public ::testing::Test {
 protected:
  void Init(int events) { oracle_ = std::make_unique<Oracle>(events); }

  // XADD of event n acknowledged as entry "n-0" at t = n ms.
  void Produce(int n, Oracle::ProduceOutcome how = Oracle::ProduceOutcome::kAcknowledged,
               const std::string& id = "") {
    oracle_->Produced(n, "p1", EventId(n), id.empty() ? Id(n) : id, how);
  }
  static std::string Id(int n) { return std::to_string(n) + "-0"; }
  void Deliver(int64_t t, const std::string& consumer, int n, DeliveryVia via = DeliveryVia::kNew) {
    oracle_->Delivered(t, consumer, {Entry(Id(n), n)}, via);
  }
  void Effect(int64_t t, const std::string& consumer, int n, const std::string& id = "") {
    EffectRecord r{EventId(n), id.empty() ? Id(n) : id, consumer, t, "sql"};
    ledger_.Record(r);
    oracle_->Effect(r);
  }
  void Ack(int64_t t, const std::string& consumer, int n) { oracle_->Acked(t, consumer, {Id(n)}); }
  // Deliver, effect, ack: event n handled once by `consumer`.
  void Handle(int64_t t, const std::string& consumer, int n) {
    Deliver(t, consumer, n);
    Effect(t + 1, consumer, n);
    Ack(t + 2, consumer, n);
  }
  std::vector<Violation> Judge() {
    if (final_.live_consumers.empty()) final_.live_consumers = {"w1", "w2"};
    return oracle_->Judge(final_, ledger_);
  }
  // The single violation of the run (fails the test when there is not one).
  Violation Only() {
    std::vector<Violation> v = Judge();
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? Violation{} : v.front();
  }

  std::unique_ptr<Oracle> oracle_;
  EffectLedger ledger_;
  Oracle::FinalState final_;
};

TEST_F(OracleTest, EveryEventHandledOnceIsOk) {
  Init(3);
  for (int n = 1; n <= 3; ++n) Produce(n);
  for (int n = 1; n <= 3; ++n) Handle(10 * n, "w1", n);
  EXPECT_TRUE(oracle_->NothingLeftToDeliver());
  EXPECT_TRUE(Judge().empty());
  EXPECT_EQ(oracle_->effect_counts().at("order:2"), 1);
  EXPECT_TRUE(oracle_->ModelMismatches(final_).empty());
}

TEST_F(OracleTest, DeadLetteredEventIsAccountedFor) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  oracle_->EffectFailed(6, "w1", EventId(1), Id(1), "poison");
  oracle_->DeadLettered(7, "w1", EventId(1), Id(1));
  Ack(8, "w1", 1);
  final_.dead_letters = {Entry("9-0", 1)};
  EXPECT_TRUE(Judge().empty());
}

// --- duplicate: every cause, in the order the oracle tries them ----------

TEST_F(OracleTest, DuplicateAfterCrashBetweenEffectAndAckBlamesTheCrash) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Effect(6, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kCrash, 7, "w1", "after-effect", {EventId(1)});
  Deliver(20, "w2", 1, DeliveryVia::kClaim);
  Effect(21, "w2", 1);
  Ack(22, "w2", 1);
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.event_id, "order:1");
  EXPECT_EQ(v.cause, "crash:after-effect");
  EXPECT_EQ(v.effect_count, 2);
  EXPECT_NE(v.detail.find("w1 crashed at after-effect"), std::string::npos) << v.detail;
}

TEST_F(OracleTest, DuplicateAfterExpiredDoneRecordBlamesTheTtl) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Effect(6, "w1", 1);
  oracle_->DedupeRecord(7, "w1", EventId(1), 100);
  oracle_->WorkerFault(HistoryKind::kCrash, 8, "w1", "before-ack", {EventId(1)});
  Deliver(500, "w2", 1, DeliveryVia::kClaim);
  Effect(501, "w2", 1);
  EXPECT_EQ(Only().cause, "dedupe-expired");  // the expiry explains more than the crash
}

TEST_F(OracleTest, DoneRecordStillAliveAtTheRedeliveryIsNotBlamed) {
  Init(1);
  Produce(1);
  Effect(6, "w1", 1);
  oracle_->DedupeRecord(7, "w1", EventId(1), 1000);  // alive until 1007 ms
  oracle_->WorkerFault(HistoryKind::kCrash, 8, "w1", "before-ack", {EventId(1)});
  Effect(501, "w2", 1);
  EXPECT_EQ(Only().cause, "crash:before-ack");
}

TEST_F(OracleTest, DuplicateAcrossServerRestartBlamesTheRestart) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Effect(6, "w1", 1);
  Ack(7, "w1", 1);
  oracle_->ServerRestarted(10, Persistence::kNone, {Id(1)}, {}, "");
  Deliver(20, "w2", 1);
  Effect(21, "w2", 1);
  Ack(22, "w2", 1);
  Violation v = Only();
  EXPECT_EQ(v.cause, "server-restart");
  EXPECT_NE(v.detail.find("restarted at 10 ms"), std::string::npos) << v.detail;
}

TEST_F(OracleTest, DuplicateFromTwoEntriesBlamesTheProducerRetry) {
  Init(1);
  Produce(1, Oracle::ProduceOutcome::kUnknown, "1-0");
  Produce(1, Oracle::ProduceOutcome::kAcknowledged, "2-0");
  Effect(5, "w1", 1, "1-0");
  Effect(6, "w2", 1, "2-0");
  EXPECT_EQ(Only().cause, "producer-retry");
}

TEST_F(OracleTest, DuplicateAfterLostReplyBlamesTheLostReplyAndItsSite) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Effect(6, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kLostReply, 7, "w1", "xack", {EventId(1)});
  Deliver(20, "w2", 1, DeliveryVia::kClaim);
  Effect(21, "w2", 1);
  EXPECT_EQ(Only().cause, "lost-reply:xack");
}

TEST_F(OracleTest, DuplicateAfterStallBlamesTheStall) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kStall, 6, "w1", "before-effect", {EventId(1)}, 5000);
  Deliver(100, "w2", 1, DeliveryVia::kClaim);
  Effect(101, "w2", 1);
  Effect(5006, "w1", 1);
  Violation v = Only();
  EXPECT_EQ(v.cause, "stall");
  EXPECT_NE(v.detail.find("w1 stalled at before-effect"), std::string::npos) << v.detail;
}

TEST_F(OracleTest, DuplicateAfterLostRequestBlamesTheLostRequest) {
  Init(1);
  Produce(1);
  Effect(6, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kLostRequest, 7, "w1", "xack", {EventId(1)});
  Effect(21, "w2", 1);
  EXPECT_EQ(Only().cause, "lost-request:xack");
}

TEST_F(OracleTest, DuplicateWithNoFaultIsARedelivery) {
  Init(1);
  Produce(1);
  Effect(6, "w1", 1);
  Effect(21, "w2", 1);
  EXPECT_EQ(Only().cause, "redelivered");
}

TEST_F(OracleTest, FaultsOfAnotherConsumerAreNotBlamed) {
  Init(1);
  Produce(1);
  Effect(6, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kCrash, 7, "w2", "after-effect", {EventId(1)});
  Effect(21, "w2", 1);
  EXPECT_EQ(Only().cause, "redelivered");
}

// --- lost: every cause -----------------------------------------------------

TEST_F(OracleTest, LostAfterDelConsumerBlamesTheDeletedConsumer) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  oracle_->ConsumerDeleted(9, "fault", "w1");
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "consumer-deleted");
  EXPECT_TRUE(oracle_->NothingLeftToDeliver());  // the PEL model dropped it too
}

// A failover that dropped the XACK of the entry: the sentence names the
// write; one that dropped nothing about it only cut the connection, and
// the sentence says that instead of claiming a loss.
class FailoverOracleTest : public OracleTest {
 protected:
  Violation DuplicateAcross(const std::vector<ReplicatedWrite>& dropped) {
    Init(1);
    Produce(1);
    Deliver(5, "w1", 1);
    Effect(6, "w1", 1);
    oracle_->FailedOver(10, dropped, {Id(1)}, {{Id(1), "w1", 0, 1}}, Id(1));
    Effect(1020, "w1", 1);
    Ack(1021, "w1", 1);
    return Only();
  }
};

TEST_F(FailoverOracleTest, ADroppedWriteAboutTheEventIsNamed) {
  Violation v = DuplicateAcross({{{{"XACK", "events", "workers", Id(1)}}}});
  EXPECT_EQ(v.cause, "failover");
  EXPECT_NE(v.detail.find("never received this write: XACK events workers " + Id(1) +
                          ": the write about this event (XACK events workers " + Id(1) + ") was lost"),
            std::string::npos)
      << v.detail;
}

// A write naming another entry whose ID merely contains this one's ("11-0"
// holds "1-0") is not about this event.
TEST_F(FailoverOracleTest, AWriteAboutAnotherEntryIsNotThisEventsLoss) {
  Violation v = DuplicateAcross({{{{"XACK", "events", "workers", Id(11)}}}});
  EXPECT_EQ(v.cause, "failover");
  EXPECT_NE(v.detail.find("it dropped nothing about this event"), std::string::npos) << v.detail;
}

TEST_F(FailoverOracleTest, AFailoverThatDroppedNothingAboutTheEventIsToldAsACut) {
  Violation v = DuplicateAcross({});
  EXPECT_EQ(v.cause, "failover");
  EXPECT_NE(v.detail.find("had received every write; it dropped nothing about this event, but every "
                          "connection died, cutting w1 off"),
            std::string::npos)
      << v.detail;
}

TEST_F(OracleTest, LostAfterXdelBlamesTheDeletedPayload) {
  Init(2);
  Produce(1);
  Produce(2);
  Handle(10, "w1", 2);
  oracle_->PayloadsDeleted(20, "fault", {Id(1)}, "XDEL", "XDEL of a unread entry");
  Violation v = Only();
  EXPECT_EQ(v.event_id, "order:1");
  EXPECT_EQ(v.cause, "payload-deleted");
  EXPECT_EQ(oracle_->live_count(), 1u);
}

TEST_F(OracleTest, LostByRestartBlamesServerDataLoss) {
  Init(2);
  Produce(1);
  Produce(2);
  oracle_->ServerRestarted(10, Persistence::kNone, {Id(2)}, {}, "");
  Handle(20, "w1", 2);
  EXPECT_EQ(Only().cause, "server-data-loss");
}

TEST_F(OracleTest, EventNeverAddedIsNeverProduced) {
  Init(1);
  Produce(1, Oracle::ProduceOutcome::kNotSent);
  EXPECT_FALSE(oracle_->NothingLeftToDeliver());
  EXPECT_EQ(Only().cause, "never-produced");
}

TEST_F(OracleTest, PendingWithAGoneConsumerIsStranded) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  final_.pending = {{Id(1), "w1", 100, 1}};
  final_.live_consumers = {"w1.2"};
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "stranded");
}

TEST_F(OracleTest, PendingWithALiveConsumerAndNoEffectIsStuck) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  oracle_->EffectFailed(6, "w1", EventId(1), Id(1), "poison");
  final_.pending = {{Id(1), "w1", 100, 7}};
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kStuck);
  EXPECT_EQ(v.cause, "never-settled");
}

TEST_F(OracleTest, AckWithoutEffectIsLost) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Ack(6, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kCrash, 7, "w1", "after-ack", {EventId(1)});
  Violation v = Only();
  EXPECT_EQ(v.cause, "acked-without-effect");
  EXPECT_NE(v.detail.find("crashed at after-ack right after"), std::string::npos) << v.detail;
}

TEST_F(OracleTest, LeftThePelWithoutEffectOrAckIsDropped) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  oracle_->ClaimFoundDeleted(6, "w2", {Id(1)});
  EXPECT_EQ(Only().cause, "dropped");
}

TEST_F(OracleTest, InTheStreamButNeverReadIsNeverDelivered) {
  Init(1);
  Produce(1);
  EXPECT_FALSE(oracle_->NothingLeftToDeliver());
  EXPECT_EQ(Only().cause, "never-delivered");
}

// --- position-based readers (plain XREAD, no group) ------------------------
// The crash, lost reply or failed effect after the read names the step that
// lost or repeated the event; the read itself is in the history.

TEST_F(OracleTest, ACrashBetweenAPositionReadAndTheEffectIsTheLossCause) {
  Init(1);
  Produce(1);
  oracle_->ReadByPosition(3, "w1", {Entry(Id(1), 1)});
  oracle_->WorkerFault(HistoryKind::kCrash, 4, "w1", "after-INSERT", {});
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "crash:after-INSERT");
  EXPECT_NE(v.detail.find("read with XREAD by w1 at 3 ms"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("w1 crashed at after-INSERT (at 4 ms) before the effect"), std::string::npos) << v.detail;
  std::vector<HistoryItem> h = oracle_->HistoryOf(EventId(1));
  ASSERT_EQ(h.size(), 3u);  // produced, read, the crash (it held the event it read)
  EXPECT_EQ(h[1].kind, HistoryKind::kReadByPosition);
  EXPECT_EQ(h[2].kind, HistoryKind::kCrash);
}

TEST_F(OracleTest, APositionReadLostByALostReplyALostRequestOrAFailedEffectSaysWhich) {
  Init(3);
  Produce(1);
  Produce(2);
  Produce(3);
  oracle_->ReadByPosition(3, "w1", {Entry(Id(1), 1)});
  oracle_->WorkerFault(HistoryKind::kLostReply, 4, "w1", "INSERT", {});
  oracle_->ReadByPosition(10, "w1", {Entry(Id(2), 2)});
  oracle_->EffectFailed(11, "w1", EventId(2), Id(2), "unavailable");
  oracle_->ReadByPosition(20, "w1", {Entry(Id(3), 3)});
  oracle_->WorkerFault(HistoryKind::kLostRequest, 21, "w1", "INSERT", {});
  std::vector<Violation> v = Judge();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].cause, "lost-reply:INSERT");
  EXPECT_EQ(v[1].cause, "effect-failed");
  EXPECT_NE(v[1].detail.find("failed (unavailable)"), std::string::npos) << v[1].detail;
  EXPECT_EQ(v[2].cause, "lost-request:INSERT") << v[2].detail;
}

TEST_F(OracleTest, APositionReadWithNothingAfterItIsReadNotProcessedNotNeverDelivered) {
  Init(1);
  Produce(1);
  oracle_->ReadByPosition(3, "w1", {Entry(Id(1), 1)});
  oracle_->ReadByPosition(500, "w1", {Entry(Id(1), 1)});  // a poll from the same position: told once
  EXPECT_EQ(Only().cause, "read-not-processed");
  EXPECT_EQ(oracle_->HistoryOf(EventId(1)).size(), 2u);
}

TEST_F(OracleTest, APositionReadAgainAfterACrashAfterTheEffectBlamesTheCrashAndSaysXread) {
  Init(1);
  Produce(1);
  oracle_->ReadByPosition(3, "w1", {Entry(Id(1), 1)});
  Effect(4, "w1", 1);
  oracle_->WorkerFault(HistoryKind::kCrash, 5, "w1", "after-effect", {});
  oracle_->ReadByPosition(100, "w1", {Entry(Id(1), 1)});
  Effect(101, "w1", 1);
  Violation v = Only();
  EXPECT_EQ(v.cause, "crash:after-effect");
  EXPECT_NE(v.detail.find("before its stored position passed the entry, so w1 read it again with XREAD at 100 ms"),
            std::string::npos)
      << v.detail;
}

TEST_F(OracleTest, APositionReadAgainWithoutAFaultIsAPositionReread) {
  Init(1);
  Produce(1);
  oracle_->ReadByPosition(3, "w1", {Entry(Id(1), 1)});
  Effect(4, "w1", 1);
  oracle_->ReadByPosition(600, "w1", {Entry(Id(1), 1)});
  Effect(601, "w1", 1);
  Violation v = Only();
  EXPECT_EQ(v.cause, "position-reread");
  EXPECT_TRUE(IsKnownCause(VerdictKind::kDuplicate, v.cause));
}

// --- pel-leak and run-wide stuck ------------------------------------------

TEST_F(OracleTest, DoneButStillPendingIsAPelLeak) {
  Init(1);
  Produce(1);
  Deliver(5, "w1", 1);
  Effect(6, "w1", 1);
  final_.pending = {{Id(1), "w1", 100, 1}};
  Violation v = Only();
  EXPECT_EQ(v.kind, VerdictKind::kPelLeak);
  EXPECT_EQ(v.cause, "done-but-pending");
  EXPECT_EQ(v.effect_count, 1);
}

// A step bound is no verdict at all (issue 15): the simulator stops the run
// as a harness limit before judging (FaultLabTest.TheStepGuardIsAHarnessLimitNotAVerdict).

TEST_F(OracleTest, RedisLedgerReplacesTheRedisSinkRecords) {
  Init(1);
  Produce(1);
  ledger_.Record({EventId(1), Id(1), "w1", 6, "redis"});
  ledger_.Record({EventId(1), Id(1), "w2", 9, "redis"});  // what the sim believed
  final_.redis_effects = std::vector<EffectRecord>{{EventId(1), Id(1), "w1", 6, "redis"}};
  EXPECT_TRUE(Judge().empty());  // the list in Redis is the truth: one effect
}

// --- history and the model self-check -------------------------------------

TEST_F(OracleTest, HistoryMergesRunWideItemsInLineOrder) {
  Init(1);
  oracle_->SetLine(0);
  Produce(1);
  oracle_->SetLine(1);
  oracle_->RunWideFault(HistoryKind::kClockJump, 3, "virtual time jumped forward 500 ms", 500);
  oracle_->SetLine(2);
  Deliver(600, "w1", 1);
  std::vector<HistoryItem> h = oracle_->HistoryOf(EventId(1));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].kind, HistoryKind::kProduced);
  EXPECT_EQ(h[1].kind, HistoryKind::kClockJump);
  EXPECT_EQ(h[1].value, 500);
  EXPECT_EQ(h[2].kind, HistoryKind::kDelivered);
  EXPECT_EQ(h[2].line, 2);
}

TEST_F(OracleTest, CrashHistoryReachesEveryEventTheConsumerHolds) {
  Init(2);
  Produce(1);
  Produce(2);
  Deliver(5, "w1", 1);
  Deliver(6, "w1", 2);
  oracle_->WorkerFault(HistoryKind::kCrash, 7, "w1", "after-read", {});
  for (int n = 1; n <= 2; ++n) {
    std::vector<HistoryItem> h = oracle_->HistoryOf(EventId(n));
    EXPECT_EQ(h.back().kind, HistoryKind::kCrash) << n;
    EXPECT_EQ(h.back().detail, "after-read");
  }
}

TEST_F(OracleTest, ModelMismatchNamesBothSides) {
  Init(2);
  Produce(1);
  Produce(2);
  Deliver(5, "w1", 1);
  Deliver(6, "w1", 2);
  final_.pending = {{Id(1), "w2", 1, 1}, {"7-0", "w1", 1, 1}};
  std::vector<std::string> m = oracle_->ModelMismatches(final_);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_NE(m[0].find("owned by w2 in Redis but by w1"), std::string::npos) << m[0];
  EXPECT_NE(m[1].find("7-0 is pending with w1 in Redis but not in the oracle"), std::string::npos) << m[1];
  EXPECT_NE(m[2].find("2-0 is pending with w1 in the oracle's model but not in Redis"), std::string::npos) << m[2];
}

}  // namespace
}  // namespace xackly
