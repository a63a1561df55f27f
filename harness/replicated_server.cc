#include "harness/replicated_server.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/step.h"
#include "sim/stream.h"

namespace xackly {
namespace {

// A count or timeout WAIT takes: a decimal integer >= 0.
bool IsWaitArgument(std::string_view s) {
  int64_t v = 0;
  return ParseDecimal(s, &v) && v >= 0;
}

// WAIT numreplicas timeout, well formed: answered by the harness.
bool IsWait(std::span<const std::string_view> argv) {
  return argv.size() == 3 && argv[0].size() == 4 && VerbOf(argv[0]) == "WAIT" && IsWaitArgument(argv[1]) &&
         IsWaitArgument(argv[2]);
}

// A protocol's connection to the primary whose WAITs the harness answers:
// it applies every write so far to the replica and replies how many
// replicas have them (all of them). A link that fails is an error reply
// naming it, and the server keeps it (TakeWaitFailure: the case then fails
// as the harness's failure, never a verdict).
class WaitAnsweringConnection final : public ConnectionWrapper {
 public:
  WaitAnsweringConnection(std::unique_ptr<Connection> conn, ReplicatedServer* server)
      : ConnectionWrapper(std::move(conn)), server_(server) {}
  Result<Reply> Call(std::span<const std::string_view> argv) override {
    if (!IsWait(argv)) return ConnectionWrapper::Call(argv);
    if (!alive()) return Status::Closed("connection closed");
    Status s = server_->CatchUp();
    if (!s.ok()) return Reply::Error("ERR xackly: the replication link failed: " + s.ToString());
    return Reply::Integer(server_->replicas());
  }
  using Connection::Call;
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    for (const std::vector<std::string_view>& argv : commands) {
      if (IsWait(argv)) return Connection::CallAll(commands);  // one by one, as Call
    }
    return ConnectionWrapper::CallAll(commands);
  }

 private:
  ReplicatedServer* server_;
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
  return Status::Ok();
}

Status ReplicatedServer::CatchUp() {
  Status s = ReadLink();
  if (s.ok()) s = Apply(link_->writes().size());
  if (!s.ok() && wait_failure_.ok()) wait_failure_ = s;
  return s;
}

namespace {

// What one server holds, key -> a canonical rendering (see Divergence).
using Holding = std::map<std::string, std::string>;

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

Result<std::string> RenderStream(Connection& c, const std::string& key) {
  const std::vector<std::vector<std::string_view>> commands = {{"XRANGE", key, "-", "+"}, {"XINFO", "GROUPS", key}};
  Result<std::vector<Reply>> reads = c.CallAll(commands);
  if (!reads.ok()) return reads.status();
  std::string out = "entries " + (*reads)[0].Render();
  const Reply& groups = (*reads)[1];
  if (!groups.is_array()) return out + "; groups " + groups.Render();
  for (const Reply& g : groups.elements()) {
    std::string name, last_delivered;
    for (size_t i = 0; g.is_array() && i + 1 < g.size(); i += 2) {
      if (!g[i].is_string() && !g[i].is_status()) continue;
      if (g[i].str() == "name") name = g[i + 1].is_string() ? g[i + 1].str() : g[i + 1].Render();
      if (g[i].str() == "last-delivered-id") last_delivered = g[i + 1].Render();
    }
    Result<Reply> pending = c.Call({"XPENDING", key, name, "-", "+", "1000000"});
    if (!pending.ok()) return pending.status();
    std::string pel;
    for (size_t i = 0; pending->is_array() && i < pending->size(); ++i) {
      const Reply& row = (*pending)[i];  // id, consumer, idle (left out), deliveries
      if (row.is_array() && row.size() == 4) {
        pel += (pel.empty() ? "" : ", ") + row[0].Render() + " " + row[1].Render() + " x" + row[3].Render();
      }
    }
    out += fmt::format("; group \"{}\" last-delivered {} pending [{}]", name, last_delivered, pel);
  }
  return out;
}

Result<std::string> RenderKey(Connection& c, const std::string& key) {
  const std::vector<std::vector<std::string_view>> commands = {{"TYPE", key}, {"PTTL", key}};
  Result<std::vector<Reply>> head = c.CallAll(commands);
  if (!head.ok()) return head.status();
  const std::string type = (*head)[0].is_status() || (*head)[0].is_string() ? (*head)[0].str() : "?";
  const bool ttl = (*head)[1].is_integer() && (*head)[1].integer() >= 0;
  Result<std::string> value = std::string();
  if (type == "stream") {
    value = RenderStream(c, key);
  } else {
    std::vector<std::string_view> read;
    size_t width = 0;  // 0: the reply as it is
    if (type == "string") read = {"GET", key};
    if (type == "list") read = {"LRANGE", key, "0", "-1"};
    if (type == "hash") read = {"HGETALL", key}, width = 2;
    if (type == "set") read = {"SMEMBERS", key}, width = 1;
    if (type == "zset") read = {"ZRANGE", key, "0", "-1", "WITHSCORES"};
    if (!read.empty()) {
      Result<Reply> r = c.Call(read);
      if (!r.ok()) return r.status();
      value = width ? SortedGroups(*r, width) : r->Render();
    }
  }
  if (!value.ok()) return value.status();
  return type + (ttl ? " (with a TTL) " : " ") + *value;
}

Result<Holding> HoldingOf(RedisServer& server) {
  Result<std::unique_ptr<Connection>> c = server.ConnectHarness();
  if (!c.ok()) return c.status();
  Holding out;
  std::string cursor = "0";
  do {
    Result<Reply> scan = (*c)->Call({"SCAN", cursor, "COUNT", "1000"});
    if (!scan.ok()) return scan.status();
    if (!scan->is_array() || scan->size() != 2) return Status::Internal("SCAN replied " + scan->Render());
    cursor = (*scan)[0].str();
    for (const Reply& key : (*scan)[1].elements()) out.emplace(key.str(), "");
  } while (cursor != "0");
  for (auto& [key, rendered] : out) {
    Result<std::string> r = RenderKey(**c, key);
    if (!r.ok()) return r.status();
    rendered = std::move(r).value();
  }
  return out;
}

std::string Clip(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 200) + "..."; }

}  // namespace

