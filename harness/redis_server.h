// A real, unmodified redis-server (or valkey-server) run as a child process
// on a private Unix socket, with its wall clock replaced by the harness's
// virtual clock. This is the ServerControl the simulator drives.
//
// Every start proves the clock is virtual before anything runs: TIME must
// equal the clock page, then equal it again after the page moved a day
// (ProveVirtualClock) and in a burst of back-to-back TIMEs; a restart
// checks TIME again. A server on the real clock (a preload library the
// loader skipped, or a build that adds the CPU's cycle counter to the time
// of day: valkey 8.1+ by default) is a start failure.
//
// Lifetime and hygiene. A RedisServer owns one private temp dir
// (harness/server_dir.h) and at most one server process at a time. The
// process never outlives xackly:
//   - it is started with PR_SET_PDEATHSIG=SIGKILL. Linux sends that signal
//     when the *thread* that forked the server exits, not the process: the
//     thread that calls Start()/Restart() must stay alive while the server
//     runs (in practice: start servers from the main thread);
//   - its pid is in the live-server registry (harness/live_servers.h) that
//     xackly's SIGINT/SIGTERM/SIGHUP handlers kill;
//   - the destructor stops it and removes the temp dir; a temp dir left by
//     a killed xackly is removed by the next Start().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/replication_link.h"
#include "harness/server_dir.h"
#include "harness/virtual_clock.h"
#include "sim/server.h"

