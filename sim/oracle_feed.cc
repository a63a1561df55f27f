#include "sim/oracle_feed.h"

#include <algorithm>

#include "sim/actor_name.h"
#include "sim/command_timers.h"
#include "sim/commands.h"
#include "sim/reply.h"
#include "sim/stream.h"

namespace xackly {

namespace {

bool Is(const std::string& arg, std::string_view word) {
  return arg.size() == word.size() && VerbOf(arg) == word;
}

// Position of `word` (case-insensitive) in argv after the command; 0 if none.
size_t ArgIndex(const std::vector<std::string>& argv, std::string_view word) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (Is(argv[i], word)) return i;
  }
  return 0;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] id field value...:
// the index of the id, or 0 when the command is malformed.
size_t XaddIdIndex(const std::vector<std::string>& argv, bool* trims) {
  size_t i = 2;
  *trims = false;
  if (i < argv.size() && Is(argv[i], "NOMKSTREAM")) ++i;
  if (i < argv.size() && (Is(argv[i], "MAXLEN") || Is(argv[i], "MINID"))) {
    *trims = true;
    ++i;
    if (i < argv.size() && (argv[i] == "=" || argv[i] == "~")) ++i;
    ++i;  // threshold
    if (i < argv.size() && Is(argv[i], "LIMIT")) i += 2;
  }
  return i < argv.size() ? i : 0;
}

std::string FieldOf(const std::vector<std::string>& argv, size_t first, std::string_view name) {
  for (size_t i = first; i + 1 < argv.size(); i += 2) {
    if (argv[i] == name) return argv[i + 1];
  }
  return "";
}

// The IDs an XCLAIM names: XCLAIM key group consumer min-idle id... [options].
std::vector<std::string> XclaimIds(const std::vector<std::string>& argv) {
  std::vector<std::string> ids;
  for (size_t i = 5; i < argv.size() && StreamId::Parse(argv[i]); ++i) ids.push_back(argv[i]);
  return ids;
}

// The string elements of an array reply (JUSTID replies).
std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  if (!r.is_array()) return out;
  for (const Reply& e : r.elements()) {
    if (e.is_string()) out.push_back(e.str());
  }
  return out;
}


// How a history item names a command the feed cannot see into: its argv,
// with an EVAL's source cut to its first line (a story or a verdict that
// quotes it stays readable; the trace line has it whole).
std::string RenderOpaque(const std::vector<std::string>& argv) {
  constexpr size_t kSourceShown = 48;
  const CommandInfo& command = CommandOf(argv);
  const bool has_source = command.verb == "EVAL" || command.verb == "EVAL_RO";
  if (!has_source || argv.size() < 2) return RenderArgv(argv);
  std::vector<std::string> shown = argv;
  std::string& source = shown[1];
  const size_t line_end = source.find('\n');
  const size_t lines = static_cast<size_t>(std::count(source.begin(), source.end(), '\n')) + 1;
  if (line_end != std::string::npos || source.size() > kSourceShown) {
    std::string first = source.substr(0, std::min({line_end, kSourceShown}));
    source = first + "..." + (lines > 1 ? " (" + std::to_string(lines) + " lines)" : "");
  }
  return RenderArgv(shown);
}

}  // namespace

void OracleFeed::ForwardNewEffects() {
  const auto& records = ledger_->records();
  for (; forwarded_ < records.size(); ++forwarded_) {
    if (!mine_ || mine_(records[forwarded_])) oracle_->Effect(records[forwarded_]);
  }
}

bool OracleFeed::InMulti(const std::string& slot) const { return multi_.count(slot) > 0; }

void OracleFeed::Forget(const std::string& slot) { multi_.erase(slot); }

