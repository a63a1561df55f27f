// The oracle feed: the one place that turns what an actor's request really
// did (its argv and the server's reply, even a reply a fault hid from the
// actor) into the oracle's observations. Catalog steps and protocol
// scripts' commands go through the same recogniser; it needs no server
// (its only reads of the server go through the ReadBack it is given), so
// tests/sim/oracle_feed_test.cc drives it with fake replies.
//
// Stream commands are recognised by command name and argv, not by the
// step's Op. Only the scenario's stream (names.stream) and group
// (names.group) are modelled; the same commands on other streams or groups
// are ignored (their entries are not the run's events):
//   XADD <stream> ...            produced (string reply; lost reply: unknown
//                                outcome); MAXLEN/MINID: what it trimmed,
//                                from an XLEN read back
//   XADD <dead-letters> ...      dead-lettered (string reply)
//   XREADGROUP ... STREAMS k... id...  per stream of the reply: ours is
//                                delivered (">": new, else own pending)
//   XCLAIM / XAUTOCLAIM          claimed (entries), or with JUSTID the
//                                ownership moves without a delivery;
//                                deleted entries leave the PEL
//   XACK <stream> <group> id...  acknowledged, every id (integer reply)
//   XDEL / XTRIM <stream>        payloads deleted (the oldest first for XTRIM)
//   XGROUP DELCONSUMER           the consumer's PEL dropped
//   XGROUP CREATE|CREATECONSUMER no change to the model
//   SET k EX|PX, SETEX, PSETEX,  a done-record with that TTL for each event
//   EXPIRE, PEXPIRE, GETEX       whose id or entry ID the key names
//   MULTI ... EXEC               each queued command with its own result,
//                                at EXEC; DISCARD forgets them
// Commands the feed cannot see into (EVAL/EVALSHA/FCALL, XGROUP SETID and
// DESTROY, and any other command that names the stream and is not a known
// read) are followed by a read-back: the oracle reads the PEL, the group's
// position and the new entries and brings its model up to date (see
// Oracle::ReadBack). Protocol-specific Redis steps whose meaning is not in
// the command (a done-record SET, the effect list push, the catalog's
// atomic EVAL) are recognised by their Op.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/commands.h"
#include "sim/oracle.h"
#include "sim/protocol.h"
#include "sim/status.h"
#include "sim/step.h"
#include "sim/store.h"
#include "sim/worker.h"

namespace xackly {

class OracleFeed {
 public:
  // The oracle's own reads of the server during a run: one reply per
  // command, in one round trip. A non-ok result is a harness failure.
  using ReadBack = std::function<Result<std::vector<Reply>>(const std::vector<std::vector<std::string>>&)>;

  // All pointers outlive the feed.
  OracleFeed(Oracle* oracle, EffectLedger* ledger, const ActorEnv* env, ReadBack read_back)
      : oracle_(oracle), ledger_(ledger), env_(env), read_back_(std::move(read_back)) {}

  // Who sent a request: its stable slot (MULTI state is per slot) and its
  // current name (the consumer name in histories).
  struct Who {
    std::string_view slot;
    std::string_view name;
    // Whether the actor works for this feed's group (a further group's
    // feed also sees the other groups' requests): only a member's own
    // doings -- dead letters, key expiries, saved work, position reads,
    // effects through the protocol's Redis steps -- reach this oracle. What
    // any request does to the stream (XADD, XDEL, XTRIM) and to this
    // feed's group (named in the command) reaches it whoever sent it.
    bool member = true;
  };
  struct Observed {
    int produced = 0;  // new entries of the run's events reached the stream (wake parked workers)
  };
  // What step `s` of `who` shows, from its argv and real reply.
  // `reply_lost`: the actor never saw the reply. Fails only when a
  // read-back fails (a harness failure).
  Result<Observed> Redis(int64_t t, const Who& who, const Step& s, bool reply_lost);
  // Passes effects the ledger recorded since the last call to the oracle
  // (those `Mine` accepts, when it is set).
  void ForwardNewEffects();
  // Which ledger records are this feed's group's (a run with further
  // groups shares one ledger); unset: every record.
  void SetEffectFilter(std::function<bool(const EffectRecord&)> mine) { mine_ = std::move(mine); }

