// The unit of simulation: one step is exactly one request (to Redis, to the
// business SQL store or to the external service) or one local action (park,
// sleep, checkpoint). Actor coroutines build a Step and suspend; the scheduler
// executes it, applies faults, reports it to the oracle, writes the trace line
// and resumes the actor with the result.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/reply.h"

namespace xackly {

enum class Channel : uint8_t { kRedis, kSql, kExternal, kLocal };

enum class Op : uint8_t {
  // Consumer Redis requests
  kReadNew,          // XREADGROUP ... >
  kReadPending,      // XREADGROUP ... 0 (own pending)
  kClaim,            // XAUTOCLAIM
  kDeliveryCounts,   // XPENDING extended form for a claimed batch (dead-lettering)
  kAck,              // XACK
  kCreateGroup,      // XGROUP CREATE ... MKSTREAM (after NOGROUP)
  kRedisCheckDone,   // EXISTS done:<event>
  kRedisMarkDone,    // SET done:<event> 1 NX [PX ttl]  (nil: already done)
  kRedisEffect,      // RPUSH of the effect record, outside any atomic group
  kRedisAtomic,      // EVAL of an all-Redis atomic group
  kDeadLetter,       // XADD <stream>:dlq ...
  // Producer and janitor Redis requests
  kProduce,          // XADD with an explicit ID
  kTrim,             // XTRIM MAXLEN / MINID
  kGroupInfo,        // XINFO GROUPS
  kPendingSummary,   // XPENDING summary
  kConsumerInfo,     // XINFO CONSUMERS
  kDelConsumer,      // XGROUP DELCONSUMER
  // Business store
  kSqlBegin,
  kSqlCheckDone,     // SELECT 1 FROM processed WHERE event_id = ?
  kSqlMarkDone,      // INSERT OR IGNORE INTO processed ...
  kSqlEffect,        // the side effect, as a row in the business tables
  kSqlCommit,
  kSqlRollback,
  kExternalEffect,   // a call to a non-transactional external service
  // Local actions
  kPark,             // wait for new entries or a virtual timeout (never sent to Redis)
  kSleep,
  kCheckpoint,       // a named point inside a batch ("mid-batch"); a script's w:point
  // Protocol scripts (sim/script_steps.cc): any Redis command, any SQL
  // statement. Their crash points and fault sites are named by the command
  // (before-XACK, after-XACK, XACK) or the statement's verb (after-COMMIT,
  // COMMIT), so InfoOf has none; see ScriptCrashPoint / ScriptSite.
  kCommand,
  kSqlStatement,
  // A real consumer's process exited on its own (harness/real_consumer.h):
  // the scheduler takes the actor down as a crash, and its supervisor
  // restarts it. `label` says how it ended.
  kExit,
  // A side effect a real consumer's process already committed in a database
  // of its own (a row of its xackly_effects table, harness/real_consumer.h):
  // the step records it on the ledger as found. Nothing about it can fail or
  // be lost (it happened); its crash point is after-effect.
  kCommittedEffect,
};
// How many Ops there are (InfoOf's table has one row per Op, in this order).
inline constexpr size_t kOpCount = static_cast<size_t>(Op::kCommittedEffect) + 1;

struct OpInfo {
  const char* name;         // stable name used in traces and reports
  Channel channel;
  // The crash point right after this step, or nullptr when the step is not a
  // crash point (producer, janitor and local waits).
  const char* crash_point;
  // The name lost-request / lost-reply faults use for this request, or
  // nullptr when those faults do not apply.
  const char* lost_site;
};
const OpInfo& InfoOf(Op op);

// Outcome of a business-store or external-service request.
enum class BusinessOutcome : uint8_t {
  kOk,
  kAlreadyDone,   // dedupe found the event recorded (or the idempotency key replayed)
  kUnavailable,   // transient: the store is down; do not ack, retry later
  kFailed,        // permanent: a poison event whose effect always fails
  kNoTransaction, // commit/rollback without begin (a protocol bug)
};

// One SQL value: NULL, INTEGER, REAL or TEXT (BLOBs travel as TEXT).
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// What one SQL statement did. `error` is non-empty when the statement failed
// (a constraint, a syntax error, an outage); it then changed nothing.
struct SqlResult {
  std::vector<std::string> columns;          // of a query; empty for DML
  std::vector<std::vector<SqlValue>> rows;   // one vector per row, in column order
  int64_t changes = 0;                       // rows changed by INSERT/UPDATE/DELETE
  std::string error;
};

// The uppercase verb of a command or statement ("xack" -> "XACK",
// "insert or ignore ..." -> "INSERT"): the name its fault sites use.
std::string VerbOf(std::string_view text);

struct Step {
  Op op = Op::kCheckpoint;
  // Redis requests: the exact command sent.
  std::vector<std::string> argv;
  // Business requests and dedupe: the event and the entry that carries it.
  std::string event_id;
  std::string stream_id;
  // Local actions: how long to park or sleep; checkpoint: its name.
  int64_t duration_ms = 0;
  std::string label;
  // A script's call: "file:line" of it, for an error the simulator finds.
  std::string origin;
  // Virtual time the actor spends after this step before its next one (an
  // effect's processing time, a producer's interval).
  int64_t busy_ms = 0;
  // An effect's caller gives up after this long (0: it waits for the
  // answer); the scheduler sets timed_out when it did.
  int64_t timeout_ms = 0;

  // Results, filled by the scheduler before the actor resumes.
  Reply reply;
  BusinessOutcome outcome = BusinessOutcome::kOk;
  bool timed_out = false;
  bool woken_by_data = false;

  // kSqlStatement: the statement's parameters, and its result.
  std::vector<SqlValue> params;
  SqlResult sql;
};

}  // namespace xackly