Result<OracleFeed::Observed> OracleFeed::Redis(int64_t t, const Who& who, const Step& s,
                                               bool reply_lost) {
  read_error_ = Status::Ok();
  if (s.op == Op::kRedisMarkDone || s.op == Op::kRedisAtomic || s.op == Op::kRedisEffect) {
    if (who.member) RedisStepOfProtocol(t, std::string(who.name), s);
    return Observed{};
  }
  if (s.argv.empty()) return Observed{};
  Pass pass;
  Command(t, who, s.argv, s.reply, reply_lost, &s, &pass);
  if (read_error_.ok() && pass.read_back) {
    read_error_ = ReadBackModel(t, std::string(who.name), pass);
  }
  if (!read_error_.ok()) return read_error_;
  return pass.observed;
}

void OracleFeed::Command(int64_t t, const Who& who, const std::vector<std::string>& argv,
                         const Reply& r, bool reply_lost, const Step* hint, Pass* pass) {
  const std::string verb = VerbOf(argv[0]);
  const WorldNames& names = *env_->names;
  auto queue = multi_.find(who.slot);
  if (verb == "MULTI") {
    if (!r.is_error()) multi_[std::string(who.slot)];
    return;
  }
  if (verb == "DISCARD") {
    if (queue != multi_.end()) multi_.erase(queue);
    return;
  }
  if (verb == "EXEC") {
    std::vector<std::vector<std::string>> queued;
    if (queue != multi_.end()) {
      queued = std::move(queue->second);
      multi_.erase(queue);
    }
    if (r.is_array() && r.size() == queued.size()) {
      for (size_t i = 0; i < queued.size(); ++i) Command(t, who, queued[i], r[i], reply_lost, nullptr, pass);
    }
    return;
  }
  if (queue != multi_.end()) {  // inside MULTI: runs at EXEC
    if (!r.is_error()) queue->second.push_back(argv);
    return;
  }
  auto opaque = [&] {
    if (pass->read_back) return;  // the first one names the read-back
    pass->read_back = true;
    pass->opaque_verb = verb == "XGROUP" && argv.size() > 1 ? verb + " " + VerbOf(argv[1]) : verb;  // XGROUP SETID
    pass->opaque = RenderOpaque(argv);
  };
  const CommandInfo& command = CommandOf(argv);
  if (who.member) SavesWork(command, argv, r);
  if (command.runs_code && command.writes) {  // EVAL, EVALSHA, FCALL: whatever their code did
    opaque();
    return;
  }
  if (argv.size() < 2) return;
  const std::string& st = names.stream;
  const std::string& key = argv[1];
  const std::string name(who.name);
  if (command.timer == TimerKind::kKeyExpiry && who.member) KeyExpiry(t, name, argv, r);
  if (verb == "XREADGROUP") {
    // XREADGROUP GROUP g consumer [COUNT n] [NOACK] STREAMS k1 .. kn id1 .. idn:
    // each stream of the reply is matched to its key; only ours is modelled
    // (what another group hands an actor is remembered: OtherGroupOf).
    size_t streams = ArgIndex(argv, "STREAMS");
    size_t keys = streams == 0 ? 0 : (argv.size() - streams - 1) / 2;
    if (argv.size() < 4 || keys == 0 || argv.size() != streams + 1 + 2 * keys) return;
    for (size_t k = 0; k < keys; ++k) {
      if (argv[streams + 1 + k] != st) group_read_streams_.insert(argv[streams + 1 + k]);
    }
    if (!r.is_array()) return;  // nil: nothing read; an error: nothing happened
    for (const Reply& one : r.elements()) {
      if (!one.is_array() || one.size() != 2 || !one[0].is_string() || one[0].str() != st) continue;
      for (size_t k = 0; k < keys; ++k) {
        if (argv[streams + 1 + k] != st) continue;
        if (auto entries = ParseRangeReply(one[1])) {
          ReceivedThrough(who.name, argv[2], *entries);
          if (argv[2] != names.group) break;
          const size_t noack = ArgIndex(argv, "NOACK");  // an option, before STREAMS
          DeliveryVia via = argv[streams + 1 + keys + k] != ">" ? DeliveryVia::kOwnPending
                            : noack != 0 && noack < streams    ? DeliveryVia::kNoAck
                                                               : DeliveryVia::kNew;
          oracle_->Delivered(t, argv[3], *entries, via, LaneReader(who));
        }
        break;
      }
    }
  } else if (verb == "XREAD" && who.member) {
    // XREAD [COUNT n] [BLOCK ms] STREAMS k1 .. kn id1 .. idn: a reader that
    // keeps its own position (no group, no PEL); only our stream is modelled.
    size_t streams = ArgIndex(argv, "STREAMS");
    size_t keys = streams == 0 ? 0 : (argv.size() - streams - 1) / 2;
    if (keys == 0 || argv.size() != streams + 1 + 2 * keys || !r.is_array()) return;
    for (const Reply& one : r.elements()) {
      if (!one.is_array() || one.size() != 2 || !one[0].is_string() || one[0].str() != st) continue;
      if (auto entries = ParseRangeReply(one[1])) {
        ReceivedThrough(who.name, names.group, *entries);  // an effect of it is the run's to judge
        oracle_->ReadByPosition(t, name, *entries);
      }
    }
  } else if ((verb == "XCLAIM" || verb == "XAUTOCLAIM") && key == st && argv.size() > 3 &&
             argv[2] != names.group) {
    // Another group's claim hands its entries to this actor.
    if (verb == "XCLAIM" && ArgIndex(argv, "JUSTID") == 0) {
      if (auto entries = ParseRangeReply(r)) ReceivedThrough(who.name, argv[2], *entries);
    } else if (verb == "XAUTOCLAIM" && ArgIndex(argv, "JUSTID") == 0) {
      if (auto c = ParseAutoClaimReply(r)) ReceivedThrough(who.name, argv[2], c->entries);
    }
  } else if ((verb == "XCLAIM" || verb == "XAUTOCLAIM") && key == st && argv.size() > 3 &&
             argv[2] == names.group) {
    const std::string& consumer = argv[3];
    bool justid = ArgIndex(argv, "JUSTID") != 0;
    if (verb == "XCLAIM") {
      if (r.is_error() || !r.is_array()) return;
      std::vector<std::string> got;
      if (justid) {
        got = Strings(r);
        oracle_->OwnershipMoved(t, consumer, got, verb);
      } else if (auto entries = ParseRangeReply(r)) {
        for (const StreamEntry& e : *entries) got.push_back(e.id);
        ReceivedThrough(who.name, names.group, *entries);
        oracle_->Delivered(t, consumer, *entries, DeliveryVia::kClaim, LaneReader(who));
      }
      // Named IDs whose payload is gone leave the PEL (Redis 7.0).
      std::vector<std::string> dropped;
      for (const std::string& id : XclaimIds(argv)) {
        if (std::find(got.begin(), got.end(), id) == got.end() && !oracle_->IsLive(id)) dropped.push_back(id);
      }
      if (!dropped.empty()) oracle_->ClaimFoundDeleted(t, consumer, dropped, verb);
    } else if (justid) {
      if (r.is_array() && r.size() >= 2) {
        oracle_->OwnershipMoved(t, consumer, Strings(r[1]), verb);
        if (r.size() >= 3) oracle_->ClaimFoundDeleted(t, consumer, Strings(r[2]));
      }
    } else if (auto c = ParseAutoClaimReply(r)) {
      ReceivedThrough(who.name, names.group, c->entries);
      oracle_->Delivered(t, consumer, c->entries, DeliveryVia::kClaim, LaneReader(who));
      oracle_->ClaimFoundDeleted(t, consumer, c->deleted_ids);
    }
  } else if (verb == "XACK" && key == st && argv.size() > 3 && argv[2] == names.group) {
    if (r.is_integer()) oracle_->Acked(t, name, std::vector<std::string>(argv.begin() + 3, argv.end()));
  } else if (verb == "XADD") {
    Xadd(t, who, argv, r, reply_lost, hint, pass);
  } else if (verb == "XDEL" && key == st) {
    if (r.is_integer() && r.integer() > 0) {
      std::vector<std::string> gone;
      for (size_t i = 2; i < argv.size(); ++i) {
        if (oracle_->IsLive(argv[i])) gone.push_back(argv[i]);
      }
      oracle_->PayloadsDeleted(t, name, gone, "XDEL", RenderArgv(argv));
    }
  } else if (verb == "XTRIM" && key == st) {
    // MAXLEN and MINID both remove the oldest entries: the reply says how many.
    if (r.is_integer() && r.integer() > 0) {
      oracle_->PayloadsDeleted(t, name, oracle_->OldestLive(static_cast<size_t>(r.integer())), "XTRIM",
                               RenderArgv(argv));
    }
  } else if (verb == "XGROUP" && argv.size() > 3 && argv[2] == st) {
    const std::string sub = VerbOf(argv[1]);
    if (sub == "DELCONSUMER") {
      if (argv.size() > 4 && argv[3] == names.group && r.is_integer()) oracle_->ConsumerDeleted(t, name, argv[4]);
    } else if (sub != "CREATE" && sub != "CREATECONSUMER" && !r.is_error()) {
      opaque();  // SETID, DESTROY: the group's position or PEL changed
    }
  } else if (command.writes && !r.is_error() &&
             std::find(argv.begin() + 1, argv.end(), st) != argv.end()) {
    opaque();  // DEL, RENAME, XSETID, RESTORE...: whatever it did to the stream
  }
}

