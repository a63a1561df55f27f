// Where side effects land, and the ledger that records every effect that
// really happened. The ledger is written only by the store and the external
// service (never by protocol code) and read only by the oracle: a protocol
// cannot skip it, dedupe it or lie to it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/step.h"

struct sqlite3;
struct sqlite3_stmt;
struct sqlite3_context;
struct sqlite3_value;

namespace xackly {

enum class EffectSink : uint8_t;

// The statements of the business store, prepared once per database.
enum class SqlStatement : uint8_t {
  kBegin,           // BEGIN
  kCheckDone,       // SELECT 1 FROM processed WHERE event_id = ?1
  kMarkDone,        // INSERT OR IGNORE INTO processed(event_id) VALUES (?1)
  kEffect,          // INSERT INTO effects(event_id, stream_id, consumer, t_ms) VALUES (?1..?4)
  kCommit,          // COMMIT
  kRollback,        // ROLLBACK
  kClearProcessed,  // DELETE FROM processed (a store handing its database on)
  kClearEffects,    // DELETE FROM effects
};
inline constexpr int kSqlStatementCount = 8;

// One execution: a statement and the values bound to it (only those the
// statement has; the views need only live for the call).
struct SqlCall {
  SqlStatement statement = SqlStatement::kBegin;
  std::string_view event_id;
  std::string_view stream_id;
  std::string_view consumer;
  int64_t t_ms = 0;
};
struct SqlCallResult {
  bool ok = false;   // stepped to done (or to its first row)
  bool row = false;  // a row came back
  int changes = 0;   // rows an insert or delete inserted or deleted
};

// An open in-memory SQLite database with the business schema and every
// statement prepared: what each SqlStore runs on, and what a bare baseline
// (bench/sim_bench.cc) runs a case's recorded statements on.
class SqlDatabase {
 public:
  SqlDatabase();
  ~SqlDatabase();
  SqlDatabase(const SqlDatabase&) = delete;
  SqlDatabase& operator=(const SqlDatabase&) = delete;

  // Binds, steps (to done, or to the first row) and resets one statement;
  // reports it to this thread's observer, if any.
  SqlCallResult Execute(const SqlCall& call);
  sqlite3* handle() const { return db_; }

  // What a protocol script's statement is, as SQLite's authorizer saw it
  // while compiling it (never a parse of the text: comments, case and
  // spelling cannot hide a verb from SQLite).
  enum class ScriptStatementKind : uint8_t { kOrdinary, kBegin, kCommit, kRollback };
  struct CompiledScriptStatement {
    sqlite3_stmt* stmt = nullptr;  // owned by the caller (sqlite3_finalize); null on an error
    ScriptStatementKind kind = ScriptStatementKind::kOrdinary;
    std::string refused;           // why the authorizer refused it ("" when it did not)
    std::string error;             // SQLite's message when compiling failed
  };
  // Compiles the first statement of `text` under the script authorizer,
  // which refuses whatever reaches beyond this in-memory database or its
  // settings: ATTACH and DETACH (files, also the one VACUUM INTO opens),
  // PRAGMA, savepoints (a transaction the store would not see), and
  // load_extension. The database itself allows no attached database and
  // runs in SQLite's defensive mode.
  CompiledScriptStatement CompileScriptStatement(const std::string& text);
  // Steps a compiled script statement like Execute steps its own, under the
  // same authorizer and a bound on SQLite's virtual-machine work
  // (kScriptStatementVmSteps: a statement that never ends, a recursive
  // query without a limit, fails instead of hanging the run).
  // Returns sqlite3_step's last code.
  int StepScriptStatement(sqlite3_stmt* stmt, const std::function<void()>& on_row);

  // Starts the counters a script's SQL can read (changes(),
  // total_changes(), last_insert_rowid()) from zero, as on a new database:
  // a database handed on from an earlier case (SqlStore) still holds
  // SQLite's counts of that case's rows, and a case must not see them.
  void StartCase();

 private:
  static int Authorize(void* self, int action, const char* arg1, const char* arg2,
                       const char* database, const char* trigger);
  static int Progress(void* self);
  // total_changes(), counted from StartCase.
  static void CaseTotalChanges(sqlite3_context* context, int argc, sqlite3_value** argv);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* statements_[kSqlStatementCount] = {};
  // While a script statement compiles or runs: the authorizer judges it,
  // the progress handler counts its work.
  bool judging_script_ = false;
  CompiledScriptStatement* compiling_ = nullptr;
  int64_t vm_steps_ = 0;
  int64_t total_changes_at_start_ = 0;
};

// How much SQLite virtual-machine work one script statement may do: about
// a second of CPU, far above any statement a protocol runs (a budget in
// steps, so the same statement fails the same way on every machine).
inline constexpr int64_t kScriptStatementVmSteps = int64_t{100} << 20;

// Every SqlDatabase::Execute on the calling thread calls `observer` after
// the statement ran, until ObserveSqlOnThisThread(nullptr): how a benchmark
// records the SQL work of a case. REQUIRES: observer outlives its use.
using SqlObserver = std::function<void(const SqlCall&, const SqlCallResult&)>;
void ObserveSqlOnThisThread(const SqlObserver* observer);

struct EffectRecord {
  std::string event_id;
  std::string stream_id;  // the entry whose handling ran the effect
  std::string consumer;
  int64_t t_ms = 0;
  std::string sink;       // "sql", "external", "redis"
};

class EffectLedger {
 public:
  void Record(EffectRecord r) { records_.push_back(std::move(r)); }
  const std::vector<EffectRecord>& records() const { return records_; }

