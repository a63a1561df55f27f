// RedisServer: what survives a crash in each persistence mode, Reset between
// cases, clear errors for bad input, and no server outliving its owner.
#include "harness/redis_server.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/live_servers.h"
#include "harness/subprocess.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Lifecycle per persistence mode.

struct CrashCase {
  Persistence persistence;
  const char* survivors;  // XRANGE s - + after the crash
};

void PrintTo(const CrashCase& c, std::ostream* os) { *os << PersistenceName(c.persistence); }

class CrashRestartTest : public ServerTest, public ::testing::WithParamInterface<CrashCase> {};

// Writes 1-1, SAVEs, writes 2-1 (each acknowledged), crashes, restarts.
TEST_P(CrashRestartTest, KeepsWhatThePersistenceModePromises) {
  RedisServer* server = StartServer(GetParam().persistence);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = std::move(server->ConnectHarness()).value();  // SAVE
  ASSERT_EQ(Render(*conn, {"XADD", "s", "1-1", "f", "v"}), "\"1-1\"");
  ASSERT_EQ(Render(*conn, {"SAVE"}), "+OK");
  ASSERT_EQ(Render(*conn, {"XADD", "s", "2-1", "f", "v"}), "\"2-1\"");
  const pid_t old_pid = server->pid();

  ASSERT_TRUE(server->CrashAndRestart().ok());
  EXPECT_FALSE(ProcessRunning(old_pid)) << "the crashed server is still running";
  EXPECT_TRUE(server->running());
  EXPECT_NE(server->pid(), old_pid);
  EXPECT_FALSE(Render(*conn, {"PING"}).starts_with("+")) << "a pre-crash connection still works";
  std::unique_ptr<Connection> after = ConnectTo(*server);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(Render(*after, {"XRANGE", "s", "-", "+"}), GetParam().survivors);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, CrashRestartTest,
    ::testing::Values(
        CrashCase{Persistence::kNone, "[]"},
        CrashCase{Persistence::kRdb, "[[\"1-1\", [\"f\", \"v\"]]]"},
        CrashCase{Persistence::kAofAlways, "[[\"1-1\", [\"f\", \"v\"]], [\"2-1\", [\"f\", \"v\"]]]"}),
    [](const ::testing::TestParamInfo<CrashCase>& param_info) {
      switch (param_info.param.persistence) {
        case Persistence::kNone: return std::string("None");
        case Persistence::kRdb: return std::string("Rdb");
        case Persistence::kAofAlways: return std::string("AofAlways");
      }
      return std::string("Unknown");
    });

class RedisServerTest : public ServerTest {};

TEST_F(RedisServerTest, RunsPrivatelyOnAUnixSocketOnly) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  struct stat st;
  ASSERT_EQ(::stat(server->dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(fs::is_socket(server->socket_path()));
  std::unique_ptr<Connection> conn = std::move(server->ConnectHarness()).value();
  EXPECT_EQ(Render(*conn, {"CONFIG", "GET", "port"}), "[\"port\", \"0\"]") << "TCP is open";
  EXPECT_EQ(Render(*conn, {"CONFIG", "GET", "maxmemory-policy"}),
            "[\"maxmemory-policy\", \"noeviction\"]");
  EXPECT_EQ(Render(*conn, {"CONFIG", "GET", "save"}), "[\"save\", \"\"]");
}

TEST_F(RedisServerTest, DetectsTheVersionTheBinaryReports) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  // `redis-server --version` prints "Redis server v=7.0.15 sha=...".
  const std::string text = RunProgram(server->binary_path(), {"--version"}).output;
  const ServerVersion& v = server->version();
  EXPECT_TRUE(v.product == "redis" || v.product == "valkey") << v.product;
  EXPECT_TRUE(Contains(text, fmt::format("v={}.{}.{} ", v.major, v.minor, v.patch)))
      << "detected " << v.ToString() << ", binary says " << text;
}

// A reply bound stretched by the load per CPU, between 1x and 10x: a loaded
// CI machine's slowness is not a dead server, and an idle one keeps the
// bound as set. An unreadable load leaves it unchanged.
// A server that persists starts only with 64 MiB free in its directory; the
// refusal names the directory, what it has, what it needs and what to do.
// One without persistence writes nothing there and always starts.
TEST(FreeSpaceVerdictTest, APersistingServerNeedsSixtyFourMebibytesAndTheRefusalSaysSo) {
  EXPECT_TRUE(FreeSpaceVerdict(Persistence::kRdb, "/tmp/d", kMinFreeBytesForPersistence).ok());
  EXPECT_TRUE(FreeSpaceVerdict(Persistence::kNone, "/tmp/d", 0).ok());
  const Status low = FreeSpaceVerdict(Persistence::kAofAlways, "/tmp/d", kMinFreeBytesForPersistence - 1);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.code(), Status::Code::kInternal);
  EXPECT_EQ(low.message(),
            "/tmp/d has 65535 KiB free; a server with persistence aof-always needs at least 64 MiB there for its "
            "snapshots and append-only file (a save that fails would lose data no protocol is to blame for). Free "
            "some space or set TMPDIR to a directory with more");
}