namespace xackly {

// Environment variable naming the server binary when --server is not given.
inline constexpr char kServerEnv[] = "XACKLY_REDIS_SERVER";

// What every server may hold (`maxmemory`, with `maxmemory-policy
// noeviction`: a write past it is an OOM error reply the protocol sees,
// never an eviction). Runs hold kilobytes; this bounds a script that
// fills the server.
inline constexpr int64_t kServerMaxMemoryBytes = int64_t{256} << 20;
// The free space a server that persists (rdb, aof-always) needs in its
// temp dir before it starts: a floor that turns a nearly full disk into a
// clear harness error up front. A SAVE that fails later is still checked.
inline constexpr int64_t kMinFreeBytesForPersistence = int64_t{64} << 20;
// Whether `free_bytes` free in `dir` let a server with `persistence` start:
// ok without persistence or with at least kMinFreeBytesForPersistence, else
// kInternal naming the directory, what it has free (KiB), what it needs
// (MiB) and what to do.
Status FreeSpaceVerdict(Persistence persistence, const std::string& dir, int64_t free_bytes);

// The server's users. The protocol's connections (Connect()) run as
// `default`, which can use the data commands but cannot reach the network
// or administer the server: no @admin commands (CONFIG, DEBUG, MODULE,
// SHUTDOWN, ACL, MONITOR, SAVE, REPLICAOF/SLAVEOF, SYNC/PSYNC, FAILOVER,
// CLIENT KILL, ...), no @dangerous ones but KEYS, SORT and INFO (MIGRATE,
// RESTORE, FLUSHALL, FLUSHDB, SWAPDB), and none that would take the
// connection away from the harness (HELLO, CLIENT, SELECT, SUBSCRIBE,
// PSUBSCRIBE, SSUBSCRIBE). ACL rules apply inside EVAL and FCALL too. The
// harness's own connections (ConnectHarness(), the control connection)
// authenticate as kHarnessUser with a secret made for each server.
inline constexpr char kProtocolAclRules[] =
    "+@all -@admin -@dangerous +keys +sort +info -hello -client -select -subscribe -psubscribe "
    "-ssubscribe";
inline constexpr char kHarnessUser[] = "xackly-harness";

struct RedisServerOptions {
  // The server binary (the --server flag). Empty: $XACKLY_REDIS_SERVER, else
  // the first `redis-server` on PATH.
  std::string server_path;
  Persistence persistence = Persistence::kNone;
  // Real-time bound on start-up and restart (readiness = PING answered). A
  // ceiling, not a wait: a start takes milliseconds on an idle machine, but
  // a restart loading its AOF on a machine saturated by other work took
  // over 10 s once in a 20 000-case check (harness failure, exit 3).
  int start_timeout_ms = 30'000;
  // Real-time bound on a clean stop before SIGKILL.
  int stop_timeout_ms = 5'000;
  // Bound on every reply on connections from Connect() and
  // ConnectHarness(), on an idle machine; a connection made while the
  // machine is loaded gets it multiplied by the load per CPU (at most 10x).
  int call_timeout_ms = 10'000;
  // Where the virtual clock starts.
  int64_t start_epoch_ms = kDefaultStartEpochMs;
  // Parent of the server's temp dir. Empty: $TMPDIR, else /tmp.
  std::string temp_root;
  // The preload library. Empty: see FindClockLibrary().
  std::string clock_library;
  // Prove at every start that the server runs on the virtual clock (see
  // above). Only `doctor` turns it off, to report each clock check itself.
  bool prove_clock = true;
  // Extra redis.conf lines, appended after the generated ones.
  std::vector<std::string> extra_config;
  // Placement (harness/cpu_placement.h). `cpu` >= 0: the server runs on
  // that CPU alone; -1: on the CPUs of the thread that starts it.
  int cpu = -1;
  // For CaseExecutor and CasePool: bind each case thread and the servers it
  // drives to one CPU (distinct CPUs for parallel threads). False is the
  // --no-pin opt-out: the kernel places both.
  bool pin = true;
};

// The value of `key` in the text of an INFO reply ("key:value" lines), or
// "" when it has none.
std::string InfoField(std::string_view info, std::string_view key);

// `timeout_ms` stretched by how oversubscribed the machine is now: times
// the 1-minute load average (the first field of `loadavg`, /proc/loadavg's
// format) per online CPU, between 1x and 10x, at most INT32_MAX. A reply that
// takes 10 s on a machine at load 25 with 2 CPUs is slowness, not a dead
// server. Unchanged when the file cannot be read.
int TimeoutScaledForLoad(int timeout_ms, const std::string& loadavg = "/proc/loadavg");

// Resolves the server binary as RedisServerOptions::server_path describes.
// Fails with kNotFound naming every place searched (the flag, the
// environment variable, each PATH directory) and how to install one.
Result<std::string> FindServerBinary(const std::string& flag_value);

// Reads product and version from the text of an `INFO server` reply: Valkey
// when it has `server_name:valkey` or `valkey_version:` (Valkey also reports
// a Redis-compatible `redis_version:`), else Redis from `redis_version:`.
// Fails with kInternal when no major.minor.patch version is there.
Result<ServerVersion> ParseServerInfo(std::string_view info);

class RedisServer : public ServerControl {
 public:
  // Creates the temp dir, writes redis.conf, starts the server and waits
  // until it answers PING. Removes stale temp dirs of killed runs first.
  // Fails with:
  //   kNotFound         no server binary or clock library
  //   kInvalidArgument  the socket path would be too long for sun_path
  //   kInternal         the server exited or did not answer before the
  //                     deadline; the message carries the tail of its log
  //   kIoError          the temp dir or config could not be written
  //   kInternal         also: the server does not run on the virtual clock
  static Result<std::unique_ptr<RedisServer>> Start(const RedisServerOptions& options);

  // Stops the server (as Stop()) and removes the temp dir.
  ~RedisServer() override;
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // ServerControl. Connect() runs as the protocol's user; ConnectHarness()
  // as kHarnessUser (see kProtocolAclRules).
  Result<std::unique_ptr<Connection>> Connect() override;
  Result<std::unique_ptr<Connection>> ConnectHarness() override;
  void SetClockMs(int64_t epoch_ms) override;
  int64_t ClockMs() const override;
  Status Reset(int64_t start_epoch_ms) override;
  Status CrashAndRestart() override;
  Persistence persistence() const override { return options_.persistence; }
  const ServerVersion& version() const override { return version_; }

