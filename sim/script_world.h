// What a protocol script can ask of the simulated world, one step per call.
//
// A protocol script (sim/lua/, docs/scripts.md) is the consumer, producer or
// janitor written as a Lua function. Each of its calls to the world
// (w:redis, w:sql, w:effect, w:point, w:sleep and the steps of w:read) is
// one awaited call on a ScriptWorld. The simulator implements ScriptWorld so
// that every call is exactly one scheduler Step (sim/step.h): a scheduling
// point, a named crash point and a fault site. Tests implement it with a fake
// that answers at once. This header has no Lua in it: sim/ stays free of the
// interpreter, and the Lua host (sim/lua/) depends on sim/, not the reverse.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/reply.h"
#include "sim/step.h"
#include "sim/task.h"

namespace xackly {

// One SQL value: NULL, INTEGER, REAL or TEXT (BLOBs travel as TEXT).
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// What one SQL statement did. `error` is non-empty when the statement
// failed (a constraint, a syntax error, the store's outage); the statement
// then changed nothing.
struct SqlResult {
  BusinessOutcome outcome = BusinessOutcome::kOk;
  std::vector<std::string> columns;          // of a query; empty for DML
  std::vector<std::vector<SqlValue>> rows;   // one vector per row, in column order
  int64_t changes = 0;                       // rows changed by INSERT/UPDATE/DELETE
  std::string error;
};

// Where a side effect lands; the oracle's ledger records it there.
enum class ScriptSink : uint8_t { kExternal, kSql, kRedis };

// One call of the side effect (w:effect).
struct EffectCall {
  std::string event_id;     // the business event (what "twice" and "lost" are judged by)
  std::string stream_id;    // the entry being handled, when the script names it
  ScriptSink sink = ScriptSink::kExternal;
  std::string key;          // external: idempotency key the service dedupes by; "" none
  int64_t key_ttl_ms = 0;   // external: how long the service remembers `key`; 0 forever
  int64_t duration_ms = -1; // how long the effect keeps the actor busy; -1 the run's default
  int64_t timeout_ms = 0;   // external: the caller gives up after this; 0 never
};

// What the side effect call returned to the script.
enum class EffectOutcome : uint8_t {
  kOk,           // it ran
  kDuplicate,    // the idempotency key was replayed: the service did nothing
  kUnavailable,  // transient failure: nothing ran
  kFailed,       // permanent failure (a poison event)
  kTimeout,      // the caller gave up; the effect may or may not have run
};
// ok | duplicate | unavailable | failed | timeout
inline const char* EffectOutcomeName(EffectOutcome o) {
  switch (o) {
    case EffectOutcome::kOk: return "ok";
    case EffectOutcome::kDuplicate: return "duplicate";
    case EffectOutcome::kUnavailable: return "unavailable";
    case EffectOutcome::kFailed: return "failed";
    case EffectOutcome::kTimeout: return "timeout";
  }
  return "?";
}

class ScriptWorld {
 public:
  virtual ~ScriptWorld() = default;

  // Sends one Redis command (any command; error replies are values).
  virtual Task<Reply> Redis(std::vector<std::string> argv) = 0;
  // Runs one SQL statement with positional parameters (?).
  virtual Task<SqlResult> Sql(std::string statement, std::vector<SqlValue> params) = 0;
  virtual Task<EffectOutcome> Effect(EffectCall call) = 0;
  // A crash point the script names (w:point("after-commit")).
  virtual Task<void> Point(std::string name) = 0;
  virtual Task<void> Sleep(int64_t ms) = 0;
  // Waits for new entries or `max_ms`; true when woken by new entries.
  virtual Task<bool> Park(int64_t max_ms) = 0;

  // Virtual milliseconds since the run started (no step).
  virtual int64_t NowMs() const = 0;
  // "actor w1, step 57": where the script is, for error messages.
  virtual std::string Where() const = 0;
};

}  // namespace xackly
