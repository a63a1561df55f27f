// A lab notebook of faults: for each fault, the smallest setup, the
// injection, and what Redis and the oracle then report. Each test runs one
// worker and one event against a real redis-server with an explicit plan.
#include <gtest/gtest.h>

#include "tests/sim/fault_lab_util.h"

namespace xackly {
namespace {

TEST_F(FaultLabTest, XdelOfAPendingEntryIsReportedDeletedByXautoclaimAndLost) {
  // w1 dies inside the transaction holding 0-1; the entry's payload is XDELed;
  // the replacement (a fresh name) claims it.
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "xdel pending @20ms"},
                    [](RunConfig& c) { c.naming = RestartNaming::kFresh; });
  EXPECT_TRUE(InTrace("fault    XDEL events 0-1 -> 1")) << trace_;
  // XAUTOCLAIM's third element lists the deleted ID; the PEL drops it.
  EXPECT_TRUE(InTrace("XAUTOCLAIM events workers w1.2 30000 0-0 COUNT 10 -> [\"0-0\", [], [\"0-1\"]]")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "payload-deleted");
}

TEST_F(FaultLabTest, OwnPendingReadOfADeletedEntryGivesIdAndNil) {
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "xdel pending @20ms"});
  // Same consumer name after the restart: XREADGROUP 0 returns [id, nil].
  EXPECT_TRUE(InTrace("XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0 -> [[\"events\", [[\"0-1\", nil]]]]"))
      << trace_;
  EXPECT_TRUE(InTrace("w1       XACK events workers 0-1 -> 1")) << trace_;  // the protocol cleans it up
  EXPECT_EQ(Only(r).cause, "payload-deleted");
}

TEST_F(FaultLabTest, XtrimMaxlenRemovesAPendingPayload) {
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "xtrim maxlen:0 @20ms"});
  EXPECT_TRUE(InTrace("fault    XTRIM events MAXLEN 0 -> 1")) << trace_;
  EXPECT_EQ(Only(r).cause, "payload-deleted");
}

TEST_F(FaultLabTest, RestartWithoutPersistenceLosesTheStream) {
  RunResult r = Run("txn-dedupe-restart-none", {"crash w1 after-mark #1", "restart @20ms"});
  EXPECT_TRUE(InTrace("!restart @20ms")) << trace_;
  EXPECT_TRUE(InTrace("oracle   XRANGE events - + -> []")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "server-data-loss");
}

TEST_F(FaultLabTest, RestartWithAofAlwaysKeepsEverythingAcknowledged) {
  RunResult r = Run("txn-dedupe-restart-aof", {"crash w1 after-mark #1", "restart @20ms"});
  EXPECT_TRUE(InTrace("oracle   XRANGE events - + -> [[\"0-1\", [\"event_id\", \"order:1\"]]]")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

TEST_F(FaultLabTest, RestartWithRdbKeepsOnlyWhatTheLastSaveWrote) {
  auto rdb = [](RunConfig& c) { c.persistence = Persistence::kRdb; };
  // SAVE before the XADD: the restart brings back an empty stream.
  RunResult lost = Run("txn-dedupe", {"save @0ms", "crash w1 after-mark #1", "restart @20ms"}, rdb);
  EXPECT_TRUE(InTrace("fault    SAVE -> +OK")) << trace_;
  EXPECT_EQ(Only(lost).cause, "server-data-loss");
  // SAVE after the XADD and the read: the pending entry survives and is processed.
  trace_.clear();
  RunResult kept = Run("txn-dedupe", {"crash w1 after-mark #1", "save @15ms", "restart @20ms"}, rdb);
  EXPECT_TRUE(kept.violations.empty()) << trace_;
}

TEST_F(FaultLabTest, DelconsumerDropsThePendingEntriesOfThatConsumer) {
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "delconsumer @20ms"});
  EXPECT_TRUE(InTrace("fault    XGROUP DELCONSUMER events workers w1 -> 1")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "consumer-deleted");
}