 private:
  std::vector<EffectRecord> records_;
};

// A transactional SQL store (SQLite, in memory) with the protocol's tables:
//   processed(event_id TEXT PRIMARY KEY)        -- the protocol's dedupe table
//   effects(event_id, stream_id, consumer, t_ms) -- the business side effect
// One transaction is open at a time: a worker that needs the store while
// another holds a transaction waits (Busy()); this is a serializable store,
// like row locks on one hot key. Effects reach the ledger when their
// transaction commits (immediately outside a transaction).
class SqlStore {
 public:
  // REQUIRES: ledger outlives the store.
  explicit SqlStore(EffectLedger* ledger);
  ~SqlStore();
  SqlStore(const SqlStore&) = delete;
  SqlStore& operator=(const SqlStore&) = delete;

  // True when `owner` must wait: another owner holds an open transaction.
  bool Busy(int owner) const { return txn_owner_ != 0 && txn_owner_ != owner; }
  bool InTransaction(int owner) const { return txn_owner_ == owner; }
  // The owner of the open transaction; 0 when none is open.
  int TransactionOwner() const { return txn_owner_; }

  // Each call executes one statement for `owner` at virtual time `now_ms` and
  // writes the statement text to `*sql` and the result text to `*result`.
  // REQUIRES: !Busy(owner)
  BusinessOutcome Begin(int owner, int64_t now_ms, std::string* sql, std::string* result);
  BusinessOutcome CheckDone(int owner, int64_t now_ms, const std::string& event_id,
                            std::string* sql, std::string* result);
  BusinessOutcome MarkDone(int owner, int64_t now_ms, const std::string& event_id,
                           std::string* sql, std::string* result);
  BusinessOutcome Effect(int owner, int64_t now_ms, const EffectRecord& effect, bool poison,
                         std::string* sql, std::string* result);
  BusinessOutcome Commit(int owner, int64_t now_ms, std::string* sql, std::string* result);
  BusinessOutcome Rollback(int owner, std::string* sql, std::string* result);
  // An effect a real consumer committed in a database of its own (not this
  // store): it reaches the ledger as it is, whatever this store's state.
  void Committed(const EffectRecord& effect, std::string* request, std::string* result);

  // Any statement of a protocol script, with positional parameters. A
  // transaction statement in any spelling (BEGIN [DEFERRED|...], COMMIT,
  // END, ROLLBACK, with comments around it) is one of the calls above, as
  // SQLite classifies it; what SqlDatabase::CompileScriptStatement refuses
  // fails with out->error saying why. A failed statement changes nothing
  // and sets out->error; if SQLite itself ended an open transaction (an
  // error that rolls back), the store knows it. `*sql` is the
  // statement with its parameters, `*result` what it did, for the trace.
  // REQUIRES: !Busy(owner)
  BusinessOutcome Execute(int owner, int64_t now_ms, const std::string& statement,
                          const std::vector<SqlValue>& params, SqlResult* out, std::string* sql,
                          std::string* result);

  // The owner died (crash, reset): its open transaction rolls back.
  void Abandon(int owner);
  // Transient outage: every request fails with kUnavailable until `until_ms`,
  // and an open transaction is rolled back.
  void SetUnavailableUntil(int64_t until_ms);

  // Rows of the protocol's dedupe table (for reports; the oracle never uses it).
  std::set<std::string> ProcessedIds() const;

 private:
  // True (and `*result` says why) when the request fails: the store is in an
  // outage, or `owner`'s transaction was aborted by one and not yet rolled back.
  bool Unavailable(int owner, int64_t now_ms, std::string* result);
  // Executes a statement without bound values; false on an error.
  bool Exec(SqlStatement statement);
  void RollbackOpen();
  // After a script statement: when SQLite rolled `owner`'s transaction back
  // on its own, the store drops it too (its effects never happened).
  // Returns true when that happened.
  bool NoticeRollbackBySqlite();

  EffectLedger* ledger_;
  std::unique_ptr<SqlDatabase> db_;  // never null
  int txn_owner_ = 0;
  int64_t unavailable_until_ms_ = -1;
  std::vector<EffectRecord> txn_effects_;
  std::set<int> aborted_;  // owners whose transaction an outage rolled back
  bool user_sql_ = false;  // a script ran its own SQL: the database is not reused
};

// A non-transactional external service (a payment API, an e-mail sender).
// Optionally honours an idempotency key (the event id): a repeated key is
// answered "already done" and has no effect.
class ExternalService {
 public:
  explicit ExternalService(EffectLedger* ledger) : ledger_(ledger) {}
  BusinessOutcome Apply(int64_t now_ms, const EffectRecord& effect, bool use_idempotency_key,
                        bool poison, std::string* request, std::string* result);
  // With the caller's own idempotency key ("" none), which the service
  // forgets `key_ttl_ms` after first seeing it (0: never).
  BusinessOutcome ApplyKeyed(int64_t now_ms, const EffectRecord& effect, const std::string& key,
                             int64_t key_ttl_ms, bool poison, std::string* request,
                             std::string* result);
  void SetUnavailableUntil(int64_t until_ms) { unavailable_until_ms_ = until_ms; }

 private:
  EffectLedger* ledger_;
  std::map<std::string, int64_t> seen_keys_;  // key -> forgotten at (INT64_MAX: never)
  int64_t unavailable_until_ms_ = -1;
};

}  // namespace xackly
