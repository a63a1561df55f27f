#include "sim/oracle.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "sim/text.h"
#include "sim/trace.h"
#include "sim/worker.h"

namespace xackly {

const char* HistoryKindName(HistoryKind k) {
  switch (k) {
    case HistoryKind::kProduced: return "produced";
    case HistoryKind::kProduceUnknown: return "produce-unknown";
    case HistoryKind::kProduceLost: return "produce-lost";
    case HistoryKind::kDelivered: return "delivered";
    case HistoryKind::kRedelivered: return "redelivered";
    case HistoryKind::kClaimed: return "claimed";
    case HistoryKind::kEffect: return "effect";
    case HistoryKind::kEffectFailed: return "effect-failed";
    case HistoryKind::kDedupeRecord: return "dedupe-record";
    case HistoryKind::kAcked: return "acked";
    case HistoryKind::kDeadLettered: return "dead-lettered";
    case HistoryKind::kCrash: return "crash";
    case HistoryKind::kStall: return "stall";
    case HistoryKind::kLostReply: return "lost-reply";
    case HistoryKind::kLostRequest: return "lost-request";
    case HistoryKind::kPayloadDeleted: return "payload-deleted";
    case HistoryKind::kConsumerDeleted: return "consumer-deleted";
    case HistoryKind::kRestartLoss: return "restart-loss";
    case HistoryKind::kServerRestart: return "server-restart";
    case HistoryKind::kClockJump: return "clock-jump";
    case HistoryKind::kStoreOutage: return "store-outage";
    case HistoryKind::kFault: return "fault";
    case HistoryKind::kRewound: return "rewound";
    case HistoryKind::kReadByPosition: return "read-by-position";
    case HistoryKind::kFailoverLoss: return "failover-loss";
    case HistoryKind::kFailover: return "failover";
    case HistoryKind::kErrorReply: return "error-reply";
    case HistoryKind::kReplicaLag: return "replica-lag";
  }
  return "?";
}

namespace {
constexpr size_t kHistoryItemsPerEvent = 8;
}  // namespace

Oracle::Oracle(int events) : events_(events) {
  for (int e = 1; e <= events; ++e) state_[EventId(e)];
}

Oracle::EventState* Oracle::Find(const std::string& event_id) {
  auto it = state_.find(event_id);
  return it == state_.end() ? nullptr : &it->second;
}

HistoryItem Oracle::Item(HistoryKind kind, int64_t t, const std::string& actor,
                         const std::string& stream_id, const std::string& detail,
                         int64_t value) const {
  return HistoryItem{kind, t, line_, actor, stream_id, detail, value};
}

void Oracle::Add(const std::string& event_id, HistoryItem item) {
  EventState* st = Find(event_id);
  if (st == nullptr) return;
  // An event gathers a handful of items (produced, delivered, effect,
  // acked...): room for them at once saves moving the large items as the
  // vector grows one doubling at a time.
  if (st->history.empty()) st->history.reserve(kHistoryItemsPerEvent);
  st->history.push_back(std::move(item));
}

std::string Oracle::EventOfId(const std::string& stream_id) const {
  auto it = id_to_event_.find(stream_id);
  return it == id_to_event_.end() ? "" : it->second;
}

std::vector<std::string> Oracle::EventsOfIds(const std::vector<std::string>& stream_ids) const {
  std::vector<std::string> out;
  for (const std::string& id : stream_ids) {
    std::string e = EventOfId(id);
    if (!e.empty() && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

std::vector<std::string> Oracle::EventsNamedIn(std::string_view key) const {
  std::vector<std::string> out;
  for (const auto& [event_id, st] : state_) {
    bool named = HasIdToken(key, event_id);
    for (const std::string& id : st.stream_ids) named = named || HasIdToken(key, id);
    if (named) out.push_back(event_id);
  }
  return out;
}

void Oracle::WorkSavedIn(std::string_view text) {
  for (const std::string& event_id : EventsNamedIn(text)) state_[event_id].work_saved = true;
}

void Oracle::Produced(int64_t t, const std::string& actor, const std::string& event_id,
                      const std::string& stream_id, ProduceOutcome outcome) {
  EventState* st = Find(event_id);
  if (st == nullptr) return;
  if (outcome == ProduceOutcome::kNotSent) {
    Add(event_id, Item(HistoryKind::kProduceLost, t, actor, stream_id, "XADD request lost"));
    return;
  }
  st->produced = true;
  st->stream_ids.push_back(stream_id);
  id_to_event_[stream_id] = event_id;
  if (auto sid = StreamId::Parse(stream_id)) stream_[*sid] = stream_id;
  Progress(t);
  Add(event_id, Item(outcome == ProduceOutcome::kAcknowledged ? HistoryKind::kProduced
                                                              : HistoryKind::kProduceUnknown,
                     t, actor, stream_id,
                     outcome == ProduceOutcome::kAcknowledged
                         ? "XADD acknowledged"
                         : "XADD executed, but its reply was lost: the producer does not know"));
}

void Oracle::Delivered(int64_t t, const std::string& consumer,
                       const std::vector<StreamEntry>& entries, DeliveryVia via, std::string_view reader) {
  const bool lane = !reader.empty() && reader != consumer;
  static const char* kVia[] = {"XREADGROUP >", "XREADGROUP 0 (own pending)", "XAUTOCLAIM",
                               "XREADGROUP > NOACK: never pending, so nothing can deliver it again"};
  const char* command = via == DeliveryVia::kClaim ? "XAUTOCLAIM" : "XREADGROUP";
  HistoryKind kind = via == DeliveryVia::kOwnPending ? HistoryKind::kRedelivered
                     : via == DeliveryVia::kClaim    ? HistoryKind::kClaimed
                                                     : HistoryKind::kDelivered;
  for (const StreamEntry& e : entries) {
    std::string event_id = e.deleted ? EventOfId(e.id) : std::string(e.event_id());
    if (delivered_.insert(e.id).second) Progress(t);
    if (via == DeliveryVia::kNoAck) {
      if (EventState* st = Find(event_id)) st->read_noack = true;
    } else {
      pel_[e.id] = consumer;
    }
    std::string detail = kVia[static_cast<int>(via)];
    if (lane) detail += " as consumer " + consumer;
    if (e.deleted) detail += "; payload missing (nil): the entry was deleted while pending";
    HistoryItem item = Item(kind, t, lane ? std::string(reader) : consumer, e.id, detail);
    item.command = command;
    item.payload_missing = e.deleted;
    if (lane) item.consumer = consumer;
    Add(event_id, std::move(item));
  }
}

void Oracle::ClaimFoundDeleted(int64_t t, const std::string& consumer,
                               const std::vector<std::string>& ids, const std::string& command) {
  for (const std::string& id : ids) {
    pel_.erase(id);
    HistoryItem item = Item(HistoryKind::kClaimed, t, consumer, id,
                            command == "XAUTOCLAIM"
                                ? "XAUTOCLAIM reported it deleted and dropped it from the PEL"
                                : command + " found its payload deleted and dropped it from the PEL");
    item.command = command;
    item.payload_missing = true;
    Add(EventOfId(id), std::move(item));
  }
}

void Oracle::OwnershipMoved(int64_t t, const std::string& consumer, const std::vector<std::string>& ids,
                            const std::string& command) {
  for (const std::string& id : ids) {
    auto it = pel_.find(id);
    if (it == pel_.end() || it->second == consumer) continue;
    std::string from = it->second;
    it->second = consumer;
    HistoryItem item = Item(HistoryKind::kClaimed, t, consumer, id,
                            command + " JUSTID moved it from " + from + " to " + consumer +
                                " (ownership only: nothing delivered)");
    item.command = command;
    Add(EventOfId(id), std::move(item));
  }
}

bool Oracle::IsLive(const std::string& id) const {
  std::optional<StreamId> sid = StreamId::Parse(id);
  return sid && stream_.count(*sid) > 0;
}

std::optional<StreamId> Oracle::NewestLive() const {
  if (stream_.empty()) return std::nullopt;
  return stream_.rbegin()->first;
}

void Oracle::ReadBack(int64_t t, const std::string& actor, const std::string& command,
                      const std::string& how, const ReadBackState& state) {
  const std::string inside = "inside " + how + " (read back)";
  for (const StreamEntry& e : state.new_entries) {
    std::optional<StreamId> sid = StreamId::Parse(e.id);
    if (!sid || stream_.count(*sid) > 0) continue;
    stream_[*sid] = e.id;
    std::string event_id(e.event_id());
    EventState* st = event_id.empty() || id_to_event_.count(e.id) > 0 ? nullptr : Find(event_id);
    if (st == nullptr) continue;
    st->produced = true;
    st->stream_ids.push_back(e.id);
    id_to_event_[e.id] = event_id;
    Progress(t);
    HistoryItem item = Item(HistoryKind::kProduced, t, actor, e.id, "added to the stream " + inside);
    item.command = command;
    Add(event_id, std::move(item));
  }
  if (state.live_ids) {
    std::set<std::string> live(state.live_ids->begin(), state.live_ids->end());
    std::vector<std::string> gone;
    for (const auto& [sid, id] : stream_) {
      if (live.count(id) == 0) gone.push_back(id);
    }
    PayloadsDeleted(t, actor, gone, command, "deleted " + inside);
  }
  std::map<std::string, std::string> truth;
  for (const PendingRow& r : state.pending) truth[r.id] = r.consumer;
  for (auto it = pel_.begin(); it != pel_.end();) {
    if (truth.count(it->first) > 0) {
      ++it;
      continue;
    }
    Progress(t);
    HistoryItem item = Item(HistoryKind::kAcked, t, actor, it->first,
                            "left the PEL " + inside + ": acknowledged, or its group was destroyed");
    item.command = command;
    Add(EventOfId(it->first), std::move(item));
    it = pel_.erase(it);
  }
  for (const auto& [id, owner] : truth) {
    auto it = pel_.find(id);
    if (it != pel_.end() && it->second == owner) continue;
    HistoryItem item = Item(it == pel_.end() ? HistoryKind::kDelivered : HistoryKind::kClaimed, t, owner, id,
                            (it == pel_.end() ? "delivered to " : "claimed by ") + owner + " " + inside);
    item.command = command;
    Add(EventOfId(id), std::move(item));
    if (delivered_.insert(id).second) Progress(t);
    pel_[id] = owner;
  }
  // What is still to be delivered follows the group's position: an entry
  // above it is deliverable again (SETID backwards, a recreated group),
  // one at or below it was delivered.
  for (const auto& [sid, id] : stream_) {
    if (pel_.count(id) > 0) continue;
    if (state.last_delivered && sid <= *state.last_delivered) {
      if (delivered_.insert(id).second) Progress(t);
    } else if (delivered_.erase(id) > 0) {
      HistoryItem item = Item(HistoryKind::kRewound, t, actor, id,
                              "makes it deliverable again: " + how +
                                  " moved the group's position back past it, so the next XREADGROUP > reads it again");
      item.command = command;
      Add(EventOfId(id), std::move(item));
    }
  }
}

// The model decides which IDs XACK removed; ModelMismatches() checks the end state.
void Oracle::Acked(int64_t t, const std::string& consumer, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    if (pel_.erase(id) == 0) continue;
    Progress(t);
    HistoryItem item = Item(HistoryKind::kAcked, t, consumer, id, "XACK removed it from the PEL");
    item.command = "XACK";
    Add(EventOfId(id), std::move(item));
  }
}

void Oracle::Effect(const EffectRecord& effect) {
  EventState* st = Find(effect.event_id);
  if (st == nullptr) return;
  st->has_effect = true;
  Progress(effect.t_ms);
  HistoryItem item = Item(HistoryKind::kEffect, effect.t_ms, effect.consumer, effect.stream_id,
                          "side effect (" + effect.sink + ")");
  item.sink = effect.sink;
  Add(effect.event_id, std::move(item));
  if (auto it = position_reads_.find(effect.consumer); it != position_reads_.end()) {
    if (auto held = it->second.find(effect.event_id); held != it->second.end()) held->second = true;
  }
}

void Oracle::ReadByPosition(int64_t t, const std::string& reader, const std::vector<StreamEntry>& entries) {
  std::map<std::string, bool>& held = position_reads_[reader];
  // Done events below the first entry read: the position has passed them.
  const std::optional<StreamId> first = entries.empty() ? std::nullopt : StreamId::Parse(entries.front().id);
  for (auto it = held.begin(); first && it != held.end();) {
    bool passed = false;
    if (auto st = state_.find(it->first); it->second && st != state_.end()) {
      passed = std::all_of(st->second.stream_ids.begin(), st->second.stream_ids.end(), [&](const std::string& id) {
        auto sid = StreamId::Parse(id);
        return sid && *sid < *first;
      });
    }
    it = passed ? held.erase(it) : std::next(it);
  }
  for (const StreamEntry& e : entries) {
    const std::string event_id = EventOfId(e.id);
    if (event_id.empty()) continue;
    auto [slot, fresh] = held.try_emplace(event_id, false);
    if (!fresh && !slot->second) continue;  // polled again before its effect: told once
    slot->second = false;
    Progress(t);
    HistoryItem item = Item(HistoryKind::kReadByPosition, t, reader, e.id, "read with XREAD from its own position");
    item.command = "XREAD";
    Add(event_id, std::move(item));
  }
}

void Oracle::EffectFailed(int64_t t, const std::string& consumer, const std::string& event_id,
                          const std::string& stream_id, const std::string& why) {
  std::string reason = why;
  if (why.starts_with("failed (") && why.ends_with(")")) reason = why.substr(8, why.size() - 9);
  if (why == "poison") reason = "poison event";
  Add(event_id, Item(HistoryKind::kEffectFailed, t, consumer, stream_id, reason));
}

void Oracle::DedupeRecord(int64_t t, const std::string& consumer, const std::string& event_id,
                          int64_t ttl_ms, const std::string& key) {
  HistoryItem item = Item(HistoryKind::kDedupeRecord, t, consumer, "",
                          fmt::format("done-record {}written with a {} ms TTL (expires at {} ms)",
                                      key.empty() ? "" : key + " ", ttl_ms, t + ttl_ms),
                          ttl_ms);
  item.key = key;
  Add(event_id, std::move(item));
}

void Oracle::DeadLettered(int64_t t, const std::string& consumer, const std::string& event_id,
                          const std::string& stream_id) {
  if (EventState* st = Find(event_id)) st->dead_lettered = true;
  Progress(t);
  Add(event_id, Item(HistoryKind::kDeadLettered, t, consumer, stream_id,
                     "payload written to the dead-letter stream"));
}

void Oracle::WorkerFault(HistoryKind kind, int64_t t, const std::string& actor,
                         const std::string& site, const std::vector<std::string>& event_ids,
                         int64_t duration_ms, const std::string& fired_in, const std::string& detail) {
  std::vector<std::string> events = event_ids;
  if (kind == HistoryKind::kCrash || kind == HistoryKind::kStall) {
    for (const auto& [id, owner] : pel_) {
      std::string e = EventOfId(id);
      if (owner == actor && !e.empty() && std::find(events.begin(), events.end(), e) == events.end()) {
        events.push_back(e);
      }
    }
  }
  // What a position-based reader holds is gone with a crash or a timeout
  // (both restart its loop from a fresh state); a stall only delays it.
  const bool restarts = kind == HistoryKind::kCrash || kind == HistoryKind::kLostReply ||
                        kind == HistoryKind::kLostRequest;
  if (auto it = position_reads_.find(actor); it != position_reads_.end() && (restarts || kind == HistoryKind::kStall)) {
    for (const auto& [e, done] : it->second) {
      if (std::find(events.begin(), events.end(), e) == events.end()) events.push_back(e);
    }
    if (restarts) position_reads_.erase(it);
  }
  HistoryItem item = Item(kind, t, actor, "", detail.empty() ? site : detail, duration_ms);
  item.site = site;
  item.fired_in = fired_in;
  for (const std::string& e : events) Add(e, item);
}

void Oracle::PayloadsDeleted(int64_t t, const std::string& actor,
                             const std::vector<std::string>& ids, const std::string& command,
                             const std::string& how) {
  for (const std::string& id : ids) {
    if (auto sid = StreamId::Parse(id)) stream_.erase(*sid);
    HistoryItem item = Item(HistoryKind::kPayloadDeleted, t, actor, id, how);
    item.command = command;
    Add(EventOfId(id), std::move(item));
  }
}

void Oracle::ConsumerDeleted(int64_t t, const std::string& actor, const std::string& consumer) {
  for (auto it = pel_.begin(); it != pel_.end();) {
    if (it->second == consumer) {
      HistoryItem item = Item(HistoryKind::kConsumerDeleted, t, actor, it->first,
                              "XGROUP DELCONSUMER " + consumer + " dropped it from the PEL");
      item.command = "XGROUP";
      item.consumer = consumer;
      Add(EventOfId(it->first), std::move(item));
      it = pel_.erase(it);
    } else {
      ++it;
    }
  }
}

void Oracle::Reconcile(int64_t t, HistoryKind loss, const std::string& how, const std::string& persistence,
                       const std::vector<std::string>& stream_ids, const std::vector<PendingRow>& pending,
                       const std::string& last_delivered_id) {
  std::set<std::string> survived(stream_ids.begin(), stream_ids.end());
  for (const auto& [sid, id] : stream_) {
    if (survived.count(id) == 0) {
      HistoryItem item = Item(loss, t, kFaultActor, id, how);
      item.persistence = persistence;
      Add(EventOfId(id), std::move(item));
    }
  }
  stream_.clear();
  for (const std::string& id : survived) {
    if (auto sid = StreamId::Parse(id)) stream_[*sid] = id;
  }
  pel_.clear();
  for (const PendingRow& r : pending) pel_[r.id] = r.consumer;
  std::optional<StreamId> last = StreamId::Parse(last_delivered_id);
  std::set<std::string> delivered;
  for (const std::string& id : delivered_) {
    std::optional<StreamId> sid = StreamId::Parse(id);
    if (pel_.count(id) > 0 || (last && sid && *sid <= *last)) delivered.insert(id);
  }
  delivered_ = std::move(delivered);
}

void Oracle::ServerRestarted(int64_t t, Persistence persistence,
                             const std::vector<std::string>& stream_ids,
                             const std::vector<PendingRow>& pending,
                             const std::string& last_delivered_id) {
  Reconcile(t, HistoryKind::kRestartLoss,
            fmt::format("lost by the server restart (persistence {})", PersistenceName(persistence)),
            PersistenceName(persistence), stream_ids, pending, last_delivered_id);
  HistoryItem restart = Item(HistoryKind::kServerRestart, t, kFaultActor, "",
                             fmt::format("redis-server killed and restarted (persistence {})",
                                         PersistenceName(persistence)));
  restart.persistence = PersistenceName(persistence);
  global_.push_back(std::move(restart));
}

void Oracle::FailedOver(int64_t t, const std::vector<ReplicatedWrite>& dropped,
                        const std::vector<std::string>& stream_ids, const std::vector<PendingRow>& pending,
                        const std::string& last_delivered_id, bool to_lagging) {
  std::vector<std::string> rendered;
  for (const ReplicatedWrite& w : dropped) {
    rendered.push_back(w.Render());
    std::set<std::string> about;  // the events its arguments name, each once
    for (const std::vector<std::string>& argv : w.commands) {
      for (size_t i = 1; i < argv.size(); ++i) {
        for (std::string& event : EventsNamedIn(argv[i])) about.insert(std::move(event));
      }
    }
    for (const std::string& event : about) dropped_by_failover_[event].push_back(rendered.back());
  }
  Reconcile(t, HistoryKind::kFailoverLoss, "never received by the replica the failover promoted", "", stream_ids,
            pending, last_delivered_id);
  const char* promoted = to_lagging ? "the lagging replica, which" : "a replica that";
  const std::string what =
      rendered.empty() ? fmt::format("{} had received every write", promoted)
                       : fmt::format("{} never received {}: {}", promoted,
                                     rendered.size() == 1 ? "this write" : "these writes", fmt::join(rendered, "; "));
  global_.push_back(Item(HistoryKind::kFailover, t, kFaultActor, "", what,
                         static_cast<int64_t>(dropped.size())));
}

void Oracle::RunWideFault(HistoryKind kind, int64_t t, const std::string& detail, int64_t duration_ms,
                          const std::string& fault) {
  HistoryItem item = Item(kind, t, kFaultActor, "", detail, duration_ms);
  item.site = fault;
  global_.push_back(std::move(item));
}

bool Oracle::NothingLeftToDeliver() const {
  if (!pel_.empty()) return false;
  for (const auto& [event_id, st] : state_) {
    if (!st.produced) return false;
  }
  for (const auto& [sid, id] : stream_) {
    if (delivered_.count(id) == 0) return false;
  }
  return true;
}

std::vector<std::string> Oracle::OwedEvents() const {
  std::vector<std::string> out;
  for (int n = 1; n <= events_; ++n) {
    auto it = state_.find(EventId(n));
    if (it == state_.end() || !it->second.produced) continue;
    if (!it->second.has_effect && !it->second.dead_lettered) out.push_back(it->first);
  }
  return out;
}

std::vector<std::string> Oracle::OldestLive(size_t n) const {
  std::vector<std::string> out;
  for (auto it = stream_.begin(); it != stream_.end() && out.size() < n; ++it) out.push_back(it->second);
  return out;
}

std::vector<std::string> Oracle::LiveBelow(const StreamId& min_id) const {
  std::vector<std::string> out;
  for (auto it = stream_.begin(); it != stream_.end() && it->first < min_id; ++it) out.push_back(it->second);
  return out;
}

std::vector<HistoryItem> Oracle::HistoryOf(const std::string& event_id) const {
  std::vector<HistoryItem> out;
  auto it = state_.find(event_id);
  if (it != state_.end()) out = it->second.history;
  out.insert(out.end(), global_.begin(), global_.end());
  std::stable_sort(out.begin(), out.end(), [](const HistoryItem& a, const HistoryItem& b) {
    return a.line != b.line ? a.line < b.line : a.t_ms < b.t_ms;
  });
  return out;
}

namespace {

const HistoryItem* FirstOf(const std::vector<HistoryItem>& h, HistoryKind kind, int64_t from_t,
                           int64_t to_t, const std::string& actor = "") {
  for (const HistoryItem& i : h) {
    if (i.kind == kind && i.t_ms >= from_t && i.t_ms <= to_t && (actor.empty() || i.actor == actor)) {
      return &i;
    }
  }
  return nullptr;
}

bool Has(const std::vector<HistoryItem>& h, HistoryKind kind) {
  return std::any_of(h.begin(), h.end(), [kind](const HistoryItem& i) { return i.kind == kind; });
}

const HistoryItem* LastOf(const std::vector<HistoryItem>& h, HistoryKind kind) {
  for (auto it = h.rbegin(); it != h.rend(); ++it) {
    if (it->kind == kind) return &*it;
  }
  return nullptr;
}

}  // namespace

Violation Oracle::ExplainDuplicate(const std::string& event_id,
                                   const std::vector<EffectRecord>& effects) const {
  const EffectRecord& e1 = effects[0];
  const EffectRecord& e2 = effects[1];
  std::vector<HistoryItem> h = HistoryOf(event_id);
  Violation v;
  v.kind = VerdictKind::kDuplicate;
  v.event_id = event_id;
  v.effect_count = static_cast<int>(effects.size());
  std::string head = fmt::format("{}'s side effect ran {} times: first by {} at {} ms (entry {}), again by {} at {} ms (entry {})",
                                 event_id, effects.size(), e1.consumer, e1.t_ms, e1.stream_id,
                                 e2.consumer, e2.t_ms, e2.stream_id);
  for (const HistoryItem& i : h) {
    // Redis keeps a key through its expire time and drops it 1 ms later.
    if (i.kind == HistoryKind::kDedupeRecord && i.t_ms < e2.t_ms && i.t_ms + i.value < e2.t_ms) {
      v.cause = "dedupe-expired";
      v.detail = head + fmt::format("; the done-record {}{} wrote at {} ms expired after {} ms, before the redelivery",
                                    i.key.empty() ? "" : i.key + " that ", i.actor, i.t_ms, i.value);
      return v;
    }
  }
  if (const HistoryItem* r = FirstOf(h, HistoryKind::kRewound, e1.t_ms, e2.t_ms)) {
    v.cause = "rewound";
    v.detail = head + fmt::format("; {}'s {} at {} ms moved the group's position back past the entry, so it was "
                                  "read again as new",
                                  r->actor, r->command, r->t_ms);
    return v;
  }
  if (const HistoryItem* r = FirstOf(h, HistoryKind::kServerRestart, e1.t_ms, e2.t_ms)) {
    v.cause = "server-restart";
    v.detail = head + fmt::format("; redis-server restarted at {} ms and lost what marked it done ({})",
                                  r->t_ms, r->detail);
    return v;
  }
  if (const HistoryItem* f = FirstOf(h, HistoryKind::kFailover, e1.t_ms, e2.t_ms)) {
    v.cause = "failover";
    // The failover either dropped a write about this event (its entry or a
    // key naming it), or only cut every connection: the holder lost its
    // next step, as if it had crashed there.
    auto about = dropped_by_failover_.find(event_id);
    v.detail = head + (about != dropped_by_failover_.end()
                           ? fmt::format("; at {} ms the primary failed over to {}: the write about this event "
                                         "({}) was lost, so it ran again",
                                         f->t_ms, f->detail, fmt::join(about->second, "; "))
                           : fmt::format("; at {} ms the primary failed over to {}; it dropped nothing about "
                                         "this event, but every connection died, cutting {} off after the "
                                         "effect and before what would have recorded it (as a crash there would)",
                                         f->t_ms, f->detail, e1.consumer));
    return v;
  }
  if (e1.stream_id != e2.stream_id) {
    v.cause = "producer-retry";
    v.detail = head + "; the event sits in two stream entries because the producer retried an XADD whose reply was lost";
    return v;
  }
  if (const HistoryItem* c = FirstOf(h, HistoryKind::kCrash, e1.t_ms, e2.t_ms, e1.consumer)) {
    v.cause = "crash:" + c->site;
    if (const HistoryItem* r = FirstOf(h, HistoryKind::kReadByPosition, c->t_ms, e2.t_ms)) {
      v.detail = head + fmt::format("; {} crashed at {} (at {} ms) before its stored position passed the entry, so "
                                    "{} read it again with XREAD at {} ms",
                                    c->actor, c->site, c->t_ms, r->actor, r->t_ms);
    } else {
      v.detail = head + fmt::format("; {} crashed at {} (at {} ms) before XACK, so the entry was delivered again",
                                    c->actor, c->site, c->t_ms);
    }
    return v;
  }
  if (const HistoryItem* l = FirstOf(h, HistoryKind::kLostReply, e1.t_ms, e2.t_ms, e1.consumer)) {
    v.cause = "lost-reply:" + l->site;
    v.detail = head + fmt::format("; {} lost the reply to {} at {} ms, gave up and the entry was delivered again",
                                  l->actor, l->site, l->t_ms);
    return v;
  }
  if (const HistoryItem* s = FirstOf(h, HistoryKind::kStall, 0, e2.t_ms)) {
    v.cause = "stall";
    v.detail = head + fmt::format("; {} stalled at {} (at {} ms) long enough for the entry to be claimed, then resumed",
                                  s->actor, s->site, s->t_ms);
    return v;
  }
  if (const HistoryItem* l = FirstOf(h, HistoryKind::kLostRequest, e1.t_ms, e2.t_ms, e1.consumer)) {
    v.cause = "lost-request:" + l->site;
    v.detail = head + fmt::format("; {}'s {} never reached the server (at {} ms)", l->actor, l->site, l->t_ms);
    return v;
  }
  if (const HistoryItem* l = FirstOf(h, HistoryKind::kErrorReply, e1.t_ms, e2.t_ms, e1.consumer)) {
    v.cause = "error-reply:" + l->site;
    v.detail = head + fmt::format("; {}'s {} was answered -{} (at {} ms) and never ran, and the entry was "
                                  "delivered again",
                                  l->actor, l->site, l->detail, l->t_ms);
    return v;
  }
  if (const HistoryItem* r = FirstOf(h, HistoryKind::kReadByPosition, e1.t_ms, e2.t_ms)) {
    v.cause = "position-reread";
    v.detail = head + fmt::format("; {} read the entry again with XREAD at {} ms: the position it reads from had "
                                  "not passed the entry after the first effect",
                                  r->actor, r->t_ms);
    if (const HistoryItem* o = FirstOf(h, HistoryKind::kStoreOutage, e1.t_ms, r->t_ms)) {
      v.detail += fmt::format(" (the business store was down from {} ms)", o->t_ms);
    }
    return v;
  }
  v.cause = "redelivered";
  v.detail = head + "; the entry was delivered again while or after it was processed";
  return v;
}

Violation Oracle::ExplainMissing(const std::string& event_id, const FinalState& fs) const {
  auto it = state_.find(event_id);
  const EventState& st = it->second;
  std::vector<HistoryItem> h = HistoryOf(event_id);
  Violation v;
  v.kind = VerdictKind::kLost;
  v.event_id = event_id;
  if (const HistoryItem* d = LastOf(h, HistoryKind::kConsumerDeleted)) {
    v.cause = "consumer-deleted";
    v.detail = fmt::format("{} was never processed: {} at {} ms", event_id, d->detail, d->t_ms);
    return v;
  }
  if (const HistoryItem* d = LastOf(h, HistoryKind::kPayloadDeleted)) {
    v.cause = "payload-deleted";
    v.detail = fmt::format("{} was never processed: its entry {} was deleted by {} ({}) at {} ms",
                           event_id, d->stream_id, d->actor, d->detail, d->t_ms);
    return v;
  }
  if (const HistoryItem* d = LastOf(h, HistoryKind::kRestartLoss)) {
    v.cause = "server-data-loss";
    v.detail = fmt::format("{} was never processed: its entry {} was {} at {} ms", event_id,
                           d->stream_id, d->detail, d->t_ms);
    return v;
  }
  if (const HistoryItem* d = LastOf(h, HistoryKind::kFailoverLoss)) {
    v.cause = "failover";
    v.detail = fmt::format("{} was never processed: its entry {} was {} at {} ms (the XADD's reply had "
                           "reached the producer)",
                           event_id, d->stream_id, d->detail, d->t_ms);
    if (const HistoryItem* f = LastOf(h, HistoryKind::kFailover)) v.detail += "; the primary failed over to " + f->detail;
    return v;
  }
  if (!st.produced) {
    v.cause = "never-produced";
    v.detail = fmt::format("{} was never added to the stream", event_id);
    return v;
  }
  for (const PendingRow& row : fs.pending) {
    if (std::find(st.stream_ids.begin(), st.stream_ids.end(), row.id) == st.stream_ids.end()) continue;
    if (fs.live_consumers.count(row.consumer) == 0) {
      v.cause = "stranded";
      v.detail = fmt::format("{} is stranded: entry {} stays pending in the PEL of {}, a consumer that no longer runs, and nobody claims it",
                             event_id, row.id, row.consumer);
    } else {
      v.kind = VerdictKind::kStuck;
      v.cause = "never-settled";
      v.detail = fmt::format("{} never settles: entry {} is pending with live consumer {} after {} and its effect never succeeded",
                             event_id, row.id, row.consumer, Plural(row.deliveries, "delivery", "deliveries"));
    }
    return v;
  }
  if (const HistoryItem* a = LastOf(h, HistoryKind::kAcked)) {
    v.cause = "acked-without-effect";
    v.detail = fmt::format("{} was acknowledged by {} at {} ms (entry {}) but its side effect never ran",
                           event_id, a->actor, a->t_ms, a->stream_id);
    if (const HistoryItem* c = FirstOf(h, HistoryKind::kCrash, a->t_ms, INT64_MAX, a->actor)) {
      v.detail += fmt::format("; {} crashed at {} right after", c->actor, c->site);
    }
    if (st.dead_lettered) {
      v.detail += "; it was being dead-lettered, and the payload never reached the dead-letter stream";
    } else if (Has(h, HistoryKind::kEffectFailed)) {
      v.detail += "; its effect had failed, and the payload never reached a dead-letter stream";
    }
    return v;
  }
  if (st.read_noack) {
    const HistoryItem* d = LastOf(h, HistoryKind::kDelivered);
    v.cause = "read-noack";
    v.detail = fmt::format("{} was read with XREADGROUP NOACK by {} at {} ms, so it never entered the PEL: "
                           "its effect never ran and nothing can deliver it again",
                           event_id, d->actor, d->t_ms);
    if (const HistoryItem* c = FirstOf(h, HistoryKind::kCrash, d->t_ms, INT64_MAX, d->actor)) {
      v.detail += fmt::format("; {} crashed at {} before its effect", c->actor, c->site);
    }
    return v;
  }
  if (const HistoryItem* r = LastOf(h, HistoryKind::kReadByPosition)) {
    // A position-based reader read it and nothing ran its effect: the crash
    // between that read and the effect, if any, is the step that lost it.
    const std::string head = fmt::format("{} was read with XREAD by {} at {} ms (entry {}) but its side effect never ran",
                                         event_id, r->actor, r->t_ms, r->stream_id);
    // The first thing after the read that ended the reader's attempt.
    const HistoryItem* why = nullptr;
    for (const HistoryItem* i = r + 1; i < h.data() + h.size() && why == nullptr; ++i) {
      const bool ends = i->kind == HistoryKind::kCrash || i->kind == HistoryKind::kLostReply ||
                        i->kind == HistoryKind::kLostRequest || i->kind == HistoryKind::kErrorReply ||
                        i->kind == HistoryKind::kEffectFailed;
      if (ends && i->actor == r->actor) why = i;
    }
    const std::string passed =
        ", and no reader read the entry again (the position it reads from had passed it, or it stopped reading)";
    if (why != nullptr && why->kind == HistoryKind::kCrash) {
      v.cause = "crash:" + why->site;
      v.detail = head + fmt::format("; {} crashed at {} (at {} ms) before the effect", why->actor, why->site,
                                    why->t_ms) + passed;
    } else if (why != nullptr && why->kind == HistoryKind::kLostReply) {
      v.cause = "lost-reply:" + why->site;
      v.detail = head + fmt::format("; {} lost the reply to {} (at {} ms)", why->actor, why->site, why->t_ms) + passed;
    } else if (why != nullptr && why->kind == HistoryKind::kLostRequest) {
      v.cause = "lost-request:" + why->site;
      v.detail = head + fmt::format("; {}'s {} never reached the server (at {} ms)", why->actor, why->site,
                                    why->t_ms) + passed;
    } else if (why != nullptr && why->kind == HistoryKind::kErrorReply) {
      v.cause = "error-reply:" + why->site;
      v.detail = head + fmt::format("; {}'s {} was answered -{} (at {} ms) and never ran", why->actor, why->site,
                                    why->detail, why->t_ms) + passed;
    } else if (why != nullptr) {
      v.cause = "effect-failed";
      v.detail = head + fmt::format("; its attempt by {} failed ({}) at {} ms", why->actor, why->detail, why->t_ms) +
                 passed;
    } else {
      v.cause = "read-not-processed";
      v.detail = head + ", and no reader read the entry again before the run ended";
    }
    return v;
  }
  bool delivered = Has(h, HistoryKind::kDelivered) || Has(h, HistoryKind::kClaimed) ||
                   Has(h, HistoryKind::kRedelivered);
  v.cause = delivered ? "dropped" : "never-delivered";
  v.detail = delivered ? fmt::format("{} left the PEL without an effect or an XACK", event_id)
                       : fmt::format("{} is in the stream but was never delivered", event_id);
  return v;
}

std::vector<Violation> Oracle::Judge(const FinalState& fs, const EffectLedger& ledger) {
  std::vector<Violation> out;
  std::map<std::string, std::vector<EffectRecord>> effects;
  for (const EffectRecord& r : ledger.records()) {
    if (r.sink != "redis" || !fs.redis_effects) effects[r.event_id].push_back(r);
  }
  if (fs.redis_effects) {
    for (const EffectRecord& r : *fs.redis_effects) effects[r.event_id].push_back(r);
  }
  std::set<std::string> dead_lettered;
  for (const StreamEntry& e : fs.dead_letters) {
    if (!e.event_id().empty()) dead_lettered.insert(std::string(e.event_id()));
  }
  for (int n = 1; n <= events_; ++n) {
    std::string event_id = EventId(n);
    auto& list = effects[event_id];
    std::stable_sort(list.begin(), list.end(),
                     [](const EffectRecord& a, const EffectRecord& b) { return a.t_ms < b.t_ms; });
    effect_counts_[event_id] = static_cast<int>(list.size());
    if (list.size() >= 2) out.push_back(ExplainDuplicate(event_id, list));
    bool accounted = !list.empty() || dead_lettered.count(event_id) > 0;
    if (!accounted) {
      out.push_back(ExplainMissing(event_id, fs));
      continue;
    }
    const EventState& st = state_[event_id];
    for (const PendingRow& row : fs.pending) {
      if (std::find(st.stream_ids.begin(), st.stream_ids.end(), row.id) == st.stream_ids.end()) continue;
      Violation v;
      v.kind = VerdictKind::kPelLeak;
      v.event_id = event_id;
      v.effect_count = static_cast<int>(list.size());
      v.cause = "done-but-pending";
      v.detail = fmt::format("{} is done, but its entry {} stays pending with {} after {}: the PEL never drains",
                             event_id, row.id, row.consumer, Plural(row.deliveries, "delivery", "deliveries"));
      out.push_back(v);
      break;
    }
  }
  if (fs.owed_quiet_ms > 0) {
    for (Violation& v : out) {
      if (v.cause != "acked-without-effect" || !state_[v.event_id].work_saved) continue;
      v.detail += fmt::format("; judged after {} ms without progress while its effect was still owed: if the "
                              "protocol does such work later on a timer of its own that xackly cannot see (one kept "
                              "in a script variable), declare that timer in [protocol.loop] (docs/scripts.md)",
                              fs.owed_quiet_ms);
    }
  }
  if (fs.unsettled_after_ms > 0) {
    for (Violation& v : out) {
      if (v.kind == VerdictKind::kDuplicate || v.cause == "acked-without-effect") continue;  // final whenever judged
      v.detail += fmt::format("; judged {} ms after the faults stopped, while the run was still acting without "
                              "settling",
                              fs.unsettled_after_ms);
    }
  }
  return out;
}

std::vector<std::string> Oracle::ModelMismatches(const FinalState& fs) const {
  std::vector<std::string> out;
  std::map<std::string, std::string> truth;
  for (const PendingRow& r : fs.pending) truth[r.id] = r.consumer;
  for (const auto& [id, owner] : truth) {
    auto it = pel_.find(id);
    if (it == pel_.end()) {
      out.push_back(fmt::format("{} is pending with {} in Redis but not in the oracle's model", id, owner));
    } else if (it->second != owner) {
      out.push_back(fmt::format("{} is owned by {} in Redis but by {} in the oracle's model", id, owner, it->second));
    }
  }
  for (const auto& [id, owner] : pel_) {
    if (truth.count(id) == 0) {
      out.push_back(fmt::format("{} is pending with {} in the oracle's model but not in Redis", id, owner));
    }
  }
  return out;
}

}  // namespace xackly
