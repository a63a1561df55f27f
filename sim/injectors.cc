// The scheduled fault injectors (sim/injectors.h): one function per kind.
// What each injects and what a correct protocol must tolerate is written in
// the kind's descriptor (sim/faults.cc); a new scheduled kind is a
// descriptor row there and a function and a row in kInjectors here.
#include "sim/injectors.h"

#include <functional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/actor_name.h"
#include "sim/text.h"

namespace xackly {
namespace {

// The XDEL victim for a target (unread, pending, acked); "" when none.
Result<std::string> PickXdelTarget(FaultHost& host, const std::string& target) {
  const std::string& st = host.names().stream;
  if (target == "pending") {  // the oldest pending entry
    auto r = host.HarnessCall({"XPENDING", st, host.names().group, "-", "+", "1"}, kFaultActor);
    if (!r.ok()) return r.status();
    auto rows = ParsePendingRows(*r);
    return rows && !rows->empty() ? (*rows)[0].id : "";
  }
  auto last_result = host.ReadLastDelivered(kFaultActor);
  if (!last_result.ok()) return last_result.status();
  std::string last = last_result->value_or(StreamId{}).ToString();
  if (target == "unread") {  // the oldest entry after the group's position
    auto r = host.HarnessCall({"XRANGE", st, "(" + last, "+", "COUNT", "1"}, kFaultActor);
    if (!r.ok()) return r.status();
    auto e = ParseRangeReply(*r);
    return e && !e->empty() ? (*e)[0].id : "";
  }
  // acked: the oldest delivered entry that is no longer pending
  auto replies = host.HarnessCalls({{"XRANGE", st, "-", last, "COUNT", "100"},
                               {"XPENDING", st, host.names().group, "-", "+", "100"}},
                              kFaultActor);
  if (!replies.ok()) return replies.status();
  auto entries = ParseRangeReply((*replies)[0]);
  auto rows = ParsePendingRows((*replies)[1]);
  std::set<std::string> pending_ids;
  if (rows) {
    for (const auto& row : *rows) pending_ids.insert(row.id);
  }
  if (entries) {
    for (const auto& e : *entries) {
      if (pending_ids.count(e.id) == 0) return e.id;
    }
  }
  return std::string();
}


// xdel: deletes one unread, pending or acked entry's payload.
Status InjectXdel(FaultHost& host, const FaultSpec& f) {
  Result<std::string> target = PickXdelTarget(host, f.target);
  if (!target.ok()) return target.status();
  if (target->empty()) {
    host.Note("xdel " + f.target, "no such entry right now; nothing deleted");
    return Status::Ok();
  }
  auto r = host.HarnessCall({"XDEL", host.names().stream, *target}, kFaultActor);
  if (!r.ok()) return r.status();
  if (r->is_integer() && r->integer() > 0) {
    for (const JudgedGroup& g : host.judged_groups()) {
      g.oracle->PayloadsDeleted(host.now_ms(), kFaultActor, {*target}, "XDEL", "XDEL of a " + f.target + " entry");
    }
  }
  return Status::Ok();
}


// xtrim: MAXLEN n, or MINID at the group's last-delivered-id; the oracle
// is told what an exact trim removes, from its own model of the stream.
Status InjectXtrim(FaultHost& host, const FaultSpec& f) {
  std::vector<std::string> argv;
  std::vector<std::string> gone;  // what an exact trim removes, from the oracle's model
  if (f.target.rfind("maxlen:", 0) == 0) {
    size_t keep = static_cast<size_t>(std::stoll(f.target.substr(7)));
    size_t live = host.oracle().live_count();
    if (live > keep) gone = host.oracle().OldestLive(live - keep);
    argv = {"XTRIM", host.names().stream, "MAXLEN", f.target.substr(7)};
  } else {
    auto last = host.ReadLastDelivered(kFaultActor);
    if (!last.ok()) return last.status();
    if (!*last) {
      host.Note("xtrim", "no group to read last-delivered-id from; nothing trimmed");
      return Status::Ok();
    }
    gone = host.oracle().LiveBelow((*last)->Next());
    argv = {"XTRIM", host.names().stream, "MINID", (*last)->Next().ToString()};
  }
  auto r = host.HarnessCall(argv, kFaultActor);
  if (!r.ok()) return r.status();
  if (r->is_integer() && r->integer() != static_cast<int64_t>(gone.size())) {
    host.RunNote(fmt::format("xtrim removed {} entries; the oracle expected {}", r->integer(), gone.size()));
  }
  for (const JudgedGroup& g : host.judged_groups()) {
    g.oracle->PayloadsDeleted(host.now_ms(), kFaultActor, gone, "XTRIM", RenderArgv(argv));
  }
  return Status::Ok();
}


// What a server holds after it changed under the run (a restart, a
// failover), read back in one round trip so that each judged group's
// oracle model matches it: `tell` gets each group's oracle, the stream's
// entries, the group's PEL and its last-delivered ID ("" when it is gone).
using ServerStateSink = std::function<void(Oracle&, const std::vector<std::string>& stream_ids,
                                           const std::vector<PendingRow>& pending, const std::string& last)>;
Status ReadBackServer(FaultHost& host, const ServerStateSink& tell) {
  // Each judged group's PEL follows the run's own (a run with one group
  // reads exactly what it always did).
  const std::string& st = host.names().stream;
  const std::vector<JudgedGroup> groups = host.judged_groups();
  std::vector<std::vector<std::string>> reads = {{"XRANGE", st, "-", "+"},
                                                 {"XPENDING", st, host.names().group, "-", "+", "100000"},
                                                 {"XINFO", "GROUPS", st}};
  for (size_t k = 1; k < groups.size(); ++k) reads.push_back({"XPENDING", st, groups[k].name, "-", "+", "100000"});
  auto replies = host.HarnessCalls(reads, kOracleActor);
  if (!replies.ok()) return replies.status();
  const std::vector<Reply>& r = *replies;
  std::vector<std::string> surviving;
  if (auto e = ParseRangeReply(r[0])) {
    for (const auto& entry : *e) surviving.push_back(entry.id);
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    std::vector<PendingRow> rows;
    if (auto parsed = ParsePendingRows(r[k == 0 ? 1 : 2 + k])) rows = std::move(*parsed);
    std::optional<StreamId> last = GroupLastDeliveredId(r[2], groups[k].name);
    tell(*groups[k].oracle, surviving, rows, last ? last->ToString() : "");
  }
  return Status::Ok();
}

// restart: SIGKILL and restart, then read back what survived.
Status InjectRestart(FaultHost& host, const FaultSpec& /*spec*/) {
  Status s = host.RestartServer();
  if (!s.ok()) return s;
  const Persistence persistence = host.persistence();
  const int64_t t = host.now_ms();
  return ReadBackServer(host, [&](Oracle& oracle, const std::vector<std::string>& ids,
                                  const std::vector<PendingRow>& pending, const std::string& last) {
    oracle.ServerRestarted(t, persistence, ids, pending, last);
  });
}

// failover: a replica, missing the primary's last N writes (or the lagging
// one, missing every write no WAIT brought it), becomes the primary; then
// read back what it holds.
Status InjectFailover(FaultHost& host, const FaultSpec& f) {
  const bool to_lagging = f.target == kLaggingReplica;
  int64_t lag = 0;
  if (!to_lagging) ParseDecimal(std::string_view(f.target).substr(4), &lag);  // lag:N, validated with the spec
  Result<FailoverOutcome> out = host.FailoverServer(static_cast<int>(lag), to_lagging);
  if (!out.ok()) return out.status();
  std::vector<std::string> dropped;
  for (const ReplicatedWrite& w : out->dropped) dropped.push_back(w.Render());
  // (The least-lagged replica's notes read as they did before there were
  // several: a recorded trace keeps its hash.)
  const char* promoted = to_lagging ? "the lagging replica" : dropped.empty() ? "the replica" : "the promoted replica";
  host.Note("failover", dropped.empty() ? fmt::format("{} had every write; nothing dropped", promoted)
                                        : fmt::format("{} never received: {}", promoted, fmt::join(dropped, "; ")));
  const int64_t t = host.now_ms();
  return ReadBackServer(host, [&](Oracle& oracle, const std::vector<std::string>& ids,
                                  const std::vector<PendingRow>& pending, const std::string& last) {
    oracle.FailedOver(t, out->dropped, ids, pending, last, to_lagging);
  });
}


// delconsumer: XGROUP DELCONSUMER of the consumer holding most pending
// entries.
Status InjectDelConsumer(FaultHost& host, const FaultSpec& /*spec*/) {
  auto r = host.HarnessCall({"XPENDING", host.names().stream, host.names().group}, kFaultActor);
  if (!r.ok()) return r.status();
  auto summary = ParsePendingSummary(*r);
  std::string victim;  // the consumer holding most pending entries
  int64_t most = 0;
  if (summary) {
    for (const auto& [consumer, n] : summary->per_consumer) {
      if (n > most) {
        most = n;
        victim = consumer;
      }
    }
  }
  if (victim.empty()) {
    host.Note("delconsumer", "no consumer holds pending entries; nothing deleted");
    return Status::Ok();
  }
  auto d = host.HarnessCall({"XGROUP", "DELCONSUMER", host.names().stream, host.names().group, victim}, kFaultActor);
  if (!d.ok()) return d.status();
  host.oracle().ConsumerDeleted(host.now_ms(), kFaultActor, victim);
  return Status::Ok();
}

// save: an explicit SAVE (what an rdb restart restores to). A SAVE the
// server refuses (a full disk, an unwritable dir) is the harness's failure,
// never a loss the protocol is judged by: the run stops here (kInternal).
Status InjectSave(FaultHost& host, const FaultSpec& /*spec*/) {
  auto r = host.HarnessCall({"SAVE"}, kFaultActor);
  if (!r.ok()) return r.status();
  if (!r->is_status() || r->str() != "OK") {
    return Status::Internal(fmt::format(
        "the harness's SAVE failed ({}): the server could not write its snapshot (a full disk or "
        "an unwritable temp dir? set TMPDIR to a directory with free space); a restart after it "
        "would lose data the protocol is not to blame for, so no verdict was made",
        r->Render()));
  }
  return Status::Ok();
}

// clock-jump: virtual time leaps forward by the spec's size.
Status InjectClockJump(FaultHost& host, const FaultSpec& f) {
  host.AdvanceClockMs(f.duration_ms);
  for (const JudgedGroup& g : host.judged_groups()) {
    g.oracle->RunWideFault(HistoryKind::kClockJump, host.now_ms(),
                           fmt::format("virtual time jumped forward {} ms", f.duration_ms), f.duration_ms);
  }
  return Status::Ok();
}

// store-outage: the business store and the external service are down for
// the spec's duration.
Status InjectStoreOutage(FaultHost& host, const FaultSpec& f) {
  host.StoreDownUntil(host.now_ms() + f.duration_ms);
  for (const JudgedGroup& g : host.judged_groups()) {
    g.oracle->RunWideFault(HistoryKind::kStoreOutage, host.now_ms(),
                           fmt::format("the business store is unavailable for {} ms", f.duration_ms),
                           f.duration_ms);
  }
  return Status::Ok();
}

struct InjectorRow {
  FaultKind kind;
  ScheduledInjector inject;
};
const InjectorRow kInjectors[] = {
    {FaultKind::kXdel, &InjectXdel},
    {FaultKind::kXtrim, &InjectXtrim},
    {FaultKind::kRestart, &InjectRestart},
    {FaultKind::kSave, &InjectSave},
    {FaultKind::kDelConsumer, &InjectDelConsumer},
    {FaultKind::kClockJump, &InjectClockJump},
    {FaultKind::kStoreOutage, &InjectStoreOutage},
    {FaultKind::kFailover, &InjectFailover},
};

}  // namespace

ScheduledInjector InjectorOf(FaultKind kind) {
  XACKLY_CHECK(InfoOf(kind).fault_class == FaultClass::kScheduled);
  for (const InjectorRow& row : kInjectors) {
    if (row.kind == kind) return row.inject;
  }
  XACKLY_CHECK(false);  // a scheduled kind without an injector
  return nullptr;
}

}  // namespace xackly
