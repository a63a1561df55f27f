// The keys of every scenario table, described once. The reader
// (scenario.cc) and the writer (scenario_writer.cc) both walk these
// descriptions, so a key can only be written the way it is read: adding a
// field means adding one line here. Internal to scenarios/.
//
// A description is a function template over a visitor V for one struct S. V
// provides, for a key and a pointer to the member it maps to:
//   Int(key, &S::m, min, max, doc)              int or int64_t in min..max (sim/limits.h)
//   Bool(key, &S::m, doc)
//   Enum(key, &S::m, table, doc)                one name of `table`
//   EnumList(key, &S::m, table, doc)            array of names, in order
//   EnumSet(key, &S::m, table, doc)             array of names, a set
//   Names(key, &S::m, valid, noun, doc)         array of strings from `valid`
//   Text(key, &S::m, check, expected, doc)      a string; `check` may be null
//   Rate(key, &S::m, doc)                       float 0..1 stored as ppm
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/faults.h"
#include "sim/limits.h"
#include "sim/protocol.h"
#include "sim/server.h"
#include "sim/simulation.h"
#include "sim/status.h"
#include "sim/worker.h"

namespace xackly {
bool IsScenarioName(std::string_view name);  // scenarios/scenario.h: 1..128 of A-Z a-z 0-9 . _ -
enum class HandlerForm : uint8_t;            // scenarios/scenario.h: [protocol] handler
}  // namespace xackly

namespace xackly::scenario_schema {

// An enum's spellings in scenario files, and the noun its errors use.
template <typename E>
struct EnumTable {
  const char* noun;  // "step", "persistence mode"
  std::vector<std::pair<E, std::string>> names;

