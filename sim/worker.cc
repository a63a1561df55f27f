#include "sim/worker.h"

#include <algorithm>
#include <charconv>

#include "sim/commands.h"
#include "sim/faults.h"
#include "sim/rng.h"

namespace xackly {

namespace {

bool IsNoGroup(const Reply& r) { return r.is_error() && r.str().rfind("NOGROUP", 0) == 0; }

ReadResult FinishRead(Step& s) {
  ReadResult r;
  r.nogroup = IsNoGroup(s.reply);
  if (s.reply.is_error()) return r;
  auto entries = ParseReadReply(s.reply);
  if (entries) r.entries = std::move(*entries);
  return r;
}

ClaimResult FinishClaim(Step& s) {
  ClaimResult r;
  r.nogroup = IsNoGroup(s.reply);
  if (s.reply.is_error()) return r;
  auto parsed = ParseAutoClaimReply(s.reply);
  if (parsed) {
    r.next_cursor = std::move(parsed->next_cursor);
    r.entries = std::move(parsed->entries);
    r.deleted_ids = std::move(parsed->deleted_ids);
  }
  return r;
}

std::vector<PendingRow> FinishPendingRows(Step& s) {
  auto rows = ParsePendingRows(s.reply);
  return rows ? std::move(*rows) : std::vector<PendingRow>{};
}

int64_t FinishInteger(Step& s) { return s.reply.is_integer() ? s.reply.integer() : 0; }
bool FinishNotError(Step& s) { return !s.reply.is_error(); }
bool FinishBusinessOk(Step& s) {
  return s.outcome == BusinessOutcome::kOk || s.outcome == BusinessOutcome::kAlreadyDone;
}
bool FinishWoken(Step& s) { return s.woken_by_data; }
bool FinishTrue(Step&) { return true; }

Dedupe FinishDedupe(Step& s) {
  switch (s.outcome) {
    case BusinessOutcome::kOk: return Dedupe::kNew;
    case BusinessOutcome::kAlreadyDone: return Dedupe::kDone;
    default: return Dedupe::kFailed;
  }
}

// Redis dedupe and atomic steps map their reply to a business outcome here,
// so that consumer code sees one vocabulary whatever the store.
Dedupe FinishRedisCheck(Step& s) {
  if (s.reply.is_error()) return Dedupe::kFailed;
  return s.reply.is_integer() && s.reply.integer() == 1 ? Dedupe::kDone : Dedupe::kNew;
}
Dedupe FinishRedisMark(Step& s) {
  if (s.reply.is_error()) return Dedupe::kFailed;
  return s.reply.is_nil() ? Dedupe::kDone : Dedupe::kNew;
}
Dedupe FinishAtomic(Step& s) {
  if (!s.reply.is_integer()) return Dedupe::kFailed;
  return s.reply.integer() == 0 ? Dedupe::kDone : Dedupe::kNew;
}
bool FinishRedisEffect(Step& s) { return s.outcome == BusinessOutcome::kOk && !s.reply.is_error(); }

}  // namespace

std::string EventId(int event) { return "order:" + std::to_string(event); }

int64_t EffectMsOf(const Timing& timing, uint64_t seed, std::string_view event_id) {
  const int64_t spread = std::clamp<int64_t>(timing.effect_spread_ms, 0, timing.effect_ms);
  if (spread == 0) return timing.effect_ms;
  return timing.effect_ms - Rng(seed).Split("effect-ms").Split(event_id).Between(0, spread);
}

int EventNumber(std::string_view event_id) {
  constexpr std::string_view kPrefix = "order:";
  if (event_id.substr(0, kPrefix.size()) != kPrefix) return 0;
  int n = 0;
  auto tail = event_id.substr(kPrefix.size());
  auto [p, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), n);
  return ec == std::errc() && p == tail.data() + tail.size() ? n : 0;
}

