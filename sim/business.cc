#include "sim/business.h"

#include "sim/store.h"

namespace xackly {

Result<BusinessReply> StoreChannel::Call(const BusinessCall& call, Step& s) {
  BusinessReply r;
  EffectRecord effect{s.event_id, s.stream_id, call.actor, call.now_ms, ""};
  std::string* request = &r.request;
  std::string* result = &r.result;
  const int owner = call.owner;
  const int64_t now = call.now_ms;
  switch (s.op) {
    case Op::kSqlBegin: s.outcome = store_->Begin(owner, now, request, result); break;
    case Op::kSqlCheckDone: s.outcome = store_->CheckDone(owner, now, s.event_id, request, result); break;
    case Op::kSqlMarkDone: s.outcome = store_->MarkDone(owner, now, s.event_id, request, result); break;
    case Op::kSqlEffect:
      effect.sink = "sql";
      s.outcome = store_->Effect(owner, now, effect, call.poison, request, result);
      break;
    case Op::kSqlCommit: s.outcome = store_->Commit(owner, now, request, result); break;
    case Op::kSqlRollback: s.outcome = store_->Rollback(owner, request, result); break;
    case Op::kSqlStatement:
      s.outcome = store_->Execute(owner, now, s.label, s.params, &s.sql, request, result);
      if (s.outcome != BusinessOutcome::kOk && s.sql.error.empty()) s.sql.error = *result;
      break;
    case Op::kCommittedEffect:
      effect.sink = "sql";
      store_->Committed(effect, request, result);
      s.outcome = BusinessOutcome::kOk;
      break;
    case Op::kExternalEffect:
      effect.sink = "external";
      // A script's effect names its own idempotency key and its expiry; a
      // built-in protocol's service dedupes by event id when it says so.
      s.outcome = call.script
                      ? external_->ApplyKeyed(now, effect, s.label, s.duration_ms, call.poison, request, result)
                      : external_->Apply(now, effect, call.idempotency_key, call.poison, request, result);
      break;
    default: XACKLY_CHECK(false);
  }
  return r;
}

Result<BusinessReply> LossyBusiness::Call(const BusinessCall& call, Step& s) {
  const PointEffect loss = armed_;
  armed_ = PointEffect::kNone;
  switch (loss) {
    case PointEffect::kNone: return target_->Call(call, s);
    case PointEffect::kLoseRequest: return Status::Timeout("lost request: it never reached the store");
    case PointEffect::kLoseReply: {
      Result<BusinessReply> r = target_->Call(call, s);
      if (!r.ok()) return r;
      hidden_ = std::move(r).value();
      return Status::Timeout("lost reply: the request executed, its reply never came back");
    }
    case PointEffect::kCrash:
    case PointEffect::kStall:
    case PointEffect::kErrorReply:
    case PointEffect::kReplicaLag: break;
  }
  XACKLY_CHECK(false);  // not a loss (REQUIRES)
  return Status::Internal("not a loss");
}

}  // namespace xackly
