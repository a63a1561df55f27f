#include "harness/replicated_server.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/commands.h"
#include "sim/step.h"
#include "sim/stream.h"
#include "sim/text.h"

namespace xackly {
namespace {

// WAIT numreplicas timeout, well formed (ParseWait): answered by the harness.
bool IsWait(std::span<const std::string_view> argv) { return ParseWait(argv).has_value(); }

// A protocol's connection to the primary whose WAITs the harness answers:
// it applies every write so far to the replica and replies how many
// replicas have them (all of them). A link that fails is an error reply
// naming it, and the server keeps it (TakeWaitFailure: the case then fails
// as the harness's failure, never a verdict). A WAIT inside the
// connection's MULTI goes to the server: it is queued, and EXEC answers it
// at once with the replicas that acknowledged (the link acknowledges
// nothing: 0), as a transaction never blocks.
class WaitAnsweringConnection final : public ConnectionWrapper {
 public:
  WaitAnsweringConnection(std::unique_ptr<Connection> conn, ReplicatedServer* server)
      : ConnectionWrapper(std::move(conn)), server_(server) {}
  Result<Reply> Call(std::span<const std::string_view> argv) override {
    if (in_multi_ || !IsWait(argv)) {
      Result<Reply> r = ConnectionWrapper::Call(argv);
      TrackMulti(argv, r);
      return r;
    }
    if (!alive()) return Status::Closed("connection closed");
    Status s = server_->AnswerWait();
    if (!s.ok()) return Reply::Error("ERR xackly: the replication link failed: " + s.ToString());
    return Reply::Integer(server_->replicas());
  }
  using Connection::Call;
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    for (const std::vector<std::string_view>& argv : commands) {
      if (IsWait(argv)) return Connection::CallAll(commands);  // one by one, as Call
    }
    Result<std::vector<Reply>> replies = ConnectionWrapper::CallAll(commands);
    for (size_t k = 0; k < commands.size(); ++k) {
      TrackMulti(commands[k], replies.ok() && k < replies->size() ? Result<Reply>((*replies)[k])
                                                                  : Result<Reply>(replies.status()));
    }
    return replies;
  }

 private:
  // A MULTI the server accepted opens a transaction (a refused one leaves
  // things as they were: a nested MULTI's stays open, and a WAIT after a
  // MULTI refused outright is the harness's again, never sent to block);
  // EXEC and DISCARD close it, whatever they answer.
  void TrackMulti(std::span<const std::string_view> argv, const Result<Reply>& reply) {
    // Every request of a replicated run passes here: only a word of MULTI's,
    // EXEC's or DISCARD's length is upper-cased (a copy) and compared.
    if (argv.empty() || argv[0].size() < 4 || argv[0].size() > 7) return;
    const std::string verb = Upper(argv[0]);
    if (verb == "MULTI" && reply.ok() && !reply->is_error()) in_multi_ = true;
    if (verb == "EXEC" || verb == "DISCARD") in_multi_ = false;
  }

  ReplicatedServer* server_;
  bool in_multi_ = false;
};

}  // namespace

Result<std::unique_ptr<ReplicatedServer>> ReplicatedServer::Start(const RedisServerOptions& options) {
  RedisServerOptions o = options;
  for (std::string& line : ReplicationConfigLines()) o.extra_config.push_back(std::move(line));
  Result<std::unique_ptr<RedisServer>> primary = RedisServer::Start(o);
  if (!primary.ok()) return primary.status();
  Result<std::unique_ptr<RedisServer>> replica = RedisServer::Start(o);
  if (!replica.ok()) return replica.status();
  std::unique_ptr<ReplicatedServer> server(
      new ReplicatedServer(std::move(primary).value(), std::move(replica).value()));
  server->replica_->SetClockMs(server->primary_->ClockMs());
  if (Status s = server->Resync(); !s.ok()) return s;
  return server;
}

Result<std::unique_ptr<Connection>> ReplicatedServer::Connect() {
  Result<std::unique_ptr<Connection>> conn = primary_->Connect();
  if (!conn.ok()) return conn.status();
  return std::unique_ptr<Connection>(new WaitAnsweringConnection(std::move(conn).value(), this));
}

Result<std::unique_ptr<Connection>> ReplicatedServer::ConnectHarness() { return primary_->ConnectHarness(); }

void ReplicatedServer::SetClockMs(int64_t epoch_ms) {
  primary_->SetClockMs(epoch_ms);
  replica_->SetClockMs(epoch_ms);
}

