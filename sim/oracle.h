// The oracle: judges a run from what really happened, never from what the
// protocol believes. It shares no state with the actors. The scheduler feeds
// it observations made by harness code (the real reply of every request, even
// one whose reply a fault hid from the worker), the effect ledger tells it
// which side effects ran, and at quiescence it reads the final PEL, stream and
// dead-letter stream from Redis itself.
//
// Per event it keeps a history (Jepsen-style: produced / unknown outcome,
// deliveries, claims, effects, acks, crashes and faults that touched it),
// which explains every violation and becomes the counterexample story.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/server.h"
#include "sim/store.h"
#include "sim/stream.h"
#include "sim/verdict.h"

namespace xackly {

enum class HistoryKind : uint8_t {
  kProduced,         // XADD acknowledged
  kProduceUnknown,   // XADD executed but its reply was lost (unknown outcome)
  kProduceLost,      // XADD request lost (not executed)
  kDelivered,        // XREADGROUP > handed the entry to a consumer
  kRedelivered,      // XREADGROUP 0 handed it again to its owner
  kClaimed,          // XAUTOCLAIM moved it to a consumer
  kEffect,           // the side effect ran (ledger)
  kEffectFailed,     // the effect was attempted and failed (poison, outage)
  kDedupeRecord,     // a "done" record with a TTL was written
  kAcked,            // XACK removed the entry from the PEL
  kDeadLettered,     // the payload was written to the dead-letter stream
  kCrash,            // the consumer holding the event crashed
  kStall,            // the consumer holding the event stalled
  kLostReply,        // a reply was lost on a request about the event
  kLostRequest,      // a request about the event was lost
  kPayloadDeleted,   // XDEL/XTRIM removed the entry's payload
  kConsumerDeleted,  // DELCONSUMER dropped the entry from the PEL
  kRestartLoss,      // a server restart lost the entry
  kServerRestart,    // run-wide: redis-server was killed and restarted
  kClockJump,        // run-wide: virtual time leapt forward
  kStoreOutage,      // run-wide: the business store went down
  kFault,            // run-wide: a fault of a kind with no history kind of its
                     // own; `site` names the kind (its descriptor tells it)
  kRewound,          // the group's position moved back past it (XGROUP SETID, a recreated
                     // group, inside EVAL): delivered before, deliverable again
  kReadByPosition,   // plain XREAD (no group) handed it to a reader that keeps its own
                     // position: nothing pending, nothing the group would deliver again
  kFailoverLoss,     // a failover lost the entry: the promoted replica never received its XADD
  kFailover,         // run-wide: the primary failed over to its replica (detail: what it dropped)
  kErrorReply,       // a request about the event was answered with an error and never ran
                     // (detail: the error, e.g. LOADING)
  kReplicaLag,       // a WAIT got no acknowledgement in time: the replica lagged (duration: the wait)
};
const char* HistoryKindName(HistoryKind k);
inline constexpr HistoryKind kLastHistoryKind = HistoryKind::kReplicaLag;

// One thing that happened to an event. `detail` is a human sentence for
// people; everything a report decides on is in the typed fields.
struct HistoryItem {
  HistoryKind kind;
  int64_t t_ms = 0;
  int64_t line = -1;       // index of the trace line that shows it
  std::string actor;       // consumer / producer / "fault"
  std::string stream_id;
  std::string detail;      // a human sentence (or the fault site / failure reason)
  int64_t value = 0;       // a number the item carries (TTL, count, duration)
  // Typed facts, empty when they do not apply to the kind.
  std::string command;     // the Redis command that did it (XREADGROUP, XAUTOCLAIM, XACK, XTRIM...)
  std::string site;        // crash, stall, lost-request, lost-reply: the fault site
  std::string sink;        // effect: "sql", "external" or "redis"
  std::string consumer;    // consumer-deleted: the consumer XGROUP DELCONSUMER removed;
                           // a lane's delivery: the consumer name it read as
  std::string persistence; // restart-loss, server-restart: the server's persistence mode
  std::string key;         // dedupe-record: the key a script set with a TTL (empty: the protocol's own)
  std::string fired_in;    // crash, stall of a handler lane that went down or stalled with its
                           // process: the lane the fault fired in (empty: this actor's own fault)
  bool payload_missing = false;  // delivered/claimed: the entry's payload was gone (nil)
};

// How an entry reached a consumer. kNoAck: XREADGROUP ... NOACK, which hands
// the entry over without ever putting it in the PEL, so nothing can deliver
// it again.
enum class DeliveryVia : uint8_t { kNew, kOwnPending, kClaim, kNoAck };

class Oracle {
 public:
  explicit Oracle(int events);