void OracleFeed::ReceivedThrough(std::string_view actor, const std::string& group,
                                 const std::vector<StreamEntry>& entries) {
  const bool other = group != env_->names->group;
  auto it = other_group_events_.find(actor);
  if (it == other_group_events_.end()) {
    if (!other) return;
    it = other_group_events_.emplace(std::string(actor), std::map<std::string, std::string>{}).first;
  }
  for (const StreamEntry& e : entries) {
    if (e.event_id().empty()) continue;
    if (other) {
      it->second[std::string(e.event_id())] = group;
    } else {
      it->second.erase(std::string(e.event_id()));
    }
  }
}

std::optional<std::string> OracleFeed::OtherGroupOf(std::string_view actor, const std::string& event_id) const {
  auto it = other_group_events_.find(actor);
  if (it == other_group_events_.end()) return std::nullopt;
  auto group = it->second.find(event_id);
  if (group == it->second.end()) return std::nullopt;
  return group->second;
}

void OracleFeed::Xadd(int64_t t, const Who& who, const std::vector<std::string>& argv, const Reply& r,
                      bool reply_lost, const Step* hint, Pass* pass) {
  const WorldNames& names = *env_->names;
  const std::string& key = argv[1];
  if (!r.is_string()) return;
  bool trims = false;
  size_t id_at = XaddIdIndex(argv, &trims);
  if (id_at == 0) return;
  // A catalog step knows its event and entry; a script's XADD carries them
  // as fields (event_id, and source_id for a dead letter).
  bool hinted = hint != nullptr && !hint->event_id.empty();
  std::string event_id = hinted ? hint->event_id : FieldOf(argv, id_at + 1, "event_id");
  const std::string name(who.name);
  const bool own_dead_letters = key != names.stream && key != names.dead_letters && !event_id.empty() &&
                                DescribeActor(who.slot).role != ActorRole::kProducer;
  if (own_dead_letters && who.member) parking_streams_.insert(key);
  if (key == names.dead_letters || own_dead_letters) {
    if (!who.member) return;  // another group's dead letter
    std::string source = hinted ? hint->stream_id : FieldOf(argv, id_at + 1, "source_id");
    if (!event_id.empty()) oracle_->DeadLettered(t, name, event_id, source);
    return;
  }
  if (key != names.stream) return;
  SawAdded(r.str());
  if (!event_id.empty()) {
    oracle_->Produced(t, name, event_id, r.str(),
                      reply_lost ? Oracle::ProduceOutcome::kUnknown : Oracle::ProduceOutcome::kAcknowledged);
    ++pass->observed.produced;
  }
  if (!trims || !read_error_.ok()) return;
  // What the XADD trimmed (the oldest entries), from the stream's length now.
  Result<std::vector<Reply>> len = read_back_({{"XLEN", names.stream}});
  if (!len.ok()) {
    read_error_ = len.status();
    return;
  }
  const Reply& n = (*len)[0];
  if (n.is_integer() && static_cast<int64_t>(oracle_->live_count()) > n.integer()) {
    size_t gone = oracle_->live_count() - static_cast<size_t>(n.integer());
    oracle_->PayloadsDeleted(t, name, oracle_->OldestLive(gone), "XTRIM", RenderArgv(argv));
  }
}