TEST(TimeoutScaledForLoadTest, StretchesByTheLoadPerCpuBetweenOnceAndTenTimes) {
  ScopedTempRoot root;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  auto with_load = [&](double per_cpu, int timeout_ms) {
    const std::string file = root.path() + "/loadavg";
    std::ofstream(file) << fmt::format("{:.2f} 0.50 0.40 2/300 12345\n", per_cpu * static_cast<double>(cpus));
    return TimeoutScaledForLoad(timeout_ms, file);
  };
  EXPECT_EQ(with_load(0.25, 1000), 1000);
  EXPECT_EQ(with_load(3, 1000), 3000);
  EXPECT_EQ(with_load(25, 1000), 10'000);
  EXPECT_EQ(with_load(10, 1'000'000'000), INT32_MAX);
  EXPECT_EQ(TimeoutScaledForLoad(1000, root.path() + "/no-such-file"), 1000);
}

TEST(ParseServerInfoTest, TellsRedisFromValkey) {
  Result<ServerVersion> redis =
      ParseServerInfo("# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n");
  ASSERT_TRUE(redis.ok());
  EXPECT_EQ(redis->ToString(), "redis 7.0.15");
  // Valkey 8 reports a Redis-compatible redis_version as well as its own.
  Result<ServerVersion> valkey = ParseServerInfo(
      "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n");
  ASSERT_TRUE(valkey.ok());
  EXPECT_EQ(valkey->ToString(), "valkey 8.0.1");
  EXPECT_TRUE(valkey->AtLeast(8, 0));
  Result<ServerVersion> garbage = ParseServerInfo("# Server\r\nredis_version:seven\r\n");
  EXPECT_FALSE(garbage.ok());
}

TEST_F(RedisServerTest, ResetEmptiesTheServerAndRewindsTheClock) {
  RedisServer* server = StartServer(Persistence::kRdb);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = std::move(server->ConnectHarness()).value();  // SAVE
  ASSERT_EQ(Render(*conn, {"XADD", "s", "1-1", "f", "v"}), "\"1-1\"");
  Result<Reply> sha = conn->Call({"SCRIPT", "LOAD", "return 1"});
  ASSERT_TRUE(sha.ok() && sha->is_string());
  ASSERT_EQ(Render(*conn, {"SAVE"}), "+OK");
  server->AdvanceClockMs(3'600'000);

  ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
  EXPECT_EQ(server->ClockMs(), kDefaultStartEpochMs);
  // The connection made before Reset still works.
  EXPECT_EQ(Render(*conn, {"DBSIZE"}), "0");
  EXPECT_EQ(Render(*conn, {"SCRIPT", "EXISTS", sha->str()}), "[0]");
  EXPECT_EQ(Render(*conn, {"TIME"}), "[\"1700000000\", \"0\"]");
  // The snapshot is gone too: a crash does not bring the old case back.
  ASSERT_TRUE(server->CrashAndRestart().ok());
  std::unique_ptr<Connection> after = ConnectTo(*server);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(Render(*after, {"DBSIZE"}), "0");
}

// Reset sends SCRIPT FLUSH only when scripts are cached: a script run by
// EVAL (not loaded) must be flushed too, or the next case would find it.
TEST_F(RedisServerTest, ResetFlushesAScriptThatOnlyRanThroughEval) {
  RedisServer* server = StartServer(Persistence::kNone);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);
  // EVAL caches the script it runs under its SHA1 (of "return 7").
  const std::string sha = "59b6ab2fbe0ee4b25733de0f62e6cda4899ef8e9";
  ASSERT_EQ(Render(*conn, {"EVAL", "return 7", "0"}), "7");
  ASSERT_EQ(Render(*conn, {"SCRIPT", "EXISTS", sha}), "[1]");
  // How many SCRIPT FLUSH the server has run (its command statistics).
  auto flushes = [&] {
    Result<Reply> info = conn->Call({"INFO", "commandstats"});
    if (!info.ok() || !info->is_string()) return -1;
    const std::string& text = info->str();
    const std::string key = "cmdstat_script|flush:calls=";
    const size_t at = text.find(key);
    return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + key.size());
  };
  ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
  EXPECT_EQ(Render(*conn, {"SCRIPT", "EXISTS", sha}), "[0]");
  EXPECT_EQ(flushes(), 1);
  // With nothing cached, a reset sends no SCRIPT FLUSH (it rebuilds the
  // server's Lua interpreter, the bulk of a reset's cost), and none is
  // left either.
  ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
  EXPECT_EQ(flushes(), 1);
  EXPECT_EQ(Render(*conn, {"SCRIPT", "EXISTS", sha}), "[0]");
  EXPECT_EQ(Render(*conn, {"EVALSHA", sha, "0"}).substr(0, 9), "-NOSCRIPT");
}

// A pooled connection goes to the next case (or worker) without the
// session state its last user left: a worker that crashed between MULTI
// and EXEC must not make the next user's commands come back QUEUED.
TEST_F(RedisServerTest, APooledConnectionComesBackWithoutAnOpenTransaction) {
  RedisServer* server = StartServer(Persistence::kNone);
  ASSERT_NE(server, nullptr);
  {
    std::unique_ptr<Connection> first = ConnectTo(*server);
    ASSERT_NE(first, nullptr);
    ASSERT_EQ(Render(*first, {"WATCH", "k"}), "+OK");
    ASSERT_EQ(Render(*first, {"MULTI"}), "+OK");
    ASSERT_EQ(Render(*first, {"SET", "k", "1"}), "+QUEUED");
  }  // dropped mid-transaction, as a crashed worker's is
  std::unique_ptr<Connection> next = ConnectTo(*server);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(Render(*next, {"PING"}), "+PONG");
  EXPECT_EQ(Render(*next, {"EXISTS", "k"}), "0");  // the queued SET never ran
  ASSERT_EQ(Render(*next, {"MULTI"}), "+OK");       // and no WATCH aborts a new one
  ASSERT_EQ(Render(*next, {"SET", "k", "2"}), "+QUEUED");
  EXPECT_EQ(Render(*next, {"EXEC"}), "[+OK]");
}

// What the server answers follows the requests alone, not how much real
// time passed between them: its cron runs on the virtual clock's deadlines
// but wakes on real timeouts, so a pause after the clock moved lets it run
// before the next request instead of after it. KEYS over a keyspace whose
// table is being resized must come back the same either way. With
// activerehashing on (the server's default), the pause changes the order:
// the check below is what xackly's config prevents.
TEST_F(RedisServerTest, ARealTimePauseBeforeARequestDoesNotChangeItsAnswer) {
  auto keys_after = [&](bool pause, const std::vector<std::string>& extra) {
    RedisServerOptions options = TestServerOptions();
    options.extra_config = extra;
    RedisServer* server = StartServer(options);
    if (server == nullptr) return std::string();
    std::unique_ptr<Connection> conn = ConnectTo(*server);
    if (conn == nullptr) return std::string();
    for (int i = 1; i <= 70; ++i) (void)conn->Call({"SET", "k" + std::to_string(i), "v"});
    server->AdvanceClockMs(300);  // the cron's next deadline has passed
    if (pause) ::usleep(400'000);  // longer than its real epoll timeout
    return Render(*conn, {"KEYS", "k*"});
  };
  EXPECT_EQ(keys_after(false, {}), keys_after(true, {}));
  EXPECT_NE(keys_after(false, {"activerehashing yes"}), keys_after(true, {"activerehashing yes"}))
      << "the pause no longer lets the cron rehash first: this test shows nothing";
}

TEST_F(RedisServerTest, StopIsCleanAndRestartComesBack) {
  RedisServer* server = StartServer(Persistence::kAofAlways);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);
  ASSERT_EQ(Render(*conn, {"SET", "k", "v"}), "+OK");
  const pid_t pid = server->pid();
  server->Stop();
  EXPECT_FALSE(server->running());
  EXPECT_FALSE(ProcessRunning(pid));
  EXPECT_TRUE(Contains(server->LogTail(), "ready to exit")) << server->LogTail();
  ASSERT_TRUE(server->Restart().ok());
  std::unique_ptr<Connection> after = ConnectTo(*server);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(Render(*after, {"GET", "k"}), "\"v\"");
}

// ---------------------------------------------------------------------------
// Bad input.

// Starts a server that must fail with `code`; returns the error message.
std::string StartFailure(const RedisServerOptions& options, Status::Code code) {
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
  if (server.ok()) {
    ADD_FAILURE() << "the server started";
    return "";
  }
  EXPECT_EQ(server.status().code(), code) << server.status().ToString();
  return server.status().message();
}

void ExpectContainsAll(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (std::string_view part : parts) {
    EXPECT_TRUE(Contains(message, part)) << "missing '" << part << "' in: " << message;
  }
}

TEST(RedisServerErrorTest, MissingBinaryGivenByFlag) {
  RedisServerOptions options = TestServerOptions();
  options.server_path = "/nonexistent/redis-server";
  ExpectContainsAll(StartFailure(options, Status::Code::kNotFound),
                    {"--server /nonexistent/redis-server", "apt-get install redis-server"});
}

TEST(RedisServerErrorTest, MissingBinaryNamesEverythingSearched) {
  ScopedEnv no_env(kServerEnv, nullptr);
  ScopedEnv path("PATH", "/nonexistent-a:/nonexistent-b");
  ExpectContainsAll(StartFailure(TestServerOptions(), Status::Code::kNotFound),
                    {"--server", "XACKLY_REDIS_SERVER", "/nonexistent-a", "/nonexistent-b",
                     "apt-get install redis-server"});
}

TEST(RedisServerErrorTest, BinaryFromEnvironmentVariableIsUsed) {
  ScopedEnv env(kServerEnv, "/nonexistent/from-env");
  ExpectContainsAll(StartFailure(TestServerOptions(), Status::Code::kNotFound),
                    {"XACKLY_REDIS_SERVER=/nonexistent/from-env"});
}

TEST(RedisServerErrorTest, ServerThatExitsAtStartupReportsItsOutput) {
  ScopedTempRoot root;
  const std::string script = root.path() + "/fake-server";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho 'fake server: cannot open the frobnicator' >&2\nexit 1\n";
  }
  ::chmod(script.c_str(), 0755);
  RedisServerOptions options = TestServerOptions();
  options.server_path = script;
  options.temp_root = root.path();
  ExpectContainsAll(StartFailure(options, Status::Code::kInternal),
                    {"exited with status 1", "fake server: cannot open the frobnicator"});
  EXPECT_EQ(LiveServerCount(), 0);
}