  // The trace line the next observations belong to.
  void SetLine(int64_t line) { line_ = line; }

  // --- Observations -------------------------------------------------------
  enum class ProduceOutcome : uint8_t { kAcknowledged, kUnknown, kNotSent };
  void Produced(int64_t t, const std::string& actor, const std::string& event_id,
                const std::string& stream_id, ProduceOutcome outcome);
  // `reader`: the handler lane that sent the read (empty: the run has no
  // lanes). When it differs from `consumer` ("w1#2" reading as "w1", or any
  // lane reading under a name of the script's choosing), its history names
  // the lane and the detail the consumer.
  void Delivered(int64_t t, const std::string& consumer, const std::vector<StreamEntry>& entries,
                 DeliveryVia via, std::string_view reader = {});
  // XAUTOCLAIM's deleted list (or the IDs an XCLAIM named whose payload is
  // gone): pending IDs Redis removes from the PEL. `command`: the claim.
  void ClaimFoundDeleted(int64_t t, const std::string& consumer, const std::vector<std::string>& ids,
                         const std::string& command = "XAUTOCLAIM");
  // Plain XREAD (no group) handed `entries` of the run's stream to
  // `reader`, a position-based reader: whether it reads them again is up
  // to the position it stores, so no PEL row and no group delivery. One
  // history item per entry the reader holds unprocessed (a reader polling
  // from a position that does not move is told once, not per poll); a crash
  // or stall of the reader then names those events (WorkerFault), and a
  // lost or repeated effect is explained by the read and the crash.
  void ReadByPosition(int64_t t, const std::string& reader, const std::vector<StreamEntry>& entries);
  // XCLAIM/XAUTOCLAIM ... JUSTID: the pending `ids` now belong to
  // `consumer`; nothing was delivered (no payload, no delivery count).
  void OwnershipMoved(int64_t t, const std::string& consumer, const std::vector<std::string>& ids,
                      const std::string& command);
  // The entry's payload is in the model's live stream.
  bool IsLive(const std::string& id) const;
  void Acked(int64_t t, const std::string& consumer, const std::vector<std::string>& ids);
  void Effect(const EffectRecord& effect);
  // `why` is the sink's answer ("failed (poison event)", "unavailable",
  // "poison"); the history item's detail is the reason alone ("poison
  // event"), so reports tell it without parsing.
  void EffectFailed(int64_t t, const std::string& consumer, const std::string& event_id,
                    const std::string& stream_id, const std::string& why);
  // A done-record with a TTL: the built-in protocols' marker, or `key` that
  // a script set with an expiry (named in the detail; empty: the protocol's).
  void DedupeRecord(int64_t t, const std::string& consumer, const std::string& event_id,
                    int64_t ttl_ms, const std::string& key = "");
  // `text` (an argument of a write outside the run's stream, an SQL
  // statement's parameter) saved work for every event it names
  // (EventsNamedIn): an inbox row, an outbox entry, a list item. A relay
  // on a timer may still owe such an event's effect; one acked without any
  // such save has nothing left to relay it (see FinalState::owed_quiet_ms).
  void WorkSavedIn(std::string_view text);
  void DeadLettered(int64_t t, const std::string& consumer, const std::string& event_id,
                    const std::string& stream_id);
  // A fault that hit `actor` while its step concerned `event_ids`; for
  // crashes and stalls the events the consumer holds in the PEL count too.
  // `duration_ms`: how long a stall lasts (the items' value). `fired_in`:
  // another lane of `actor`'s process, where the fault fired (HistoryItem).
  // `detail`: the item's detail when not its site (an error reply's error).
  void WorkerFault(HistoryKind kind, int64_t t, const std::string& actor, const std::string& site,
                   const std::vector<std::string>& event_ids, int64_t duration_ms = 0,
                   const std::string& fired_in = "", const std::string& detail = "");
  // `command`: XDEL or XTRIM; `how`: the request as people read it.
  void PayloadsDeleted(int64_t t, const std::string& actor, const std::vector<std::string>& ids,
                       const std::string& command, const std::string& how);
  void ConsumerDeleted(int64_t t, const std::string& actor, const std::string& consumer);
  // After a restart: what survived, read back from the server (the group's
  // last-delivered ID is empty when the group is gone).
  void ServerRestarted(int64_t t, Persistence persistence, const std::vector<std::string>& stream_ids,
                       const std::vector<PendingRow>& pending, const std::string& last_delivered_id);
  // After a failover: what the promoted replica holds, read back from it
  // as after a restart, and the writes it never received
  // (FailoverOutcome::dropped). A dropped write about an event (an argument
  // naming its entry ID or event id, EventsNamedIn) is remembered for it.
  // `to_lagging`: the lagging replica was promoted (failover lagging), and
  // the history says so.
  void FailedOver(int64_t t, const std::vector<ReplicatedWrite>& dropped, const std::vector<std::string>& stream_ids,
                  const std::vector<PendingRow>& pending, const std::string& last_delivered_id,
                  bool to_lagging = false);
  // What the server holds after a command the oracle cannot see into (a
  // user's EVAL/FCALL, XGROUP SETID/DESTROY, ...), read back by the feed.
  struct ReadBackState {
    std::vector<PendingRow> pending;             // XPENDING - + (empty: none, or no group)
    std::optional<StreamId> last_delivered;      // nullopt: the group is gone
    std::vector<StreamEntry> new_entries;        // entries above the model's newest
    // Every live ID, when the stream's length shows that entries the model
    // holds are gone (else nullopt: nothing was deleted).
    std::optional<std::vector<std::string>> live_ids;
  };
  // Brings the model up to date: entries added inside (with an event_id
  // field) are produced, entries gone are deleted, PEL rows new to the model
  // are deliveries, owners that changed are claims, rows gone left the PEL
  // (an XACK inside, most likely), and the group's position decides what
  // is still to be delivered (SETID backwards makes entries deliverable
  // again). Every change is a history item naming `command` and `how`.
  void ReadBack(int64_t t, const std::string& actor, const std::string& command,
                const std::string& how, const ReadBackState& state);
  // The newest entry of the model's live stream, if any.
  std::optional<StreamId> NewestLive() const;

