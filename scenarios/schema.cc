#include "scenarios/schema.h"

#include <initializer_list>

#include "scenarios/scenario.h"
#include "sim/simulation.h"

namespace xackly::scenario_schema {

namespace {

// A table whose spellings come from sim's own name function.
template <typename E>
EnumTable<E> FromNames(const char* noun, std::initializer_list<E> values, const char* (*name)(E)) {
  EnumTable<E> t{noun, {}};
  for (E v : values) t.names.emplace_back(v, name(v));
  return t;
}

}  // namespace

const EnumTable<HandlerOp>& HandlerOps() {
  static const auto kTable = FromNames(
      "step",
      {HandlerOp::kAck, HandlerOp::kCheckDone, HandlerOp::kMarkDone, HandlerOp::kEffect,
       HandlerOp::kBegin, HandlerOp::kCommit},
      &HandlerOpName);
  return kTable;
}

const EnumTable<HandlerForm>& HandlerForms() {
  static const EnumTable<HandlerForm> kTable{"handler form", {{HandlerForm::kSteps, "steps"}, {HandlerForm::kCpp, "c++"}}};
  return kTable;
}

const EnumTable<DedupeStore>& DedupeStores() {
  static const auto kTable = FromNames(
      "dedupe store", {DedupeStore::kNone, DedupeStore::kSql, DedupeStore::kRedis},
      &DedupeStoreName);
  return kTable;
}

const EnumTable<EffectSink>& EffectSinks() {
  static const auto kTable = FromNames(
      "effect sink", {EffectSink::kExternal, EffectSink::kSql, EffectSink::kRedis},
      &EffectSinkName);
  return kTable;
}

const EnumTable<DuplicatePolicy>& DuplicatePolicies() {
  static const auto kTable = FromNames(
      "duplicate policy", {DuplicatePolicy::kAck, DuplicatePolicy::kSkip}, &DuplicatePolicyName);
  return kTable;
}

const EnumTable<AckMode>& AckModes() {
  static const auto kTable = FromNames("ack mode", {AckMode::kPerEntry, AckMode::kBatch}, &AckModeName);
  return kTable;
}

const EnumTable<DeletedEntryPolicy>& DeletedEntryPolicies() {
  static const auto kTable = FromNames("deleted-entry policy",
                                       {DeletedEntryPolicy::kAck, DeletedEntryPolicy::kSkip},
                                       &DeletedEntryPolicyName);
  return kTable;
}

const EnumTable<DeadLetterOrder>& DeadLetterOrders() {
  static const auto kTable = FromNames("dead-letter order",
                                       {DeadLetterOrder::kSaveThenAck, DeadLetterOrder::kAckThenSave},
                                       &DeadLetterOrderName);
  return kTable;
}

const EnumTable<TrimPolicy>& TrimPolicies() {
  static const auto kTable = FromNames(
      "trim policy", {TrimPolicy::kNone, TrimPolicy::kMaxLen, TrimPolicy::kSafeMinId, TrimPolicy::kRacyMinId},
      &TrimPolicyName);
  return kTable;
}

const EnumTable<RestartNaming>& RestartNamings() {
  static const auto kTable = FromNames(
      "restart naming", {RestartNaming::kSame, RestartNaming::kFresh}, &RestartNamingName);
  return kTable;
}

const EnumTable<Persistence>& Persistences() {
  static const auto kTable = FromNames(
      "persistence mode", {Persistence::kNone, Persistence::kRdb, Persistence::kAofAlways},
      &PersistenceName);
  return kTable;
}

const EnumTable<FaultKind>& FaultKinds() {
  static const auto kTable = [] {  // every kind sim's fault table describes
    EnumTable<FaultKind> t{"fault kind", {}};
    for (const FaultKindInfo& k : AllFaultKinds()) t.names.emplace_back(k.kind, k.name);
    return t;
  }();
  return kTable;
}

// sim's ValidateFaultSpec owns the rule for targets; ask it with a probe spec.
bool IsXdelTarget(std::string_view s) {
  FaultSpec probe;
  probe.kind = FaultKind::kXdel;
  probe.target = std::string(s);
  return ValidateFaultSpec(probe).ok();
}

bool IsXtrimTarget(std::string_view s) {
  FaultSpec probe;
  probe.kind = FaultKind::kXtrim;
  probe.target = std::string(s);
  return ValidateFaultSpec(probe).ok();
}

bool IsErrorReplyTarget(std::string_view s) { return InfoOf(FaultKind::kErrorReply).valid_target(s); }

bool IsFailoverTarget(std::string_view s) {
  FaultSpec probe;
  probe.kind = FaultKind::kFailover;
  probe.target = std::string(s);
  return ValidateFaultSpec(probe).ok();
}

bool IsNonEmpty(std::string_view s) { return !s.empty(); }

FaultModel InlineStartingModel(const ProtocolDef& p, bool sites_found_by_running) {
  FaultModel m = DefaultFaultModel(p);
  if (sites_found_by_running) {
    m.crash_points.clear();
    m.lost_sites.clear();
    return m;
  }
  // Only the sites its steps visit: written out (a replay file), every
  // site a file names must be one a run can reach (CheckNamedSites).
  ProtocolDef with_default = p;
  with_default.faults = m;
  return WithoutUnvisitedSites(with_default);
}

bool FaultKeyMatters(const FaultModel& m, std::string_view key) {
  using K = FaultKind;
  struct Use {
    std::string_view key;
    std::vector<FaultKind> kinds;
  };
  static const Use kUses[] = {
      {"crash_points", {K::kCrash, K::kStall}},
      {"lost_sites", {K::kLostRequest, K::kLostReply, K::kErrorReply}},
      {"crash_rate", {K::kCrash}},
      {"stall_rate", {K::kStall}},
      {"lost_request_rate", {K::kLostRequest}},
      {"lost_reply_rate", {K::kLostReply}},
      {"error_reply_rate", {K::kErrorReply}},
      {"replica_lag_rate", {K::kReplicaLag}},
      {"poison_count", {K::kPoison}},
  };
  if (key == "kinds") return true;
  // A kind's own parameter (stall_ms, xdel_target...), and the count of
  // every scheduled kind, from sim's fault table.
  for (const FaultKindInfo& k : AllFaultKinds()) {
    bool uses = key == k.model_field || (key == "scheduled_count" && k.fault_class == FaultClass::kScheduled);
    if (uses && m.Has(k.kind)) return true;
  }
  for (const Use& u : kUses) {
    if (u.key != key) continue;
    for (FaultKind k : u.kinds) {
      if (m.Has(k)) return true;
    }
  }
  return false;
}

}  // namespace xackly::scenario_schema
