#include "sim/store.h"

#include <sqlite3.h>

#include <iterator>
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

// Appends `s` as an SQL string literal ('it''s').
void AppendSqlQuoted(std::string& out, std::string_view s) {
  out += '\'';
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
}

}  // namespace

namespace {
// The progress handler runs every this many virtual-machine steps.
constexpr int kProgressEveryVmSteps = 10'000;

const char* const kStatementText[kSqlStatementCount] = {
    "BEGIN",
    "SELECT 1 FROM processed WHERE event_id = ?1",
    "INSERT OR IGNORE INTO processed(event_id) VALUES (?1)",
    "INSERT INTO effects(event_id, stream_id, consumer, t_ms) VALUES (?1, ?2, ?3, ?4)",
    "COMMIT",
    "ROLLBACK",
    "DELETE FROM processed",
    "DELETE FROM effects",
};

thread_local const SqlObserver* t_observer = nullptr;

void BindText(sqlite3_stmt* stmt, int index, std::string_view text) {
  sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}
}  // namespace

void ObserveSqlOnThisThread(const SqlObserver* observer) { t_observer = observer; }

SqlDatabase::SqlDatabase() {
  XACKLY_CHECK(sqlite3_open_v2(":memory:", &db_,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                               nullptr) == SQLITE_OK);
  // Small pages: each transaction's first write to a page copies the
  // whole page into the rollback journal, and these tables are tiny.
  ExecOrDie(db_, "PRAGMA page_size = 512");
  // What a script's SQL may reach: this database only (no attached file,
  // no schema surgery); the authorizer refuses the rest (Authorize).
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  XACKLY_CHECK(sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr) == SQLITE_OK);
  XACKLY_CHECK(sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr) == SQLITE_OK);
  XACKLY_CHECK(sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr) == SQLITE_OK);
  sqlite3_set_authorizer(db_, &SqlDatabase::Authorize, this);
  XACKLY_CHECK(sqlite3_create_function(db_, "total_changes", 0, SQLITE_UTF8, this, &SqlDatabase::CaseTotalChanges,
                                       nullptr, nullptr) == SQLITE_OK);
  sqlite3_progress_handler(db_, kProgressEveryVmSteps, &SqlDatabase::Progress, this);
  ExecOrDie(db_,
            "CREATE TABLE processed(event_id TEXT PRIMARY KEY);"
            "CREATE TABLE effects(seq INTEGER PRIMARY KEY, event_id TEXT, stream_id TEXT,"
            " consumer TEXT, t_ms INTEGER);");
  for (int i = 0; i < kSqlStatementCount; ++i) statements_[i] = PrepareOrDie(db_, kStatementText[i]);
}

SqlDatabase::~SqlDatabase() {
  for (sqlite3_stmt* s : statements_) sqlite3_finalize(s);
  sqlite3_close(db_);
}