  // `duration_ms`: a clock jump's size or an outage's length (the item's value).
  // `fault`: the fault kind's name, for HistoryKind::kFault.
  void RunWideFault(HistoryKind kind, int64_t t, const std::string& detail, int64_t duration_ms,
                    const std::string& fault = "");

  // --- Queries during the run ---------------------------------------------
  int64_t last_progress_ms() const { return last_progress_ms_; }
  // No delivery can happen any more: every event produced, nothing pending,
  // every live entry delivered. With every worker idle, the run cannot
  // change its outcome: it is quiescent.
  bool NothingLeftToDeliver() const;
  // The events produced whose side effect the oracle has not seen run and
  // that were not dead-lettered, in event order: work still owed (an event
  // acked into an outbox or an inbox table, or handed to a worker that is
  // down). A run with owed work has not settled, whatever the PEL says.
  std::vector<std::string> OwedEvents() const;
  // The events a request argv or step refers to (by event id or stream id).
  std::vector<std::string> EventsOfIds(const std::vector<std::string>& stream_ids) const;
  std::string EventOfId(const std::string& stream_id) const;
  // The events a key names: their event id or one of their entry IDs as a
  // whole token of `key` ("done:order:1" names order:1, not order:10).
  std::vector<std::string> EventsNamedIn(std::string_view key) const;
  // What an exact XTRIM removes, from the model of the live stream: the
  // `n` oldest entries (MAXLEN), or those below `min_id` (MINID).
  std::vector<std::string> OldestLive(size_t n) const;
  std::vector<std::string> LiveBelow(const StreamId& min_id) const;
  size_t live_count() const { return stream_.size(); }

