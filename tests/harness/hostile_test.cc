// Issue 29: hostile scripts, a full disk, a loaded machine. Each promise
// is enforced by construction (the server's ACL, SQLite's authorizer, the
// file type, ...) and each test here failed before that construction.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/hiredis_connection.h"
#include "harness/scenario_files.h"
#include "harness/subprocess.h"
#include "sim/faults.h"
#include "sim/protocol.h"
#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

namespace fs = std::filesystem;

// A correct one-worker consumer whose first lines are `prologue`, as a
// scenario expecting `ok` with one event and no faults; runs it with `run`.
CommandOutput RunConsumerWithPrologue(const ScopedTempRoot& root, const std::string& prologue,
                                      const std::vector<std::string>& extra_args = {}) {
  const std::string script = fmt::format(R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
{}
  while true do
    for _, e in ipairs(w:read(">", {{count = 10, block_ms = 1000}})) do
      w:effect(e.fields.event_id, "external", {{entry = e}})
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua",
                                         prologue);
  EXPECT_TRUE(WriteFileAtomically(root.path() + "/hostile.lua", script).ok());
  EXPECT_TRUE(WriteFileAtomically(root.path() + "/hostile.toml",
                                  "name = \"hostile\"\nexpect = \"ok\"\n[protocol]\nscript = \"hostile.lua\"\n"
                                  "[workload]\nworkers = 1\nevents = 1\n[schedule]\nfaults = []\n")
                  .ok());
  std::vector<std::string> args = {"run", "--scenario", root.path() + "/hostile.toml", "--out",
                                   root.path() + "/out"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return RunXackly(args);
}

// --- Item 2: the protocol's connections cannot reach the network ---------------

// A bystander: a plain redis-server a user runs on a loopback TCP port (and
// a Unix socket, for this test's own questions). Killed by pid at the end.
class BystanderRedis {
 public:
  explicit BystanderRedis(const std::string& dir) : socket_(dir + "/bystander.sock") {
    port_ = FreeLoopbackPort();
    SpawnOptions spawn;
    spawn.path = FindServerBinary("").value();
    spawn.args = {"--port", std::to_string(port_), "--bind", "127.0.0.1", "--unixsocket", socket_,
                  "--save", "", "--appendonly", "no", "--dir", dir};
    spawn.env = EnvironmentWith({});
    spawn.output_path = dir + "/bystander.out";
    Result<pid_t> pid = Spawn(spawn);
    if (!pid.ok()) return;
    pid_ = *pid;
    for (int i = 0; i < 400 && conn_ == nullptr; ++i) {
      Result<std::unique_ptr<Connection>> c = ConnectUnix(socket_, 1000);
      if (c.ok()) {
        conn_ = std::move(*c);
      } else {
        ::usleep(5000);
      }
    }
    if (conn_ != nullptr) (void)conn_->Call({"CONFIG", "RESETSTAT"});
  }
  ~BystanderRedis() {
    if (pid_ > 0) KillAndReap(pid_);
  }
  bool ready() const { return conn_ != nullptr; }
  int port() const { return port_; }
  // Every command the server executed since it started, from INFO
  // commandstats, less this test's own (CONFIG RESETSTAT, INFO).
  std::vector<std::string> CommandsSeen() {
    Result<Reply> info = conn_->Call({"INFO", "commandstats"});
    std::vector<std::string> seen;
    if (!info.ok() || !info->is_string()) return {"<INFO failed>"};
    std::istringstream lines(info->str());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("cmdstat_", 0) != 0) continue;
      std::string name = line.substr(8, line.find(':') - 8);
      if (name != "config|resetstat" && name != "info") seen.push_back(line);
    }
    return seen;
  }

 private:
  static int FreeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
  }
  std::string socket_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<Connection> conn_;
};