std::string EffectRecordText(std::string_view event_id, std::string_view stream_id,
                             std::string_view consumer, int64_t t_ms) {
  std::string out;
  out.reserve(event_id.size() + stream_id.size() + consumer.size() + 24);
  out.append(event_id).append("|").append(stream_id).append("|").append(consumer).append("|");
  out += std::to_string(t_ms);
  return out;
}

Step Worker::RedisStep(Op op, std::vector<std::string> argv) const {
  Step s;
  s.op = op;
  s.argv = std::move(argv);
  return s;
}

Step Worker::BusinessStep(Op op, const StreamEntry* e) const {
  Step s;
  s.op = op;
  if (e != nullptr) {
    s.event_id = std::string(e->event_id());
    s.stream_id = e->id;
  }
  return s;
}

bool Worker::IsPoison(std::string_view event_id) const {
  return env_->faults->IsPoison(EventNumber(event_id));
}

Request<ReadResult> Worker::ReadNew() {
  const WorldNames& n = *env_->names;
  return {actor_,
          RedisStep(Op::kReadNew, {"XREADGROUP", "GROUP", n.group, consumer(), "COUNT",
                                   std::to_string(protocol().loop.read_count), "STREAMS", n.stream,
                                   ">"}),
          &FinishRead};
}

Request<ReadResult> Worker::ReadPending(const std::string& after_id) {
  const WorldNames& n = *env_->names;
  return {actor_,
          RedisStep(Op::kReadPending, {"XREADGROUP", "GROUP", n.group, consumer(), "COUNT",
                                       std::to_string(protocol().loop.read_count), "STREAMS",
                                       n.stream, after_id}),
          &FinishRead};
}

Request<ClaimResult> Worker::Claim(const std::string& cursor) {
  const WorldNames& n = *env_->names;
  const LoopConfig& loop = protocol().loop;
  return {actor_,
          RedisStep(Op::kClaim, {"XAUTOCLAIM", n.stream, n.group, consumer(),
                                 std::to_string(loop.claim_min_idle_ms), cursor, "COUNT",
                                 std::to_string(loop.claim_count)}),
          &FinishClaim};
}

Request<std::vector<PendingRow>> Worker::DeliveryCounts(const std::string& first,
                                                        const std::string& last, size_t count) {
  const WorldNames& n = *env_->names;
  return {actor_,
          RedisStep(Op::kDeliveryCounts,
                    {"XPENDING", n.stream, n.group, first, last, std::to_string(count), consumer()}),
          &FinishPendingRows};
}

Request<int64_t> Worker::Ack(const std::string& id) {
  const WorldNames& n = *env_->names;
  return {actor_, RedisStep(Op::kAck, {"XACK", n.stream, n.group, id}), &FinishInteger};
}

Request<int64_t> Worker::AckMany(const std::vector<std::string>& ids) {
  const WorldNames& n = *env_->names;
  std::vector<std::string> argv = {"XACK", n.stream, n.group};
  argv.insert(argv.end(), ids.begin(), ids.end());
  return {actor_, RedisStep(Op::kAck, std::move(argv)), &FinishInteger};
}

Request<bool> Worker::CreateGroup() {
  const WorldNames& n = *env_->names;
  return {actor_,
          RedisStep(Op::kCreateGroup, {"XGROUP", "CREATE", n.stream, n.group, "0", "MKSTREAM"}),
          &FinishNotError};
}

Request<Dedupe> Worker::CheckDone(const StreamEntry& e) {
  if (protocol().dedupe == DedupeStore::kRedis) {
    std::string key = env_->names->done_prefix + std::string(e.event_id());
    Step s = RedisStep(Op::kRedisCheckDone, {"EXISTS", std::move(key)});
    s.event_id = std::string(e.event_id());
    s.stream_id = e.id;
    return {actor_, std::move(s), &FinishRedisCheck};
  }
  return {actor_, BusinessStep(Op::kSqlCheckDone, &e), &FinishDedupe};
}

