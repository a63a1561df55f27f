// What simulated actors can do, one step at a time, and the loops they run.
//
// Worker is the API consumer protocols are written against. Every method
// returns an awaitable that performs exactly one request (or one local
// action) and is a named crash point: `co_await w.Effect(e)` runs the side
// effect, and a crash fault at "after-effect" kills the worker right there.
// Consumer protocol code reads like the consumer it models:
//
//   Task<bool> TxnDedupe(Worker& w, const StreamEntry& e) {
//     bool begun = co_await w.Begin();
//     if (!begun) co_return false;
//     Dedupe d = co_await w.MarkDone(e);
//     if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
//     ...
//   }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/actor.h"
#include "sim/protocol.h"
#include "sim/stream.h"

namespace xackly {

class FaultPlan;

// Fixed names of the simulated world's keys.
struct WorldNames {
  std::string stream = "events";
  std::string group = "workers";
  std::string dead_letters = "events:dlq";
  std::string effects = "xackly:effects";  // ledger of Redis-side effects (harness-owned)
  std::string done_prefix = "done:";
};

// Virtual-time settings of a run (all in virtual milliseconds).
struct Timing {
  int64_t step_ms = 1;             // virtual time that passes with every executed step
  int64_t effect_ms = 10;          // how long a side effect keeps a worker busy (the longest)
  // Per-event effect durations: each event's effect is shorter than
  // effect_ms by up to this much, a share drawn from the run's seed and the
  // event (EffectMsOf), the same at every delivery. 0: every effect lasts
  // effect_ms. Kept to at most effect_ms.
  int64_t effect_spread_ms = 0;
  int64_t produce_every_ms = 5;    // a producer's interval between events (on average)
  // A producer adds this many events back to back, then waits
  // produce_burst x produce_every_ms: the same rate, in bursts. 1: evenly.
  int64_t produce_burst = 1;
  int64_t restart_delay_ms = 5000; // a crashed worker's replacement starts this much later
  int64_t reconnect_ms = 1000;     // a worker or producer that saw a timeout reconnects after this
  int64_t fault_phase_ms = 0;      // 0: derived from the workload (see Simulation)
  int64_t quiet_window_ms = 0;     // 0: derived from the protocol's timeouts
  // Harness guard, not a verdict: a run that reaches it fails with "harness
  // limit" (exit 3). 0: derived from the workload (DefaultMaxSteps).
  int64_t max_steps = 0;

  bool operator==(const Timing&) const = default;
};

// Read-only facts every actor of a run shares. Owned by the Simulation.
struct ActorEnv {
  const ProtocolDef* protocol = nullptr;
  const WorldNames* names = nullptr;
  const Timing* timing = nullptr;
  const FaultPlan* faults = nullptr;
  const int64_t* now_ms = nullptr;
  int events = 0;
  int producers = 0;
  int handlers = 1;  // handler lanes per worker process (RunConfig::handlers)
  // Replicas of the server (RunConfig::replicas): the built-in producer
  // then counts an event as added only once WAIT says a replica has it.
  int replicas = 0;
  bool producer_waits = true;  // RunConfig::producer_waits
  // With lanes, each worker process's script memory until the process dies,
  // by worker number (ScriptActorInfo::process_memory).
  std::vector<std::shared_ptr<void>>* process_memory = nullptr;
  // What every actor of the run shares (ScriptActorInfo::run_memory).
  std::shared_ptr<void>* run_memory = nullptr;
  // The protocol's atomic Redis group (AtomicGroupOf), and the same group
  // compiled to one Lua script (empty if none).
  AtomicGroup atomic;
  std::string atomic_script;
  // Protocol scripts (sim/script_steps.h): the run's seed, the server clock
  // at virtual time 0, the step count (for error messages) and where a
  // script's error goes (the run ends with it).
  uint64_t seed = 0;
  int64_t epoch_ms = 0;
  const int64_t* steps = nullptr;
  Status* script_error = nullptr;
};

// How long the side effect of `event_id` keeps a worker busy in a run of
// `seed`: timing.effect_ms less a share of timing.effect_spread_ms that
// depends on the seed and the event alone.
int64_t EffectMsOf(const Timing& timing, uint64_t seed, std::string_view event_id);

// "order:7" for event 7, and back (0 if `event_id` is not one of ours).
std::string EventId(int event);
int EventNumber(std::string_view event_id);

struct ReadResult {
  bool nogroup = false;  // the group (or stream) is gone, e.g. after a restart
  std::vector<StreamEntry> entries;
};

struct ClaimResult {
  bool nogroup = false;
  std::string next_cursor = "0-0";
  std::vector<StreamEntry> entries;
  std::vector<std::string> deleted_ids;
};

enum class Dedupe : uint8_t { kNew, kDone, kFailed };

class Worker {
 public:
  Worker(Actor* actor, const ActorEnv* env) : actor_(actor), env_(env) {}

