#include "harness/redis_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "harness/hiredis_connection.h"
#include "harness/live_servers.h"
#include "harness/subprocess.h"
#include "sim/step.h"

namespace xackly {

namespace {

constexpr char kConfigName[] = "redis.conf";
constexpr char kLogName[] = "redis.log";
constexpr char kOutputName[] = "server.out";  // the child's stdout + stderr
constexpr char kClockPageName[] = "clock.page";
constexpr char kRdbName[] = "dump.rdb";
constexpr char kDefaultBinaryName[] = "redis-server";
constexpr char kInstallHint[] =
    "install it with `apt-get install redis-server`, or name a redis-server or valkey-server "
    "binary with --server PATH or XACKLY_REDIS_SERVER=PATH";
constexpr int kLogTailLines = 20;
constexpr int kReadyPollMs = 5;
constexpr int kReadyConnectTimeoutMs = 1'000;
// How far the start-up proof moves the virtual clock (a day and 1234 ms).
constexpr int64_t kClockProbeJumpMs = 86'400'000 + 1'234;
// How many back-to-back TIMEs a start sends after the jump (see
// ProveVirtualClock): a few hundred real microseconds.
constexpr int kClockProbeBurst = 16;

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// A redis.conf string argument: double-quoted, with \ and " escaped.
std::string ConfigQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

// The last `max_lines` lines of the file at `path`, or "" when unreadable.
std::string TailOfFile(const std::string& path, int max_lines) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (static_cast<int>(lines.size()) > max_lines) lines.pop_front();
  }
  std::string out;
  for (const std::string& line : lines) out += "  | " + line + "\n";
  return out;
}


// Parses "7.0.15" into `version`; false when it is not major.minor.patch.
bool ParseVersionNumber(const std::string& text, ServerVersion* version) {
  char tail = '\0';
  return std::sscanf(text.c_str(), "%d.%d.%d%c", &version->major, &version->minor, &version->patch,
                     &tail) == 3;
}

constexpr double kMaxLoadFactor = 10.0;

}  // namespace

int TimeoutScaledForLoad(int timeout_ms, const std::string& loadavg) {
  double load = 0;
  std::ifstream in(loadavg);
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (!(in >> load) || cpus <= 0) return timeout_ms;
  const double factor = std::clamp(load / static_cast<double>(cpus), 1.0, kMaxLoadFactor);
  return static_cast<int>(std::min<double>(timeout_ms * factor, INT32_MAX));
}

namespace {

// A fresh password for kHarnessUser: 128 bits from the kernel, as hex.
std::string MakeSecret() {
  unsigned char bytes[16] = {};
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  XACKLY_CHECK(fd >= 0);
  XACKLY_CHECK(::read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes));
  ::close(fd);
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

}  // namespace