Request<Dedupe> Worker::MarkDone(const StreamEntry& e) {
  if (protocol().dedupe == DedupeStore::kRedis) {
    std::vector<std::string> argv = {"SET", env_->names->done_prefix + std::string(e.event_id()),
                                     "1", "NX"};
    if (protocol().dedupe_ttl_ms > 0) {
      argv.push_back("PX");
      argv.push_back(std::to_string(protocol().dedupe_ttl_ms));
    }
    Step s = RedisStep(Op::kRedisMarkDone, std::move(argv));
    s.event_id = std::string(e.event_id());
    s.stream_id = e.id;
    return {actor_, std::move(s), &FinishRedisMark};
  }
  return {actor_, BusinessStep(Op::kSqlMarkDone, &e), &FinishDedupe};
}

Request<bool> Worker::Effect(const StreamEntry& e) {
  Step s;
  switch (protocol().effect) {
    case EffectSink::kExternal:
      s = BusinessStep(Op::kExternalEffect, &e);
      break;
    case EffectSink::kSql:
      s = BusinessStep(Op::kSqlEffect, &e);
      break;
    case EffectSink::kRedis:
      s = RedisStep(Op::kRedisEffect,
                    {"RPUSH", env_->names->effects,
                     EffectRecordText(e.event_id(), e.id, consumer(), now_ms())});
      s.event_id = std::string(e.event_id());
      s.stream_id = e.id;
      return {actor_, std::move(s), &FinishRedisEffect};
  }
  s.busy_ms = EffectMsOf(*env_->timing, env_->seed, e.event_id());
  return {actor_, std::move(s), &FinishBusinessOk};
}

Request<bool> Worker::Begin() { return {actor_, BusinessStep(Op::kSqlBegin, nullptr), &FinishBusinessOk}; }
Request<bool> Worker::Commit() { return {actor_, BusinessStep(Op::kSqlCommit, nullptr), &FinishBusinessOk}; }
Request<bool> Worker::Rollback() { return {actor_, BusinessStep(Op::kSqlRollback, nullptr), &FinishBusinessOk}; }

Request<Dedupe> Worker::RedisAtomic(const StreamEntry& e) {
  const WorldNames& n = *env_->names;
  std::string event_id(e.event_id());
  Step s = RedisStep(Op::kRedisAtomic,
                     {"EVAL", env_->atomic_script, "3", n.done_prefix + event_id, n.stream,
                      n.effects, n.group, e.id, EffectRecordText(event_id, e.id, consumer(), now_ms()),
                      std::to_string(protocol().dedupe_ttl_ms), IsPoison(event_id) ? "1" : "0"});
  s.event_id = std::move(event_id);
  s.stream_id = e.id;
  s.busy_ms = EffectMsOf(*env_->timing, env_->seed, s.event_id);
  return {actor_, std::move(s), &FinishAtomic};
}

Request<bool> Worker::DeadLetter(const StreamEntry& e) {
  std::vector<std::string> argv = {"XADD", env_->names->dead_letters, "*", "source_id", e.id};
  for (const auto& [k, v] : e.fields) {
    argv.push_back(k);
    argv.push_back(v);
  }
  Step s = RedisStep(Op::kDeadLetter, std::move(argv));
  s.event_id = std::string(e.event_id());
  s.stream_id = e.id;
  return {actor_, std::move(s), &FinishNotError};
}

Request<bool> Worker::Park(int64_t max_ms) {
  Step s;
  s.op = Op::kPark;
  s.duration_ms = max_ms;
  return {actor_, std::move(s), &FinishWoken};
}

Request<bool> Worker::Checkpoint(const char* label) {
  Step s;
  s.op = Op::kCheckpoint;
  s.label = label;
  return {actor_, std::move(s), &FinishTrue};
}

