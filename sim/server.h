// What the simulator may do to the Redis server it runs against. The harness
// implements this with a real redis-server subprocess (harness/redis_server.h);
// the simulator never sees a process, a socket path or a file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/connection.h"
#include "sim/reply.h"
#include "sim/status.h"

namespace xackly {

// How the server persists data, which decides what a crash + restart loses.
enum class Persistence {
  kNone,       // nothing survives a restart
  kRdb,        // only what the last explicit SAVE wrote survives
  kAofAlways,  // appendfsync always: every acknowledged write survives
};
const char* PersistenceName(Persistence p);  // "none", "rdb", "aof-always"
// REQUIRES: out != nullptr. Returns false for an unknown name.
bool ParsePersistence(std::string_view name, Persistence* out);

struct ServerVersion {
  std::string product;  // "redis" or "valkey"
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string ToString() const;  // e.g. "redis 7.0.15"
  bool AtLeast(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};

// One write as a primary propagated it to its replicas: a single command,
// or the commands of one MULTI ... EXEC block (without MULTI and EXEC),
// which a replica applies whole or not at all.
struct ReplicatedWrite {
  std::vector<std::vector<std::string>> commands;
  // "XACK orders g 1-0", or "MULTI: XCLAIM ...; XGROUP SETID ..." for a block.
  std::string Render() const {
    std::string out = commands.size() > 1 ? "MULTI: " : "";
    for (size_t i = 0; i < commands.size(); ++i) out += (i > 0 ? "; " : "") + RenderArgv(commands[i]);
    return out;
  }
};

// What a failover did (ServerControl::Failover).
struct FailoverOutcome {
  // The writes the old primary had acknowledged and its replica never
  // received, oldest first. They are gone: the promoted replica is the
  // primary now.
  std::vector<ReplicatedWrite> dropped;
};

class ServerControl {
 public:
  virtual ~ServerControl() = default;

  // A new connection for the protocol (its workers, producer and janitor)
  // to the running server. A real server limits what it may do (no network,
  // no administration: docs/scripts.md); a refused command is an error
  // reply. Fails with kIoError when the server is not reachable.
  virtual Result<std::unique_ptr<Connection>> Connect() = 0;
  // A new connection for the harness's own commands (the oracle's reads,
  // scheduled faults such as SAVE), which the protocol's limits do not
  // bind. A server without such limits gives the same as Connect().
  virtual Result<std::unique_ptr<Connection>> ConnectHarness() { return Connect(); }

  // Sets the server's wall clock (what TIME, gettimeofday and every idle time
  // and TTL inside redis-server read) to `epoch_ms` Unix milliseconds. The
  // change is visible to the next command the server executes.
  // REQUIRES: epoch_ms >= ClockMs() (the clock never moves backwards; only
  // Reset() may move it back).
  virtual void SetClockMs(int64_t epoch_ms) = 0;
  virtual int64_t ClockMs() const = 0;

  // Empties the server for a new case without restarting it: FLUSHALL,
  // SCRIPT FLUSH, removal of persisted files, and the clock set to
  // `start_epoch_ms` (the one backwards move the clock allows, safe because
  // no key is left that could depend on time). Connections stay usable.
  virtual Status Reset(int64_t start_epoch_ms) = 0;

  // Kills the server with SIGKILL and starts it again on the same data
  // directory and socket; what survives follows persistence(). Every
  // connection made before is dead afterwards. Fails with kInternal when the
  // server does not come back (the error carries its log tail).
  virtual Status CrashAndRestart() = 0;

  virtual Persistence persistence() const = 0;
  virtual const ServerVersion& version() const = 0;

  // Replication (harness/replicated_server.h). How many replicas follow
  // the primary: 0 for a single server.
  virtual int replicas() const { return 0; }
  // Brings every replica up to date with the primary: the run's own setup
  // (its consumer groups) is replicated before anything runs, so a failover
  // can drop what the protocol wrote, never what the harness prepared.
  virtual Status Replicate() { return Status::Ok(); }
  // While one replica lags (the replica-lag fault), the other replicas
  // still receive every write: this records that they hold every write the
  // primary made so far, as their acknowledgement of a WAIT does, without
  // bringing the lagging replica up to date. A server with one replica has
  // no other: nothing changes. Fails when the link cannot be read.
  virtual Status ConfirmByOtherReplicas() { return Status::Ok(); }
  // Promotes a replica and makes it the primary; the old primary's data is
  // gone and it comes back as the new primary's replica. Every connection
  // made before is dead afterwards, as after CrashAndRestart.
  //   to_lagging false: the least-lagged replica, as Sentinel picks one. Its
  //     copy misses the primary's last `lag` writes (each a command or a
  //     MULTI/EXEC block) of those no replica has confirmed (a WAIT, or
  //     ConfirmByOtherReplicas).
  //   to_lagging true: the replica furthest behind (the lagging one, which a
  //     partition can leave as the only one Sentinel reaches). It misses
  //     every write no WAIT brought it, whatever the others confirmed; `lag`
  //     is not used.
  // Fails with kFailedPrecondition on a server without replicas, kInternal
  // when the promotion itself fails. REQUIRES: lag >= 0
  virtual Result<FailoverOutcome> Failover(int /*lag*/, bool /*to_lagging*/) {
    return Status::FailedPrecondition("failover needs a server with a replica ([server] replicas = 1)");
  }
};

}  // namespace xackly
