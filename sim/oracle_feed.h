// The oracle feed: turns what an actor's request really did (its argv and
// the server's reply, even a reply a fault hid from the actor) into the
// oracle's observations.
//
// Stream commands are recognised by command name and argv, not by the
// step's Op, so any step that sends one (a script's XCLAIM or XREADGROUP, a
// generic "any command" step) feeds the oracle the same way:
//   XADD <stream> ...            produced (string reply; lost reply: unknown outcome)
//   XADD <dead-letters> ...      dead-lettered (any non-error reply)
//   XREADGROUP ... >             delivered (new);  ... <id>: own pending again
//   XAUTOCLAIM                   claimed, and its deleted list
//   XACK <stream> <group> id...  acknowledged (integer reply)
//   XTRIM <stream> MAXLEN|MINID  payloads deleted (exact trims, per the model)
//   XGROUP DELCONSUMER ...       the consumer's PEL dropped
// Protocol-specific Redis steps whose meaning is not in the command (a
// done-record SET, the effect list push, the atomic EVAL) are recognised by
// their Op.
#pragma once

#include <string>
#include <vector>

#include "sim/oracle.h"
#include "sim/protocol.h"
#include "sim/step.h"
#include "sim/store.h"
#include "sim/worker.h"

namespace xackly {

class OracleFeed {
 public:
  // All pointers outlive the feed.
  OracleFeed(Oracle* oracle, EffectLedger* ledger, const ActorEnv* env)
      : oracle_(oracle), ledger_(ledger), env_(env) {}

  struct Observed {
    bool produced = false;  // a new entry reached the stream (wake a parked worker)
  };
  // What step `s` of `actor` shows, from its argv and real reply.
  // `reply_lost`: the actor never saw the reply.
  Observed Redis(int64_t t, const std::string& actor, const Step& s, bool reply_lost);
  // Passes effects the ledger recorded since the last call to the oracle.
  void ForwardNewEffects();

 private:
  void RedisStepOfProtocol(int64_t t, const std::string& actor, const Step& s);

  Oracle* oracle_;
  EffectLedger* ledger_;
  const ActorEnv* env_;
  size_t forwarded_ = 0;
};

}  // namespace xackly