Task<bool> Worker::OnDuplicate(const StreamEntry& e) {
  if (InTransaction()) co_await Rollback();
  if (protocol().on_duplicate == DuplicatePolicy::kSkip) co_return false;
  if (protocol().loop.ack == AckMode::kBatch) co_return true;
  co_await Ack(e.id);
  co_return true;
}

Task<bool> Worker::Handle(const StreamEntry& e) {
  CppHandler handler = protocol().cpp_handler;
  Task<bool> task = handler != nullptr ? handler(*this, e) : RunDeclarativeHandler(*this, e);
  bool done = co_await std::move(task);
  co_return done;
}

namespace {

int64_t DeliveriesOf(const std::vector<PendingRow>& rows, const std::string& id) {
  for (const PendingRow& r : rows) {
    if (r.id == id) return r.deliveries;
  }
  return 0;
}

Task<void> DeadLetterEntry(Worker& w, const StreamEntry& e) {
  if (w.protocol().loop.dead_letter_order == DeadLetterOrder::kSaveThenAck) {
    bool saved = co_await w.DeadLetter(e);
    if (saved) co_await w.Ack(e.id);
  } else {
    co_await w.Ack(e.id);
    co_await w.DeadLetter(e);
  }
}

// Handles one batch of entries from a read or a claim. `redelivered`: the
// entries came from own-pending or a claim, so they may have a history.
Task<void> HandleBatch(Worker& w, const std::vector<StreamEntry>& entries, bool redelivered) {
  const LoopConfig& loop = w.protocol().loop;
  std::vector<PendingRow> deliveries;
  if (loop.dead_letter_after > 0 && redelivered && !entries.empty()) {
    deliveries =
        co_await w.DeliveryCounts(entries.front().id, entries.back().id, entries.size());
  }
  std::vector<std::string> batch_ack;
  for (size_t i = 0; i < entries.size(); ++i) {
    const StreamEntry& e = entries[i];
    if (i > 0 && loop.ack == AckMode::kBatch) co_await w.Checkpoint("mid-batch");
    if (e.deleted) {
      if (loop.on_deleted == DeletedEntryPolicy::kAck) co_await w.Ack(e.id);
      continue;
    }
    if (loop.dead_letter_after > 0 && DeliveriesOf(deliveries, e.id) >= loop.dead_letter_after) {
      co_await DeadLetterEntry(w, e);
      continue;
    }
    bool done = co_await w.Handle(e);
    if (w.InTransaction()) co_await w.Rollback();  // the handler gave up mid-transaction
    if (done && loop.ack == AckMode::kBatch) batch_ack.push_back(e.id);
  }
  if (!batch_ack.empty()) co_await w.AckMany(batch_ack);
}

}  // namespace

Task<void> ConsumerMain(Worker w) {
  const LoopConfig& loop = w.protocol().loop;
  if (loop.read_own_pending_at_start) {
    std::string after = "0";
    for (;;) {
      ReadResult r = co_await w.ReadPending(after);
      if (r.nogroup) {
        co_await w.CreateGroup();
        break;
      }
      if (r.entries.empty()) break;
      after = r.entries.back().id;
      co_await HandleBatch(w, r.entries, /*redelivered=*/true);
    }
  }
  int64_t next_claim_ms = w.now_ms() + loop.claim_every_ms;
  for (;;) {
    if (loop.claim && w.now_ms() >= next_claim_ms) {
      std::string cursor = "0-0";
      do {
        ClaimResult c = co_await w.Claim(cursor);
        if (c.nogroup) {
          co_await w.CreateGroup();
          break;
        }
        co_await HandleBatch(w, c.entries, /*redelivered=*/true);
        cursor = c.next_cursor;
      } while (cursor != "0-0");
      next_claim_ms = w.now_ms() + loop.claim_every_ms;
    }
    ReadResult r = co_await w.ReadNew();
    if (r.nogroup) {
      co_await w.CreateGroup();
      continue;
    }
    if (r.entries.empty()) {
      int64_t wait_ms = loop.block_ms;
      if (loop.claim) wait_ms = std::min(wait_ms, std::max<int64_t>(1, next_claim_ms - w.now_ms()));
      co_await w.Park(wait_ms);
      continue;
    }
    co_await HandleBatch(w, r.entries, /*redelivered=*/false);
  }
}

