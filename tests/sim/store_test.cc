// The business store decides what a crash rolls back and when an effect
// becomes real; the oracle counts only what reaches the ledger.
#include <unistd.h>

#include <filesystem>

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


// Issue 29, item 1: what a script's SQL may do is decided by SQLite's own
// authorizer and limits, not by a parse of the statement's first word.
class ScriptSqlTest : public StoreTest {
 protected:
  BusinessOutcome Run(int owner, const std::string& statement, SqlResult* out) {
    return store_.Execute(owner, 0, statement, {}, out, &sql_, &result_);
  }
};

TEST_F(ScriptSqlTest, NoSpellingOfAttachVacuumIntoOrPragmaReachesAFile) {
  const std::string dir = ::testing::TempDir() + "xackly-sql-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string attached = dir + "/x.db";
  const std::string vacuumed = dir + "/y.db";
  const std::vector<std::string> hostile = {
      "/**/ATTACH DATABASE '" + attached + "' AS x",
      "-- c\nATTACH '" + attached + "' AS x",
      "\rattach database '" + attached + "' as x",
      "-- c\nVACUUM INTO '" + vacuumed + "'",
      "/* */ vacuum main into '" + vacuumed + "'",
      "\rPRAGMA writable_schema = 1",
      "/**/pragma journal_mode = wal",
      "SELECT load_extension('/tmp/x.so')",
      "SAVEPOINT a",
  };
  for (const std::string& statement : hostile) {
    SqlResult out;
    EXPECT_EQ(Run(1, statement, &out), BusinessOutcome::kFailed) << statement;
    EXPECT_FALSE(out.error.empty()) << statement;
  }
  EXPECT_FALSE(std::filesystem::exists(attached));
  EXPECT_FALSE(std::filesystem::exists(vacuumed));
  std::filesystem::remove_all(dir);
  // Ordinary SQL still works.
  SqlResult out;
  EXPECT_EQ(Run(1, "/* mine */ CREATE TABLE t(a)", &out), BusinessOutcome::kOk) << out.error;
  EXPECT_EQ(Run(1, "INSERT INTO t VALUES (1)", &out), BusinessOutcome::kOk) << out.error;
}

TEST_F(ScriptSqlTest, ATransactionStatementInAnySpellingKeepsTheStoreConsistent) {
  for (const char* begin : {"/* go */ BEGIN", "-- c\nbegin immediate", "\rBEGIN TRANSACTION"}) {
    for (const char* commit : {"/* done */ COMMIT", "-- c\nEND", "\rcommit transaction"}) {
      SqlResult out;
      ASSERT_EQ(Run(1, begin, &out), BusinessOutcome::kOk) << begin << " " << out.error;
      EXPECT_TRUE(store_.InTransaction(1)) << begin;
      EXPECT_TRUE(store_.Busy(2)) << begin;
      ASSERT_EQ(store_.Effect(1, 0, Effect("order:1"), false, &sql_, &result_), BusinessOutcome::kOk);
      EXPECT_EQ(Run(1, commit, &out), BusinessOutcome::kOk) << commit << " " << out.error;
      EXPECT_EQ(sql_, "COMMIT");
      EXPECT_FALSE(store_.InTransaction(1)) << commit;
      EXPECT_FALSE(store_.Busy(2)) << commit;
    }
  }
  EXPECT_EQ(ledger_.records().size(), 9u) << "every committed effect reached the ledger";
  SqlResult out;
  ASSERT_EQ(Run(1, "BEGIN", &out), BusinessOutcome::kOk);
  ASSERT_EQ(store_.Effect(1, 0, Effect("order:2"), false, &sql_, &result_), BusinessOutcome::kOk);
  EXPECT_EQ(Run(1, "/* undo */ rollback", &out), BusinessOutcome::kOk);
  EXPECT_FALSE(store_.Busy(2));
  EXPECT_EQ(ledger_.records().size(), 9u) << "a rolled-back effect never happened";
  EXPECT_EQ(Run(1, "/* twice */ COMMIT", &out), BusinessOutcome::kNoTransaction);
}