  const ProtocolDef& protocol() const { return *env_->protocol; }
  const AtomicGroup& atomic_group() const { return env_->atomic; }
  const std::string& consumer() const { return actor_->name; }
  int64_t now_ms() const { return *env_->now_ms; }

  // Stream reads. A read that returns nothing never blocks in Redis: the
  // caller parks instead.
  Request<ReadResult> ReadNew();                                  // XREADGROUP ... >
  Request<ReadResult> ReadPending(const std::string& after_id);   // XREADGROUP ... <after_id>
  Request<ClaimResult> Claim(const std::string& cursor);          // XAUTOCLAIM
  // XPENDING rows (deliveries) of this consumer's entries in [first, last].
  Request<std::vector<PendingRow>> DeliveryCounts(const std::string& first,
                                                  const std::string& last, size_t count);
  Request<int64_t> Ack(const std::string& id);                    // XACK; returns removed count
  Request<int64_t> AckMany(const std::vector<std::string>& ids);
  Request<bool> CreateGroup();                                    // XGROUP CREATE ... 0 MKSTREAM

  // Business steps, routed to the protocol's dedupe store and effect sink.
  Request<Dedupe> CheckDone(const StreamEntry& e);
  Request<Dedupe> MarkDone(const StreamEntry& e);
  Request<bool> Effect(const StreamEntry& e);  // true: the effect ran (or its key was replayed)
  Request<bool> Begin();                       // SQL transaction
  Request<bool> Commit();
  Request<bool> Rollback();
  bool InTransaction() const { return actor_->in_transaction; }
  // The protocol's all-Redis atomic group as one EVAL. kDone: the group's
  // check found the event done (and acked it if the group holds the ack).
  Request<Dedupe> RedisAtomic(const StreamEntry& e);
  Request<bool> DeadLetter(const StreamEntry& e);  // XADD <stream>:dlq with the payload

  // Local actions.
  Request<bool> Park(int64_t max_ms);  // true when woken by new entries
  Request<bool> Checkpoint(const char* label);

  // The protocol's duplicate branch: roll back an open transaction, then
  // XACK (policy ack) or leave the entry pending (policy skip). Returns
  // whether a batch ack may include the entry.
  Task<bool> OnDuplicate(const StreamEntry& e);
  // Runs the protocol's handler (C++ or declarative) for one live entry.
  Task<bool> Handle(const StreamEntry& e);

 private:
  Step RedisStep(Op op, std::vector<std::string> argv) const;
  Step BusinessStep(Op op, const StreamEntry* e) const;
  bool IsPoison(std::string_view event_id) const;

  Actor* actor_;
  const ActorEnv* env_;
};

// The consumer loop shared by every protocol: own pending at start-up, then
// claim when due, read new, park when idle; deleted entries, dead-lettering
// and batch acks handled per LoopConfig.
Task<void> ConsumerMain(Worker w);

// Sends its share of the events with XADD (explicit IDs chosen by the
// scheduler from virtual time), retrying an event until an XADD is
// acknowledged. Progress lives in Actor::next_event, which survives resets.
Task<void> ProducerMain(Actor* actor, const ActorEnv* env);

// The safe-minid trim as one Lua script (KEYS[1]: the stream); replies
// [entries trimmed, the MINID used] ([0, ""] without a group).
const std::string& SafeTrimScript();

// Retention and clean-up jobs of the protocol's JanitorConfig.
Task<void> JanitorMain(Actor* actor, const ActorEnv* env);

// The declarative handler interpreter (sim/declarative.cc).
Task<bool> RunDeclarativeHandler(Worker& w, const StreamEntry& e);

// Lua for the protocol's begin..commit group of Redis steps.
// KEYS: done key, stream, effects ledger. ARGV: group, entry id, effect
// record, dedupe ttl ms (0: none), poison flag (1: the effect fails).
// Empty when the protocol has no all-Redis group.
std::string CompileAtomicScript(const ProtocolDef& p);

// "order:7|12-0|w1|1234": what an effect records in the Redis ledger.
std::string EffectRecordText(std::string_view event_id, std::string_view stream_id,
                             std::string_view consumer, int64_t t_ms);

}  // namespace xackly