TEST_F(FaultLabTest, AClockJumpExpiresTheDedupeRecordBeforeTheRedelivery) {
  // Without the jump the replacement re-reads within the 10 s TTL and acks.
  RunResult clean = Run("short-ttl-dedupe", {"crash w1 after-eval #1"},
                        [](RunConfig& c) { c.naming = RestartNaming::kSame; });
  EXPECT_TRUE(clean.violations.empty()) << trace_;
  trace_.clear();
  RunResult r = Run("short-ttl-dedupe", {"crash w1 after-eval #1", "clock-jump +60000ms @20ms"},
                    [](RunConfig& c) { c.naming = RestartNaming::kSame; });
  EXPECT_TRUE(InTrace("!clock-jump +60000ms @20ms")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.cause, "dedupe-expired");
}

TEST_F(FaultLabTest, ALostXackReplyIsHarmlessButALostXackRequestRedelivers) {
  RunResult reply = Run("no-dedupe", {"lost-reply w1 XACK #1"});
  EXPECT_TRUE(InTrace("XACK events workers 0-1 -> 1 !lost-reply")) << trace_;
  EXPECT_TRUE(reply.violations.empty()) << trace_;
  trace_.clear();
  RunResult request = Run("no-dedupe", {"lost-request w1 XACK #1"});
  Violation v = Only(request);
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.cause, "lost-request:XACK");
}

TEST_F(FaultLabTest, ALostXaddReplyMakesTheProducerAddASecondEntry) {
  RunResult r = Run("no-dedupe", {"lost-reply p1 XADD #1"});
  EXPECT_TRUE(InTrace("p1       XADD events 0-1 event_id order:1 -> \"0-1\" !lost-reply")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.cause, "producer-retry");
  // A protocol that dedupes by event id is unharmed.
  trace_.clear();
  EXPECT_TRUE(Run("txn-dedupe", {"lost-reply p1 XADD #1"}).violations.empty()) << trace_;
}

TEST_F(FaultLabTest, ALostCommitReplyLeavesTheEffectCommittedAndDedupeCatchesTheRedelivery) {
  RunResult r = Run("txn-dedupe", {"lost-reply w1 COMMIT #1"});
  EXPECT_TRUE(InTrace("sql COMMIT -> ok !lost-reply")) << trace_;
  EXPECT_TRUE(InTrace("INSERT OR IGNORE INTO processed(event_id) VALUES ('order:1') -> 0 rows")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

TEST_F(FaultLabTest, AStalledWorkerIsClaimedFromAndBothRunTheEffect) {
  RunResult r = Run("eager-claim", {"stall w1 after-effect #1 2000ms", "stall w2 after-effect #1 2000ms"},
                    [](RunConfig& c) { c.workers = 2; });
  EXPECT_TRUE(InTrace("!stall at after-effect for 2000 ms")) << trace_;
  EXPECT_TRUE(InTrace("XAUTOCLAIM events workers")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.cause, "stall");
}

TEST_F(FaultLabTest, APoisonEventIsDeadLetteredWithItsPayload) {
  RunResult r = Run("dlq-after-3", {"poison event 1"});
  EXPECT_TRUE(InTrace("XADD events:dlq * source_id 0-1 event_id order:1")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 0);
}

TEST_F(FaultLabTest, AckingAPoisonEventBeforeSavingItLosesItOnACrash) {
  RunResult r = Run("ack-before-dlq", {"poison event 1", "crash w1 after-ack #1"});
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "acked-without-effect");
  EXPECT_TRUE(Contains(v.detail, "dead-letter")) << v.detail;
}

TEST_F(FaultLabTest, AStoreOutageDelaysTheEffectButLosesNothing) {
  RunResult r = Run("txn-dedupe", {"store-outage 3000ms @0ms"});
  EXPECT_TRUE(InTrace("sql BEGIN -> unavailable")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

TEST_F(FaultLabTest, ACrashMidBatchDuplicatesTheEffectsAlreadyRun) {
  // Both events are produced before the worker reads, so one read returns both.
  RunResult r = Run("batch-ack-no-dedupe", {"crash w1 mid-batch #1"}, [](RunConfig& c) {
    c.events = 2;
    c.timing.produce_every_ms = 0;
    c.picks = {"p1", "p1"};
  });
  EXPECT_TRUE(InTrace("checkpoint mid-batch")) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.cause, "crash:mid-batch");
  EXPECT_EQ(v.event_id, "order:1");  // the second event's effect had not run yet
}

TEST_F(FaultLabTest, APoisonEventWithoutDeadLetteringNeverSettles) {
  RunResult r = Run("txn-dedupe", {"poison event 1"});
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kStuck);
  EXPECT_EQ(v.cause, "never-settled");
  EXPECT_TRUE(Contains(v.detail, "deliveries")) << v.detail;
}

TEST_F(FaultLabTest, TheStepGuardIsAHarnessLimitNotAVerdict) {
  RunConfig c = RunConfig::For(*FindProtocol("txn-dedupe"));
  c.events = 50;
  c.timing.max_steps = 40;
  c.fault_schedule = std::vector<FaultSpec>{};
  ASSERT_TRUE(ValidateRunConfig(c).ok());
  Result<RunResult> r = RunSimulation(c, StartServer(c.persistence));
  // No verdict at all (no stuck, no pel-leak from a cut run): a harness
  // failure that names the knob.
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "harness limit")) << r.status().ToString();
  EXPECT_TRUE(Contains(r.status().message(), "timing.max_steps = 40")) << r.status().ToString();
}