namespace {

Request<std::string> ProduceStep(Actor* actor, const ActorEnv* env, int event) {
  Step s;
  s.op = Op::kProduce;
  // argv[2] is the explicit entry ID; the scheduler fills it in at execution
  // time from virtual time, so IDs increase across producers and restarts.
  s.argv = {"XADD", env->names->stream, "", "event_id", EventId(event)};
  s.event_id = EventId(event);
  // In bursts of produce_burst events, the last of each waits for them all.
  const Timing& t = *env->timing;
  const int64_t burst = std::max<int64_t>(1, t.produce_burst);
  s.busy_ms = (actor->next_event + 1) % burst == 0 ? burst * t.produce_every_ms : 0;
  // The entry's ID, or "" when the XADD failed.
  return {actor, std::move(s), [](Step& st) { return st.reply.is_error() ? std::string() : st.argv[2]; }};
}

// WAIT <replicas> 0 after an XADD: true when every replica has the
// producer's writes (the harness answers it, harness/replicated_server.h);
// with several, a failover may promote the one furthest behind, so fewer
// would not keep the entry. A failover between the XADD and the WAIT kills
// the connection: false, and the XADD is retried.
Request<bool> ReplicatedStep(Actor* actor, int replicas) {
  Step s;
  s.op = Op::kCommand;
  s.argv = {"WAIT", std::to_string(replicas), "0"};
  return {actor, std::move(s), [](Step& st) {
            const std::optional<WaitRequest> asked = ParseWait(st.argv);  // what this step asked
            return asked && st.reply.is_integer() && st.reply.integer() >= asked->replicas;
          }};
}

// Variadic rather than a braced list: GCC 12 miscompiles braced lists of
// strings inside co_await expressions ("array used as initializer").
template <typename... Args>
Request<Reply> JanitorStep(Actor* actor, Op op, const Args&... args) {
  Step s;
  s.op = op;
  s.argv = {std::string(args)...};
  return {actor, std::move(s), [](Step& st) { return std::move(st.reply); }};
}

Request<bool> SleepStep(Actor* actor, int64_t ms) {
  Step s;
  s.op = Op::kSleep;
  s.duration_ms = ms;
  return {actor, std::move(s), &FinishTrue};
}

}  // namespace

const std::string& SafeTrimScript() {
  // KEYS[1]: the stream. Keeps, for every group, its oldest pending entry
  // and everything after its last-delivered ID; trims below the lowest.
  static const std::string kScript = R"lua(
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then return am < bm end
  return as < bs
end
local keep = nil
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local f = {}
  for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
  local ms, seq = parse(f['last-delivered-id'])
  local need = string.format('%d-%d', ms, seq + 1)
  local pending = redis.call('XPENDING', KEYS[1], f['name'])
  if pending[1] > 0 and less(pending[2], need) then need = pending[2] end
  if keep == nil or less(need, keep) then keep = need end
end
if keep == nil then return {0, ''} end
return {redis.call('XTRIM', KEYS[1], 'MINID', keep), keep}
)lua";
  return kScript;
}