TEST(RedisServerErrorTest, InvalidConfigOptionReportsTheServersComplaint) {
  RedisServerOptions options = TestServerOptions();
  options.extra_config = {"no-such-option yes"};
  ExpectContainsAll(StartFailure(options, Status::Code::kInternal),
                    {"Bad directive or wrong number of arguments", "no-such-option"});
}

TEST(RedisServerErrorTest, OverlongSocketPathIsRejectedBeforeAnythingIsCreated) {
  ScopedTempRoot root;
  const std::string long_dir = root.path() + "/" + std::string(100, 'd');
  ASSERT_TRUE(fs::create_directory(long_dir));
  ScopedEnv tmpdir("TMPDIR", long_dir.c_str());
  ExpectContainsAll(StartFailure(TestServerOptions(), Status::Code::kInvalidArgument),
                    {"at most 107", "TMPDIR"});
  EXPECT_TRUE(fs::is_empty(long_dir)) << "a temp dir was left behind";
}

// ---------------------------------------------------------------------------
// No server outlives its owner.

// Forks a child that starts a server in `root`, reports the server's pid and
// then runs `then_in_child` (which must not return). Returns {child, server}.
template <typename Fn>
std::pair<pid_t, pid_t> ForkServerOwner(const std::string& root, Fn then_in_child) {
  int fds[2];
  XACKLY_CHECK(::pipe(fds) == 0);
  pid_t child = ::fork();
  XACKLY_CHECK(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    RedisServerOptions options = TestServerOptions();
    options.temp_root = root;
    Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
    pid_t pid = server.ok() ? (*server)->pid() : -1;
    (void)!::write(fds[1], &pid, sizeof(pid));
    if (!server.ok()) ::_exit(1);
    then_in_child();
    ::_exit(2);  // not reached
  }
  ::close(fds[1]);
  pid_t server_pid = -1;
  if (::read(fds[0], &server_pid, sizeof(server_pid)) != sizeof(server_pid)) server_pid = -1;
  ::close(fds[0]);
  return {child, server_pid};
}

class OwnerDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Orphaned servers are re-parented to this process, so that the test can
    // see them die and reap them instead of init.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  }
  // Checks that `server_pid` stops within a second, then reaps it.
  void ExpectGoneWithinASecond(pid_t server_pid) {
    EXPECT_TRUE(WaitUntilGone(server_pid, 1'000)) << "redis-server " << server_pid << " outlived its owner";
    if (ProcessRunning(server_pid)) ::kill(server_pid, SIGKILL);  // leave nothing behind
    int status;
    ::waitpid(server_pid, &status, 0);
  }
  ScopedTempRoot root_;
};

TEST_F(OwnerDeathTest, SigkilledOwnerTakesItsServerDown) {
  auto [child, server_pid] = ForkServerOwner(root_.path(), [] {
    while (true) ::pause();
  });
  ASSERT_GT(server_pid, 0);
  ASSERT_TRUE(ProcessRunning(server_pid));
  ::kill(child, SIGKILL);
  int status;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ExpectGoneWithinASecond(server_pid);

  // The killed owner left its temp dir; the next server start sweeps it.
  int dirs_before = 0;
  for (const auto& entry : fs::directory_iterator(root_.path())) dirs_before += entry.is_directory();
  EXPECT_EQ(dirs_before, 1);
  RedisServerOptions options = TestServerOptions();
  options.temp_root = root_.path();
  Result<std::unique_ptr<RedisServer>> next = RedisServer::Start(options);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  int dirs_after = 0;
  for (const auto& entry : fs::directory_iterator(root_.path())) {
    dirs_after += entry.is_directory();
    EXPECT_EQ(entry.path().string(), (*next)->dir()) << "stale dir survived";
  }
  EXPECT_EQ(dirs_after, 1);
  const pid_t next_pid = (*next)->pid();
  next->reset();
  EXPECT_FALSE(ProcessRunning(next_pid));
}

TEST_F(OwnerDeathTest, SignalHandlersKillServersAndTheOwnerStillDiesOfTheSignal) {
  auto [child, server_pid] = ForkServerOwner(root_.path(), [] {
    InstallLiveServerSignalHandlers();
    while (true) ::pause();
  });
  ASSERT_GT(server_pid, 0);
  ::kill(child, SIGTERM);
  int status;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << DescribeWaitStatus(status);
  ExpectGoneWithinASecond(server_pid);
}

// An exec that fails is Spawn's error, with errno's text, never a child
// that seems to run: the harness would otherwise wait for a server that
// never started.
TEST(SpawnTest, AnExecThatFailsIsAnErrorNamingWhy) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("xackly-spawn-{}", ::getpid());
  fs::create_directories(dir);
  SpawnOptions spawn;
  spawn.path = (dir / "no-such-binary").string();
  spawn.output_path = (dir / "out").string();
  Result<pid_t> pid = Spawn(spawn);
  EXPECT_FALSE(pid.ok());
  if (!pid.ok()) {
    EXPECT_EQ(pid.status().code(), Status::Code::kIoError);
    EXPECT_NE(pid.status().message().find("No such file"), std::string::npos) << pid.status().ToString();
  } else {
    KillAndReap(*pid);
  }
  fs::remove_all(dir);
}

