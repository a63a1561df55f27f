#include "sim/oracle_feed.h"

#include "sim/reply.h"
#include "sim/stream.h"

namespace xackly {

void OracleFeed::ForwardNewEffects() {
  const auto& records = ledger_->records();
  for (; forwarded_ < records.size(); ++forwarded_) oracle_->Effect(records[forwarded_]);
}

OracleFeed::Observed OracleFeed::Redis(int64_t t, const std::string& actor, const Step& s,
                                       bool reply_lost) {
  Observed out;
  const std::vector<std::string>& argv = s.argv;
  const Reply& r = s.reply;
  const WorldNames& names = *env_->names;
  const std::string& command = argv.empty() ? std::string() : argv[0];
  if (command == "XREADGROUP") {
    if (auto entries = ParseReadReply(r)) {
      oracle_->Delivered(t, actor, *entries,
                         argv.back() == ">" ? DeliveryVia::kNew : DeliveryVia::kOwnPending);
    }
  } else if (command == "XAUTOCLAIM") {
    if (auto c = ParseAutoClaimReply(r)) {
      oracle_->Delivered(t, actor, c->entries, DeliveryVia::kClaim);
      oracle_->ClaimFoundDeleted(t, actor, c->deleted_ids);
    }
  } else if (command == "XACK") {  // XACK stream group id...
    if (r.is_integer()) oracle_->Acked(t, actor, std::vector<std::string>(argv.begin() + 3, argv.end()));
  } else if (command == "XADD" && argv.size() > 1 && argv[1] == names.stream) {
    if (r.is_string()) {
      oracle_->Produced(t, actor, s.event_id, r.str(),
                        reply_lost ? Oracle::ProduceOutcome::kUnknown
                                   : Oracle::ProduceOutcome::kAcknowledged);
      out.produced = true;
    }
  } else if (command == "XADD" && argv.size() > 1 && argv[1] == names.dead_letters) {
    if (!r.is_error()) oracle_->DeadLettered(t, actor, s.event_id, s.stream_id);
  } else if (command == "XTRIM") {  // XTRIM stream MAXLEN n | MINID id
    if (r.is_integer() && r.integer() > 0) {
      std::vector<std::string> gone;
      if (argv[2] == "MAXLEN") {
        gone = oracle_->OldestLive(static_cast<size_t>(r.integer()));
      } else if (auto min_id = StreamId::Parse(argv[3])) {
        gone = oracle_->LiveBelow(*min_id);
      }
      oracle_->PayloadsDeleted(t, actor, gone, command, RenderArgv(argv));
    }
  } else if (command == "XGROUP" && argv.size() > 4 && argv[1] == "DELCONSUMER") {
    if (r.is_integer()) oracle_->ConsumerDeleted(t, actor, argv[4]);
  } else {
    RedisStepOfProtocol(t, actor, s);
  }
  return out;
}

void OracleFeed::RedisStepOfProtocol(int64_t t, const std::string& actor, const Step& s) {
  const Reply& r = s.reply;
  const ProtocolDef& protocol = *env_->protocol;
  const AtomicGroup& atomic = env_->atomic;
  switch (s.op) {
    case Op::kRedisMarkDone:
      if (r.is_status() && protocol.dedupe_ttl_ms > 0) {
        oracle_->DedupeRecord(t, actor, s.event_id, protocol.dedupe_ttl_ms);
      }
      break;
    case Op::kRedisAtomic:
      if (r.is_integer() && r.integer() == 1) {
        if (atomic.has_effect) {
          ledger_->Record({s.event_id, s.stream_id, actor, t, "redis"});
          ForwardNewEffects();
        }
        if (atomic.marks_done && protocol.dedupe_ttl_ms > 0) {
          oracle_->DedupeRecord(t, actor, s.event_id, protocol.dedupe_ttl_ms);
        }
        if (atomic.acks) oracle_->Acked(t, actor, {s.stream_id});
      } else if (r.is_integer() && r.integer() == 0) {
        // The group's check found the event done; the script acked it when
        // the group holds the ack and the duplicate policy is "ack".
        if (atomic.acks && protocol.on_duplicate == DuplicatePolicy::kAck) {
          oracle_->Acked(t, actor, {s.stream_id});
        }
      } else if (r.is_error()) {
        oracle_->EffectFailed(t, actor, s.event_id, s.stream_id, r.str());
      }
      break;
    case Op::kRedisEffect:
      if (r.is_integer()) {
        ledger_->Record({s.event_id, s.stream_id, actor, t, "redis"});
        ForwardNewEffects();
      }
      break;
    default:
      break;
  }
}

}  // namespace xackly