Task<void> ProducerMain(Actor* actor, const ActorEnv* env) {
  // Producer k (1-based) owns events k, k + P, k + 2P, ...
  int slot = std::stoi(actor->slot.substr(1));
  for (;;) {
    int event = slot + actor->next_event * env->producers;
    if (event > env->events) co_return;
    if (env->replicas == 0 || !env->producer_waits) {
      const std::string id = co_await ProduceStep(actor, env, event);
      if (!id.empty()) actor->next_event++;
      continue;
    }
    // With replicas, an event counts as added once WAIT says every replica
    // has it (a producer that acknowledges its caller only then). When a
    // failover cut the connection before WAIT answered, the producer looks
    // for its entry on the new primary: there, it waits for it again;
    // gone, it adds the event again. A failover drops a consumer's writes,
    // never an event the producer moved past, and adds no second entry.
    if (actor->unconfirmed_entry.empty()) {
      actor->unconfirmed_entry = co_await ProduceStep(actor, env, event);
      if (actor->unconfirmed_entry.empty()) continue;
    } else {
      const std::string& id = actor->unconfirmed_entry;
      Reply there = co_await JanitorStep(actor, Op::kCommand, "XRANGE", env->names->stream, id, id);
      if (there.is_error()) continue;
      if (!there.is_array() || there.elements().empty()) {
        actor->unconfirmed_entry.clear();
        continue;
      }
    }
    const bool on_replica = co_await ReplicatedStep(actor, env->replicas);
    if (on_replica) {
      actor->unconfirmed_entry.clear();
      actor->next_event++;
    }
  }
}

Task<void> JanitorMain(Actor* actor, const ActorEnv* env) {
  const JanitorConfig& cfg = env->protocol->janitor;
  const WorldNames& n = *env->names;
  for (;;) {
    co_await SleepStep(actor, cfg.every_ms);
    if (cfg.trim == TrimPolicy::kMaxLen) {
      co_await JanitorStep(actor, Op::kTrim, "XTRIM", n.stream, "MAXLEN", std::to_string(cfg.trim_maxlen));
    } else if (cfg.trim == TrimPolicy::kSafeMinId) {
      // One script: the groups' needs are read and the trim done atomically,
      // so no delivery can fall between them. Replies [trimmed, minid].
      co_await JanitorStep(actor, Op::kTrim, "EVAL", SafeTrimScript(), "1", n.stream);
    } else if (cfg.trim == TrimPolicy::kRacyMinId) {
      // Keep everything a group may still need: its oldest pending entry and
      // everything after its last-delivered ID. Three requests are not a
      // snapshot: an entry delivered after XPENDING and before XINFO GROUPS
      // is pending, yet below the MINID (the racy-trim catalog bug).
      Reply pending = co_await JanitorStep(actor, Op::kPendingSummary, "XPENDING", n.stream, n.group);
      Reply groups = co_await JanitorStep(actor, Op::kGroupInfo, "XINFO", "GROUPS", n.stream);
      auto summary = ParsePendingSummary(pending);
      std::optional<StreamId> keep_from;
      if (auto last = GroupLastDeliveredId(groups, n.group)) keep_from = last->Next();
      if (summary && summary->count > 0) {
        auto min_pending = StreamId::Parse(summary->min_id);
        if (min_pending && (!keep_from || *min_pending < *keep_from)) keep_from = min_pending;
      }
      if (keep_from) {
        co_await JanitorStep(actor, Op::kTrim, "XTRIM", n.stream, "MINID", keep_from->ToString());
      }
    }
    if (cfg.delete_idle_consumers) {
      Reply info = co_await JanitorStep(actor, Op::kConsumerInfo, "XINFO", "CONSUMERS", n.stream, n.group);
      auto records = ParseInfoRecords(info);
      if (!records) continue;
      for (const auto& rec : *records) {
        std::string name;
        int64_t pending = 0;
        int64_t idle_ms = 0;
        for (const auto& [k, v] : rec) {
          if (k == "name") name = v;
          if (k == "pending") pending = std::stoll(v);
          if (k == "idle") idle_ms = std::stoll(v);
        }
        bool idle = idle_ms >= cfg.consumer_idle_ms;
        if (idle && (!cfg.check_pending_before_delete || pending == 0)) {
          co_await JanitorStep(actor, Op::kDelConsumer, "XGROUP", "DELCONSUMER", n.stream, n.group, name);
        }
      }
    }
  }
}

}  // namespace xackly