int SqlDatabase::Authorize(void* self_ptr, int action, const char* arg1, const char* arg2,
                           const char* /*database*/, const char* /*trigger*/) {
  auto* self = static_cast<SqlDatabase*>(self_ptr);
  if (!self->judging_script_) return SQLITE_OK;  // the store's own statements
  auto refuse = [&](std::string why) {
    if (self->compiling_ != nullptr && self->compiling_->refused.empty()) {
      self->compiling_->refused = std::move(why);
    }
    return SQLITE_DENY;
  };
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return refuse("ATTACH and DETACH (and VACUUM INTO, which attaches its file) are not "
                    "available to protocol scripts: they reach files outside the run");
    case SQLITE_PRAGMA:
      return refuse("PRAGMA is not available to protocol scripts: it changes the store's settings");
    case SQLITE_SAVEPOINT:
      return refuse("SAVEPOINT and RELEASE are not available to protocol scripts: use BEGIN, COMMIT "
                    "and ROLLBACK, the transaction the store keeps");
    case SQLITE_FUNCTION:
      if (arg2 != nullptr && sqlite3_stricmp(arg2, "load_extension") == 0) {
        return refuse("load_extension is not available to protocol scripts");
      }
      if (arg2 != nullptr && (sqlite3_stricmp(arg2, "random") == 0 || sqlite3_stricmp(arg2, "randomblob") == 0)) {
        return refuse(fmt::format("{}() is not available to protocol scripts: it would make the run differ each "
                                  "time (math.random draws from the run's seeded stream)",
                                  arg2));
      }
      return SQLITE_OK;
    case SQLITE_TRANSACTION:
      if (self->compiling_ != nullptr && arg1 != nullptr) {
        if (sqlite3_stricmp(arg1, "BEGIN") == 0) self->compiling_->kind = ScriptStatementKind::kBegin;
        if (sqlite3_stricmp(arg1, "COMMIT") == 0) self->compiling_->kind = ScriptStatementKind::kCommit;
        if (sqlite3_stricmp(arg1, "ROLLBACK") == 0) self->compiling_->kind = ScriptStatementKind::kRollback;
      }
      return SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

void SqlDatabase::StartCase() {
  sqlite3_set_last_insert_rowid(db_, 0);
  // A delete of no row (the table is empty) sets changes() to 0. Stepped
  // here, not through Execute: a benchmark's observer records a case's own
  // statements only.
  sqlite3_stmt* clear = statements_[static_cast<int>(SqlStatement::kClearProcessed)];
  XACKLY_CHECK(sqlite3_step(clear) == SQLITE_DONE);
  sqlite3_reset(clear);
  XACKLY_CHECK(sqlite3_changes(db_) == 0);
  total_changes_at_start_ = sqlite3_total_changes64(db_);
}

void SqlDatabase::CaseTotalChanges(sqlite3_context* context, int /*argc*/, sqlite3_value** /*argv*/) {
  auto* self = static_cast<SqlDatabase*>(sqlite3_user_data(context));
  sqlite3_result_int64(context, sqlite3_total_changes64(self->db_) - self->total_changes_at_start_);
}

int SqlDatabase::Progress(void* self_ptr) {
  auto* self = static_cast<SqlDatabase*>(self_ptr);
  if (!self->judging_script_) return 0;
  self->vm_steps_ += kProgressEveryVmSteps;
  return self->vm_steps_ > kScriptStatementVmSteps ? 1 : 0;  // non-zero interrupts
}

SqlDatabase::CompiledScriptStatement SqlDatabase::CompileScriptStatement(const std::string& text) {
  CompiledScriptStatement out;
  judging_script_ = true;
  compiling_ = &out;
  const int rc = sqlite3_prepare_v2(db_, text.c_str(), static_cast<int>(text.size()), &out.stmt, nullptr);
  compiling_ = nullptr;
  judging_script_ = false;
  if (rc != SQLITE_OK) {
    out.error = sqlite3_errmsg(db_);
    sqlite3_finalize(out.stmt);
    out.stmt = nullptr;
  } else if (out.stmt == nullptr) {
    out.error = "empty statement";
  }
  return out;
}

int SqlDatabase::StepScriptStatement(sqlite3_stmt* stmt, const std::function<void()>& on_row) {
  judging_script_ = true;
  vm_steps_ = 0;
  int rc = 0;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) on_row();
  judging_script_ = false;
  return rc;
}

SqlCallResult SqlDatabase::Execute(const SqlCall& call) {
  sqlite3_stmt* stmt = statements_[static_cast<int>(call.statement)];
  switch (call.statement) {
    case SqlStatement::kCheckDone:
    case SqlStatement::kMarkDone: BindText(stmt, 1, call.event_id); break;
    case SqlStatement::kEffect:
      BindText(stmt, 1, call.event_id);
      BindText(stmt, 2, call.stream_id);
      BindText(stmt, 3, call.consumer);
      sqlite3_bind_int64(stmt, 4, call.t_ms);
      break;
    default: break;
  }
  const int rc = sqlite3_step(stmt);
  // sqlite3_changes keeps the last write's count through reads and
  // transaction control: only an insert or delete has changes of its own.
  const bool writes = call.statement == SqlStatement::kMarkDone || call.statement == SqlStatement::kEffect ||
                      call.statement == SqlStatement::kClearProcessed ||
                      call.statement == SqlStatement::kClearEffects;
  SqlCallResult result{rc == SQLITE_DONE || rc == SQLITE_ROW, rc == SQLITE_ROW,
                   writes && rc == SQLITE_DONE ? sqlite3_changes(db_) : 0};
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (t_observer != nullptr) (*t_observer)(call, result);
  return result;
}