Status OracleFeed::ReadBackModel(int64_t t, const std::string& actor, const Pass& pass) {
  const WorldNames& names = *env_->names;
  const std::string& st = names.stream;
  std::optional<StreamId> newest = oracle_->NewestLive();
  std::string from = newest ? "(" + newest->ToString() : std::string("-");
  Result<std::vector<Reply>> r = read_back_({{"XPENDING", st, names.group, "-", "+", "100000"},
                                             {"XINFO", "GROUPS", st},
                                             {"XLEN", st},
                                             {"XRANGE", st, from, "+"}});
  if (!r.ok()) return r.status();
  Oracle::ReadBackState state;
  if (auto rows = ParsePendingRows((*r)[0])) state.pending = std::move(*rows);
  state.last_delivered = GroupLastDeliveredId((*r)[1], names.group);
  if (auto e = ParseRangeReply((*r)[3])) state.new_entries = std::move(*e);
  for (const StreamEntry& e : state.new_entries) SawAdded(e.id);
  int64_t len = (*r)[2].is_integer() ? (*r)[2].integer() : 0;
  if (len != static_cast<int64_t>(oracle_->live_count() + state.new_entries.size())) {
    // Entries the model holds are gone: read every live ID.
    Result<std::vector<Reply>> all = read_back_({{"XRANGE", st, "-", "+"}});
    if (!all.ok()) return all.status();
    std::vector<std::string> ids;
    if (auto e = ParseRangeReply((*all)[0])) {
      for (const StreamEntry& entry : *e) ids.push_back(entry.id);
    }
    state.live_ids = std::move(ids);
  }
  oracle_->ReadBack(t, actor, pass.opaque_verb, pass.opaque, state);
  return Status::Ok();
}