// A statement that changes no row reports "0 changed" whatever ran before
// it: SQLite's own count keeps the last write's, and a case's first CREATE
// reported the rows the previous case's emptying deleted (a determinism
// self-check failure: the rerun, on a new database, said 0).
TEST_F(ScriptSqlTest, AStatementThatChangesNoRowReportsNoneWhateverRanBefore) {
  SqlResult out;
  ASSERT_EQ(Run(1, "CREATE TABLE t(a)", &out), BusinessOutcome::kOk) << out.error;
  ASSERT_EQ(Run(1, "INSERT INTO t VALUES (1), (2), (3)", &out), BusinessOutcome::kOk) << out.error;
  EXPECT_EQ(out.changes, 3);
  EXPECT_EQ(result_, "3 changed");
  for (const char* none : {"CREATE TABLE u(b)", "CREATE TABLE v AS SELECT a FROM t", "UPDATE t SET a = 0 WHERE a > 5",
                           "DELETE FROM u"}) {
    SqlResult after;
    ASSERT_EQ(Run(1, none, &after), BusinessOutcome::kOk) << none << " " << after.error;
    EXPECT_EQ(after.changes, 0) << none;
    EXPECT_EQ(result_, "0 changed") << none;
  }

  // A delete whose trigger writes counts the rows it deleted itself; one
  // with RETURNING counts them too.
  ASSERT_EQ(Run(1, "CREATE TRIGGER log AFTER DELETE ON t BEGIN INSERT INTO u VALUES (old.a); END", &out),
            BusinessOutcome::kOk)
      << out.error;
  ASSERT_EQ(Run(1, "DELETE FROM t WHERE a <= 2", &out), BusinessOutcome::kOk) << out.error;
  EXPECT_EQ(out.changes, 2);
  ASSERT_EQ(Run(1, "INSERT INTO t VALUES (7), (8) RETURNING a", &out), BusinessOutcome::kOk) << out.error;
  EXPECT_EQ(out.changes, 2);
  EXPECT_EQ(out.rows.size(), 2u);

  // A database handed on by a store whose case wrote rows.
  EffectLedger ledger;
  {
    SqlStore earlier(&ledger);
    ASSERT_EQ(earlier.Begin(1, 0, &sql_, &result_), BusinessOutcome::kOk);
    for (const char* event : {"order:1", "order:2", "order:3", "order:4"}) {
      ASSERT_EQ(earlier.Effect(1, 0, Effect(event), false, &sql_, &result_), BusinessOutcome::kOk);
    }
    ASSERT_EQ(earlier.Commit(1, 0, &sql_, &result_), BusinessOutcome::kOk);
  }
  SqlStore next(&ledger);
  SqlResult first;
  ASSERT_EQ(next.Execute(1, 0, "CREATE TABLE IF NOT EXISTS done(id TEXT PRIMARY KEY)", {}, &first, &sql_, &result_),
            BusinessOutcome::kOk)
      << first.error;
  EXPECT_EQ(first.changes, 0);
  EXPECT_EQ(result_, "0 changed");
  // Nor can SQLite's own counters carry the earlier case's rows.
  SqlResult counters;
  ASSERT_EQ(next.Execute(1, 0, "SELECT changes() AS c, total_changes() AS t, last_insert_rowid() AS r", {}, &counters,
                         &sql_, &result_),
            BusinessOutcome::kOk)
      << counters.error;
  ASSERT_EQ(counters.rows.size(), 1u);
  EXPECT_EQ(counters.rows[0], (std::vector<SqlValue>{int64_t{0}, int64_t{0}, int64_t{0}}));
  ASSERT_EQ(next.Execute(1, 0, "INSERT INTO done VALUES ('a'), ('b')", {}, &first, &sql_, &result_),
            BusinessOutcome::kOk);
  SqlResult total;
  ASSERT_EQ(next.Execute(1, 0, "SELECT total_changes() AS t", {}, &total, &sql_, &result_), BusinessOutcome::kOk);
  ASSERT_EQ(total.rows.size(), 1u);
  EXPECT_EQ(total.rows[0], (std::vector<SqlValue>{int64_t{2}})) << "this case's rows count";
}

// A function that answers differently on every run is refused: a case
// must run the same every time.
TEST_F(ScriptSqlTest, RandomFunctionsAreRefusedNamingThem) {
  for (const char* statement : {"SELECT random()", "SELECT hex(randomblob(4))", "SELECT abs(RANDOM()) % 10"}) {
    SqlResult out;
    EXPECT_EQ(Run(1, statement, &out), BusinessOutcome::kFailed) << statement;
    EXPECT_NE(out.error.find("() is not available to protocol scripts"), std::string::npos) << out.error;
  }
}

TEST_F(ScriptSqlTest, AStatementThatNeverEndsFailsInsteadOfHanging) {
  SqlResult out;
  EXPECT_EQ(Run(1, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT count(*) FROM c", &out),
            BusinessOutcome::kFailed);
  EXPECT_NE(out.error.find("never ends"), std::string::npos) << out.error;
}

}  // namespace
}  // namespace xackly