std::string InfoField(std::string_view info, std::string_view key) {
  size_t pos = 0;
  while (pos < info.size()) {
    size_t end = info.find('\n', pos);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      return std::string(line.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return "";
}

Result<std::string> FindServerBinary(const std::string& flag_value) {
  if (!flag_value.empty()) {
    if (IsExecutableFile(flag_value)) return flag_value;
    return Status::NotFound(fmt::format(
        "server binary not found: --server {} is not an executable file; {}", flag_value,
        kInstallHint));
  }
  if (const char* env = std::getenv(kServerEnv); env != nullptr && *env != '\0') {
    if (IsExecutableFile(env)) return std::string(env);
    return Status::NotFound(fmt::format(
        "server binary not found: ${}={} is not an executable file; {}", kServerEnv, env,
        kInstallHint));
  }
  const char* path_env = std::getenv("PATH");
  std::string path_list = path_env != nullptr ? path_env : "";
  std::vector<std::string> searched;
  size_t pos = 0;
  while (pos <= path_list.size()) {
    size_t end = std::min(path_list.find(':', pos), path_list.size());
    std::string dir = path_list.substr(pos, end - pos);
    pos = end + 1;
    if (dir.empty()) continue;
    std::string candidate = fmt::format("{}/{}", dir, kDefaultBinaryName);
    if (IsExecutableFile(candidate)) return candidate;
    searched.push_back(dir);
  }
  return Status::NotFound(fmt::format(
      "no {} found. Searched: --server (not given), ${} (not set), and each PATH directory: {}. "
      "To fix: {}",
      kDefaultBinaryName, kServerEnv, searched.empty() ? "(PATH is empty)" : fmt::format("{}", fmt::join(searched, ", ")),
      kInstallHint));
}

Result<std::unique_ptr<RedisServer>> RedisServer::Start(const RedisServerOptions& options) {
  Result<std::string> binary = FindServerBinary(options.server_path);
  if (!binary.ok()) return binary.status();
  Result<std::string> clock_library = FindClockLibrary(options.clock_library);
  if (!clock_library.ok()) return clock_library.status();
  const std::string root = options.temp_root.empty() ? DefaultTempRoot() : options.temp_root;
  RemoveStaleServerDirs(root);
  Result<std::unique_ptr<ServerDir>> dir = ServerDir::Create(root);
  if (!dir.ok()) return dir.status();
  Result<std::unique_ptr<VirtualClock>> clock =
      VirtualClock::Create((*dir)->File(kClockPageName), options.start_epoch_ms);
  if (!clock.ok()) return clock.status();
  std::unique_ptr<RedisServer> server(new RedisServer(options, std::move(*binary),
                                                      std::move(*clock_library), std::move(*dir),
                                                      std::move(*clock)));
  if (Status s = server->CheckFreeSpace(); !s.ok()) return s;
  if (Status s = server->WriteConfig(); !s.ok()) return s;
  if (Status s = server->Launch(); !s.ok()) return s;
  if (Status s = server->DetectVersion(); !s.ok()) return s;
  if (options.prove_clock) {
    if (Status s = server->ProveVirtualClock(/*move_it=*/true); !s.ok()) return s;
  }
  return server;
}

Status RedisServer::ProveVirtualClock(bool move_it) {
  auto probe = [&]() -> Status {
    const int64_t page_ms = clock_->NowMs();
    Result<Reply> time = control_->Call({"TIME"});
    if (!time.ok()) return Status::Internal("TIME failed: " + time.status().ToString());
    int64_t seconds = -1;
    int64_t micros = -1;
    if (time->is_array() && time->elements().size() == 2 && time->elements()[0].is_string() &&
        time->elements()[1].is_string()) {
      seconds = std::strtoll(time->elements()[0].str().c_str(), nullptr, 10);
      micros = std::strtoll(time->elements()[1].str().c_str(), nullptr, 10);
    }
    if (seconds == page_ms / 1000 && micros == (page_ms % 1000) * 1000) return Status::Ok();
    const std::string replied = fmt::format(
        "{} does not run on the virtual clock: TIME replied {} while the clock page says {} ms",
        binary_path_, time->Render(), page_ms);
    if (!monotonic_clock_.empty() && monotonic_clock_.find("POSIX") == std::string::npos) {
      return Status::Internal(fmt::format(
          "{}. Its INFO says monotonic_clock:{}: this build adds the CPU's cycle counter to the "
          "time of day between its gettimeofday calls (valkey 8.1 and later do by default), and "
          "xackly cannot move that counter, so timeouts, idle times and TTLs would follow real "
          "time and give wrong verdicts; nothing ran. To fix: build the server with `make "
          "CFLAGS=-DNO_PROCESSOR_CLOCK` (its monotonic.c documents the option; `bash .ci/setup "
          "--servers` builds valkey 9 that way); `xackly doctor --server PATH` checks a build",
          replied, monotonic_clock_));
    }
    return Status::Internal(fmt::format(
        "{}. The clock library {} was not preloaded into it (the loader skips a file that is not a "
        "shared library for this machine, and a library without the clock functions changes "
        "nothing); a run on the real clock would give wrong verdicts, so nothing ran. To fix: "
        "unset ${} to use the {} built next to the xackly executable, or point ${} at that "
        "file; `xackly doctor` checks the setup",
        replied, clock_library_, kClockLibEnv, kClockLibName, kClockLibEnv));
  };
  if (Status s = probe(); !s.ok() || !move_it) return s;
  // A real clock could equal the page by chance once; not after a jump of a
  // day and an odd number of milliseconds.
  const int64_t start_ms = clock_->NowMs();
  clock_->AdvanceMs(kClockProbeJumpMs);
  Status moved = probe();
  // A server that adds a cycle counter's microseconds to the time of day
  // between gettimeofday calls at most a real millisecond apart answers
  // exactly only when its last call was longer ago: back-to-back TIMEs
  // (tens of real microseconds apart) show the counter's microseconds.
  for (int i = 0; moved.ok() && i < kClockProbeBurst; ++i) moved = probe();
  clock_->ResetMs(start_ms);
  return moved;
}

Status RedisServer::CheckRunning() {
  if (!running()) return Status::Ok();
  int wait_status = 0;
  if (!ReapIfExited(pid_, &wait_status)) {
    // A killed multi-threaded server shows as a zombie before waitpid can
    // collect it (its other threads are still exiting): wait for that.
    if (ProcessRunning(pid_) || !WaitForExit(pid_, options_.stop_timeout_ms, &wait_status)) {
      return Status::Ok();
    }
  }
  const pid_t pid = pid_;
  ForgetProcess();
  control_.reset();
  pool_ = std::make_shared<Pool>();
  harness_pool_ = std::make_shared<Pool>();
  return Status::Internal(fmt::format(
      "{} (pid {}, persistence {}) {} while xackly was using it; something outside xackly ended "
      "it. Last lines of its output:\n{}",
      binary_path_, pid, PersistenceName(options_.persistence), DescribeWaitStatus(wait_status),
      LogTail()));
}

RedisServer::RedisServer(RedisServerOptions options, std::string binary_path,
                         std::string clock_library, std::unique_ptr<ServerDir> dir,
                         std::unique_ptr<VirtualClock> clock)
    : options_(std::move(options)),
      binary_path_(std::move(binary_path)),
      clock_library_(std::move(clock_library)),
      dir_(std::move(dir)),
      clock_(std::move(clock)),
      socket_path_(dir_->socket_path()),
      harness_secret_(MakeSecret()) {}

Status RedisServer::CheckFreeSpace() const {
  if (options_.persistence == Persistence::kNone) return Status::Ok();
  struct statvfs fs;
  if (::statvfs(dir_->path().c_str(), &fs) != 0) {
    return Status::Internal(fmt::format("cannot read the free space of {}: {}", dir_->path(),
                                        std::strerror(errno)));
  }
  return FreeSpaceVerdict(options_.persistence, dir_->path(),
                          static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize));
}

Status FreeSpaceVerdict(Persistence persistence, const std::string& dir, int64_t free_bytes) {
  if (persistence == Persistence::kNone || free_bytes >= kMinFreeBytesForPersistence) return Status::Ok();
  return Status::Internal(fmt::format(
      "{} has {} KiB free; a server with persistence {} needs at least {} MiB there for its "
      "snapshots and append-only file (a save that fails would lose data no protocol is to blame "
      "for). Free some space or set TMPDIR to a directory with more",
      dir, free_bytes >> 10, PersistenceName(persistence), kMinFreeBytesForPersistence >> 20));
}

RedisServer::~RedisServer() {
  Stop();
  clock_.reset();
  dir_.reset();  // removes the temp dir
}

Status RedisServer::WriteConfig() const {
  std::vector<std::string> lines = {
      "# Written by xackly for one private server (harness/redis_server.cc).",
      "port 0",  // no TCP at all
      "unixsocket " + ConfigQuote(socket_path_),
      "unixsocketperm 700",
      "daemonize no",
      "dir " + ConfigQuote(dir_->path()),
      "logfile " + ConfigQuote(dir_->File(kLogName)),
      fmt::format("maxmemory {}", kServerMaxMemoryBytes),
      "maxmemory-policy noeviction",
      // Nothing a connection sends may change the server's configuration
      // files, debug it or load code into it; the protocol's user is
      // limited further by its ACL rules (kProtocolAclRules).
      "enable-protected-configs no",
      "enable-debug-command no",
      "enable-module-command no",
      fmt::format("user default on nopass ~* &* {}", kProtocolAclRules),
      fmt::format("user {} on >{} ~* &* +@all", kHarnessUser, harness_secret_),
      "save \"\"",  // never an automatic snapshot; the simulator issues SAVE
      // jemalloc's background thread sleeps until a gettimeofday() deadline;
      // under the virtual clock that deadline is always past, so it spins.
      "jemalloc-bg-thread no",
      // serverCron rehashes the keyspace's hash tables whenever it runs, and
      // whether it runs before or after a request depends on real time (its
      // epoll_wait timeout is real while its deadline is virtual): KEYS,
      // SCAN and RANDOMKEY then answered differently under load (a trace
      // differed in a sanitized suite run). Rehashing then happens only in
      // the commands themselves, so the tables follow the requests alone.
      "activerehashing no",
      fmt::format("dbfilename {}", kRdbName),
  };
  switch (options_.persistence) {
    case Persistence::kNone:
    case Persistence::kRdb:
      lines.push_back("appendonly no");
      break;
    case Persistence::kAofAlways:
      lines.push_back("appendonly yes");
      lines.push_back("appendfsync always");
      break;
  }
  lines.insert(lines.end(), options_.extra_config.begin(), options_.extra_config.end());
  const std::string path = dir_->File(kConfigName);
  std::ofstream out(path);
  for (const std::string& line : lines) out << line << "\n";
  out.close();
  if (!out) return Status::IoError(fmt::format("cannot write {}", path));
  return Status::Ok();
}

Status RedisServer::Launch() {
  XACKLY_CHECK(!running());
  const char* preload = std::getenv("LD_PRELOAD");
  SpawnOptions spawn;
  spawn.path = binary_path_;
  spawn.args = {dir_->File(kConfigName)};
  spawn.env = EnvironmentWith({
      fmt::format("LD_PRELOAD={}{}{}", clock_library_, preload != nullptr && *preload ? ":" : "",
                  preload != nullptr ? preload : ""),
      fmt::format("{}={}", kClockPageEnv, clock_->page_path()),
  });
  spawn.output_path = dir_->File(kOutputName);
  spawn.cpu = options_.cpu;
  Result<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) return Status::Internal(pid.status().message());
  pid_ = *pid;
  RegisterLiveServer(pid_);

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(options_.start_timeout_ms);
  while (true) {
    int wait_status = 0;
    if (ReapIfExited(pid_, &wait_status)) {
      ForgetProcess();
      return Status::Internal(fmt::format("{} {} during start-up; last lines of its output:\n{}",
                                          binary_path_, DescribeWaitStatus(wait_status), LogTail()));
    }
    Result<std::unique_ptr<Connection>> conn = ConnectUnix(socket_path_, kReadyConnectTimeoutMs);
    if (conn.ok()) {
      Result<Reply> pong = (*conn)->Call({"PING"});
      if (pong.ok() && pong->is_status() && pong->str() == "PONG") {
        Result<Reply> auth = (*conn)->Call({"AUTH", kHarnessUser, harness_secret_});
        if (auth.ok() && auth->is_status() && auth->str() == "OK") {
          control_ = std::move(*conn);
          return Status::Ok();
        }
        KillAndReap(pid_);
        ForgetProcess();
        return Status::Internal(fmt::format(
            "{} does not accept the harness's own user {} (AUTH replied {}); last lines of its "
            "output:\n{}",
            binary_path_, kHarnessUser, auth.ok() ? auth->Render() : auth.status().ToString(),
            LogTail()));
      }
      // -LOADING while it replays its persisted data: keep waiting.
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
  KillAndReap(pid_);
  ForgetProcess();
  return Status::Internal(fmt::format(
      "{} did not answer PING on {} within {} ms; last lines of its output:\n{}", binary_path_,
      socket_path_, options_.start_timeout_ms, LogTail()));
}

Result<ServerVersion> ParseServerInfo(std::string_view info) {
  ServerVersion version;
  std::string number = InfoField(info, "valkey_version");
  version.product = "valkey";
  if (number.empty()) {
    number = InfoField(info, "redis_version");
    version.product = InfoField(info, "server_name") == "valkey" ? "valkey" : "redis";
  }
  if (!ParseVersionNumber(number, &version)) {
    return Status::Internal(fmt::format("cannot read the server version from INFO server ('{}')", number));
  }
  return version;
}

Status RedisServer::DetectVersion() {
  Result<Reply> info = control_->Call({"INFO", "server"});
  if (!info.ok()) return Status::Internal("INFO server failed: " + info.status().ToString());
  if (!info->is_string()) return Status::Internal("INFO server replied " + info->Render());
  Result<ServerVersion> version = ParseServerInfo(info->str());
  if (!version.ok()) return version.status();
  version_ = std::move(*version);
  monotonic_clock_ = InfoField(info->str(), "monotonic_clock");
  return Status::Ok();
}

std::string RedisServer::LogTail() const {
  std::string out;
  for (const char* name : {kOutputName, kLogName}) {
    std::string tail = TailOfFile(dir_->File(name), kLogTailLines);
    if (!tail.empty()) out += fmt::format("{}:\n{}", dir_->File(name), tail);
  }
  return out.empty() ? "  (the server wrote nothing)\n" : out;
}

namespace {

// A connection handed out by Connect(): when dropped while alive and idle
// (every Call has returned), its hiredis connection goes back to the
// server's pool for the next Connect() instead of being closed. A
// connection that may hold session state (an open MULTI, a WATCH: a
// script's worker can crash or time out in between, or the run can end
// there) is RESET first, as closing it would; one that does not answer
// RESET is closed. Without this the next case's first commands were queued
// in the old MULTI and a correct protocol was judged `lost`.
class PooledConnection final : public ConnectionWrapper {
 public:
  // `reset_on_return`: false for a harness connection, which RESET would
  // turn into the protocol's user; one that may hold session state is
  // closed instead.
  PooledConnection(std::unique_ptr<Connection> conn, std::weak_ptr<RedisServer::Pool> pool,
                   bool reset_on_return)
      : ConnectionWrapper(std::move(conn)), pool_(std::move(pool)), reset_on_return_(reset_on_return) {}
  ~PooledConnection() override {
    std::shared_ptr<RedisServer::Pool> pool = pool_.lock();
    if (!pool || !alive()) return;
    if (may_hold_session_state_) {
      if (!reset_on_return_) return;
      Result<Reply> r = target().Call({"RESET"});
      if (!r.ok() || r->is_error() || !alive()) return;
    }
    pool->push_back(ReleaseTarget());
  }
  Result<Reply> Call(std::span<const std::string_view> argv) override {
    if (std::optional<Reply> refused = RefuseProtocolSwitch(argv)) return *refused;
    NoteSessionState(argv);
    return ConnectionWrapper::Call(argv);
  }
  using Connection::Call;
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    for (const std::vector<std::string_view>& argv : commands) {
      if (RefuseProtocolSwitch(argv)) return Connection::CallAll(commands);  // one by one, as Call
      NoteSessionState(argv);
    }
    return ConnectionWrapper::CallAll(commands);
  }

 private:
  // The harness reads RESP2 only, and the server lets every user send HELLO
  // (ACL rules cannot refuse it): a HELLO asking for any other protocol
  // version is answered here with an error reply and never sent.
  static std::optional<Reply> RefuseProtocolSwitch(std::span<const std::string_view> argv) {
    if (argv.size() < 2 || argv[0].size() != 5 || VerbOf(argv[0]) != "HELLO" || argv[1] == "2") {
      return std::nullopt;
    }
    return Reply::Error(fmt::format(
        "NOPROTO xackly: the connection stays on RESP2 (the harness reads RESP2 replies only); "
        "HELLO {} is not available to protocols",
        argv[1]));
  }
  void NoteSessionState(std::span<const std::string_view> argv) {
    if (argv.empty() || argv[0].size() != 5) return;
    std::string verb(argv[0]);
    for (char& ch : verb) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (verb == "MULTI" || verb == "WATCH") may_hold_session_state_ = true;
  }
  std::weak_ptr<RedisServer::Pool> pool_;
  const bool reset_on_return_;
  bool may_hold_session_state_ = false;
};

// An idle connection from `pool`, else a new one from `make`, lent so that
// it goes back to `pool` when dropped (see PooledConnection).
Result<std::unique_ptr<Connection>> LendFrom(
    const std::shared_ptr<RedisServer::Pool>& pool, bool reset_on_return,
    const std::function<Result<std::unique_ptr<Connection>>()>& make) {
  std::unique_ptr<Connection> conn;
  if (!pool->empty()) {
    conn = std::move(pool->back());
    pool->pop_back();
  } else {
    Result<std::unique_ptr<Connection>> made = make();
    if (!made.ok()) return made.status();
    conn = std::move(*made);
  }
  return std::unique_ptr<Connection>(new PooledConnection(std::move(conn), pool, reset_on_return));
}

}  // namespace

Result<std::unique_ptr<Connection>> RedisServer::Connect() {
  return LendFrom(pool_, /*reset_on_return=*/true,
                  [this] { return ConnectUnix(socket_path_, TimeoutScaledForLoad(options_.call_timeout_ms)); });
}

Result<std::unique_ptr<Connection>> RedisServer::ConnectAsHarness(int timeout_ms) const {
  Result<std::unique_ptr<Connection>> conn = ConnectUnix(socket_path_, timeout_ms);
  if (!conn.ok()) return conn.status();
  Result<Reply> auth = (*conn)->Call({"AUTH", kHarnessUser, harness_secret_});
  if (!auth.ok()) return auth.status();
  if (!auth->is_status() || auth->str() != "OK") {
    return Status::Internal(fmt::format("AUTH as the harness's user {} replied {}", kHarnessUser,
                                        auth->Render()));
  }
  return conn;
}

Result<std::unique_ptr<ReplicationLink>> RedisServer::OpenReplicationLink() const {
  return ReplicationLink::Open(socket_path_, kHarnessUser, harness_secret_,
                               TimeoutScaledForLoad(options_.call_timeout_ms));
}

Result<std::unique_ptr<Connection>> RedisServer::ConnectHarness() {
  return LendFrom(harness_pool_, /*reset_on_return=*/false,
                  [this] { return ConnectAsHarness(TimeoutScaledForLoad(options_.call_timeout_ms)); });
}

void RedisServer::SetClockMs(int64_t epoch_ms) { clock_->SetMs(epoch_ms); }

int64_t RedisServer::ClockMs() const { return clock_->NowMs(); }

Status RedisServer::Reset(int64_t start_epoch_ms) {
  if (!running() || control_ == nullptr || !control_->alive()) {
    return Status::FailedPrecondition("Reset needs a running server");
  }
  // SCRIPT FLUSH rebuilds the server's Lua interpreter (~60 us, the bulk of
  // a reset), so it is sent only when a script ran: EVAL and SCRIPT LOAD
  // cache every script they run until the flush, and INFO memory counts
  // them (a server that does not say is flushed).
  std::vector<std::vector<std::string_view>> commands = {{"FLUSHALL"}, {"INFO", "memory"}};
  if (version_.AtLeast(7, 0)) commands.push_back({"FUNCTION", "FLUSH"});
  Result<std::vector<Reply>> replies = control_->CallAll(commands);
  if (!replies.ok()) return replies.status();
  for (size_t i = 0; i < commands.size(); ++i) {
    if ((*replies)[i].is_error()) {
      return Status::Internal(
          fmt::format("{} replied {}", fmt::join(commands[i], " "), (*replies)[i].Render()));
    }
  }
  const Reply& memory = (*replies)[1];
  if (!memory.is_string() || InfoField(memory.str(), "number_of_cached_scripts") != "0") {
    Result<Reply> flushed = control_->Call({"SCRIPT", "FLUSH"});
    if (!flushed.ok()) return flushed.status();
    if (flushed->is_error()) return Status::Internal("SCRIPT FLUSH replied " + flushed->Render());
  }
  if (Status s = RemoveSnapshot(); !s.ok()) return s;
  clock_->ResetMs(start_epoch_ms);
  return Status::Ok();
}

void RedisServer::Stop() {
  if (!running()) return;
  // SIGTERM is only noticed by serverCron, up to 1000/hz = 100 ms later;
  // SHUTDOWN NOSAVE stops it now (same outcome: no save points are set).
  // A server that shuts down closes the connection instead of replying;
  // any reply (an error) means it is still up, and SIGTERM follows.
  bool asked = control_ != nullptr && control_->alive() &&
               !control_->Call({"SHUTDOWN", "NOSAVE"}).ok();
  control_.reset();
  pool_ = std::make_shared<Pool>();  // connections out now are not pooled again (nor harness ones)
  harness_pool_ = std::make_shared<Pool>();
  if (!asked) ::kill(pid_, SIGTERM);
  int wait_status;
  if (!WaitForExit(pid_, options_.stop_timeout_ms, &wait_status)) KillAndReap(pid_);
  ForgetProcess();
}

void RedisServer::Crash() {
  if (!running()) return;
  control_.reset();
  pool_ = std::make_shared<Pool>();
  harness_pool_ = std::make_shared<Pool>();
  KillAndReap(pid_);
  ForgetProcess();
}

Status RedisServer::Restart() {
  XACKLY_CHECK(!running());
  if (options_.persistence == Persistence::kNone) {
    // A SAVE issued by the simulator still writes a snapshot, which the
    // server would load; with no persistence nothing may survive.
    if (Status s = RemoveSnapshot(); !s.ok()) return s;
  }
  if (Status s = Launch(); !s.ok() || !options_.prove_clock) return s;
  // Mid-case: the clock may not move, but TIME must still equal it.
  return ProveVirtualClock(/*move_it=*/false);
}

void RedisServer::ForgetProcess() {
  UnregisterLiveServer(pid_);
  pid_ = -1;
}

Status RedisServer::RemoveSnapshot() {
  std::error_code ec;
  std::filesystem::remove(dir_->File(kRdbName), ec);
  if (ec) return Status::IoError(fmt::format("cannot remove {}: {}", dir_->File(kRdbName), ec.message()));
  return Status::Ok();
}

Status RedisServer::CrashAndRestart() {
  Crash();
  return Restart();
}

}  // namespace xackly