TEST(ProtocolUserTest, AScriptsMigrateNeverReachesAnotherRedisDirectlyOrInEval) {
  ScopedTempRoot root;
  BystanderRedis bystander(root.path());
  ASSERT_TRUE(bystander.ready());
  const std::string prologue = fmt::format(R"lua(
  w:redis("SET", "loot", "x")
  local direct = w:redis("MIGRATE", "127.0.0.1", "{0}", "loot", "0", "1000", "COPY", "REPLACE")
  local inside = w:redis("EVAL", "return redis.pcall('MIGRATE', ARGV[1], ARGV[2], KEYS[1], '0', '1000', 'COPY', 'REPLACE')",
                         1, "loot", "127.0.0.1", "{0}")
  local replica = w:redis("REPLICAOF", "127.0.0.1", "{0}")
  if not xackly.is_error(direct) then error("MIGRATE: " .. tostring(direct)) end
  if not xackly.is_error(inside) then error("MIGRATE in EVAL: " .. tostring(inside)) end
  if not xackly.is_error(replica) then error("REPLICAOF: " .. tostring(replica)) end
)lua",
                                           bystander.port());
  CommandOutput run = RunConsumerWithPrologue(root, prologue);
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_EQ(bystander.CommandsSeen(), std::vector<std::string>{}) << run.output;
}

TEST(ProtocolUserTest, CommandsThatWouldTakeTheConnectionAwayAreErrorsTheScriptSees) {
  ScopedTempRoot root;
  // Each must come back as an error reply (a value), and the run go on to
  // its verdict: HELLO 3 would switch the connection to RESP3 under the
  // harness's reply parser, ACL SETUSER would widen the protocol's rights.
  const std::string prologue = R"lua(
  for _, argv in ipairs({{"HELLO", "3"}, {"ACL", "SETUSER", "default", "+@all"}, {"SHUTDOWN", "NOSAVE"},
                         {"DEBUG", "SLEEP", "0"}, {"SAVE"}, {"FLUSHALL"},
                         {"EVAL", "return redis.pcall('CONFIG', 'SET', 'dir', '/')", 0}}) do
    local r = w:redis(table.unpack(argv))
    if not xackly.is_error(r) and not (type(r) == "table" and r.err) then
      error(argv[1] .. " was not refused: " .. tostring(r))
    end
  end
)lua";
  CommandOutput run = RunConsumerWithPrologue(root, prologue);
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
}

TEST_F(ServerTest, TheProtocolsUserSurvivesARestartAndTheResetBetweenCases) {
  RedisServer* server = StartServer(Persistence::kAofAlways);
  ASSERT_NE(server, nullptr);
  auto refused = [&] {
    std::unique_ptr<Connection> conn = ConnectTo(*server);
    return conn != nullptr && Contains(Render(*conn, {"CONFIG", "GET", "dir"}), "NOPERM");
  };
  EXPECT_TRUE(refused());
  ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
  EXPECT_TRUE(refused());
  ASSERT_TRUE(server->CrashAndRestart().ok());
  EXPECT_TRUE(refused());
  // The harness's own connection keeps its rights.
  std::unique_ptr<Connection> harness = std::move(server->ConnectHarness()).value();
  EXPECT_EQ(Render(*harness, {"CONFIG", "GET", "maxmemory"}),
            fmt::format("[\"maxmemory\", \"{}\"]", kServerMaxMemoryBytes));
}

// --- Item 3: a harness failure is never the protocol's verdict -----------------

TEST_F(ServerTest, ASaveTheServerCannotWriteIsAHarnessErrorNotALoss) {
  RedisServer* server = StartServer(Persistence::kRdb);
  ASSERT_NE(server, nullptr);
  // The name of the server's temporary snapshot taken by a directory: SAVE
  // fails to write, as on a full disk (a read-only dir would not stop root).
  fs::create_directory(fmt::format("{}/temp-{}.rdb", server->dir(), server->pid()));
  const ProtocolDef* protocol = FindProtocol("txn-dedupe");
  ASSERT_NE(protocol, nullptr);
  RunConfig config = RunConfig::For(*protocol);
  config.persistence = Persistence::kRdb;
  config.workers = 1;
  config.events = 3;
  config.fault_schedule = std::vector<FaultSpec>{*ParseFaultSpec("save @40ms"), *ParseFaultSpec("restart @41ms")};
  Result<RunResult> run = RunSimulation(config, server);
  ASSERT_FALSE(run.ok()) << "judged " << run->observed << " on a failed SAVE";
  EXPECT_EQ(ExitCodeOf(run.status()), kExitHarnessFailure) << run.status().ToString();
  EXPECT_TRUE(Contains(run.status().message(), "SAVE failed")) << run.status().ToString();
}

// --- Item 11: FIFOs and other non-regular files --------------------------------

