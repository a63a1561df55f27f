#include "sim/store.h"

#include <sqlite3.h>

#include <memory>

#include <fmt/format.h>

#include "sim/status.h"

namespace xackly {

namespace {

void ExecOrDie(sqlite3* db, const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::fprintf(stderr, "xackly: sqlite: %s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    XACKLY_CHECK(rc == SQLITE_OK);
  }
}

sqlite3_stmt* PrepareOrDie(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  XACKLY_CHECK(rc == SQLITE_OK);
  return stmt;
}

std::string SqlQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace

struct SqlDatabase {
  sqlite3* db = nullptr;
  sqlite3_stmt* check = nullptr;
  sqlite3_stmt* mark = nullptr;
  sqlite3_stmt* effect = nullptr;
  sqlite3_stmt* begin = nullptr;
  sqlite3_stmt* commit = nullptr;
  sqlite3_stmt* rollback = nullptr;
  sqlite3_stmt* clear_processed = nullptr;
  sqlite3_stmt* clear_effects = nullptr;

  SqlDatabase() {
    XACKLY_CHECK(sqlite3_open_v2(":memory:", &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr) == SQLITE_OK);
    // Small pages: each transaction's first write to a page copies the
    // whole page into the rollback journal, and these tables are tiny.
    ExecOrDie(db, "PRAGMA page_size = 512");
    ExecOrDie(db,
              "CREATE TABLE processed(event_id TEXT PRIMARY KEY);"
              "CREATE TABLE effects(seq INTEGER PRIMARY KEY, event_id TEXT, stream_id TEXT,"
              " consumer TEXT, t_ms INTEGER);");
    check = PrepareOrDie(db, "SELECT 1 FROM processed WHERE event_id = ?1");
    mark = PrepareOrDie(db, "INSERT OR IGNORE INTO processed(event_id) VALUES (?1)");
    effect = PrepareOrDie(
        db, "INSERT INTO effects(event_id, stream_id, consumer, t_ms) VALUES (?1, ?2, ?3, ?4)");
    begin = PrepareOrDie(db, "BEGIN");
    commit = PrepareOrDie(db, "COMMIT");
    rollback = PrepareOrDie(db, "ROLLBACK");
    clear_processed = PrepareOrDie(db, "DELETE FROM processed");
    clear_effects = PrepareOrDie(db, "DELETE FROM effects");
  }
  ~SqlDatabase() {
    for (sqlite3_stmt* s : {check, mark, effect, begin, commit, rollback, clear_processed, clear_effects}) {
      sqlite3_finalize(s);
    }
    sqlite3_close(db);
  }
};

namespace {
// Building a database costs more than a whole case's SQL steps (measured
// with callgrind: 17% of a case), so a store hands its database, emptied, to
// the next store on the same thread. Nothing survives but the schema and
// the prepared statements, so no case can see another's rows.
thread_local std::unique_ptr<SqlDatabase> t_spare_db;
}  // namespace

SqlStore::SqlStore(EffectLedger* ledger) : ledger_(ledger) {
  db_ = t_spare_db ? std::move(t_spare_db) : std::make_unique<SqlDatabase>();
}

SqlStore::~SqlStore() {
  RollbackOpen();
  bool emptied = Exec(db_->clear_processed) && Exec(db_->clear_effects);
  if (emptied && !user_sql_ && !t_spare_db) t_spare_db = std::move(db_);
}

bool SqlStore::Exec(sqlite3_stmt* stmt) {
  int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  return rc == SQLITE_DONE || rc == SQLITE_ROW;
}

void SqlStore::RollbackOpen() {
  if (txn_owner_ == 0) return;
  XACKLY_CHECK(Exec(db_->rollback));
  txn_owner_ = 0;
  txn_effects_.clear();
}

bool SqlStore::Unavailable(int owner, int64_t now_ms, std::string* result) {
  if (now_ms < unavailable_until_ms_) {
    if (txn_owner_ != 0) aborted_.insert(txn_owner_);
    RollbackOpen();
    *result = "unavailable";
    return true;
  }
  if (aborted_.count(owner) > 0) {
    *result = "error: transaction aborted by an outage";
    return true;
  }
  return false;
}

BusinessOutcome SqlStore::Begin(int owner, int64_t now_ms, std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = "BEGIN";
  aborted_.erase(owner);
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  if (txn_owner_ == owner) {  // nested BEGIN: SQLite refuses it; so do we
    *result = "error: transaction already open";
    return BusinessOutcome::kFailed;
  }
  XACKLY_CHECK(Exec(db_->begin));
  txn_owner_ = owner;
  *result = "ok";
  return BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::CheckDone(int owner, int64_t now_ms, const std::string& event_id,
                                    std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = "SELECT 1 FROM processed WHERE event_id = " + SqlQuote(event_id);
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  sqlite3_bind_text(db_->check, 1, event_id.data(), static_cast<int>(event_id.size()), SQLITE_STATIC);
  int rc = sqlite3_step(db_->check);
  bool found = rc == SQLITE_ROW;
  sqlite3_reset(db_->check);
  sqlite3_clear_bindings(db_->check);
  *result = found ? "1 row" : "0 rows";
  return found ? BusinessOutcome::kAlreadyDone : BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::MarkDone(int owner, int64_t now_ms, const std::string& event_id,
                                   std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = "INSERT OR IGNORE INTO processed(event_id) VALUES (" + SqlQuote(event_id) + ")";
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  sqlite3_bind_text(db_->mark, 1, event_id.data(), static_cast<int>(event_id.size()), SQLITE_STATIC);
  XACKLY_CHECK(Exec(db_->mark));
  bool inserted = sqlite3_changes(db_->db) == 1;
  *result = inserted ? "1 row" : "0 rows";
  return inserted ? BusinessOutcome::kOk : BusinessOutcome::kAlreadyDone;
}

BusinessOutcome SqlStore::Effect(int owner, int64_t now_ms, const EffectRecord& effect,
                                 bool poison, std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = fmt::format(
      "INSERT INTO effects(event_id, stream_id, consumer, t_ms) VALUES ({}, {}, {}, {})",
      SqlQuote(effect.event_id), SqlQuote(effect.stream_id), SqlQuote(effect.consumer),
      effect.t_ms);
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  if (poison) {
    *result = "failed (poison event)";
    return BusinessOutcome::kFailed;
  }
  sqlite3_bind_text(db_->effect, 1, effect.event_id.data(), static_cast<int>(effect.event_id.size()),
                    SQLITE_STATIC);
  sqlite3_bind_text(db_->effect, 2, effect.stream_id.data(),
                    static_cast<int>(effect.stream_id.size()), SQLITE_STATIC);
  sqlite3_bind_text(db_->effect, 3, effect.consumer.data(), static_cast<int>(effect.consumer.size()),
                    SQLITE_STATIC);
  sqlite3_bind_int64(db_->effect, 4, effect.t_ms);
  XACKLY_CHECK(Exec(db_->effect));
  if (txn_owner_ == owner) {
    txn_effects_.push_back(effect);
  } else {
    ledger_->Record(effect);
  }
  *result = "1 row";
  return BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::Commit(int owner, int64_t now_ms, std::string* sql,
                                 std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = "COMMIT";
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  if (txn_owner_ != owner) {
    *result = "error: no transaction";
    return BusinessOutcome::kNoTransaction;
  }
  XACKLY_CHECK(Exec(db_->commit));
  txn_owner_ = 0;
  for (EffectRecord& e : txn_effects_) ledger_->Record(std::move(e));
  txn_effects_.clear();
  *result = "ok";
  return BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::Rollback(int owner, std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  *sql = "ROLLBACK";
  aborted_.erase(owner);
  if (txn_owner_ != owner) {
    *result = "error: no transaction";
    return BusinessOutcome::kNoTransaction;
  }
  RollbackOpen();
  *result = "ok";
  return BusinessOutcome::kOk;
}

void SqlStore::Abandon(int owner) {
  aborted_.erase(owner);
  if (txn_owner_ == owner) RollbackOpen();
}

void SqlStore::SetUnavailableUntil(int64_t until_ms) {
  unavailable_until_ms_ = until_ms;
  if (txn_owner_ != 0) aborted_.insert(txn_owner_);
  RollbackOpen();
}

std::set<std::string> SqlStore::ProcessedIds() const {
  std::set<std::string> ids;
  sqlite3_stmt* stmt = PrepareOrDie(db_->db, "SELECT event_id FROM processed");
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    ids.insert(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  }
  sqlite3_finalize(stmt);
  return ids;
}

BusinessOutcome ExternalService::Apply(int64_t now_ms, const EffectRecord& effect,
                                       bool use_idempotency_key, bool poison,
                                       std::string* request, std::string* result) {
  return ApplyKeyed(now_ms, effect, use_idempotency_key ? effect.event_id : "", 0, poison, request,
                    result);
}

BusinessOutcome ExternalService::ApplyKeyed(int64_t now_ms, const EffectRecord& effect,
                                            const std::string& key, int64_t key_ttl_ms, bool poison,
                                            std::string* request, std::string* result) {
  *request = "apply " + effect.event_id;
  if (!key.empty()) *request += " key=" + key;
  if (!key.empty() && key_ttl_ms > 0) *request += fmt::format(" ttl={}ms", key_ttl_ms);
  if (now_ms < unavailable_until_ms_) {
    *result = "unavailable";
    return BusinessOutcome::kUnavailable;
  }
  if (poison) {
    *result = "failed (poison event)";
    return BusinessOutcome::kFailed;
  }
  if (!key.empty()) {
    auto it = seen_keys_.find(key);
    if (it != seen_keys_.end() && now_ms < it->second) {
      *result = "ok (replayed: key already used, no effect)";
      return BusinessOutcome::kAlreadyDone;
    }
    seen_keys_[key] = key_ttl_ms > 0 ? now_ms + key_ttl_ms : INT64_MAX;
  }
  ledger_->Record(effect);
  *result = "ok";
  return BusinessOutcome::kOk;
}

namespace {

void AppendSqlValue(std::string& out, const SqlValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    out += fmt::format("{}", *d);
  } else if (const auto* t = std::get_if<std::string>(&v)) {
    out += SqlQuote(*t);
  } else {
    out += "NULL";
  }
}

SqlValue ColumnValue(sqlite3_stmt* stmt, int c) {
  switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER: return int64_t{sqlite3_column_int64(stmt, c)};
    case SQLITE_FLOAT: return sqlite3_column_double(stmt, c);
    case SQLITE_NULL: return std::monostate{};
    default: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
      return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
    }
  }
}

}  // namespace

BusinessOutcome SqlStore::Execute(int owner, int64_t now_ms, const std::string& statement,
                                  const std::vector<SqlValue>& params, SqlResult* out,
                                  std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  std::string verb = VerbOf(statement);
  if (verb == "BEGIN") return Begin(owner, now_ms, sql, result);
  if (verb == "COMMIT" || verb == "END") return Commit(owner, now_ms, sql, result);
  if (verb == "ROLLBACK") return Rollback(owner, sql, result);
  *sql = statement;
  if (!params.empty()) {
    *sql += " [";
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) *sql += ", ";
      AppendSqlValue(*sql, params[i]);
    }
    *sql += "]";
  }
  auto fail = [&](std::string why, BusinessOutcome o) {
    out->error = why;
    *result = "error: " + why;
    return o;
  };
  if (verb == "ATTACH" || verb == "DETACH" || verb == "PRAGMA" || verb == "VACUUM") {
    return fail(verb + " is not available to protocol scripts", BusinessOutcome::kFailed);
  }
  if (Unavailable(owner, now_ms, result)) {
    out->error = *result;
    return BusinessOutcome::kUnavailable;
  }
  user_sql_ = true;
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db_->db, statement.c_str(), static_cast<int>(statement.size()), &stmt,
                         &tail) != SQLITE_OK) {
    return fail(sqlite3_errmsg(db_->db), BusinessOutcome::kFailed);
  }
  if (stmt == nullptr) return fail("empty statement", BusinessOutcome::kFailed);
  for (size_t i = 0; i < params.size(); ++i) {
    int at = static_cast<int>(i + 1);
    const SqlValue& v = params[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      sqlite3_bind_int64(stmt, at, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      sqlite3_bind_double(stmt, at, *d);
    } else if (const auto* t = std::get_if<std::string>(&v)) {
      sqlite3_bind_text(stmt, at, t->data(), static_cast<int>(t->size()), SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(stmt, at);
    }
  }
  int columns = sqlite3_column_count(stmt);
  for (int c = 0; c < columns; ++c) out->columns.push_back(sqlite3_column_name(stmt, c));
  int rc = 0;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::vector<SqlValue> row;
    for (int c = 0; c < columns; ++c) row.push_back(ColumnValue(stmt, c));
    out->rows.push_back(std::move(row));
  }
  std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_->db);
  sqlite3_finalize(stmt);
  if (!error.empty()) {
    out->rows.clear();
    return fail(error, BusinessOutcome::kFailed);
  }
  out->changes = columns == 0 ? sqlite3_changes(db_->db) : 0;
  *result = columns > 0 ? fmt::format("{} rows", out->rows.size())
                        : fmt::format("{} changed", out->changes);
  return BusinessOutcome::kOk;
}

}  // namespace xackly
