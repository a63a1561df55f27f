// The business store decides what a crash rolls back and when an effect
// becomes real; the oracle counts only what reaches the ledger.
#include <gtest/gtest.h>

#include "sim/store.h"

namespace xackly {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  EffectRecord Effect(const char* event) { return {event, "1-0", "w1", 5, "sql"}; }
  EffectLedger ledger_;
  SqlStore store_{&ledger_};
  std::string sql_, result_;
};

TEST_F(StoreTest, EffectsReachTheLedgerOnlyWhenTheirTransactionCommits) {
  ASSERT_EQ(store_.Begin(1, 0, &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(store_.Effect(1, 0, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kOk);
  EXPECT_TRUE(ledger_.records().empty());
  ASSERT_EQ(store_.Commit(1, 0, &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(ledger_.records().size(), 1u);
  EXPECT_EQ(ledger_.records()[0].event_id, "order:1");
}

TEST_F(StoreTest, ACrashedOwnersTransactionRollsBackAndReleasesTheStore) {
  ASSERT_EQ(store_.Begin(1, 0, &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(store_.MarkDone(1, 0, "order:1", &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(store_.Effect(1, 0, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kOk);
  EXPECT_TRUE(store_.Busy(2));
  store_.Abandon(1);
  EXPECT_FALSE(store_.Busy(2));
  EXPECT_TRUE(ledger_.records().empty());
  EXPECT_TRUE(store_.ProcessedIds().empty());
  // The dedupe row is gone too: the event is new again.
  EXPECT_EQ(store_.MarkDone(2, 0, "order:1", &sql_, &result_), BusinessOutcome::kOk);
}

TEST_F(StoreTest, MarkDoneReportsAnEventAlreadyRecorded) {
  ASSERT_EQ(store_.MarkDone(1, 0, "order:1", &sql_, &result_), BusinessOutcome::kOk);
  EXPECT_EQ(sql_, "INSERT OR IGNORE INTO processed(event_id) VALUES ('order:1')");
  EXPECT_EQ(store_.MarkDone(2, 0, "order:1", &sql_, &result_), BusinessOutcome::kAlreadyDone);
  EXPECT_EQ(result_, "0 rows");
  EXPECT_EQ(store_.CheckDone(2, 0, "order:1", &sql_, &result_), BusinessOutcome::kAlreadyDone);
}

TEST_F(StoreTest, AnOutageAbortsTheOpenTransactionUntilItIsRolledBack) {
  ASSERT_EQ(store_.Begin(1, 0, &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(store_.Effect(1, 0, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kOk);
  store_.SetUnavailableUntil(100);
  EXPECT_EQ(store_.Effect(1, 50, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kUnavailable);
  // After the outage the aborted transaction still refuses work: an effect
  // must not slip out of its transaction.
  EXPECT_EQ(store_.Effect(1, 150, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kUnavailable);
  EXPECT_EQ(store_.Commit(1, 150, &sql_, &result_), BusinessOutcome::kUnavailable);
  EXPECT_TRUE(ledger_.records().empty());
  store_.Rollback(1, &sql_, &result_);
  EXPECT_EQ(store_.Begin(1, 150, &sql_, &result_), BusinessOutcome::kOk);
}

TEST_F(StoreTest, PoisonEffectsFailAndRecordNothing) {
  EXPECT_EQ(store_.Effect(1, 0, Effect("order:9"), true, &sql_, &result_), BusinessOutcome::kFailed);
  EXPECT_TRUE(ledger_.records().empty());
}

TEST(ExternalServiceTest, IdempotencyKeyTurnsARepeatIntoANoOp) {
  EffectLedger ledger;
  ExternalService ext(&ledger);
  std::string req, res;
  EffectRecord e{"order:1", "1-0", "w1", 0, "external"};
  EXPECT_EQ(ext.Apply(0, e, true, false, &req, &res), BusinessOutcome::kOk);
  EXPECT_EQ(ext.Apply(1, e, true, false, &req, &res), BusinessOutcome::kAlreadyDone);
  EXPECT_EQ(ledger.records().size(), 1u);
  EXPECT_EQ(ext.Apply(2, e, false, false, &req, &res), BusinessOutcome::kOk);
  EXPECT_EQ(ledger.records().size(), 2u);
}

}  // namespace
}  // namespace xackly