Status ReplicatedServer::ReadLink() {
  if (link_ == nullptr) return Status::FailedPrecondition("the replication link is not open");
  Result<std::unique_ptr<Connection>> conn = primary_->ConnectHarness();
  if (!conn.ok()) return conn.status();
  Result<Reply> info = (*conn)->Call({"INFO", "replication"});
  if (!info.ok()) return info.status();
  int64_t offset = -1;
  if (!info->is_string() || !ParseDecimal(InfoField(info->str(), "master_repl_offset"), &offset) || offset < 0) {
    return Status::Internal("INFO replication has no master_repl_offset: " + info->Render());
  }
  return link_->ReadUntil(offset);
}

Status ReplicatedServer::Apply(size_t n) {
  std::vector<std::vector<std::string_view>> commands;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& argv : link_->writes()[i].commands) commands.emplace_back(argv.begin(), argv.end());
  }
  if (!commands.empty()) {
    Result<std::unique_ptr<Connection>> conn = replica_->ConnectHarness();
    if (!conn.ok()) return conn.status();
    Result<std::vector<Reply>> replies = (*conn)->CallAll(commands);
    if (!replies.ok()) return replies.status();
    for (size_t i = 0; i < commands.size(); ++i) {
      if ((*replies)[i].is_error()) {
        return Status::Internal(fmt::format("the replica refused a replicated write: {} replied {}",
                                            fmt::join(commands[i], " "), (*replies)[i].Render()));
      }
    }
  }
  link_->writes().erase(link_->writes().begin(), link_->writes().begin() + static_cast<ptrdiff_t>(n));
  confirmed_by_others_ -= std::min(confirmed_by_others_, n);
  return Status::Ok();
}

Status ReplicatedServer::ConfirmByOtherReplicas() {
  if (replicas_ < 2) return Status::Ok();
  if (Status s = ReadLink(); !s.ok()) return s;
  confirmed_by_others_ = link_->writes().size();
  return Status::Ok();
}

Status ReplicatedServer::CatchUp() {
  if (Status s = ReadLink(); !s.ok()) return s;
  return Apply(link_->writes().size());
}

Status ReplicatedServer::AnswerWait() {
  Status s = CatchUp();
  if (!s.ok() && wait_failure_.ok()) wait_failure_ = s;
  return s;
}

namespace {

// Every key of `c`'s database, in SCAN order.
Result<std::vector<std::string>> KeysOf(Connection& c) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    Result<Reply> scan = c.Call({"SCAN", cursor, "COUNT", "1000"});
    if (!scan.ok()) return scan.status();
    if (!scan->is_array() || scan->size() != 2 || !(*scan)[1].is_array()) {
      return Status::Internal("SCAN replied " + scan->Render());
    }
    cursor = (*scan)[0].str();
    for (const Reply& key : (*scan)[1].elements()) keys.push_back(key.str());
  } while (cursor != "0");
  return keys;
}

// Sorted renderings of `reply`'s elements taken `width` at a time (a hash's
// field-value pairs, a set's members): the order a server keeps them in is
// not part of what it holds.
std::string SortedGroups(const Reply& reply, size_t width) {
  if (!reply.is_array()) return reply.Render();
  std::vector<std::string> groups;
  for (size_t i = 0; i + width <= reply.size(); i += width) {
    std::string g;
    for (size_t j = 0; j < width; ++j) g += (j ? " " : "") + reply[i + j].Render();
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end());
  std::string out;
  for (const std::string& g : groups) out += (out.empty() ? "" : ", ") + g;
  return "{" + out + "}";
}

// The read that shows a key's value, and how its reply is rendered (0: as
// it is; n: sorted n elements at a time). A stream is read as its entries
// (its groups come in a further round, HoldingOf).
std::pair<std::vector<std::string_view>, size_t> ValueRead(const std::string& type, const std::string& key) {
  if (type == "string") return {{"GET", key}, 0};
  if (type == "list") return {{"LRANGE", key, "0", "-1"}, 0};
  if (type == "hash") return {{"HGETALL", key}, 2};
  if (type == "set") return {{"SMEMBERS", key}, 1};
  if (type == "zset") return {{"ZRANGE", key, "0", "-1", "WITHSCORES"}, 0};
  if (type == "stream") return {{"XRANGE", key, "-", "+"}, 0};
  return {{"TYPE", key}, 0};  // a type without a reading here: its type is what is compared
}