Result<std::string> ReplicatedServer::Divergence() {
  // The primary first: a read of a key that expired deletes it there and
  // propagates the DEL, which the catch-up then applies.
  Result<Holding> primary = HoldingOf(*primary_);
  if (!primary.ok()) return primary.status();
  if (Status s = CatchUp(); !s.ok()) return s;
  Result<Holding> replica = HoldingOf(*replica_);
  if (!replica.ok()) return replica.status();
  std::vector<std::string> differences;
  std::set<std::string> keys;
  for (const auto& [k, v] : *primary) keys.insert(k);
  for (const auto& [k, v] : *replica) keys.insert(k);
  int count = 0;
  for (const std::string& k : keys) {
    auto p = primary->find(k);
    auto r = replica->find(k);
    const std::string on_primary = p == primary->end() ? "no such key" : Clip(p->second);
    const std::string on_replica = r == replica->end() ? "no such key" : Clip(r->second);
    if (on_primary == on_replica) continue;
    if (++count <= 3) {
      differences.push_back(fmt::format("key \"{}\": the primary holds {}; the replica holds {}", k, on_primary,
                                        on_replica));
    }
  }
  std::string out;
  for (const std::string& d : differences) out += (out.empty() ? "" : "\n") + d;
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
  return Status::Ok();
}

Status ReplicatedServer::Resync() {
  link_.reset();
  if (Status s = replica_->Reset(primary_->ClockMs()); !s.ok()) return s;
  Result<std::unique_ptr<Connection>> from = primary_->ConnectHarness();
  if (!from.ok()) return from.status();
  Result<std::unique_ptr<Connection>> to = replica_->ConnectHarness();
  if (!to.ok()) return to.status();
  std::string cursor = "0";
  do {
    Result<Reply> scan = (*from)->Call({"SCAN", cursor, "COUNT", "1000"});
    if (!scan.ok()) return scan.status();
    if (!scan->is_array() || scan->elements().size() != 2) return Status::Internal("SCAN replied " + scan->Render());
    cursor = scan->elements()[0].str();
    std::vector<std::vector<std::string_view>> reads;
    for (const Reply& key : scan->elements()[1].elements()) {
      reads.push_back({"DUMP", key.str()});
      reads.push_back({"PTTL", key.str()});
    }
    if (reads.empty()) continue;
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
  } while (cursor != "0");
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

Result<FailoverOutcome> ReplicatedServer::Failover(int lag) {
  if (Status s = ReadLink(); !s.ok()) return s;
  FailoverOutcome out;
  // The last `lag` writes stay behind, counted from the end; a lone DEL is
  // always replicated and never counted: it is how the primary propagates
  // a key it expired, at a moment its expire cycle (real time) chooses, so
  // counting it would let the kernel decide what a failover drops.
  std::deque<ReplicatedWrite>& writes = link_->writes();
  std::vector<bool> dropped(writes.size(), false);
  int left = std::max(lag, 0);
  for (size_t i = writes.size(); i-- > 0 && left > 0;) {
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