TEST_F(FaultLabTest, ManyEventsWithoutFaultsSettleWithoutAFalseStuck) {
  // 5000 events were reported "pel-leak+stuck" by a fixed 20 000-step bound.
  RunResult r = Run("txn-dedupe", {}, [](RunConfig& c) {
    c.events = 5000;
    c.workers = 3;
    c.keep_trace = false;
  });
  EXPECT_TRUE(r.violations.empty()) << r.observed;
  EXPECT_GT(r.steps, 20000);
}

TEST_F(FaultLabTest, ATwoHourClaimWindowIsWaitedOutNotCalledStuck) {
  // A crashed worker's entry is claimed only after 2 h of virtual time; the
  // run must get there (jumping over idle time) and settle ok.
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1"}, [](RunConfig& c) {
    c.protocol.loop.claim_min_idle_ms = 7'200'000;
    c.naming = RestartNaming::kFresh;
    c.workers = 2;
    c.events = 3;
    c.keep_trace = false;
  });
  EXPECT_TRUE(r.violations.empty()) << r.observed;
  EXPECT_GE(r.virtual_ms, 7'200'000);
}

TEST_F(FaultLabTest, AnXaddBetweenAnEmptyReadAndTheParkWakesTheReader) {
  // Real XREADGROUP BLOCK returns as soon as an entry arrives. w1 reads its
  // own pending (empty), reads new (empty), p1 adds the event, w1 parks: it
  // must read the entry at once, not block_ms (2000 ms) later.
  RunResult r = Run("txn-dedupe", {}, [](RunConfig& c) { c.picks = {"w1", "w1", "p1", "w1"}; });
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_TRUE(InTrace("park: returns at once (1 new entries since its read)")) << trace_;
  int64_t acked_at_ms = -1;
  for (const TraceLine& l : r.trace) {
    if (acked_at_ms < 0 && l.actor == "w1" && l.request.rfind("XACK", 0) == 0) acked_at_ms = l.t_ms;
  }
  EXPECT_GE(acked_at_ms, 0) << trace_;
  EXPECT_LT(acked_at_ms, 100) << "the event waited out the block time: " << trace_;
}

}  // namespace
}  // namespace xackly