TEST(NonRegularFileTest, AFifoAsScenarioOrScriptIsRefusedAtOnce) {
  ScopedTempRoot root;
  const std::string fifo = root.path() + "/pipe.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CommandOutput run = RunXackly({"run", "--scenario", fifo});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "not a regular file")) << run.output;

  const std::string fifo_script = root.path() + "/pipe.lua";
  ASSERT_EQ(::mkfifo(fifo_script.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/s.toml",
                                  "name = \"s\"\nexpect = \"ok\"\n[protocol]\nscript = \"pipe.lua\"\n")
                  .ok());
  run = RunXackly({"run", "--scenario", root.path() + "/s.toml"});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "s.toml: protocol.script:")) << run.output;
  EXPECT_TRUE(Contains(run.output, "not a regular file")) << run.output;
}

// A script or include file that is not there is refused naming the scenario
// file, its field and the path looked for, before anything runs.
TEST(MissingScriptFileTest, AMissingScriptOrIncludeIsRefusedNamingTheFieldAndThePath) {
  ScopedTempRoot root;
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/main.lua", "function worker(w) end\n").ok());
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/no-script.toml",
                                  "name = \"s\"\nexpect = \"ok\"\n[protocol]\nscript = \"gone.lua\"\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/no-include.toml",
                                  "name = \"s\"\nexpect = \"ok\"\n[protocol]\nscript = \"main.lua\"\n"
                                  "include = [\"lib/gone.lua\"]\n")
                  .ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"no-script.toml", ": protocol.script: "},
      {"no-include.toml", ": protocol.include: "},
  };
  for (const auto& [file, field] : cases) {
    Result<Scenario> s = LoadScenarioFile(root.path() + "/" + file);
    ASSERT_FALSE(s.ok()) << file;
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.status().message().rfind(root.path() + "/" + file + field, 0), 0u) << s.status().message();
    EXPECT_TRUE(Contains(s.status().message(), file == "no-script.toml" ? "/gone.lua" : "/lib/gone.lua"))
        << s.status().message();
  }
}

// --- Item 12: nothing of xackly leaks into the servers it starts -----------------

TEST_F(ServerTest, EverySocketXacklyOpensIsClosedOnExec) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  std::unique_ptr<Connection> harness = std::move(server->ConnectHarness()).value();
  ASSERT_EQ(Render(*conn, {"PING"}), "+PONG");
  int sockets = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(entry.path(), ec).string();
    if (ec || target.rfind("socket:", 0) != 0) continue;
    const int fd = std::stoi(entry.path().filename().string());
    ++sockets;
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "fd " << fd << " (" << target << ") would be inherited";
  }
  EXPECT_GE(sockets, 2);
}


// --- Item 8: no server outlives xackly, even behind a wrapper script ----------

// The pids whose parent is `parent` and, when `comm` is given, whose
// command name is `comm` (from /proc/PID/stat).
std::vector<pid_t> ChildrenOf(pid_t parent, const std::string& comm = "") {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t open = stat.find('(');
    const size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 >= stat.size()) continue;
    const std::string command = stat.substr(open + 1, close - open - 1);
    const char state = stat[close + 2];
    const pid_t ppid = std::atoi(stat.c_str() + close + 4);
    if (ppid == parent && state != 'Z' && (comm.empty() || command == comm)) out.push_back(std::stoi(name));
  }
  return out;
}

