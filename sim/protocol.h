// A consumer protocol: the loop every worker runs (read own pending at
// start-up, read new entries, claim idle ones, handle deleted entries, dead-
// letter, ack per entry or per batch), an optional janitor (retention trims,
// consumer clean-up), and the per-entry handler, which is either C++ coroutine
// code (the catalog's reference implementations, sim/catalog.cc) or a
// declarative step list (from a scenario file). Both run on the same worker
// machine and the same primitives, so they produce the same trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/faults.h"
#include "sim/server.h"
#include "sim/task.h"
#include "sim/verdict.h"

namespace xackly {

class Worker;
class ProtocolScript;
struct StreamEntry;

// Where the protocol keeps its "done" records and where its side effect lands.
enum class DedupeStore : uint8_t { kNone, kSql, kRedis };
enum class EffectSink : uint8_t { kExternal, kSql, kRedis };
const char* DedupeStoreName(DedupeStore s);
const char* EffectSinkName(EffectSink s);
bool ParseDedupeStore(std::string_view name, DedupeStore* out);
bool ParseEffectSink(std::string_view name, EffectSink* out);

// The declarative step vocabulary of a per-entry handler.
enum class HandlerOp : uint8_t {
  kAck,        // XACK this entry
  kCheckDone,  // is the event recorded as done? yes → duplicate branch
  kMarkDone,   // record the event as done; already recorded before any effect → duplicate branch
  kEffect,     // run the side effect
  kBegin,      // open an atomic group: an SQL transaction, or one EVAL if all-Redis
  kCommit,     // close it
};
const char* HandlerOpName(HandlerOp op);
bool ParseHandlerOp(std::string_view name, HandlerOp* out);
std::string HandlerOpList();

enum class AckMode : uint8_t { kPerEntry, kBatch };
enum class DeletedEntryPolicy : uint8_t { kAck, kSkip };
enum class DuplicatePolicy : uint8_t { kAck, kSkip };
enum class DeadLetterOrder : uint8_t { kSaveThenAck, kAckThenSave };
enum class RestartNaming : uint8_t { kSame, kFresh };
// kSafeMinId reads the groups' needs and trims below them in one EVAL;
// kRacyMinId does the same with separate XPENDING, XINFO GROUPS and XTRIM
// requests, so a delivery between the reads is trimmed (a catalog bug).
enum class TrimPolicy : uint8_t { kNone, kMaxLen, kSafeMinId, kRacyMinId };

struct LoopConfig {
  int read_count = 10;                 // COUNT for XREADGROUP
  bool read_own_pending_at_start = true;
  bool claim = true;                   // periodic XAUTOCLAIM, cursor followed to 0-0
  int64_t claim_min_idle_ms = 30000;
  int claim_count = 10;
  int64_t claim_every_ms = 5000;
  int64_t block_ms = 2000;             // a read that finds nothing parks this long
  AckMode ack = AckMode::kPerEntry;
  DeletedEntryPolicy on_deleted = DeletedEntryPolicy::kAck;
  int dead_letter_after = 0;           // deliveries before dead-lettering; 0: never
  DeadLetterOrder dead_letter_order = DeadLetterOrder::kSaveThenAck;

  bool operator==(const LoopConfig&) const = default;
};

struct JanitorConfig {
  TrimPolicy trim = TrimPolicy::kNone;
  int trim_maxlen = 0;                     // kMaxLen: XTRIM MAXLEN N
  bool delete_idle_consumers = false;      // XINFO CONSUMERS + XGROUP DELCONSUMER
  int64_t consumer_idle_ms = 10000;
  bool check_pending_before_delete = true;
  int64_t every_ms = 1000;

  bool enabled() const { return trim != TrimPolicy::kNone || delete_idle_consumers; }
  bool operator==(const JanitorConfig&) const = default;
};

// C++ handler: handles one live entry; returns true when the entry may be
// acknowledged by a batch ack (ack mode kBatch). Per-entry protocols ack
// themselves and their return value is ignored.
using CppHandler = Task<bool> (*)(Worker& w, const StreamEntry& e);

struct ProtocolDef {
  std::string name;
  std::string description;
  Expectation expected;

