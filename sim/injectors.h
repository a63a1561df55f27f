// Scheduled fault injectors: one function per scheduled fault kind
// (FaultClass::kScheduled in sim/faults.cc), each with its fault model (what
// it injects, what a correct protocol must tolerate) in the kind's
// descriptor. The simulation fires a scheduled FaultSpec by writing its trace
// line and calling InjectorOf(kind); an injector sees the run only through
// FaultHost, so it cannot reach the actors or the scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/faults.h"
#include "sim/oracle.h"
#include "sim/reply.h"
#include "sim/server.h"
#include "sim/status.h"
#include "sim/stream.h"
#include "sim/worker.h"

namespace xackly {

// What a scheduled injector may do to one run. Every Redis call goes out on
// the harness connection at the current virtual time and is traced and
// counted as a harness round trip.
// A consumer group the run judges, and its oracle.
struct JudgedGroup {
  std::string name;
  Oracle* oracle;
};

class FaultHost {
 public:
  virtual ~FaultHost() = default;

  virtual int64_t now_ms() const = 0;
  // Moves virtual time forward by `ms` (a clock jump).
  virtual void AdvanceClockMs(int64_t ms) = 0;
  virtual const WorldNames& names() const = 0;
  // The judge, told what the fault did to the events (never the actors).
  virtual Oracle& oracle() = 0;
  // Every judged group: the run's own (names().group, oracle()) first, then
  // any further groups (RunConfig::groups). What a fault does to the stream
  // (payloads deleted, a restart, a clock jump) every group's oracle is told.
  virtual std::vector<JudgedGroup> judged_groups() { return {{names().group, &oracle()}}; }
  // One request, or several in one round trip; `actor` names the trace lane
  // ("fault", or "oracle" for reads that only observe).
  virtual Result<Reply> HarnessCall(std::vector<std::string> argv, const char* actor) = 0;
  virtual Result<std::vector<Reply>> HarnessCalls(const std::vector<std::vector<std::string>>& commands,
                                                  const char* actor) = 0;
  // The group's last-delivered-id (nullopt when there is no group).
  virtual Result<std::optional<StreamId>> ReadLastDelivered(const char* actor) = 0;
  // A trace note ("label: rest") and a run note (RunResult::notes).
  virtual void Note(std::string_view label, std::string_view rest) = 0;
  virtual void RunNote(std::string text) = 0;
  // SIGKILLs and restarts redis-server: every connection dies.
  virtual Status RestartServer() = 0;
  // Fails the server over to a replica (ServerControl::Failover: the
  // least-lagged, missing the last `lag` unconfirmed writes, or the lagging
  // one): every connection dies.
  virtual Result<FailoverOutcome> FailoverServer(int lag, bool to_lagging) = 0;
  virtual Persistence persistence() const = 0;
  // The business store and the external service are down until `t_ms`.
  virtual void StoreDownUntil(int64_t t_ms) = 0;
};

// Injects one scheduled fault into `host`. A harness failure (the server
// died, a read failed) is the only error; a fault with nothing to act on
// (no pending entry to delete) notes that and succeeds.
using ScheduledInjector = Status (*)(FaultHost& host, const FaultSpec& spec);

// The injector of a scheduled kind.
// REQUIRES: InfoOf(kind).fault_class == FaultClass::kScheduled.
ScheduledInjector InjectorOf(FaultKind kind);

}  // namespace xackly