  // True while `slot` has an open MULTI (its connection must DISCARD when
  // reused); Forget drops the slot's MULTI state (its process died).
  bool InMulti(const std::string& slot) const;
  void Forget(const std::string& slot);

  // Streams other than the run's own into which a worker or the janitor
  // (not a producer) XADDed an event's payload (an `event_id` field):
  // dead-letter streams of the script's own choice. The event counts as dead-lettered, like one in events:dlq, and
  // the final reads read these streams too. (A retry stream nobody consumes
  // is indistinguishable, and counts the same way: a missed bug, never a
  // false `lost`.)
  const std::set<std::string>& parking_streams() const { return parking_streams_; }
  // Streams an actor read with XREADGROUP (any group). A parking stream
  // among them may be a pipeline stage rather than a dead-letter stream: the
  // run says so in a note, as its effects there go unchecked.
  const std::set<std::string>& group_read_streams() const { return group_read_streams_; }
  // The highest entry ID seen added to the run's stream by anyone (an XADD's
  // reply, in MULTI too; the new entries a read-back finds after an EVAL):
  // 0-0 before the first. The built-in producer's explicit IDs stay above it,
  // so a script's `XADD *` (IDs from the server's clock) never makes the
  // producer's next XADD "equal or smaller" than the stream's top.
  StreamId stream_top() const { return stream_top_; }
  // The consumer group other than the run's (names.group) through which
  // `actor` last received `event_id`'s entry of the run's stream, or
  // nullopt (it received it through the run's group last, or never through
  // another). Only one group's exactly-once is judged: an effect of an
  // entry read through a second group would count as a second run.
  std::optional<std::string> OtherGroupOf(std::string_view actor, const std::string& event_id) const;

 private:
  struct Pass {
    Observed observed;
    bool read_back = false;          // a command the feed cannot see into ran
    std::string opaque;              // its argv, as people read it
    std::string opaque_verb;
  };
  // `hint`: the step that sent `argv` (its event and entry ids), or null
  // for a command queued in MULTI.
  void Command(int64_t t, const Who& who, const std::vector<std::string>& argv, const Reply& r,
               bool reply_lost, const Step* hint, Pass* pass);
  void Xadd(int64_t t, const Who& who, const std::vector<std::string>& argv, const Reply& r,
            bool reply_lost, const Step* hint, Pass* pass);
  void RedisStepOfProtocol(int64_t t, const std::string& actor, const Step& s);
  // A key set with a relative expiry (SET EX/PX, SETEX, EXPIRE...) that
  // names an event (its id or entry ID, Oracle::EventsNamedIn) is that
  // event's done-record with a TTL, as a protocol's declared
  // dedupe_ttl_ms is: a duplicate after it expired is `dedupe-expired`.
  // A write outside the run's stream (not a string marker) that names an
  // event saved work for it (Oracle::WorkSavedIn): an outbox, an inbox list.
  void SavesWork(const CommandInfo& command, const std::vector<std::string>& argv, const Reply& r);
  void KeyExpiry(int64_t t, const std::string& actor, const std::vector<std::string>& argv, const Reply& r);
  Status ReadBackModel(int64_t t, const std::string& actor, const Pass& pass);

  std::set<std::string> parking_streams_;
  std::set<std::string> group_read_streams_;
  // actor -> event id -> the other group it last came through (OtherGroupOf).
  std::map<std::string, std::map<std::string, std::string>, std::less<>> other_group_events_;
  // `entries` of the run's stream reached `actor` through `group`.
  void ReceivedThrough(std::string_view actor, const std::string& group, const std::vector<StreamEntry>& entries);
  // The reader Oracle::Delivered names: `who` when the run's processes have
  // handler lanes, else none (the consumer name tells the story).
  std::string_view LaneReader(const Who& who) const { return env_->handlers > 1 ? who.name : std::string_view{}; }
  StreamId stream_top_;
  void SawAdded(std::string_view id);
  Oracle* oracle_;
  EffectLedger* ledger_;
  const ActorEnv* env_;
  ReadBack read_back_;
  std::function<bool(const EffectRecord&)> mine_;
  size_t forwarded_ = 0;
  Status read_error_;               // the first failed read-back of the current request
  // Commands queued after MULTI, per actor slot, until EXEC or DISCARD.
  std::map<std::string, std::vector<std::vector<std::string>>, std::less<>> multi_;
};

}  // namespace xackly
