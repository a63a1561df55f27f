#include "sim/protocol.h"

#include <algorithm>

#include <fmt/format.h>

namespace xackly {

namespace {

template <typename E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<HandlerOp> kHandlerOps[] = {
    {HandlerOp::kAck, "ack"},         {HandlerOp::kCheckDone, "check-done"},
    {HandlerOp::kMarkDone, "mark-done"}, {HandlerOp::kEffect, "effect"},
    {HandlerOp::kBegin, "begin"},     {HandlerOp::kCommit, "commit"},
};
constexpr Named<DedupeStore> kDedupeStores[] = {
    {DedupeStore::kNone, "none"}, {DedupeStore::kSql, "sql"}, {DedupeStore::kRedis, "redis"}};
constexpr Named<EffectSink> kEffectSinks[] = {
    {EffectSink::kExternal, "external"}, {EffectSink::kSql, "sql"}, {EffectSink::kRedis, "redis"}};

template <typename E, size_t N>
const char* NameOf(const Named<E> (&table)[N], E value) {
  for (const auto& n : table) {
    if (n.value == value) return n.name;
  }
  return "?";
}

template <typename E, size_t N>
bool ValueOf(const Named<E> (&table)[N], std::string_view name, E* out) {
  for (const auto& n : table) {
    if (name == n.name) {
      *out = n.value;
      return true;
    }
  }
  return false;
}

bool IsRedisStep(const ProtocolDef& p, HandlerOp op) {
  switch (op) {
    case HandlerOp::kAck: return true;
    case HandlerOp::kCheckDone:
    case HandlerOp::kMarkDone: return p.dedupe == DedupeStore::kRedis;
    case HandlerOp::kEffect: return p.effect == EffectSink::kRedis;
    case HandlerOp::kBegin:
    case HandlerOp::kCommit: return false;
  }
  return false;
}

}  // namespace

const char* HandlerOpName(HandlerOp op) { return NameOf(kHandlerOps, op); }
bool ParseHandlerOp(std::string_view name, HandlerOp* out) { return ValueOf(kHandlerOps, name, out); }
std::string HandlerOpList() {
  std::string out;
  for (const auto& n : kHandlerOps) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}
const char* DedupeStoreName(DedupeStore s) { return NameOf(kDedupeStores, s); }
const char* EffectSinkName(EffectSink s) { return NameOf(kEffectSinks, s); }
bool ParseDedupeStore(std::string_view name, DedupeStore* out) { return ValueOf(kDedupeStores, name, out); }
bool ParseEffectSink(std::string_view name, EffectSink* out) { return ValueOf(kEffectSinks, name, out); }

const char* RestartNamingName(RestartNaming n) { return n == RestartNaming::kSame ? "same" : "fresh"; }

const char* AckModeName(AckMode m) { return m == AckMode::kPerEntry ? "per-entry" : "batch"; }
const char* DeletedEntryPolicyName(DeletedEntryPolicy p) { return p == DeletedEntryPolicy::kAck ? "ack" : "skip"; }
const char* DuplicatePolicyName(DuplicatePolicy p) { return p == DuplicatePolicy::kAck ? "ack" : "skip"; }
const char* DeadLetterOrderName(DeadLetterOrder o) {
  return o == DeadLetterOrder::kSaveThenAck ? "save-then-ack" : "ack-then-save";
}

const char* TrimPolicyName(TrimPolicy t) {
  switch (t) {
    case TrimPolicy::kNone: return "none";
    case TrimPolicy::kMaxLen: return "maxlen";
    case TrimPolicy::kSafeMinId: return "safe-minid";
    case TrimPolicy::kRacyMinId: return "racy-minid";
  }
  return "none";
}

bool IsRedisGroup(const ProtocolDef& p, const std::vector<HandlerOp>& group) {
  if (group.empty()) return false;
  for (HandlerOp op : group) {
    if (!IsRedisStep(p, op)) return false;
  }
  return true;
}

namespace {

// True when a worker running `p` sends an XACK of its own (outside an EVAL):
// its handler acks outside the atomic group, the loop acks batches or dead
// letters, the duplicate branch acks outside the group, or an entry whose
// payload is gone is acked (only when something can delete payloads: a
// trimming janitor, or XDEL/XTRIM/restart faults in the protocol's model).
bool SendsOwnXack(const ProtocolDef& p) {
  auto has = [&](HandlerOp op) { return std::find(p.steps.begin(), p.steps.end(), op) != p.steps.end(); };
  AtomicGroup atomic = AtomicGroupOf(p);
  auto in_group = [&](HandlerOp op) {
    return atomic.present && std::find(atomic.ops.begin(), atomic.ops.end(), op) != atomic.ops.end();
  };
  bool dedupes_outside = (has(HandlerOp::kCheckDone) && !in_group(HandlerOp::kCheckDone)) ||
                         (has(HandlerOp::kMarkDone) && !in_group(HandlerOp::kMarkDone));
  bool duplicate_acks = p.on_duplicate == DuplicatePolicy::kAck &&
                        (dedupes_outside || ((has(HandlerOp::kCheckDone) || has(HandlerOp::kMarkDone)) &&
                                             !atomic.acks));
  bool deletions = p.janitor.trim != TrimPolicy::kNone || p.faults.Has(FaultKind::kXdel) ||
                   p.faults.Has(FaultKind::kXtrim) || p.faults.Has(FaultKind::kRestart);
  return (has(HandlerOp::kAck) && !in_group(HandlerOp::kAck)) || p.loop.ack == AckMode::kBatch ||
         p.loop.dead_letter_after > 0 || duplicate_acks ||
         (p.loop.on_deleted == DeletedEntryPolicy::kAck && deletions);
}

}  // namespace

std::vector<std::string> CrashPointsOf(const ProtocolDef& p) {
  auto has = [&](HandlerOp op) { return std::find(p.steps.begin(), p.steps.end(), op) != p.steps.end(); };
  AtomicGroup atomic = AtomicGroupOf(p);
  bool sql_group = has(HandlerOp::kBegin) && !atomic.present;
  auto outside_group = [&](HandlerOp op) {
    return has(op) && !(atomic.present && std::find(atomic.ops.begin(), atomic.ops.end(), op) != atomic.ops.end());
  };
  std::vector<std::string> points = {"after-read"};
  if (p.loop.read_own_pending_at_start) points.push_back("after-pending-read");
  if (p.loop.claim) points.push_back("after-claim");
  if (outside_group(HandlerOp::kCheckDone)) points.push_back("after-dedupe-check");
  if (outside_group(HandlerOp::kMarkDone)) points.push_back("after-mark");
  if (outside_group(HandlerOp::kEffect)) points.push_back("after-effect");
  if (sql_group) points.push_back("after-commit");
  if (atomic.present) points.push_back("after-eval");
  if (SendsOwnXack(p)) points.push_back("after-ack");
  if (p.loop.dead_letter_after > 0) points.push_back("after-dead-letter");
  if (p.loop.ack == AckMode::kBatch) points.push_back("mid-batch");
  return points;
}

std::vector<std::string> LostSitesOf(const ProtocolDef& p) {
  AtomicGroup atomic = AtomicGroupOf(p);
  bool sql_group = std::find(p.steps.begin(), p.steps.end(), HandlerOp::kBegin) != p.steps.end() &&
                   !atomic.present;
  std::vector<std::string> sites = {"XREADGROUP"};
  if (p.loop.claim) sites.push_back("XAUTOCLAIM");
  if (SendsOwnXack(p)) sites.push_back("XACK");
  sites.push_back("XADD");
  if (p.dedupe == DedupeStore::kRedis && !atomic.marks_done &&
      std::find(p.steps.begin(), p.steps.end(), HandlerOp::kMarkDone) != p.steps.end()) {
    sites.push_back("SET");
  }
  if (atomic.present) sites.push_back("EVAL");
  if (sql_group) sites.push_back("COMMIT");
  return sites;
}

AtomicGroup AtomicGroupOf(const ProtocolDef& p) {
  AtomicGroup g;
  auto begin = std::find(p.steps.begin(), p.steps.end(), HandlerOp::kBegin);
  if (begin == p.steps.end()) return g;
  auto commit = std::find(begin, p.steps.end(), HandlerOp::kCommit);
  std::vector<HandlerOp> ops(begin + 1, commit);
  if (!IsRedisGroup(p, ops)) return g;
  g.present = true;
  for (HandlerOp op : ops) {
    g.has_effect |= op == HandlerOp::kEffect;
    g.marks_done |= op == HandlerOp::kMarkDone;
    g.acks |= op == HandlerOp::kAck;
  }
  g.ops = std::move(ops);
  return g;
}

Status ValidateProtocol(const ProtocolDef& p) {
  auto bad = [&](std::string why) {
    return Status::InvalidArgument(fmt::format("protocol '{}': {}", p.name, why));
  };
  if (HasScriptOrCommand(p)) return Status::Ok();  // the script is checked when it loads
  if (p.steps.empty()) return bad("needs at least one step (valid steps: " + HandlerOpList() + ")");
  bool open = false;
  int groups = 0;
  std::vector<HandlerOp> group;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    HandlerOp op = p.steps[i];
    std::string where = fmt::format("step {} ({})", i + 1, HandlerOpName(op));
    if (op == HandlerOp::kBegin) {
      if (open) return bad(where + ": a group is already open; groups do not nest");
      if (++groups > 1) return bad(where + ": only one begin..commit group is supported");
      open = true;
      group.clear();
      continue;
    }
    if (op == HandlerOp::kCommit) {
      if (!open) return bad(where + ": commit without begin");
      if (group.empty()) return bad(where + ": empty begin..commit group");
      open = false;
      continue;
    }
    if ((op == HandlerOp::kCheckDone || op == HandlerOp::kMarkDone) &&
        p.dedupe == DedupeStore::kNone) {
      return bad(where + ": needs a dedupe store (dedupe = \"sql\" or \"redis\")");
    }
    if (op == HandlerOp::kAck && p.loop.ack == AckMode::kBatch) {
      return bad(where + ": ack mode is batch, so the loop acks; remove the ack step");
    }
    if (open) group.push_back(op);
  }
  if (open) return bad("begin without commit");
  if (p.dedupe_ttl_ms < 0) return bad("dedupe_ttl_ms must be >= 0");
  if (p.dedupe_ttl_ms > 0 && p.dedupe != DedupeStore::kRedis) {
    return bad("dedupe_ttl_ms needs dedupe = \"redis\" (SQL rows do not expire)");
  }
  if (p.idempotency_key && p.effect != EffectSink::kExternal) {
    return bad("idempotency_key applies to effect = \"external\" only");
  }
  const LoopConfig& l = p.loop;
  if (l.read_count < 1) return bad("read_count must be >= 1");
  if (l.claim_count < 1) return bad("claim_count must be >= 1");
  if (l.claim_min_idle_ms < 0) return bad("claim_min_idle_ms must be >= 0");
  if (l.claim_every_ms < 1) return bad("claim_every_ms must be >= 1");
  if (l.block_ms < 1) return bad("block_ms must be >= 1");
  if (l.dead_letter_after < 0) return bad("dead_letter_after must be >= 0");
  const JanitorConfig& j = p.janitor;
  if (j.enabled() && j.every_ms < 1) return bad("janitor every_ms must be >= 1");
  if (j.trim == TrimPolicy::kMaxLen && j.trim_maxlen < 0) return bad("trim_maxlen must be >= 0");
  if (j.consumer_idle_ms < 0) return bad("consumer_idle_ms must be >= 0");
  return Status::Ok();
}

const ProtocolDef* FindProtocol(std::string_view name) {
  for (const ProtocolDef& p : Catalog()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool HasScriptOrCommand(const ProtocolDef& p) {
  return !p.script_path.empty() || !p.consumer_command.empty();
}

bool SitesFoundByRunning(const ProtocolDef& p) {
  if (HasScriptOrCommand(p) || p.script != nullptr) return true;
  if (p.cpp_handler == nullptr) return false;
  for (const ProtocolDef& c : Catalog()) {
    if (c.cpp_handler == p.cpp_handler) return false;  // the catalog's own: its steps say what it does
  }
  return true;
}

std::string CatalogNames() {
  std::string out;
  for (const ProtocolDef& p : Catalog()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace xackly
