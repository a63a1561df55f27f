// Actor names: the one place that makes them and tells what they name.
//
// The trace, the oracle's histories and the replay files label every line
// with an actor name: "p1" (producer 1), "w2" (worker slot 2), "w2.3" (the
// third incarnation of worker slot 2 when restarts take fresh consumer
// names), "w2#3" and "w2#3.4" (handler lane 3 of worker process 2, which
// reads under the process's consumer name "w2" or "w2.4"), "j1" (the janitor), and the harness's own labels "setup", "fault"
// (scheduled fault injection), "oracle" (final reads) and "sim" (run notes).
// The simulator names its actors with ActorName; reports read a name back
// with DescribeActor, never by looking at its characters, so a change of
// naming is made here once and every report follows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace xackly {

enum class ActorRole : uint8_t {
  kProducer,
  kWorker,
  kJanitor,
  kFaultInjector,  // "fault": scheduled faults and their reads
  kHarness,        // "setup", "oracle": the harness's own reads and writes
  kSimulator,      // "sim": run notes (phase changes)
  kOther,          // a name no part of the simulator makes
};

// The harness's own labels.
inline constexpr char kSetupActor[] = "setup";
inline constexpr char kFaultActor[] = "fault";
inline constexpr char kOracleActor[] = "oracle";
inline constexpr char kSimActor[] = "sim";

struct ActorIdentity {
  ActorRole role = ActorRole::kOther;
  int number = 0;       // producer, worker or janitor number (1-based); 0 otherwise
  int incarnation = 1;  // > 1 only in a name that carries it ("w2.3")
  int lane = 1;         // > 1 only in a handler lane's name ("w2#3")
  // The stable slot every incarnation shares ("w2" for "w2.3", "w2#3" for
  // "w2#3.4"); the whole name for labels that have no slot.
  std::string_view slot;
};

// "p1", "w2", "j1"; with incarnation > 1 and `fresh_name`, "w2.3"; with
// lane > 1 (a worker process's further handler lane), "w2#3" ("w2#3.4").
// REQUIRES: role is kProducer, kWorker or kJanitor; number >= 1.
std::string ActorName(ActorRole role, int number, int incarnation = 1, bool fresh_name = false, int lane = 1);

// What `name` names. Total: a name ActorName did not make is kOther (or one
// of the harness's labels).
ActorIdentity DescribeActor(std::string_view name);

// "producer", "worker", "janitor", "fault injection", "harness", "simulator", "".
const char* ActorRoleName(ActorRole role);

}  // namespace xackly
