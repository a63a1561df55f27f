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
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/reply.h"
#include "sim/status.h"
#include "sim/step.h"
#include "sim/task.h"

namespace xackly {

// Where a side effect lands; the oracle's ledger records it there.
// kCommitted is not a script's: a real consumer's effect that its process
// already committed in a database of its own (harness/real_consumer.h); the
// call only records it, and its outcome is always kOk.
enum class ScriptSink : uint8_t { kExternal, kSql, kRedis, kCommitted };

// One call of the side effect (w:effect).
struct EffectCall {
  std::string event_id;     // the business event (what "twice" and "lost" are judged by)
  std::string stream_id;    // the entry being handled, when the script names it
  ScriptSink sink = ScriptSink::kExternal;
  std::string key;          // external: idempotency key the service dedupes by; "" none
  int64_t key_ttl_ms = 0;   // external: how long the service remembers `key`; 0 forever
  int64_t duration_ms = -1; // how long the effect keeps the actor busy; -1 the run's default
  int64_t timeout_ms = 0;   // external: the caller gives up after this; 0 never
  std::string origin;       // "file:line" of the call, for an error about it
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
  // The actor's process died on its own (`why`: "exited with status 1:
  // ..."): the simulator takes it down as a crash and starts a replacement
  // after the restart delay, so this never returns there. A world that
  // cannot (a test's fake) returns.
  virtual Task<void> Exit(std::string why) {
    (void)why;
    co_return;
  }

  // Whether the last call (a Redis or Effect call) lost its request or its
  // reply, for a ProtocolScript that SeesConnectionResets: the call returned
  // without a reply, and the script should drop that connection. Actors of
  // other scripts are restarted instead, and never see it.
  virtual bool ConnectionWasCut() const { return false; }

  // Virtual milliseconds since the run started (no step).
  virtual int64_t NowMs() const = 0;
  // When the actor's next step can run at the earliest: NowMs() plus what
  // its last step keeps it busy (a sleep, an effect's duration, a stall).
  // A process that reads its own clock between two steps reads this.
  virtual int64_t ReadyAtMs() const { return NowMs(); }
  // "actor w1, step 57": where the script is, for error messages.
  virtual std::string Where() const = 0;
  // A line the script printed (print()).
  virtual void Print(const std::string& line) { (void)line; }
};

enum class ScriptRole : uint8_t { kConsumer, kProducer, kJanitor };
// The script function each role runs: "consumer", "producer", "janitor".
inline const char* ScriptFunctionName(ScriptRole role) {
  switch (role) {
    case ScriptRole::kConsumer: return "consumer";
    case ScriptRole::kProducer: return "producer";
    case ScriptRole::kJanitor: return "janitor";
  }
  return "?";
}

// What an actor's script sees as fields of `w`.
struct ScriptActorInfo {
  ScriptRole role = ScriptRole::kConsumer;
  // The function it runs: empty for the role's own (ScriptFunctionName); a
  // further consumer group's workers run the group's (ConsumerGroupSpec).
  std::string function;
  std::string slot;          // w.slot: "w1", stable across incarnations (the process's)
  std::string name;          // w.consumer (and w.name): the consumer name (the process's)
  int lane = 1;              // w.lane: which of the process's handler lanes (1..lanes)
  int lanes = 1;             // w.lanes: the process's handler lanes (RunConfig::handlers)
  int incarnation = 1;       // w.incarnation
  std::string stream;        // w.stream
  std::string group;         // w.group
  std::string effects_key;   // w.effects_key: the Redis effect ledger (for EVAL scripts)
  int events = 0;            // w.events: how many events the run produces
  int64_t epoch_ms = 0;      // Unix ms at virtual time 0 (os.time)
  uint64_t seed = 0;         // the actor's math.random stream
  // The handler lanes of one process share its memory: where the process
  // keeps it (the ProtocolScript's own object; the first lane to start
  // creates it, the others run in it; the simulator drops it when the
  // process dies, and it ends with the last lane running in it). Null: a
  // process of one lane, whose memory is its own.
  std::shared_ptr<void>* process_memory = nullptr;
  // What every actor of the run shares (the ProtocolScript's own object:
  // the first actor to start creates it; the simulator drops it when the run
  // ends). Never null in a simulated run.
  std::shared_ptr<void>* run_memory = nullptr;
};

// A loaded protocol script, as the simulator sees it (implemented by the
// Lua host, sim/lua/script_actor.h). Shared and immutable: every actor start
// runs a fresh process of it (or, for a handler lane, runs in its process's,
// ScriptActorInfo::process_memory).
class ProtocolScript {
 public:
  virtual ~ProtocolScript() = default;
  virtual const std::string& path() const = 0;
  virtual bool Defines(ScriptRole role) const = 0;
  // Whether it defines a global function `name` that an actor can run
  // (ScriptActorInfo::function). By default only the consumer's.
  virtual bool DefinesFunction(std::string_view name) const {
    return name == ScriptFunctionName(ScriptRole::kConsumer) && Defines(ScriptRole::kConsumer);
  }
  // Whether a lost request or reply cuts the actor's connection and the
  // script goes on (ScriptWorld::ConnectionWasCut; a real consumer's client
  // sees its socket close and runs its own error handling), rather than the
  // actor timing out and restarting its loop (a Lua script).
  virtual bool SeesConnectionResets() const { return false; }
  // Runs the role's function to its end. Ok when it returns; InvalidArgument
  // "path:line: message (actor w1, step 57)" when the script fails.
  // REQUIRES: Defines(info.role); `world` outlives the task
  virtual Task<Status> Run(ScriptActorInfo info, ScriptWorld& world) const = 0;
};

}  // namespace xackly