TEST(OrphanServerTest, AWrapperThatDoesNotExecLeavesNoServerWhenXacklyIsKilled) {
  for (int sig : {SIGKILL, SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    ScopedTempRoot root;
    const std::string wrapper = root.path() + "/redis-wrapper";
    ASSERT_TRUE(WriteFileAtomically(wrapper, "#!/bin/sh\n'" + FindServerBinary("").value() +
                                                 "' \"$@\"\nexit $?\n")
                    .ok());
    ::chmod(wrapper.c_str(), 0755);
    SpawnOptions spawn;
    spawn.path = XACKLY_TEST_EXE;
    spawn.args = {"check", "--protocol", "txn-dedupe", "--cases", "100000", "--server", wrapper,
                  "--quiet", "--no-pin", "-j", "1", "--out", root.path() + "/out"};
    spawn.env = EnvironmentWith({});
    spawn.output_path = root.path() + "/xackly.out";
    Result<pid_t> xackly = Spawn(spawn);
    ASSERT_TRUE(xackly.ok()) << xackly.status().ToString();
    pid_t shell = -1;
    pid_t server = -1;
    for (int i = 0; i < 6000 && server < 0; ++i) {  // until check's server runs (at most a minute)
      for (pid_t child : ChildrenOf(*xackly)) {
        std::vector<pid_t> servers = ChildrenOf(child, "redis-server");
        if (!servers.empty()) {
          shell = child;
          server = servers[0];
        }
      }
      if (server < 0) ::usleep(10'000);
    }
    if (server < 0) {
      KillAndReap(*xackly);
      Result<std::string> said = ReadFile(spawn.output_path);
      FAIL() << "no server behind the wrapper; xackly said:\n" << (said.ok() ? *said : "");
    }
    ::kill(*xackly, sig);
    int status = 0;
    EXPECT_TRUE(WaitForExit(*xackly, 30'000, &status));
    EXPECT_TRUE(WaitUntilGone(server, 10'000)) << "the server behind the wrapper outlived xackly";
    EXPECT_TRUE(WaitUntilGone(shell, 10'000)) << "the wrapper outlived xackly";
    if (ProcessRunning(server)) ::kill(server, SIGKILL);
  }
}


// --- Items 6 and 7: the same trace from the same seed, whatever the server
// process and the current directory -------------------------------------------

// The trace hash `run` printed, or "" when it printed none.
std::string TraceHashOf(const CommandOutput& run) {
  std::smatch m;
  if (std::regex_search(run.output, m, std::regex("\\btrace ([0-9a-f]{16}),"))) return m[1];
  return "";
}

TEST(ServerRandomnessTest, SetOrderAndRandomPicksAreTheSameOnEveryServerProcess) {
  ScopedTempRoot root;
  // 200 string members: a hash table, whose order follows the server's hash
  // seed; SRANDMEMBER, SPOP and RANDOMKEY draw from its generators. The
  // script branches on what it got, so a difference changes the verdict too.
  const std::string prologue = R"lua(
  local members = {}
  for i = 1, 200 do members[#members + 1] = "m" .. i end
  w:redis("SADD", "s", table.unpack(members))
  w:redis("SADD", "small", "3", "1", "2")
  for i = 1, 40 do w:redis("SET", "k" .. i, i) end
  local first = w:redis("SMEMBERS", "s")[1]
  local picks = {w:redis("SRANDMEMBER", "s"), w:redis("SPOP", "s"), w:redis("SRANDMEMBER", "small"),
                 w:redis("RANDOMKEY"), table.concat(w:redis("SRANDMEMBER", "s", -5), ",")}
  w:redis("SET", "picked", first .. "|" .. table.concat(picks, "|"))
  w:redis("SET", "keys", table.concat(w:redis("KEYS", "k*"), ","))
)lua";
  CommandOutput first = RunConsumerWithPrologue(root, prologue);
  ASSERT_EQ(first.exit_code, kExitOk) << first.output;
  CommandOutput second = RunConsumerWithPrologue(root, prologue);
  ASSERT_EQ(second.exit_code, kExitOk) << second.output;
  EXPECT_FALSE(TraceHashOf(first).empty()) << first.output;
  EXPECT_EQ(TraceHashOf(first), TraceHashOf(second)) << "two server processes answered differently";
  // Twice on fresh servers and cases on a reused one (after a reset).
  CommandOutput twice = RunConsumerWithPrologue(root, prologue, {"--check-determinism"});
  EXPECT_EQ(twice.exit_code, kExitOk) << twice.output;
}

TEST_F(ServerTest, RandomPicksStartOverForEveryCaseOnAReusedServer) {
  ScopedTempRoot root;
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/picks.lua", R"lua(
function consumer(w)
  local members = {}
  for i = 1, 200 do members[#members + 1] = "m" .. i end
  w:redis("SADD", "s", table.unpack(members))
  w:redis("SPOP", "s", 3)
  w:redis("SRANDMEMBER", "s", -3)
end
)lua").ok());
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/picks.toml",
                                  "name = \"picks\"\nexpect = \"ok\"\n[protocol]\nscript = \"picks.lua\"\n"
                                  "[workload]\nworkers = 1\nevents = 1\n[schedule]\nfaults = []\n")
                  .ok());
  Result<Scenario> scenario = LoadScenarioFile(root.path() + "/picks.toml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::vector<std::string> hashes;
  for (int i = 0; i < 3; ++i) {  // the same server, reset between cases
    Result<RunResult> run = RunSimulation(scenario->config, server);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    hashes.push_back(run->TraceHashHex());
  }
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(hashes[0], hashes[2]);
}

TEST(ChunkNameTest, AScriptsErrorMessagesDoNotDependOnTheCurrentDirectory) {
  ScopedTempRoot root;
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/lib/helper.lua",
                                  "function explode() error('boom') end\n").ok());
  const std::string script = R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local _, own = pcall(function() error("own") end)
  local _, included = pcall(explode)
  w:redis("SET", "errors", own .. "|" .. included)
  while true do
    for _, e in ipairs(w:read(">", {count = 10, block_ms = 1000})) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua";
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/scripts/named.lua", script).ok());
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/named.toml",
                                  "name = \"named\"\nexpect = \"ok\"\n[protocol]\nscript = \"scripts/named.lua\"\n"
                                  "include = [\"lib/helper.lua\"]\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[schedule]\nfaults = []\n")
                  .ok());
  CommandOutput absolute = RunXackly({"run", "--scenario", root.path() + "/named.toml"});
  ASSERT_EQ(absolute.exit_code, kExitOk) << absolute.output;
  const std::string relative = fs::relative(root.path() + "/named.toml", fs::current_path()).string();
  ASSERT_NE(relative, root.path() + "/named.toml");
  CommandOutput from_here = RunXackly({"run", "--scenario", relative});
  ASSERT_EQ(from_here.exit_code, kExitOk) << from_here.output;
  EXPECT_FALSE(TraceHashOf(absolute).empty()) << absolute.output;
  EXPECT_EQ(TraceHashOf(absolute), TraceHashOf(from_here));
}


TEST(ProtocolUserTest, AReadInsideAnOpenMultiIsAScriptErrorAtItsLine) {
  ScopedTempRoot root;
  CommandOutput run = RunConsumerWithPrologue(root, "  w:redis(\"MULTI\")\n");
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex("error: hostile\\.lua:[0-9]+: w:read inside MULTI")))
      << run.output;
}

// --- Item 12: one run per --out; a manifest before the files -------------------

TEST(OutDirTest, ASecondRunOnTheSameOutIsRefusedWhileTheFirstHoldsIt) {
  ScopedTempRoot root;
  const std::string out = root.path() + "/out";
  SpawnOptions spawn;
  spawn.path = XACKLY_TEST_EXE;
  spawn.args = {"check", "--protocol", "txn-dedupe", "--cases", "100000", "--quiet", "-j", "1", "--out", out};
  spawn.env = EnvironmentWith({});
  spawn.output_path = root.path() + "/first.out";
  Result<pid_t> first = Spawn(spawn);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  for (int i = 0; i < 6000 && !fs::exists(out + "/.xackly-lock"); ++i) ::usleep(10'000);
  ::usleep(200'000);  // past the lock itself
  CommandOutput second = RunXackly({"run", "--protocol", "no-dedupe", "--out", out});
  ::kill(*first, SIGTERM);
  int status = 0;
  EXPECT_TRUE(WaitForExit(*first, 30'000, &status));
  EXPECT_EQ(second.exit_code, kExitUsage) << second.output;
  EXPECT_TRUE(Contains(second.output, "is in use by another xackly run")) << second.output;
  // Once the first is gone, the directory is free again.
  CommandOutput third = RunXackly({"run", "--protocol", "txn-dedupe", "--out", out});
  EXPECT_EQ(third.exit_code, kExitOk) << third.output;
}

TEST(OutDirTest, AReportThatCannotBeWrittenLeavesEveryWrittenFileInTheManifest) {
  ScopedTempRoot root;
  const std::string out = root.path() + "/out";
  fs::create_directories(out + "/report.md");  // the markdown report cannot be written
  CommandOutput run = RunXackly({"run", "--protocol", "txn-dedupe", "--out", out});
  EXPECT_EQ(run.exit_code, kExitHarnessFailure) << run.output;
  Result<std::string> manifest = ReadFile(out + "/.xackly-files");
  ASSERT_TRUE(manifest.ok()) << "no manifest beside what was written";
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name[0] == '.' || name == "report.md") continue;
    EXPECT_TRUE(Contains(*manifest, name + "\n")) << name << " is not in the manifest:\n" << *manifest;
  }
}

}  // namespace
}  // namespace xackly
