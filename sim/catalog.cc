// The protocol catalog: consumer protocols people really write, each with the
// fault model under which its expected verdict holds. The handlers are C++
// coroutines that read like the consumer code they model; every protocol
// also carries the same handler as a declarative step list, and
// scenarios/catalog/<name>.toml ships it as a scenario file.
#include "sim/protocol.h"
#include "sim/simulation.h"
#include "sim/worker.h"

namespace xackly {

namespace {

using H = HandlerOp;

// --- Handlers -------------------------------------------------------------

// XACK as soon as the entry is read, then run the effect.
Task<bool> AckFirst(Worker& w, const StreamEntry& e) {
  co_await w.Ack(e.id);
  co_return co_await w.Effect(e);
}

// Run the effect, then XACK. No dedupe.
Task<bool> EffectThenAck(Worker& w, const StreamEntry& e) {
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  co_await w.Ack(e.id);
  co_return true;
}

// Effect only; the loop acks the whole batch afterwards.
Task<bool> EffectOnly(Worker& w, const StreamEntry& e) { co_return co_await w.Effect(e); }

// Record "done" first (SET NX), then the effect, then XACK.
Task<bool> MarkThenEffect(Worker& w, const StreamEntry& e) {
  Dedupe d = co_await w.MarkDone(e);
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  co_await w.Ack(e.id);
  co_return true;
}

// Check "done", run the effect, record "done": three separate steps.
Task<bool> CheckEffectMark(Worker& w, const StreamEntry& e) {
  Dedupe d = co_await w.CheckDone(e);
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  Dedupe marked = co_await w.MarkDone(e);
  if (marked == Dedupe::kFailed) co_return false;
  co_await w.Ack(e.id);
  co_return true;
}

// Dedupe row and effect in one SQL transaction; XACK only after COMMIT.
Task<bool> TxnDedupe(Worker& w, const StreamEntry& e) {
  bool begun = co_await w.Begin();
  if (!begun) co_return false;
  Dedupe d = co_await w.MarkDone(e);  // INSERT OR IGNORE INTO processed
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  bool committed = co_await w.Commit();
  if (!committed) co_return false;
  co_await w.Ack(e.id);
  co_return true;
}

// One EVAL checks done, applies the effect, records done and XACKs.
Task<bool> LuaAll(Worker& w, const StreamEntry& e) {
  Dedupe d = co_await w.RedisAtomic(e);
  co_return d != Dedupe::kFailed;
}

// One EVAL checks done, applies the effect, records done; XACK afterwards.
Task<bool> LuaThenAck(Worker& w, const StreamEntry& e) {
  Dedupe d = co_await w.RedisAtomic(e);
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  co_await w.Ack(e.id);
  co_return true;
}

// --- Fault models ---------------------------------------------------------

FaultModel Crashes(std::vector<std::string> points, uint32_t ppm = 40000) {
  FaultModel m;
  m.kinds = {FaultKind::kCrash};
  m.crash_points = std::move(points);
  m.crash_ppm = ppm;
  return m;
}

FaultModel Plus(FaultModel m, std::initializer_list<FaultKind> more) {
  for (FaultKind k : more) m.kinds.insert(k);
  return m;
}

// The fault phase of protocols under the full model: long enough that a
// crashed worker's entries pass claim_min_idle (30 s) and are claimed while
// faults are still on, so crashes and stalls after a claim happen too
// (with a 2 s phase they fired in 4 of 1000 txn-dedupe cases; with this, 122).
constexpr int64_t kClaimWindowFaultPhaseMs = 45000;

// The txn-dedupe family's full model: everything a correct protocol must
// survive without losing or duplicating an effect.
FaultModel CorrectProtocolModel() {
  FaultModel m = Crashes({});  // every crash point
  m.kinds.insert({FaultKind::kStall, FaultKind::kLostRequest, FaultKind::kLostReply,
                  FaultKind::kClockJump, FaultKind::kStoreOutage});
  m.lost_sites = {"XREADGROUP", "XAUTOCLAIM", "XACK", "XADD", "COMMIT", "EVAL"};
  return m;
}

ProtocolDef Base(std::string name, std::string description, Expectation expected,
                 std::vector<HandlerOp> steps, CppHandler handler) {
  ProtocolDef p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.expected = std::move(expected);
  p.steps = std::move(steps);
  p.cpp_handler = handler;
  return p;
}

Expectation Expect(VerdictKind kind, std::string cause = "") { return {kind, std::move(cause)}; }

ProtocolDef TxnDedupeDef(std::string name, std::string description, Expectation expected) {
  ProtocolDef p = Base(std::move(name), std::move(description), std::move(expected),
                       {H::kBegin, H::kMarkDone, H::kEffect, H::kCommit, H::kAck}, &TxnDedupe);
  p.dedupe = DedupeStore::kSql;
  p.effect = EffectSink::kSql;
  return p;
}

std::vector<ProtocolDef> BuildCatalog() {
  std::vector<ProtocolDef> c;

  {
    ProtocolDef p = Base("ack-first", "XACK on read, then run the effect",
                         Expect(VerdictKind::kLost, "acked-without-effect"),
                         {H::kAck, H::kEffect}, &AckFirst);
    p.faults = Crashes({"after-read", "after-ack", "after-effect"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("no-dedupe", "run the effect, then XACK; no dedupe",
                         Expect(VerdictKind::kDuplicate, "crash:after-effect"),
                         {H::kEffect, H::kAck}, &EffectThenAck);
    p.faults = Crashes({"after-read", "after-effect", "after-ack"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("setnx-first", "SET done-key NX, then the external effect, then XACK",
                         Expect(VerdictKind::kLost, "acked-without-effect"),
                         {H::kMarkDone, H::kEffect, H::kAck}, &MarkThenEffect);
    p.dedupe = DedupeStore::kRedis;
    p.faults = Crashes({"after-read", "after-mark", "after-effect", "after-ack"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("mark-after-effect",
                         "check done, run the effect, mark done (separate steps), XACK",
                         Expect(VerdictKind::kDuplicate, "crash:after-effect"),
                         {H::kCheckDone, H::kEffect, H::kMarkDone, H::kAck}, &CheckEffectMark);
    p.dedupe = DedupeStore::kSql;
    p.faults = Crashes({"after-dedupe-check", "after-effect", "after-mark", "after-ack"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("batch-ack-no-dedupe", "effects for a whole batch, then one XACK for all",
                         Expect(VerdictKind::kDuplicate), {H::kEffect}, &EffectOnly);
    p.loop.ack = AckMode::kBatch;
    p.faults = Crashes({"after-read", "after-effect", "mid-batch", "after-ack"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "txn-dedupe",
        "dedupe row + effect in one SQL transaction, XACK after COMMIT, duplicates still XACK, "
        "XAUTOCLAIM recovery",
        Expect(VerdictKind::kOk));
    p.faults = CorrectProtocolModel();
    p.fault_phase_ms = kClaimWindowFaultPhaseMs;
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("lua-dedupe", "one EVAL checks done, applies the effect, records done and XACKs",
                         Expect(VerdictKind::kOk),
                         {H::kBegin, H::kCheckDone, H::kEffect, H::kMarkDone, H::kAck, H::kCommit},
                         &LuaAll);
    p.dedupe = DedupeStore::kRedis;
    p.effect = EffectSink::kRedis;
    p.faults = CorrectProtocolModel();
    p.fault_phase_ms = kClaimWindowFaultPhaseMs;
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef("dup-no-ack", "like txn-dedupe, but the duplicate branch never XACKs",
                                 Expect(VerdictKind::kPelLeak));
    p.on_duplicate = DuplicatePolicy::kSkip;
    p.faults = Crashes({"after-commit"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef("no-claim", "correct dedupe, never claims; restarts under a new name",
                                 Expect(VerdictKind::kLost, "stranded"));
    p.loop.claim = false;
    p.naming = RestartNaming::kFresh;
    // Crashes before COMMIT only: a crash after it strands an entry whose
    // effect is done, which shows up as pel-leak, not as the loss this entry
    // demonstrates.
    p.faults = Crashes({"after-read", "after-mark", "after-effect"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "naive-trim", "correct dedupe; retention XTRIM MAXLEN 3 every second, even while consumers are down",
        Expect(VerdictKind::kLost, "payload-deleted"));
    p.janitor.trim = TrimPolicy::kMaxLen;
    p.janitor.trim_maxlen = 3;
    p.faults = Crashes({"after-read", "after-mark", "after-commit"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "safe-trim",
        "correct dedupe; one EVAL reads what the group still needs and trims only below it",
        Expect(VerdictKind::kOk));
    p.janitor.trim = TrimPolicy::kSafeMinId;
    p.janitor.every_ms = 10;  // busy (racy-trim loses events at this rate): atomicity keeps it safe
    p.loop.claim_min_idle_ms = 1000;
    p.loop.claim_every_ms = 1000;
    p.faults = Crashes({"after-read", "after-mark", "after-commit"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "racy-trim",
        "correct dedupe; the janitor reads XPENDING, then XINFO GROUPS, then trims with MINID: "
        "three requests, not a snapshot",
        Expect(VerdictKind::kLost, "payload-deleted"));
    p.janitor.trim = TrimPolicy::kRacyMinId;
    // A busy janitor (trimming every 1 ms; the reproduction used
    // 10 ms) and quick recovery: trims race with deliveries, and a crashed
    // reader's entry comes back (claimed after 1 s) while faults are on.
    // Only crashes before COMMIT can turn a trimmed pending entry into a loss.
    p.janitor.every_ms = 1;
    p.loop.claim_min_idle_ms = 1000;
    p.loop.claim_every_ms = 1000;
    p.faults = Crashes({"after-read", "after-mark"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("short-ttl-dedupe",
                         "one EVAL checks and records done with a 10 s TTL, then XACK; claims after 30 s",
                         Expect(VerdictKind::kDuplicate, "dedupe-expired"),
                         {H::kBegin, H::kCheckDone, H::kEffect, H::kMarkDone, H::kCommit, H::kAck},
                         &LuaThenAck);
    p.dedupe = DedupeStore::kRedis;
    p.dedupe_ttl_ms = 10000;
    p.effect = EffectSink::kRedis;
    p.naming = RestartNaming::kFresh;
    p.faults = Crashes({"after-read", "after-eval", "after-ack"});
    c.push_back(p);
  }
  {
    ProtocolDef p = Base("eager-claim", "no dedupe; claims entries idle for 50 ms, below processing time",
                         Expect(VerdictKind::kDuplicate), {H::kEffect, H::kAck}, &EffectThenAck);
    p.loop.claim_min_idle_ms = 50;
    p.loop.claim_every_ms = 100;
    p.faults.kinds = {FaultKind::kStall};
    p.faults.crash_points = {"after-read", "after-effect"};
    p.faults.stall_ppm = 60000;
    p.faults.stall_ms = 2000;
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "delconsumer-cleanup",
        "correct dedupe; a janitor deletes consumers idle for 10 s without checking their pending count",
        Expect(VerdictKind::kLost, "consumer-deleted"));
    p.naming = RestartNaming::kFresh;
    p.janitor.delete_idle_consumers = true;
    p.janitor.consumer_idle_ms = 10000;
    p.janitor.check_pending_before_delete = false;
    p.faults = Crashes({"after-read", "after-mark", "after-commit"});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "dlq-after-3",
        "correct dedupe; poison events are dead-lettered after 3 deliveries, payload saved before XACK",
        Expect(VerdictKind::kOk));
    p.loop.dead_letter_after = 3;
    p.fault_phase_ms = 150000;  // long enough for 3 deliveries of a poison event
    p.faults = Plus(Crashes({"after-read", "after-commit", "after-dead-letter", "after-ack"}),
                    {FaultKind::kPoison});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef(
        "ack-before-dlq", "dead-letters poison events after 3 deliveries, but XACKs before saving the payload",
        Expect(VerdictKind::kLost));
    p.loop.dead_letter_after = 3;
    p.loop.dead_letter_order = DeadLetterOrder::kAckThenSave;
    p.fault_phase_ms = 150000;  // long enough for 3 deliveries of a poison event
    p.faults = Plus(Crashes({"after-ack"}, 300000), {FaultKind::kPoison});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef("txn-dedupe-restart-none",
                                 "txn-dedupe against a Redis without persistence that restarts",
                                 Expect(VerdictKind::kLost, "server-data-loss"));
    p.persistence = Persistence::kNone;
    p.faults = Plus(Crashes({"after-read", "after-commit"}), {FaultKind::kRestart});
    c.push_back(p);
  }
  {
    ProtocolDef p = TxnDedupeDef("txn-dedupe-restart-aof",
                                 "txn-dedupe against Redis with appendfsync always that restarts",
                                 Expect(VerdictKind::kOk));
    p.persistence = Persistence::kAofAlways;
    p.faults = Plus(Crashes({"after-read", "after-commit"}), {FaultKind::kRestart});
    c.push_back(p);
  }
  // Each model names only sites its protocol visits: written out (a replay
  // file, an inline form) every site a file names must be one a run can
  // reach (ScenarioParser::CheckNamedSites).
  for (ProtocolDef& p : c) p.faults = WithoutUnvisitedSites(p);
  return c;
}

}  // namespace

FaultModel DefaultFaultModel(const ProtocolDef& p) {
  FaultModel m = CorrectProtocolModel();
  m.kinds_are_default = true;
  if (p.loop.dead_letter_after > 0) m.kinds.insert(FaultKind::kPoison);
  // A protocol whose sites are found by running it (a script, a C++
  // handler): lost requests and replies at every request it visits that
  // can change state (check's probes), not at a fixed list.
  if (SitesFoundByRunning(p)) m.lost_sites.clear();
  // A real consumer's own commands may be answered with an error (a server
  // loading, a demoted primary, a busy script): its client library's error
  // handling is what runs.
  if (!p.consumer_command.empty()) m.kinds.insert(FaultKind::kErrorReply);
  return m;
}

const std::vector<ProtocolDef>& Catalog() {
  static const std::vector<ProtocolDef> kCatalog = BuildCatalog();
  return kCatalog;
}

}  // namespace xackly
