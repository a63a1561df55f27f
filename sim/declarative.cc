// The declarative handler: a protocol described as a list of steps (from a
// scenario file) runs on the same Worker primitives as the C++ catalog
// handlers, so both forms of a protocol send the same commands in the same
// order.
//
// Semantics of the step list:
//   check-done / mark-done  report "done" before any effect ran → the
//                           duplicate branch (Worker::OnDuplicate); after the
//                           effect, "done" is ignored.
//   begin .. commit         one SQL transaction, or, when every step inside is
//                           a Redis step, one EVAL (CompileAtomicScript).
//   any failed step         the handler gives up: the entry stays pending (an
//                           open transaction is rolled back by the loop).
#include <algorithm>

#include "sim/worker.h"

namespace xackly {

namespace {

// Index of the commit closing the group opened at `begin`.
size_t MatchingCommit(const std::vector<HandlerOp>& steps, size_t begin) {
  for (size_t j = begin + 1; j < steps.size(); ++j) {
    if (steps[j] == HandlerOp::kCommit) return j;
  }
  return steps.size();  // ValidateProtocol rules this out
}

}  // namespace

Task<bool> RunDeclarativeHandler(Worker& w, const StreamEntry& e) {
  const ProtocolDef& p = w.protocol();
  const std::vector<HandlerOp>& steps = p.steps;
  bool effect_ran = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    switch (steps[i]) {
      case HandlerOp::kBegin: {
        // The protocol's one begin..commit group: all-Redis groups run as
        // one EVAL (AtomicGroupOf, computed once per run).
        const AtomicGroup& group = w.atomic_group();
        if (group.present) {
          Dedupe d = co_await w.RedisAtomic(e);
          if (d == Dedupe::kDone) {
            // The script already acked when the group holds the ack.
            if (group.acks || p.on_duplicate == DuplicatePolicy::kSkip) {
              co_return p.on_duplicate == DuplicatePolicy::kAck;
            }
            co_return co_await w.OnDuplicate(e);
          }
          if (d == Dedupe::kFailed) co_return false;
          if (group.has_effect) effect_ran = true;
          i = MatchingCommit(steps, i);
          break;
        }
        bool begun = co_await w.Begin();
        if (!begun) co_return false;
        break;
      }
      case HandlerOp::kCommit: {
        bool committed = co_await w.Commit();
        if (!committed) co_return false;
        break;
      }
      case HandlerOp::kCheckDone:
      case HandlerOp::kMarkDone: {
        Dedupe d;
        if (steps[i] == HandlerOp::kCheckDone) {
          d = co_await w.CheckDone(e);
        } else {
          d = co_await w.MarkDone(e);
        }
        if (d == Dedupe::kFailed) co_return false;
        if (d == Dedupe::kDone && !effect_ran) co_return co_await w.OnDuplicate(e);
        break;
      }
      case HandlerOp::kEffect: {
        bool ran = co_await w.Effect(e);
        if (!ran) co_return false;
        effect_ran = true;
        break;
      }
      case HandlerOp::kAck:
        co_await w.Ack(e.id);
        break;
    }
  }
  co_return true;
}

std::string CompileAtomicScript(const ProtocolDef& p) {
  AtomicGroup g = AtomicGroupOf(p);
  if (!g.present) return "";
  const std::vector<HandlerOp>& group = g.ops;
  bool acks = g.acks;
  bool has_effect = g.has_effect;
  // One line of Lua per step; KEYS/ARGV as documented in worker.h.
  std::string dup = (acks && p.on_duplicate == DuplicatePolicy::kAck)
                        ? "redis.call('XACK',KEYS[2],ARGV[1],ARGV[2]) return 0"
                        : "return 0";
  std::string script;
  if (has_effect) script += "if ARGV[5]=='1' then return redis.error_reply('POISON effect failed') end ";
  bool effect_seen = false;
  for (HandlerOp op : group) {
    switch (op) {
      case HandlerOp::kCheckDone:
        if (!effect_seen) script += "if redis.call('EXISTS',KEYS[1])==1 then " + dup + " end ";
        break;
      case HandlerOp::kMarkDone:
        if (!effect_seen) {
          script += "if not redis.call('SET',KEYS[1],'1','NX'" +
                    std::string(p.dedupe_ttl_ms > 0 ? ",'PX',ARGV[4]" : "") + ") then " + dup +
                    " end ";
        } else {
          script += "redis.call('SET',KEYS[1],'1'" +
                    std::string(p.dedupe_ttl_ms > 0 ? ",'PX',ARGV[4]" : "") + ") ";
        }
        break;
      case HandlerOp::kEffect:
        script += "redis.call('RPUSH',KEYS[3],ARGV[3]) ";
        effect_seen = true;
        break;
      case HandlerOp::kAck:
        script += "redis.call('XACK',KEYS[2],ARGV[1],ARGV[2]) ";
        break;
      case HandlerOp::kBegin:
      case HandlerOp::kCommit:
        break;
    }
  }
  script += "return 1";
  return script;
}

}  // namespace xackly