// What one server holds, key -> a canonical rendering (see Divergence), in
// four round trips whatever the number of keys: the keys; their types and
// TTLs; their values (and each stream's groups); each group's PEL.
Result<std::map<std::string, std::string>> HoldingOf(RedisServer& server) {
  Result<std::unique_ptr<Connection>> conn = server.ConnectHarness();
  if (!conn.ok()) return conn.status();
  Connection& c = **conn;
  Result<std::vector<std::string>> keys = KeysOf(c);
  if (!keys.ok()) return keys.status();
  std::vector<std::vector<std::string_view>> heads;
  for (const std::string& key : *keys) {
    heads.push_back({"TYPE", key});
    heads.push_back({"PTTL", key});
  }
  Result<std::vector<Reply>> head = c.CallAll(heads);
  if (!head.ok()) return head.status();

  std::vector<std::string> types;
  std::vector<size_t> widths;
  std::vector<std::vector<std::string_view>> values;  // per key: its value; a stream also XINFO GROUPS
  for (size_t k = 0; k < keys->size(); ++k) {
    const Reply& t = (*head)[2 * k];
    types.push_back(t.is_status() || t.is_string() ? t.str() : "?");
    auto [read, width] = ValueRead(types.back(), (*keys)[k]);
    values.push_back(std::move(read));
    widths.push_back(width);
    if (types.back() == "stream") values.push_back({"XINFO", "GROUPS", (*keys)[k]});
  }
  Result<std::vector<Reply>> value = c.CallAll(values);
  if (!value.ok()) return value.status();

  std::map<std::string, std::string> out;
  std::vector<std::pair<std::string, std::string>> groups;  // (stream key, group name)
  std::vector<std::vector<std::string_view>> pels;
  size_t v = 0;
  for (size_t k = 0; k < keys->size(); ++k) {
    const std::string& key = (*keys)[k];
    const Reply& ttl = (*head)[2 * k + 1];
    std::string& rendered = out[key];
    rendered = types[k] + (ttl.is_integer() && ttl.integer() >= 0 ? " (with a TTL) " : " ");
    const Reply& r = (*value)[v++];
    rendered += widths[k] ? SortedGroups(r, widths[k]) : r.Render();
    if (types[k] == "none") out.erase(key);  // gone since the SCAN: not held
    if (types[k] != "stream") continue;
    const Reply& info = (*value)[v++];
    for (size_t g = 0; info.is_array() && g < info.size(); ++g) {
      std::string name, last_delivered;
      for (size_t i = 0; info[g].is_array() && i + 1 < info[g].size(); i += 2) {
        const Reply& field = info[g][i];
        if (!field.is_string() && !field.is_status()) continue;
        if (field.str() == "name" && info[g][i + 1].is_string()) name = info[g][i + 1].str();
        if (field.str() == "last-delivered-id") last_delivered = info[g][i + 1].Render();
      }
      groups.emplace_back(key, name);
      rendered += fmt::format("; group \"{}\" last-delivered {}", name, last_delivered);
    }
  }
  for (const auto& [key, name] : groups) pels.push_back({"XPENDING", key, name, "-", "+", "1000000"});
  Result<std::vector<Reply>> pending = c.CallAll(pels);
  if (!pending.ok()) return pending.status();
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string pel;
    const Reply& rows = (*pending)[g];
    for (size_t i = 0; rows.is_array() && i < rows.size(); ++i) {
      const Reply& row = rows[i];  // id, consumer, idle (left out), deliveries
      if (row.is_array() && row.size() == 4) {
        pel += (pel.empty() ? "" : ", ") + row[0].Render() + " " + row[1].Render() + " x" + row[3].Render();
      }
    }
    out[groups[g].first] += fmt::format("; group \"{}\" pending [{}]", groups[g].second, pel);
  }
  return out;
}

std::string Clip(const std::string& s) { return ClipText(s, 200); }

}  // namespace

Result<std::string> ReplicatedServer::Divergence() {
  // The primary first: a read of a key that expired deletes it there and
  // propagates the DEL, which the catch-up then applies.
  Result<std::map<std::string, std::string>> primary = HoldingOf(*primary_);
  if (!primary.ok()) return primary.status();
  if (Status s = CatchUp(); !s.ok()) return s;
  Result<std::map<std::string, std::string>> replica = HoldingOf(*replica_);
  if (!replica.ok()) return replica.status();
  std::set<std::string> keys;
  for (const auto& [k, v] : *primary) keys.insert(k);
  for (const auto& [k, v] : *replica) keys.insert(k);
  const std::string none = "no such key";
  std::string out;
  int count = 0;
  for (const std::string& k : keys) {
    auto p = primary->find(k);
    auto r = replica->find(k);
    const std::string& on_primary = p == primary->end() ? none : p->second;
    const std::string& on_replica = r == replica->end() ? none : r->second;
    if (on_primary == on_replica) continue;  // compared whole; clipped only to be shown
    if (++count <= 3) {
      out += fmt::format("{}key \"{}\": the primary holds {}; the replica holds {}", out.empty() ? "" : "\n", k,
                         Clip(on_primary), Clip(on_replica));
    }
  }
  if (count > 3) out += fmt::format("\n(and {} more keys differ)", count - 3);
  return out;
}

Status ReplicatedServer::TakeWaitFailure() {
  Status s = wait_failure_;
  wait_failure_ = Status::Ok();
  return s;
}

