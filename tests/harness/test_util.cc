#include "tests/harness/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/subprocess.h"

namespace xackly {
namespace {

// How long RunProgram waits for a program before killing it: a little under
// the ctest timeout of the test target (tests/harness/CMakeLists.txt).
#ifdef XACKLY_TEST_SUBPROCESS_LIMIT_MS
constexpr int kSubprocessLimitMs = XACKLY_TEST_SUBPROCESS_LIMIT_MS;
#else
constexpr int kSubprocessLimitMs = 120'000;
#endif

}  // namespace

RedisServerOptions TestServerOptions(Persistence persistence) {
  RedisServerOptions options;
  options.persistence = persistence;
  options.clock_library = XACKLY_TEST_CLOCK_LIB;
  return options;
}

std::string Render(Connection& conn, std::initializer_list<std::string_view> argv) {
  Result<Reply> reply = conn.Call(argv);
  if (!reply.ok()) return "<" + reply.status().ToString() + ">";
  return reply->Render();
}

bool WaitUntilGone(pid_t pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (ProcessRunning(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

ScopedTempRoot::ScopedTempRoot() {
  char templ[] = "/tmp/xt-XXXXXX";
  XACKLY_CHECK(::mkdtemp(templ) != nullptr);
  path_ = templ;
}

ScopedTempRoot::~ScopedTempRoot() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name); old != nullptr) {
    had_old_ = true;
    old_ = old;
  }
  if (value == nullptr) {
    ::unsetenv(name);
  } else {
    ::setenv(name, value, 1);
  }
}

ScopedEnv::~ScopedEnv() {
  if (had_old_) {
    ::setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

RedisServer* ServerTest::StartServer(const RedisServerOptions& options) {
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
  if (!server.ok()) {
    ADD_FAILURE() << "cannot start a server: " << server.status().ToString();
    return nullptr;
  }
  servers_.push_back(std::move(*server));
  return servers_.back().get();
}

std::unique_ptr<Connection> ServerTest::ConnectTo(RedisServer& server) {
  Result<std::unique_ptr<Connection>> conn = server.Connect();
  if (!conn.ok()) {
    ADD_FAILURE() << "cannot connect: " << conn.status().ToString();
    return nullptr;
  }
  return std::move(*conn);
}

void ServerTest::TearDown() {
  for (std::unique_ptr<RedisServer>& server : servers_) {
    const pid_t pid = server->pid();
    const std::string dir = server->dir();
    server.reset();
    if (pid > 0) {
      EXPECT_FALSE(ProcessRunning(pid)) << "redis-server " << pid << " outlived its owner";
    }
    EXPECT_FALSE(std::filesystem::exists(dir)) << dir << " was not removed";
  }
}

void ExpectSameVerdict(const report::CheckReport& merged, const report::CheckReport& whole) {
  EXPECT_EQ(merged.name, whole.name);
  EXPECT_EQ(merged.observed, whole.observed) << whole.name;
  EXPECT_EQ(merged.matched, whole.matched) << whole.name;
  EXPECT_EQ(merged.cases_run, whole.cases_run) << whole.name;
  EXPECT_EQ(merged.cases_failed, whole.cases_failed) << whole.name;
  EXPECT_EQ(merged.first_hit_case, whole.first_hit_case) << whole.name;
  EXPECT_EQ(merged.counterexample_size, whole.counterexample_size) << whole.name;
  ASSERT_EQ(merged.counterexample.has_value(), whole.counterexample.has_value()) << whole.name;
  if (whole.counterexample) {
    EXPECT_EQ(merged.counterexample->trace_hash, whole.counterexample->trace_hash) << whole.name;
    EXPECT_EQ(merged.counterexample->fired, whole.counterexample->fired) << whole.name;
  }
}

CommandOutput RunProgram(const std::string& path, const std::vector<std::string>& args,
                         const std::vector<std::string>& env_overrides) {
  ScopedTempRoot root;
  SpawnOptions spawn;
  spawn.path = path;
  spawn.args = args;
  spawn.env = EnvironmentWith(env_overrides);
  spawn.output_path = root.path() + "/output";
  CommandOutput result;
  Result<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) {
    result.output = pid.status().ToString();
    return result;
  }
  int wait_status = 0;
  if (!WaitForExit(*pid, kSubprocessLimitMs, &wait_status)) {
    KillAndReap(*pid);
    result.output = "timed out";
    return result;
  }
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  std::ifstream in(spawn.output_path);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  return result;
}

std::string PollingConsumer(std::string_view handle, std::string_view setup) {
  return "\nfunction consumer(w)\n" + std::string(setup) + R"lua(
  local id = "0"
  while true do
    local batch = w:read(id, {count = 5, block_ms = 1000})
    if id == "0" and #batch == 0 then id = ">" end
    for _, e in ipairs(batch) do
)lua" + std::string(handle) + R"lua(
    end
  end
end
)lua";
}

std::string PythonConsumer(std::string_view handle, std::string_view setup) {
  return "import os, select, socket, redis\n" + std::string(setup) +
         "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
         "g, me, st = os.environ['XACKLY_GROUP'], os.environ['XACKLY_WORKER'], os.environ['XACKLY_STREAM']\n"
         "while True:\n"
         "    for _, entries in r.xreadgroup(g, me, {st: '>'}, count=10, block=2000) or []:\n"
         "        for id, fields in entries:\n" +
         std::string(handle);
}

}  // namespace xackly