namespace {
// Building a database costs more than a whole case's SQL steps (measured
// with callgrind: 17% of a case), so a store hands its database, emptied, to
// the next store on the same thread. Nothing survives but the schema and
// the prepared statements, so no case can see another's rows.
thread_local std::unique_ptr<SqlDatabase> t_spare_db;
}  // namespace

SqlStore::SqlStore(EffectLedger* ledger) : ledger_(ledger) {
  if (t_spare_db) {
    db_ = std::move(t_spare_db);
    db_->StartCase();
  } else {
    db_ = std::make_unique<SqlDatabase>();
  }
}

SqlStore::~SqlStore() {
  RollbackOpen();
  bool emptied = Exec(SqlStatement::kClearProcessed) && Exec(SqlStatement::kClearEffects);
  if (emptied && !user_sql_ && !t_spare_db) t_spare_db = std::move(db_);
}

bool SqlStore::Exec(SqlStatement statement) { return db_->Execute({statement}).ok; }

void SqlStore::RollbackOpen() {
  if (txn_owner_ == 0) return;
  XACKLY_CHECK(Exec(SqlStatement::kRollback));
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
  XACKLY_CHECK(Exec(SqlStatement::kBegin));
  txn_owner_ = owner;
  *result = "ok";
  return BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::CheckDone(int owner, int64_t now_ms, const std::string& event_id,
                                    std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  sql->assign("SELECT 1 FROM processed WHERE event_id = ");
  AppendSqlQuoted(*sql, event_id);
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  const bool found = db_->Execute({SqlStatement::kCheckDone, event_id}).row;
  *result = found ? "1 row" : "0 rows";
  return found ? BusinessOutcome::kAlreadyDone : BusinessOutcome::kOk;
}

BusinessOutcome SqlStore::MarkDone(int owner, int64_t now_ms, const std::string& event_id,
                                   std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  sql->assign("INSERT OR IGNORE INTO processed(event_id) VALUES (");
  AppendSqlQuoted(*sql, event_id);
  *sql += ')';
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  const SqlCallResult marked = db_->Execute({SqlStatement::kMarkDone, event_id});
  XACKLY_CHECK(marked.ok);
  const bool inserted = marked.changes == 1;
  *result = inserted ? "1 row" : "0 rows";
  return inserted ? BusinessOutcome::kOk : BusinessOutcome::kAlreadyDone;
}

BusinessOutcome SqlStore::Effect(int owner, int64_t now_ms, const EffectRecord& effect,
                                 bool poison, std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  sql->assign("INSERT INTO effects(event_id, stream_id, consumer, t_ms) VALUES (");
  AppendSqlQuoted(*sql, effect.event_id);
  *sql += ", ";
  AppendSqlQuoted(*sql, effect.stream_id);
  *sql += ", ";
  AppendSqlQuoted(*sql, effect.consumer);
  fmt::format_to(std::back_inserter(*sql), ", {})", effect.t_ms);
  if (Unavailable(owner, now_ms, result)) return BusinessOutcome::kUnavailable;
  if (poison) {
    *result = "failed (poison event)";
    return BusinessOutcome::kFailed;
  }
  XACKLY_CHECK(db_->Execute({SqlStatement::kEffect, effect.event_id, effect.stream_id,
                              effect.consumer, effect.t_ms})
                   .ok);
  if (txn_owner_ == owner) {
    txn_effects_.push_back(effect);
  } else {
    ledger_->Record(effect);
  }
  *result = "1 row";
  return BusinessOutcome::kOk;
}

void SqlStore::Committed(const EffectRecord& effect, std::string* request, std::string* result) {
  *request = fmt::format("(committed by the process) xackly_effects: {} entry {}", effect.event_id,
                         effect.stream_id.empty() ? "-" : effect.stream_id);
  ledger_->Record(effect);
  *result = "1 row";
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
  XACKLY_CHECK(Exec(SqlStatement::kCommit));
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
  sqlite3_stmt* stmt = PrepareOrDie(db_->handle(), "SELECT event_id FROM processed");
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
    AppendSqlQuoted(out, *t);
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

bool SqlStore::NoticeRollbackBySqlite() {
  if (txn_owner_ == 0 || sqlite3_get_autocommit(db_->handle()) == 0) return false;
  txn_owner_ = 0;  // SQLite rolled it back (an error that ends the transaction)
  txn_effects_.clear();
  return true;
}

BusinessOutcome SqlStore::Execute(int owner, int64_t now_ms, const std::string& statement,
                                  const std::vector<SqlValue>& params, SqlResult* out,
                                  std::string* sql, std::string* result) {
  XACKLY_CHECK(!Busy(owner));
  SqlDatabase::CompiledScriptStatement compiled = db_->CompileScriptStatement(statement);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(compiled.stmt, &sqlite3_finalize);
  switch (compiled.kind) {
    case SqlDatabase::ScriptStatementKind::kBegin: return Begin(owner, now_ms, sql, result);
    case SqlDatabase::ScriptStatementKind::kCommit: return Commit(owner, now_ms, sql, result);
    case SqlDatabase::ScriptStatementKind::kRollback: return Rollback(owner, sql, result);
    case SqlDatabase::ScriptStatementKind::kOrdinary: break;
  }
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
  if (!compiled.refused.empty()) return fail(compiled.refused, BusinessOutcome::kFailed);
  if (Unavailable(owner, now_ms, result)) {
    out->error = *result;
    return BusinessOutcome::kUnavailable;
  }
  user_sql_ = true;
  if (!stmt) return fail(compiled.error, BusinessOutcome::kFailed);
  for (size_t i = 0; i < params.size(); ++i) {
    int at = static_cast<int>(i + 1);
    const SqlValue& v = params[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      sqlite3_bind_int64(stmt.get(), at, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      sqlite3_bind_double(stmt.get(), at, *d);
    } else if (const auto* t = std::get_if<std::string>(&v)) {
      sqlite3_bind_text(stmt.get(), at, t->data(), static_cast<int>(t->size()), SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(stmt.get(), at);
    }
  }
  int columns = sqlite3_column_count(stmt.get());
  const sqlite3_int64 rows_changed_before = sqlite3_total_changes64(db_->handle());
  for (int c = 0; c < columns; ++c) out->columns.push_back(sqlite3_column_name(stmt.get(), c));
  const int rc = db_->StepScriptStatement(stmt.get(), [&] {
    std::vector<SqlValue> row;
    for (int c = 0; c < columns; ++c) row.push_back(ColumnValue(stmt.get(), c));
    out->rows.push_back(std::move(row));
  });
  std::string error;
  if (rc == SQLITE_INTERRUPT) {
    error = fmt::format("statement stopped after {} SQLite steps (a query that never ends?)",
                        kScriptStatementVmSteps);
  } else if (rc != SQLITE_DONE) {
    error = sqlite3_errmsg(db_->handle());
  }
  stmt.reset();
  if (NoticeRollbackBySqlite()) error += " (SQLite rolled the open transaction back)";
  if (!error.empty()) {
    out->rows.clear();
    return fail(error, BusinessOutcome::kFailed);
  }
  // sqlite3_changes keeps the last insert, update or delete's count through
  // any other statement, and through the emptying that hands a database to
  // the next case on this thread (~SqlStore): read it only when this
  // statement changed rows, or a CREATE would report an earlier case's count
  // and the trace would depend on which case ran before it.
  const bool changed_rows = sqlite3_total_changes64(db_->handle()) != rows_changed_before;
  out->changes = changed_rows ? sqlite3_changes(db_->handle()) : 0;
  *result = columns > 0 ? fmt::format("{} rows", out->rows.size())
                        : fmt::format("{} changed", out->changes);
  return BusinessOutcome::kOk;
}

}  // namespace xackly