  DedupeStore dedupe = DedupeStore::kNone;
  int64_t dedupe_ttl_ms = 0;           // Redis done-records expire after this; 0: never
  EffectSink effect = EffectSink::kExternal;
  bool idempotency_key = false;        // external service dedupes by event id
  DuplicatePolicy on_duplicate = DuplicatePolicy::kAck;
  LoopConfig loop;
  JanitorConfig janitor;

  // The handler as a step list. Always present: it documents the protocol,
  // compiles its atomic Redis group, and runs when there is no C++ handler.
  std::vector<HandlerOp> steps;
  // The C++ reference implementation of the same handler (catalog only).
  CppHandler cpp_handler = nullptr;
  // A protocol script (docs/scripts.md) replaces the loop and the handler:
  // `script_path` as the scenario names it, `script` once the harness has
  // loaded it. Steps, loop and janitor settings are then unused, except the
  // loop's timeouts for the quiet window.
  std::string script_path;
  // Or a real consumer (harness/real_consumer.h): the command that starts
  // one consumer process, run by the harness behind its RESP front; the
  // harness sets `script` to it. Relative paths are the scenario file's.
  std::vector<std::string> consumer_command;
  std::shared_ptr<const ProtocolScript> script;

  // Defaults for runs of this protocol (a scenario may override them).
  RestartNaming naming = RestartNaming::kSame;
  Persistence persistence = Persistence::kNone;
  int64_t fault_phase_ms = 0;          // 0: derived from the workload
  FaultModel faults;                   // the fault model the expectation holds under

};

const char* RestartNamingName(RestartNaming n);    // same | fresh
const char* TrimPolicyName(TrimPolicy t);          // none | maxlen | safe-minid | racy-minid
const char* AckModeName(AckMode m);                // per-entry | batch
const char* DeletedEntryPolicyName(DeletedEntryPolicy p);  // ack | skip
const char* DuplicatePolicyName(DuplicatePolicy p);        // ack | skip
const char* DeadLetterOrderName(DeadLetterOrder o);        // save-then-ack | ack-then-save

// The crash points and lost-request/lost-reply sites a worker running `p`
// actually visits (what "every crash point" means for this protocol).
std::vector<std::string> CrashPointsOf(const ProtocolDef& p);
std::vector<std::string> LostSitesOf(const ProtocolDef& p);

// Whether `p`'s fault sites are known only once it runs: a protocol script
// (its sites are named by what it sends), or a C++ handler other than the
// catalog's own (an embedding test's, whose `steps` need not say what the
// code does). Such a protocol's empty site lists mean "every site it
// visits", and `check` finds them with probe runs (WithVisitedSites).
bool SitesFoundByRunning(const ProtocolDef& p);

// Whether `p`'s consumer is code outside the protocol's steps: a protocol
// script or a real consumer command (its steps are then unused).
bool HasScriptOrCommand(const ProtocolDef& p);

// The fault model an inline protocol without one is checked under: what a
// correct protocol must survive (crashes at every point it visits, stalls,
// lost requests and replies, clock jumps, store outages; poison events when
// it dead-letters). Deletions, restarts and DELCONSUMER are not in it: they
// lose data whatever the consumer does, so they are opt-in.
FaultModel DefaultFaultModel(const ProtocolDef& p);

// Checks a declarative definition: begin/commit pairing, an all-Redis group
// only holding Redis steps, dedupe steps needing a dedupe store, a Redis TTL
// only with a Redis dedupe store. Errors say which step is wrong and why.
Status ValidateProtocol(const ProtocolDef& p);

// The steps inside a begin/commit group are all in Redis (compiled to one EVAL).
bool IsRedisGroup(const ProtocolDef& p, const std::vector<HandlerOp>& group);

// The protocol's all-Redis begin..commit group, if it has one.
struct AtomicGroup {
  bool present = false;
  std::vector<HandlerOp> ops;  // the steps between begin and commit
  bool has_effect = false;
  bool marks_done = false;
  bool acks = false;
};
AtomicGroup AtomicGroupOf(const ProtocolDef& p);

// The catalog (sim/catalog.cc): C++ reference protocols.
const std::vector<ProtocolDef>& Catalog();
// nullptr when unknown.
const ProtocolDef* FindProtocol(std::string_view name);
// "ack-first, no-dedupe, ..."
std::string CatalogNames();

}  // namespace xackly
