// Helpers shared by the harness tests: servers that are checked to be gone
// at teardown, private temp roots, and running the xackly executable.
#pragma once

#include <sys/types.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "harness/redis_server.h"
#include "reports/model.h"

namespace xackly {

// Options for a test server: the clock library from this build tree.
RedisServerOptions TestServerOptions(Persistence persistence = Persistence::kNone);

// The canonical rendering of `argv`'s reply, or "<status>" when the exchange
// itself failed, e.g. "<io-error: ...>".
std::string Render(Connection& conn, std::initializer_list<std::string_view> argv);

inline bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Polls until `pid` is no longer running (gone or a zombie), for at most
// `timeout_ms`. Returns true when it stopped in time.
bool WaitUntilGone(pid_t pid, int timeout_ms);

// A fresh directory /tmp/xt-XXXXXX (short, so sockets fit), removed with
// everything in it at scope exit.
class ScopedTempRoot {
 public:
  ScopedTempRoot();
  ~ScopedTempRoot();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);  // value nullptr: unset
  ~ScopedEnv();

 private:
  std::string name_;
  bool had_old_ = false;
  std::string old_;
};

// Fixture that starts servers and, at teardown, destroys them and checks
// that none of their processes is still running.
class ServerTest : public ::testing::Test {
 protected:
  // Starts a server or records a fatal failure and returns nullptr.
  RedisServer* StartServer(const RedisServerOptions& options);
  RedisServer* StartServer(Persistence persistence = Persistence::kNone) {
    return StartServer(TestServerOptions(persistence));
  }
  // A new connection to `server`, or nullptr after a recorded failure.
  std::unique_ptr<Connection> ConnectTo(RedisServer& server);
  void TearDown() override;

 private:
  std::vector<std::unique_ptr<RedisServer>> servers_;
};

// A ServerTest with one server started and one connection to it, for tests
// that send it commands directly.
class ConnectedServerTest : public ServerTest {
 protected:
  void SetUp() override {
    server_ = StartServer();
    ASSERT_NE(server_, nullptr);
    conn_ = ConnectTo(*server_);
    ASSERT_NE(conn_, nullptr);
  }

  RedisServer* server_ = nullptr;
  std::unique_ptr<Connection> conn_;
};

struct CommandOutput {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string output;  // stdout and stderr, interleaved
};

// Runs `path` with `args` and this environment plus `env_overrides`
// ("NAME=value"), waits for it (at most a little under the test target's
// ctest timeout, two minutes where none is set) and collects its output.
CommandOutput RunProgram(const std::string& path, const std::vector<std::string>& args,
                         const std::vector<std::string>& env_overrides = {});

// Expects `merged` (a merge of shards) to say what `whole` (the unsharded
// check) says: verdict, cases run and failed, first hit, and the minimal
// counterexample (its size, trace hash and the faults that fired).
void ExpectSameVerdict(const report::CheckReport& merged, const report::CheckReport& whole);

// A protocol script whose consumer reads its own pending entries, then new
// ones, and runs `handle` (Lua statements over the entry `e`) for each,
// after `setup` (statements run once at start-up): the loop the harness
// tests' scripts share, their handling their own.
std::string PollingConsumer(std::string_view handle, std::string_view setup = "");

// A real consumer in Python (redis-py): after `setup` (statements run once,
// before it connects as `r`), it reads new entries of its group for ever
// and runs `handle` (statements over `id` and `fields`, indented by 12
// spaces) for each; `g`, `me` and `st` are its group, name and stream.
std::string PythonConsumer(std::string_view handle, std::string_view setup = "");

// Runs the xackly executable of this build.
inline CommandOutput RunXackly(const std::vector<std::string>& args,
                               const std::vector<std::string>& env_overrides = {}) {
  return RunProgram(XACKLY_TEST_EXE, args, env_overrides);
}

// The same in directory `dir`, keeping only its stdout (stderr, where
// progress and notes go, is dropped): what `xackly ... | tool` sees.
inline CommandOutput RunXacklyStdoutIn(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> sh = {"-c", "cd \"$1\" && shift && exec \"$@\" 2>/dev/null", "sh", dir, XACKLY_TEST_EXE};
  sh.insert(sh.end(), args.begin(), args.end());
  return RunProgram("/bin/sh", sh);
}
inline CommandOutput RunXacklyStdout(const std::vector<std::string>& args) { return RunXacklyStdoutIn(".", args); }

}  // namespace xackly