  // REQUIRES: `value` is in the table (every enumerator is).
  const std::string& NameOf(E value) const {
    for (const auto& [v, n] : names) {
      if (v == value) return n;
    }
    XACKLY_CHECK(false);
    return names.front().second;
  }
  bool Parse(std::string_view name, E* out) const {
    for (const auto& [v, n] : names) {
      if (n == name) {
        *out = v;
        return true;
      }
    }
    return false;
  }
  // "a, b, c"
  std::string List() const {
    std::string out;
    for (const auto& [v, n] : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
};

const EnumTable<HandlerOp>& HandlerOps();
const EnumTable<DedupeStore>& DedupeStores();
const EnumTable<EffectSink>& EffectSinks();
const EnumTable<DuplicatePolicy>& DuplicatePolicies();
const EnumTable<AckMode>& AckModes();
const EnumTable<DeletedEntryPolicy>& DeletedEntryPolicies();
const EnumTable<DeadLetterOrder>& DeadLetterOrders();
const EnumTable<TrimPolicy>& TrimPolicies();
const EnumTable<RestartNaming>& RestartNamings();
const EnumTable<Persistence>& Persistences();
const EnumTable<FaultKind>& FaultKinds();
// [protocol] handler: steps | c++ (read and written outside DescribeProtocol:
// ProtocolDef holds the handler as code, not as a field a file can hold).
const EnumTable<HandlerForm>& HandlerForms();

// Checks for string keys whose values follow sim's own rules.
bool IsXdelTarget(std::string_view s);   // unread | pending | acked
bool IsXtrimTarget(std::string_view s);  // maxlen:N | minid:last-delivered
bool IsFailoverTarget(std::string_view s);  // lag:N | lagging
bool IsErrorReplyTarget(std::string_view s);  // LOADING | READONLY | BUSY
bool IsNonEmpty(std::string_view s);

// Which [faults] keys matter for the enabled kinds (the writer always spells
// those out for an inline protocol, even when they hold the default).
bool FaultKeyMatters(const FaultModel& m, std::string_view key);

// The model an inline protocol without `base` starts from, which its
// [faults] keys amend one by one (the parser reads a file against it, the
// writer writes the keys that differ from it): DefaultFaultModel at the
// sites the protocol's steps visit (WithoutUnvisitedSites), and for a
// protocol whose sites are found by running it (a script, a C++ handler,
// also one a file names only as `handler = "c++"`) no site lists.
FaultModel InlineStartingModel(const ProtocolDef& p, bool sites_found_by_running);

// [server] (members of RunConfig)
template <typename V>
void DescribeServer(V& v) {
  v.Enum("persistence", &RunConfig::persistence, Persistences(),
         "what survives a server restart");
  v.Int("replicas", &RunConfig::replicas, 0, kMaxReplicas,
        "asynchronous replicas following the primary (0..4): failover faults promote one; with several, one at a time lags");
  v.Bool("producer_waits", &RunConfig::producer_waits,
         "with replicas: xackly's own producer waits (WAIT <replicas> 0) until its XADD reached every one (a script's "
         "producer(w) does what it does)");
}

// [workload] (members of RunConfig)
template <typename V>
void DescribeWorkload(V& v) {
  v.Int("producers", &RunConfig::producers, 1, kMaxProducers, nullptr);
  v.Int("workers", &RunConfig::workers, 1, kMaxWorkers, nullptr);
  v.Int("handlers", &RunConfig::handlers, 1, kMaxWorkers,
        "handler lanes per worker process (scripts): one consumer name, one fate");
  v.Int("events", &RunConfig::events, 1, kMaxEvents, nullptr);
  v.Enum("restart_naming", &RunConfig::naming, RestartNamings(),
         "a restarted worker's consumer name");
}

// [timing]
template <typename V>
void DescribeTiming(V& v) {
  v.Int("step_ms", &Timing::step_ms, 1, kMaxDurationMs, "virtual time per executed step");
  v.Int("effect_ms", &Timing::effect_ms, 0, kMaxDurationMs, "a side effect keeps a worker busy");
  v.Int("effect_spread_ms", &Timing::effect_spread_ms, 0, kMaxDurationMs,
        "each event's effect is shorter than effect_ms by up to this much (drawn per event)");
  v.Int("produce_every_ms", &Timing::produce_every_ms, 0, kMaxDurationMs, nullptr);
  v.Int("produce_burst", &Timing::produce_burst, 1, kMaxCount,
        "events a producer adds back to back, then waits produce_burst x produce_every_ms");
  v.Int("restart_delay_ms", &Timing::restart_delay_ms, 0, kMaxDurationMs, "crash to replacement");
  v.Int("reconnect_ms", &Timing::reconnect_ms, 0, kMaxDurationMs, "after a timeout");
  v.Int("fault_phase_ms", &Timing::fault_phase_ms, 0, kMaxDurationMs, "0: derived from the workload");
  v.Int("quiet_window_ms", &Timing::quiet_window_ms, 0, kMaxDurationMs, "0: derived from the protocol");
  v.Int("max_steps", &Timing::max_steps, 0, kMaxSteps, "step guard; 0: derived; reaching it is a harness limit (exit 3)");
}

// [protocol], without `base` and the loop/janitor subtables.
template <typename V>
void DescribeProtocol(V& v) {
  v.Text("name", &ProtocolDef::name, &::xackly::IsScenarioName,
         "a name of 1..128 characters A-Z a-z 0-9 . _ - (not starting with . or -)", nullptr);
  v.Text("description", &ProtocolDef::description, nullptr, "a string", nullptr);
  v.EnumList("steps", &ProtocolDef::steps, HandlerOps(), "the per-entry handler, in order");
  v.Enum("dedupe", &ProtocolDef::dedupe, DedupeStores(), "where done-records live");
  v.Int("dedupe_ttl_ms", &ProtocolDef::dedupe_ttl_ms, 0, kMaxDurationMs,
        "0: done-records never expire (a script: no TTL declared; its own keys expire as it sets them)");
  v.Enum("effect", &ProtocolDef::effect, EffectSinks(), "where the side effect lands");
  v.Bool("idempotency_key", &ProtocolDef::idempotency_key, "true: the external service dedupes by event id");
  v.Enum("on_duplicate", &ProtocolDef::on_duplicate, DuplicatePolicies(),
         "what the duplicate branch does");
  v.Int("fault_phase_ms", &ProtocolDef::fault_phase_ms, 0, kMaxDurationMs,
        "0: derived from the workload");
}

// [protocol.loop]
template <typename V>
void DescribeLoop(V& v) {
  v.Int("read_count", &LoopConfig::read_count, 1, kMaxCount, "XREADGROUP COUNT");
  v.Bool("read_own_pending_at_start", &LoopConfig::read_own_pending_at_start,
         "XREADGROUP ... 0 on start-up");
  v.Bool("claim", &LoopConfig::claim, "periodic XAUTOCLAIM");
  v.Int("claim_min_idle_ms", &LoopConfig::claim_min_idle_ms, 0, kMaxDurationMs, nullptr);
  v.Int("claim_count", &LoopConfig::claim_count, 1, kMaxCount, nullptr);
  v.Int("claim_every_ms", &LoopConfig::claim_every_ms, 1, kMaxDurationMs, nullptr);
  v.Int("block_ms", &LoopConfig::block_ms, 1, kMaxDurationMs, "an empty read parks this long");
  v.Enum("ack", &LoopConfig::ack, AckModes(), "batch: the loop acks the whole batch");
  v.Enum("on_deleted", &LoopConfig::on_deleted, DeletedEntryPolicies(),
         "an entry whose payload is gone");
  v.Int("dead_letter_after", &LoopConfig::dead_letter_after, 0, kMaxCount,
        "deliveries before dead-lettering; 0: never");
  v.Enum("dead_letter_order", &LoopConfig::dead_letter_order, DeadLetterOrders(), nullptr);
}

// [protocol.janitor]
template <typename V>
void DescribeJanitor(V& v) {
  v.Enum("trim", &JanitorConfig::trim, TrimPolicies(), "retention XTRIM");
  v.Int("trim_maxlen", &JanitorConfig::trim_maxlen, 0, kMaxCount, "trim = \"maxlen\": MAXLEN N");
  v.Bool("delete_idle_consumers", &JanitorConfig::delete_idle_consumers,
         "XGROUP DELCONSUMER of idle consumers");
  v.Int("consumer_idle_ms", &JanitorConfig::consumer_idle_ms, 0, kMaxDurationMs, nullptr);
  v.Bool("check_pending_before_delete", &JanitorConfig::check_pending_before_delete, nullptr);
  v.Int("every_ms", &JanitorConfig::every_ms, 1, kMaxDurationMs, nullptr);
}

// A protocol script's site names (sim/sites.h IsScriptSiteName): before-XACK,
// after-INSERT, point:<name> (crash/stall); XACK, COMMIT (lost-*).
inline bool IsScriptCrashSite(std::string_view s) { return IsScriptSiteName(s, SiteFamily::kCrashPoint); }
inline bool IsScriptLostSite(std::string_view s) { return IsScriptSiteName(s, SiteFamily::kRequest); }

// [faults]
template <typename V>
void DescribeFaults(V& v) {
  v.EnumSet("kinds", &FaultModel::kinds, FaultKinds(), "enabled fault kinds");
  v.Names("crash_points", &FaultModel::crash_points, AllCrashPoints(), "crash point",
          &IsScriptCrashSite, "crash/stall sites; empty: all");
  v.Names("lost_sites", &FaultModel::lost_sites, AllLostSites(), "request", &IsScriptLostSite,
          "lost-* sites; empty: XACK, XADD, COMMIT, EVAL");
  v.Rate("crash_rate", &FaultModel::crash_ppm, "per visit of a crash point");
  v.Rate("stall_rate", &FaultModel::stall_ppm, nullptr);
  v.Int("stall_ms", &FaultModel::stall_ms, 1, kMaxDurationMs, nullptr);
  v.Rate("lost_request_rate", &FaultModel::lost_request_ppm, "per visit of a lost site");
  v.Rate("lost_reply_rate", &FaultModel::lost_reply_ppm, nullptr);
  v.Rate("error_reply_rate", &FaultModel::error_reply_ppm, "per visit of a lost site (a protocol's own commands)");
  v.Rate("replica_lag_rate", &FaultModel::replica_lag_ppm, "per visit of a WAIT (a run with replicas)");
  v.Int("replica_lag_ms", &FaultModel::replica_lag_ms, 1, kMaxDurationMs,
        "how long a WAIT without timeout (WAIT n 0) waits for a lagging replica");
  v.Int("scheduled_count", &FaultModel::scheduled_count, 0, kMaxCount,
        "of each enabled scheduled kind");
  v.Text("xdel_target", &FaultModel::xdel_target, &IsXdelTarget, "unread, pending or acked",
         nullptr);
  v.Text("xtrim_target", &FaultModel::xtrim_target, &IsXtrimTarget,
         "maxlen:N or minid:last-delivered", nullptr);
  v.Int("clock_jump_ms", &FaultModel::clock_jump_ms, 1, kMaxDurationMs, nullptr);
  v.Int("store_outage_ms", &FaultModel::store_outage_ms, 1, kMaxDurationMs, nullptr);
  v.Text("error_reply_target", &FaultModel::error_reply_target, &IsErrorReplyTarget, "LOADING, READONLY or BUSY",
         "the error an error-reply answers with");
  v.Text("failover_target", &FaultModel::failover_target, &IsFailoverTarget, "lag:N (0..1000) or lagging",
         "the writes a failover's promoted replica misses (lagging: every write no WAIT brought it)");
  v.Int("poison_count", &FaultModel::poison_count, 0, kMaxCount, "events whose effect always fails");
}

}  // namespace xackly::scenario_schema