Status ReplicatedServer::Reset(int64_t start_epoch_ms) {
  if (Status s = primary_->Reset(start_epoch_ms); !s.ok()) return s;
  if (Status s = replica_->Reset(start_epoch_ms); !s.ok()) return s;
  // The primary's FLUSHALL (and whatever the last case left unapplied)
  // reached the link: both servers are empty now, so none of it applies.
  if (Status s = ReadLink(); !s.ok()) return s;
  link_->writes().clear();
  confirmed_by_others_ = 0;
  return Status::Ok();
}

Status ReplicatedServer::Resync() {
  link_.reset();
  confirmed_by_others_ = 0;
  if (Status s = replica_->Reset(primary_->ClockMs()); !s.ok()) return s;
  Result<std::unique_ptr<Connection>> from = primary_->ConnectHarness();
  if (!from.ok()) return from.status();
  Result<std::unique_ptr<Connection>> to = replica_->ConnectHarness();
  if (!to.ok()) return to.status();
  Result<std::vector<std::string>> keys = KeysOf(**from);
  if (!keys.ok()) return keys.status();
  std::vector<std::vector<std::string_view>> reads;
  for (const std::string& key : *keys) {
    reads.push_back({"DUMP", key});
    reads.push_back({"PTTL", key});
  }
  Result<std::vector<Reply>> dumped = (*from)->CallAll(reads);
  if (!dumped.ok()) return dumped.status();
  std::vector<std::string> ttls;
  std::vector<std::vector<std::string_view>> writes;
  ttls.reserve(reads.size() / 2);
  for (size_t i = 0; i < reads.size(); i += 2) {
    const Reply& payload = (*dumped)[i];
    if (!payload.is_string()) continue;  // expired between SCAN and DUMP
    const int64_t ttl = (*dumped)[i + 1].is_integer() ? std::max<int64_t>((*dumped)[i + 1].integer(), 0) : 0;
    ttls.push_back(std::to_string(ttl));
    writes.push_back({"RESTORE", reads[i][1], ttls.back(), payload.str(), "REPLACE"});
  }
  Result<std::vector<Reply>> restored = (*to)->CallAll(writes);
  if (!restored.ok()) return restored.status();
  for (size_t i = 0; i < writes.size(); ++i) {
    if ((*restored)[i].is_error()) return Status::Internal("RESTORE on the replica replied " + (*restored)[i].Render());
  }
  Result<std::unique_ptr<ReplicationLink>> link = primary_->OpenReplicationLink();
  if (!link.ok()) return link.status();
  link_ = std::move(link).value();
  return Status::Ok();
}

Status ReplicatedServer::CrashAndRestart() {
  link_.reset();
  if (Status s = primary_->CrashAndRestart(); !s.ok()) return s;
  return Resync();
}

Result<FailoverOutcome> ReplicatedServer::Failover(int lag, bool to_lagging) {
  if (Status s = ReadLink(); !s.ok()) return s;
  FailoverOutcome out;
  // The last `lag` writes stay behind, counted from the end, never one the
  // other replicas confirmed (the least-lagged has those); the lagging
  // replica has none of them. A lone DEL is always replicated and never
  // counted: it is how the primary propagates a key it expired, at a moment
  // its expire cycle (real time) chooses, so counting it would let the
  // kernel decide what a failover drops.
  std::deque<ReplicatedWrite>& writes = link_->writes();
  std::vector<bool> dropped(writes.size(), false);
  const size_t kept_below = to_lagging ? 0 : confirmed_by_others_;
  size_t left = to_lagging ? writes.size() : static_cast<size_t>(std::max(lag, 0));
  for (size_t i = writes.size(); i-- > kept_below && left > 0;) {
    const ReplicatedWrite& w = writes[i];
    if (w.commands.size() == 1 && VerbOf(w.commands[0][0]) == "DEL") continue;
    dropped[i] = true;
    --left;
  }
  std::deque<ReplicatedWrite> kept;
  for (size_t i = 0; i < writes.size(); ++i) {
    if (dropped[i]) {
      out.dropped.push_back(std::move(writes[i]));
    } else {
      kept.push_back(std::move(writes[i]));
    }
  }
  writes = std::move(kept);
  if (Status s = Apply(writes.size()); !s.ok()) return s;
  link_.reset();
  // The old primary is demoted: every connection to it dies, its data is
  // replaced by the new primary's, and it follows the new primary.
  const int64_t now = primary_->ClockMs();
  primary_->Crash();
  if (Status s = primary_->Restart(); !s.ok()) return s;
  primary_->SetClockMs(now);
  std::swap(primary_, replica_);
  if (Status s = Resync(); !s.ok()) return s;
  return out;
}

Status ReplicatedServer::CheckRunning() {
  if (Status s = primary_->CheckRunning(); !s.ok()) return s;
  return replica_->CheckRunning();
}

}  // namespace xackly