TEST(LiveServerRegistryTest, KillLiveServersKillsEveryRegisteredServer) {
  RedisServerOptions options = TestServerOptions();
  Result<std::unique_ptr<RedisServer>> a = RedisServer::Start(options);
  Result<std::unique_ptr<RedisServer>> b = RedisServer::Start(options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(LiveServerCount(), 2);
  const pid_t pid_a = (*a)->pid();
  const pid_t pid_b = (*b)->pid();
  KillLiveServers();
  EXPECT_TRUE(WaitUntilGone(pid_a, 1'000));
  EXPECT_TRUE(WaitUntilGone(pid_b, 1'000));
  a->reset();
  b->reset();
  EXPECT_EQ(LiveServerCount(), 0);
}

TEST(ServerDirTest, SweepRemovesOnlyDirsWhoseOwnerIsDead) {
  ScopedTempRoot root;
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  int status;
  ::waitpid(dead, &status, 0);
  auto make_dir = [&](const std::string& name, pid_t owner) {
    fs::create_directory(root.path() + "/" + name);
    if (owner > 0) std::ofstream(root.path() + "/" + name + "/" + kOwnerMarkerName) << owner << "\n";
  };
  make_dir("xackly-dead", dead);
  make_dir("xackly-alive", ::getpid());
  make_dir("xackly-nomarker", 0);
  make_dir("other-dead", dead);
  EXPECT_EQ(RemoveStaleServerDirs(root.path()), 1);
  EXPECT_FALSE(fs::exists(root.path() + "/xackly-dead"));
  EXPECT_TRUE(fs::exists(root.path() + "/xackly-alive"));
  EXPECT_TRUE(fs::exists(root.path() + "/xackly-nomarker"));
  EXPECT_TRUE(fs::exists(root.path() + "/other-dead"));
}

}  // namespace
}  // namespace xackly