  // Moves the virtual clock forward. REQUIRES: delta_ms >= 0
  void AdvanceClockMs(int64_t delta_ms) { clock_->AdvanceMs(delta_ms); }

  // Clean stop: SHUTDOWN NOSAVE (SIGTERM if that gets a reply or there is no
  // control connection), then SIGKILL if it has not exited after
  // stop_timeout_ms. No-op when the server is not running.
  void Stop();
  // SIGKILL and reap, like a power cut for this process. No-op when the
  // server is not running.
  void Crash();
  // Starts the server again on the same dir, socket and config; what it
  // finds on disk follows persistence() (with kNone, a snapshot written by
  // an explicit SAVE is deleted first). REQUIRES: !running()
  Status Restart();

  bool running() const { return pid_ > 0; }
  // Notices a server that exited while it should be running (killed from
  // outside): kInternal naming it, how it ended and its log tail; then
  // running() is false. Ok when it runs or was stopped on purpose.
  Status CheckRunning();
  // True once the run moved the clock past what its page can hold (see
  // VirtualClock::out_of_range); a Reset clears it.
  bool clock_out_of_range() const { return clock_->out_of_range(); }
  // The server's pid, or -1 when it is not running.
  pid_t pid() const { return pid_; }
  const std::string& binary_path() const { return binary_path_; }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& dir() const { return dir_->path(); }
  // The last lines of the server's log and captured stdout/stderr.
  std::string LogTail() const;
  // The harness as a replica of this server (harness/replication_link.h),
  // authenticated as kHarnessUser. Fails as ReplicationLink::Open.
  Result<std::unique_ptr<ReplicationLink>> OpenReplicationLink() const;

  // Idle connections to the running server, reused by Connect().
  using Pool = std::vector<std::unique_ptr<Connection>>;

 private:
  RedisServer(RedisServerOptions options, std::string binary_path, std::string clock_library,
              std::unique_ptr<ServerDir> dir, std::unique_ptr<VirtualClock> clock);
  Status WriteConfig() const;
  // Spawns the process and waits for PING; on failure nothing is left running.
  Status Launch();
  Status DetectVersion();
  // TIME must equal the clock page, or the preload library is not in the
  // server (then kInternal naming the library and the fix). With `move_it`,
  // also after moving the clock a day forward (and back: only before any
  // case runs).
  Status ProveVirtualClock(bool move_it);
  // Deletes the RDB snapshot file, if any.
  Status RemoveSnapshot();
  // After the server process was reaped (which ended its process group,
  // harness/subprocess.h): forgets its pid.
  void ForgetProcess();
  // A connection authenticated as kHarnessUser.
  Result<std::unique_ptr<Connection>> ConnectAsHarness(int timeout_ms) const;
  // kInternal when a server that persists would start with less than
  // kMinFreeBytesForPersistence free in its dir.
  Status CheckFreeSpace() const;

  const RedisServerOptions options_;
  const std::string binary_path_;
  const std::string clock_library_;
  std::unique_ptr<ServerDir> dir_;
  std::unique_ptr<VirtualClock> clock_;
  const std::string socket_path_;
  pid_t pid_ = -1;
  // A connection the server object keeps for its own commands (Reset,
  // INFO); replaced on every launch.
  std::unique_ptr<Connection> control_;
  std::shared_ptr<Pool> pool_ = std::make_shared<Pool>();
  std::shared_ptr<Pool> harness_pool_ = std::make_shared<Pool>();
  // kHarnessUser's password: random, made for this server, in its private
  // redis.conf only.
  const std::string harness_secret_;
  ServerVersion version_;
  // INFO server's monotonic_clock ("POSIX clock_gettime", "X86 TSC @ ..."),
  // empty before 6.2: named when the clock proof fails.
  std::string monotonic_clock_;
};

}  // namespace xackly