void OracleFeed::KeyExpiry(int64_t t, const std::string& actor, const std::vector<std::string>& argv,
                           const Reply& r) {
  // Not applied: an error, SET NX on a key that exists (nil), EXPIRE of a
  // missing key (0).
  if (r.is_error() || r.is_nil() || (r.is_integer() && r.integer() == 0)) return;
  const int64_t ttl_ms = KeyExpiryMs(argv);
  const CommandInfo& command = CommandOf(argv);
  if (ttl_ms <= 0 || command.first_key == 0 || command.first_key >= argv.size()) return;
  const std::string& key = argv[command.first_key];
  for (const std::string& event_id : oracle_->EventsNamedIn(key)) oracle_->DedupeRecord(t, actor, event_id, ttl_ms, key);
}

void OracleFeed::SavesWork(const CommandInfo& command, const std::vector<std::string>& argv, const Reply& r) {
  if (!command.writes || r.is_error() || command.group == CommandGroup::kTransactions) return;
  // A marker (SET, SETNX...) records that an event is done or taken, not
  // work to do; the run's stream is the oracle's own business.
  if (command.group == CommandGroup::kString && !command.runs_code) return;
  if (command.first_key > 0 && command.first_key < argv.size() && argv[command.first_key] == env_->names->stream) return;
  for (size_t i = 1; i < argv.size(); ++i) oracle_->WorkSavedIn(argv[i]);
}

void OracleFeed::SawAdded(std::string_view id) {
  if (std::optional<StreamId> sid = StreamId::Parse(id)) stream_top_ = std::max(stream_top_, *sid);
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