  // --- Final judgement ----------------------------------------------------
  struct FinalState {
    std::vector<PendingRow> pending;            // XPENDING - + (truth)
    std::vector<std::string> stream_ids;        // XRANGE - + (truth)
    std::vector<StreamEntry> dead_letters;      // XRANGE <stream>:dlq - +
    std::optional<std::vector<EffectRecord>> redis_effects;  // LRANGE of the Redis ledger
    std::set<std::string> live_consumers;       // consumer names of running workers
    int64_t steps = 0;
    // > 0: the run never settled and was ended this long after its faults
    // stopped (the unsettled horizon); liveness verdicts say so.
    int64_t unsettled_after_ms = 0;
    // > 0: a protocol script's run ended after this long without progress
    // while effects were still owed. A timer of the script's own that xackly
    // cannot see (kept in a variable) may finish that work later: a `lost`
    // acked-without-effect verdict of an event whose work was saved
    // somewhere first (WorkSavedIn) says so; one acked with nothing saved
    // has nothing a timer could relay, and gets no such hint.
    int64_t owed_quiet_ms = 0;
  };
  // Every violation, in event order; run-wide ones (stuck) first.
  std::vector<Violation> Judge(const FinalState& final_state, const EffectLedger& ledger);
  // Differences between the oracle's own PEL model and the final PEL (a
  // harness self-check; empty when they agree).
  std::vector<std::string> ModelMismatches(const FinalState& final_state) const;

  // History of one event ("order:3"), with run-wide items merged in time order.
  std::vector<HistoryItem> HistoryOf(const std::string& event_id) const;
  // Side effects per event after judgement (what the ledger counted).
  const std::map<std::string, int>& effect_counts() const { return effect_counts_; }

 private:
  struct EventState {
    std::vector<std::string> stream_ids;
    bool produced = false;           // an XADD executed
    bool dead_lettered = false;
    bool has_effect = false;         // the ledger showed its side effect run
    bool read_noack = false;         // delivered by XREADGROUP NOACK (never pending)
    bool work_saved = false;         // named by a write outside the stream (WorkSavedIn)
    std::vector<HistoryItem> history;
  };
  EventState* Find(const std::string& event_id);
  void Add(const std::string& event_id, HistoryItem item);
  void Progress(int64_t t) { last_progress_ms_ = std::max(last_progress_ms_, t); }
  HistoryItem Item(HistoryKind kind, int64_t t, const std::string& actor,
                   const std::string& stream_id = "", const std::string& detail = "",
                   int64_t value = 0) const;

  // The model after the server changed under the run (a restart, a
  // failover): every entry not in `stream_ids` gets a `loss` item with
  // `how`, and the PEL and delivered set follow what the server holds.
  void Reconcile(int64_t t, HistoryKind loss, const std::string& how, const std::string& persistence,
                 const std::vector<std::string>& stream_ids, const std::vector<PendingRow>& pending,
                 const std::string& last_delivered_id);
  Violation ExplainDuplicate(const std::string& event_id, const std::vector<EffectRecord>& effects) const;
  Violation ExplainMissing(const std::string& event_id, const FinalState& final_state) const;

  int events_;
  int64_t line_ = -1;
  int64_t last_progress_ms_ = 0;
  std::map<std::string, EventState> state_;          // event id → state
  std::map<std::string, std::string> id_to_event_;   // stream id → event id
  std::map<std::string, std::string> pel_;           // model PEL: stream id → owner
  std::map<StreamId, std::string> stream_;           // model stream: live entries, in ID order
  std::set<std::string> delivered_;                  // stream ids delivered at least once
  std::vector<HistoryItem> global_;                  // run-wide items
  // event → the writes about it that a failover dropped (FailedOver)
  std::map<std::string, std::vector<std::string>> dropped_by_failover_;
  std::map<std::string, int> effect_counts_;
  // Position-based readers: reader → the events its XREADs returned that its
  // position may not have passed yet, each with whether the reader has run
  // its effect since (a later read starting past one shows the position
  // passed it: forgotten; a crash or timeout forgets them all).
  std::map<std::string, std::map<std::string, bool>> position_reads_;
};

}  // namespace xackly
