// Real consumers (issue 33): `[protocol] command` runs the user's own
// consumer program behind the RESP front. The examples in
// examples/real/python (Debian's python3-redis) are judged as their
// expectations say, shrunk, replayed in a fresh process to the same trace,
// and the same seed gives the same trace; a consumer that fails is a harness
// error that shows what it printed, never a verdict.
#include <sys/stat.h>
#include <sys/syscall.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/real_consumer.h"
#include "reports/report.h"
#include "sim/limits.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const std::string kExamples = std::string(XACKLY_SOURCE_DIR) + "/examples/real/";

// The examples need Debian's python3 with its redis module, and ioredis
// under examples/real/node (.ci/setup --tests installs both): a failure
// here says so instead of skipping.
void RequirePythonRedis() {
  CommandOutput probe = RunProgram("/usr/bin/python3", {"-c", "import redis"});
  ASSERT_EQ(probe.exit_code, 0) << "the real-consumer examples need /usr/bin/python3 with python3-redis "
                                   "(apt-get install python3-redis, or bash .ci/setup --tests): "
                                << probe.output;
}
void RequireNodeIoredis() {
  ASSERT_TRUE(std::filesystem::is_directory(kExamples + "node/node_modules/ioredis"))
      << "examples/real/node needs ioredis: bash .ci/setup --tests (npm ci in examples/real/node)";
}

// How many times `needle` occurs in `text`.
int CountOf(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The first line of `text` that holds `needle` ("" when none does).
std::string LineWith(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end == std::string::npos ? std::string::npos : end - (start == std::string::npos ? 0 : start + 1));
}

struct FaultedRun {
  CommandOutput run;
  std::string trace;
};

// `xackly run` of examples/real/python/consumer.py as `workers` processes
// over `events` events, expecting ok, with exactly `faults` (nothing drawn).
FaultedRun RunConsumerPy(const ScopedTempRoot& dir, int workers, int events, const std::vector<std::string>& faults) {
  std::string list;
  for (const std::string& f : faults) list += (list.empty() ? "\"" : ", \"") + f + "\"";
  const std::string scenario = dir.path() + "/faulted.toml";
  EXPECT_TRUE(WriteFileAtomically(scenario, fmt::format("name = \"faulted\"\nexpect = \"ok\"\n[workload]\nworkers = {}\n"
                                                        "events = {}\n[protocol]\ncommand = [\"/usr/bin/python3\", "
                                                        "\"{}python/consumer.py\"]\n[faults]\nkinds = []\n"
                                                        "[schedule]\nfaults = [{}]\n",
                                                        workers, events, kExamples, list))
                  .ok());
  FaultedRun r{RunXackly({"run", "--scenario", scenario, "--trace", dir.path() + "/t"}), ""};
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  EXPECT_TRUE(trace.ok()) << r.run.output;
  if (trace.ok()) r.trace = *trace;
  return r;
}

// `xackly run` of `source` as a one-worker Python consumer (script.py in
// `dir`), with no faults drawn, the scheduled `faults` only, and `env` set
// for xackly; twice on fresh servers (--check-determinism) unless `once`.
FaultedRun RunPythonScript(const ScopedTempRoot& dir, const std::string& source,
                           const std::vector<std::string>& faults = {}, const std::vector<std::string>& env = {},
                           bool once = false) {
  std::string list;
  for (const std::string& f : faults) list += (list.empty() ? "\"" : ", \"") + f + "\"";
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/script.py", source).ok());
  const std::string scenario = dir.path() + "/script.toml";
  EXPECT_TRUE(WriteFileAtomically(scenario, fmt::format("name = \"script\"\nexpect = \"lost\"\n[workload]\n"
                                                        "workers = 1\nevents = 1\n[protocol]\ncommand = "
                                                        "[\"/usr/bin/python3\", \"script.py\"]\n[faults]\n"
                                                        "kinds = []\n[schedule]\nfaults = [{}]\n",
                                                        list))
                  .ok());
  std::vector<std::string> args = {"run", "--scenario", scenario, "--trace", dir.path() + "/t"};
  if (!once) args.push_back("--check-determinism");
  FaultedRun r{RunXackly(args, env), ""};
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  EXPECT_TRUE(trace.ok()) << r.run.output;
  if (trace.ok()) r.trace = *trace;
  return r;
}

// The start of the thread tests' Python consumers: a client `r`, one
// request (so that later waits count from a reply), and `start`.
constexpr char kThreadsPrelude[] =
    "import os, select, threading, time, redis\n"
    "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
    "r.echo('start')\n"
    "start = time.monotonic()\n";

// RunPythonScript of kThreadsPrelude and then `body`, in a directory of its
// own.
FaultedRun RunThreadsScript(const std::string& body, const std::vector<std::string>& env = {},
                            bool once = false) {
  ScopedTempRoot dir;
  return RunPythonScript(dir, std::string(kThreadsPrelude) + body, {}, env, once);
}

struct Judged {
  CommandOutput run;
  report::CheckReport row;
};

// `check` of examples/real/<example>.toml ("python/correct").
Judged CheckExample(const ScopedTempRoot& dir, const std::string& example, int cases) {
  Judged out;
  const std::string out_dir = dir.path() + "/" + example;
  out.run = RunXackly({"check", "--scenario", kExamples + example + ".toml", "--cases", std::to_string(cases),
                       "--out", out_dir, "--format", "json,text"});
  Result<std::string> text = ReadFile(out_dir + "/report.json");
  EXPECT_TRUE(text.ok()) << out.run.output;
  if (!text.ok()) return out;
  Result<report::Report> json = report::ParseJsonReport(*text);
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  if (json.ok() && json->checks.size() == 1) out.row = json->checks[0];
  return out;
}

// One language's examples, each its own test (they run side by side): the
// correct consumer is ok with the crashes and losses around XACK fired;
// acking in a finally is lost, no idempotency key duplicate, shrunk; the
// replay file, run by a fresh process, reproduces the counterexample's
// trace. The Node consumer sends the very requests the Python one does
// (the same seed gives the same trace): fewer cases, for the suite's time.
struct ExampleLanguage {
  const char* name;
  int cases;
};
void PrintTo(const ExampleLanguage& language, std::ostream* os) { *os << language.name; }

class RealConsumerExampleTest : public ::testing::TestWithParam<ExampleLanguage> {
 protected:
  void SetUp() override {
    if (std::string(GetParam().name) == "python") {
      RequirePythonRedis();
    } else {
      RequireNodeIoredis();
    }
  }
  Judged Check(const std::string& example) {
    return CheckExample(dir_, std::string(GetParam().name) + "/" + example, GetParam().cases);
  }
  ScopedTempRoot dir_;
};

TEST_P(RealConsumerExampleTest, TheCorrectConsumerIsOkWithTheFaultsAroundXackFired) {
  Judged correct = Check("correct");
  EXPECT_EQ(correct.run.exit_code, kExitOk) << correct.run.output;
  EXPECT_EQ(correct.row.observed, "ok");
  EXPECT_GT(correct.row.fired_totals["crash@after-effect"], 0) << correct.run.output;
  EXPECT_GT(correct.row.fired_totals["crash@before-XACK"], 0) << correct.run.output;
  EXPECT_GT(correct.row.fired_totals["lost-reply@XACK"], 0) << correct.run.output;
}

TEST_P(RealConsumerExampleTest, AckingInAFinallyIsLost) {
  Judged finally = Check("ack-in-finally");
  EXPECT_EQ(finally.run.exit_code, kExitOk) << finally.run.output;
  EXPECT_EQ(finally.row.observed, "lost");
  EXPECT_TRUE(Contains(finally.run.output, "acked-without-effect")) << finally.run.output;
}

TEST_P(RealConsumerExampleTest, NoIdempotencyKeyIsADuplicateShrunkAndReplayedByAFreshProcess) {
  const std::string language = GetParam().name;
  Judged no_key = Check("no-idempotency-key");
  EXPECT_EQ(no_key.run.exit_code, kExitOk) << no_key.run.output;
  EXPECT_EQ(no_key.row.observed, "duplicate");
  // Shrunk: a few events and workers run an effect twice (one of each with
  // a crash after the effect; two workers and slow effects claimed by the
  // other without any fault, as seed 1 finds first since error-reply joined
  // the model), not the search's 3 workers and 10 events.
  ASSERT_TRUE(no_key.row.counterexample.has_value()) << no_key.run.output;
  EXPECT_LE(no_key.row.counterexample->events, 3) << no_key.run.output;
  EXPECT_LE(no_key.row.counterexample->workers, 2) << no_key.run.output;

  const std::string replay =
      dir_.path() + "/" + language + "/no-idempotency-key/" + language + "-no-idempotency-key.replay.toml";
  CommandOutput again = RunXackly({"replay", replay, "--quiet"});
  EXPECT_EQ(again.exit_code, kExitOk) << again.output;
  EXPECT_TRUE(Contains(again.output, "observed duplicate (expected duplicate): matched")) << again.output;
  EXPECT_TRUE(Contains(again.output, "trace " + no_key.row.counterexample->trace_hash)) << again.output;
}

INSTANTIATE_TEST_SUITE_P(Languages, RealConsumerExampleTest,
                         ::testing::Values(ExampleLanguage{"python", 20}, ExampleLanguage{"node", 10}),
                         [](const ::testing::TestParamInfo<ExampleLanguage>& language) {
                           return std::string(language.param.name);
                         });

TEST(RealConsumerTest, RepliesAreEncodedAsRedisWouldSendThem) {
  EXPECT_EQ(EncodeResp2(Reply::Nil()), "$-1\r\n");
  EXPECT_EQ(EncodeResp2(Reply::Integer(-3)), ":-3\r\n");
  EXPECT_EQ(EncodeResp2(Reply::StatusText("OK")), "+OK\r\n");
  EXPECT_EQ(EncodeResp2(Reply::String(std::string("a\r\nb\0c", 6))), std::string("$6\r\na\r\nb\0c\r\n", 12));
  // An error or status line cannot carry a line break: it would end the frame.
  EXPECT_EQ(EncodeResp2(Reply::Error("ERR two\nlines")), "-ERR two lines\r\n");
  EXPECT_EQ(EncodeResp2(Reply::Array({Reply::String("1-0"), Reply::Array({}), Reply::Nil()})),
            "*3\r\n$3\r\n1-0\r\n*0\r\n$-1\r\n");
}

// A consumer command's program with a '/' in it is a path relative to the
// scenario's directory (normalized: "./bin/../consumer.sh" is fine); one
// that is not there, or not executable, is bad input naming it.
TEST(RealConsumerTest, AProgramWithASlashIsFoundRelativeToTheScenariosDirectory) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/consumer.sh", "#!/bin/sh\nexit 0\n").ok());
  ASSERT_EQ(::chmod((dir.path() + "/consumer.sh").c_str(), 0755), 0);
  std::filesystem::create_directories(dir.path() + "/bin");
  for (const char* program : {"./consumer.sh", "./bin/../consumer.sh"}) {
    RealConsumerOptions options;
    options.command = {program};
    options.working_dir = dir.path();
    options.clock_library = XACKLY_TEST_CLOCK_LIB;
    Result<std::shared_ptr<const RealConsumer>> consumer = RealConsumer::Create(options);
    EXPECT_TRUE(consumer.ok()) << program << ": " << consumer.status().ToString();
  }
  RealConsumerOptions missing;
  missing.command = {"./absent.sh"};
  missing.working_dir = dir.path();
  missing.clock_library = XACKLY_TEST_CLOCK_LIB;
  Result<std::shared_ptr<const RealConsumer>> absent = RealConsumer::Create(missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find(dir.path() + "/absent.sh is not an executable file"), std::string::npos)
      << absent.status().message();
}

// A consumer's XREADGROUP parks only when it has a BLOCK option: found
// wherever the server would read it, and nowhere it would not.
TEST(RealConsumerTest, AReadsBlockOptionIsFoundInAnyOrderBeforeStreamsOnly) {
  using Argv = std::vector<std::string>;
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">"}), 4u);
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "BLOCK", "100", "GROUP", "g", "c", "STREAMS", "s", ">"}), 1u);
  EXPECT_EQ(BlockOption(Argv{"xreadgroup", "group", "g", "c", "count", "10", "block", "0", "streams", "s", ">"}), 6u);
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}), 0u);
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "GROUP", "g", "BLOCK", "STREAMS", "s", ">"}), 0u)  // a consumer named BLOCK
      << "an option's argument is no option";
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "BLOCK", "100"}), 0u)  // a stream named BLOCK
      << "nothing after STREAMS is an option";
  EXPECT_EQ(BlockOption(Argv{"XREADGROUP", "GROUP", "g", "c", "BLOCK"}), 0u) << "BLOCK without its value";
}

// A consumer thread asleep in a call that ends by itself in real time is
// busy in the consumer's own time, not waiting on the virtual clock: read
// from its /proc/.../syscall line (number, six hex arguments, sp, pc).
TEST(RealConsumerTest, ATimedWaitIsASleepOrAWaitWithATimeoutAndNothingElse) {
  auto line = [](long nr, std::vector<std::string> args) {
    args.resize(6, "0x0");
    return fmt::format("{} {} 0x7ffd0000 0x7f000000", nr, fmt::join(args, " "));
  };
  const std::string futex_addr = "0x55d0c0de0000", timeout = "0x7ffd12345678";
  const std::vector<std::pair<std::string, bool>> cases = {
      {line(SYS_nanosleep, {"0x7ffd1000"}), true},
      {line(SYS_clock_nanosleep, {"0x1", "0x0", "0x7ffd1000"}), true},
      {line(SYS_futex, {futex_addr, "0x0", "0x1", timeout}), true},     // FUTEX_WAIT with a timeout
      {line(SYS_futex, {futex_addr, "0x80", "0x1", timeout}), true},    // FUTEX_WAIT_PRIVATE
      {line(SYS_futex, {futex_addr, "0x189", "0x1", timeout}), true},   // FUTEX_WAIT_BITSET, private, realtime
      {line(SYS_futex, {futex_addr, "0x80", "0x1", "0x0"}), false},     // no timeout: the clock's virtual wait
      {line(SYS_futex, {futex_addr, "0x81", "0x1", timeout}), false},   // FUTEX_WAKE_PRIVATE is no wait
      {line(SYS_futex, {futex_addr, "0x1", "0x1", timeout}), false},    // FUTEX_WAKE
      {line(SYS_futex, {futex_addr, "0x83", "0x1", timeout}), false},   // FUTEX_REQUEUE_PRIVATE
      {line(SYS_ppoll, {"0x7ffd2000", "0x1", timeout}), true},
      {line(SYS_ppoll, {"0x7ffd2000", "0x1", "0x0"}), false},
      {line(SYS_epoll_pwait, {"0x3", "0x7ffd3000", "0x10", "0x64"}), true},        // 100 ms
      {line(SYS_epoll_pwait, {"0x3", "0x7ffd3000", "0x10", "0xffffffff"}), false},  // -1: for ever
      {line(SYS_pselect6, {"0x4", "0x7ffd4000", "0x0", "0x0", timeout}), true},
      {line(SYS_pselect6, {"0x4", "0x7ffd4000", "0x0", "0x0", "0x0"}), false},
      {line(SYS_read, {"0x3", "0x7ffd5000", "0x1000"}), false},
      {"running", false},
      {"-1 0x7ffd0000 0x7f000000", false},
      {"", false},
  };
  for (const auto& [syscall_line, timed] : cases) EXPECT_EQ(InTimedWait(syscall_line), timed) << syscall_line;
}

// The front answers a client library's connection set-up itself, whatever
// its case, as the server it stands for would; a malformed one (CLIENT
// SETNAME without its name) or any other CLIENT or SELECT goes on to the
// server, which answers it as it answers a script.
TEST(RealConsumerTest, TheFrontAnswersAClientLibrarysConnectionSetUpItself) {
  const std::vector<std::pair<std::vector<std::string>, bool>> cases = {
      {{"CLIENT", "SETNAME", "worker-1"}, true},
      {{"client", "setinfo", "LIB-NAME", "redis-py"}, true},
      {{"SELECT", "0"}, true},
      {{"CLIENT", "SETNAME"}, false},
      {{"CLIENT", "SETINFO", "LIB-NAME"}, false},
      {{"CLIENT", "SETNAME", "a", "b"}, false},
      {{"CLIENT", "KILL", "ID", "7"}, false},
      {{"CLIENT"}, false},
      {{"SELECT", "1"}, false},
      {{"SELECT"}, false},
      {{}, false},
  };
  for (const auto& [argv, answered] : cases) {
    EXPECT_EQ(IsConnectionSetUp(argv), answered) << fmt::format("{}", fmt::join(argv, " "));
  }
}

// XACKLY.EFFECT's options reach the effect call, and each bad one is the
// consumer's error reply naming the option and its bounds, at the bounds.
TEST(RealConsumerTest, EffectCommandOptionsAreReadAndABadOneIsAnErrorReplyNamingIt) {
  const std::string most = std::to_string(kMaxDurationMs);
  Result<EffectCall> call = ParseEffect({"XACKLY.EFFECT", "order:1", "key", "k1", "KEY_TTL", "0", "ENTRY", "1-0",
                                         "duration", most, "Timeout", "250"});
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->event_id, "order:1");
  EXPECT_EQ(call->key, "k1");
  EXPECT_EQ(call->key_ttl_ms, 0);
  EXPECT_EQ(call->stream_id, "1-0");
  EXPECT_EQ(call->duration_ms, kMaxDurationMs);
  EXPECT_EQ(call->timeout_ms, 250);

  const std::string over = std::to_string(kMaxDurationMs + 1);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"XACKLY.EFFECT"}, "ERR xackly: usage: XACKLY.EFFECT <event>"},
      {{"XACKLY.EFFECT", ""}, "ERR xackly: usage: XACKLY.EFFECT <event>"},
      {{"XACKLY.EFFECT", "e", "KEY"}, "ERR xackly: usage: XACKLY.EFFECT <event>"},
      {{"XACKLY.EFFECT", "e", "COLOR", "red"}, "ERR xackly: unknown option COLOR (usage: XACKLY.EFFECT"},
      {{"XACKLY.EFFECT", "e", "DURATION", over}, "ERR xackly: DURATION takes milliseconds 0.." + most + ", got " + over},
      {{"XACKLY.EFFECT", "e", "KEY_TTL", "-1"}, "ERR xackly: KEY_TTL takes milliseconds 0.." + most + ", got -1"},
      {{"XACKLY.EFFECT", "e", "TIMEOUT", "1.5"}, "ERR xackly: TIMEOUT takes milliseconds 0.." + most + ", got 1.5"},
      {{"XACKLY.EFFECT", "e", "TIMEOUT", "12ms"}, "ERR xackly: TIMEOUT takes milliseconds"},
      {{"XACKLY.EFFECT", "e", "DURATION", ""}, "ERR xackly: DURATION takes milliseconds"},
  };
  for (const auto& [argv, reply] : bad) {
    Result<EffectCall> r = ParseEffect(argv);
    ASSERT_FALSE(r.ok()) << fmt::format("{}", fmt::join(argv, " "));
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(reply, 0), 0u) << r.status().message();
  }
}

// The SQLite consumer keeps its effect, its dedupe record and the
// xackly_effects row in one transaction of the run's database: correct, it
// is ok with crashes between COMMIT and XACK fired; acking before COMMIT
// loses the event (the transaction dies with the process); a dedupe mark
// committed after the effect's transaction lets a crash between the two
// commits apply it twice; without a dedupe
// record a redelivery applies it twice, shrunk to one event and one worker,
// and its replay reproduces the counterexample's trace.
TEST(RealConsumerTest, EffectsCommittedInTheConsumersOwnDatabaseAreJudged) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  Judged correct = CheckExample(dir, "python/sqlite-correct", 20);
  EXPECT_EQ(correct.run.exit_code, kExitOk) << correct.run.output;
  EXPECT_EQ(correct.row.observed, "ok");
  EXPECT_GT(correct.row.fired_totals["crash@after-effect"], 0) << correct.run.output;
  EXPECT_GT(correct.row.fired_totals["crash@before-XACK"], 0) << correct.run.output;
  EXPECT_GT(correct.row.fired_totals["lost-reply@XACK"], 0) << correct.run.output;

  Judged early = CheckExample(dir, "python/sqlite-ack-before-commit", 20);
  EXPECT_EQ(early.run.exit_code, kExitOk) << early.run.output;
  EXPECT_EQ(early.row.observed, "lost");

  // Its dedupe mark in a second transaction: a crash right after the
  // effect's COMMIT (before the process's next statement, not only at its
  // next Redis request) applies it twice.
  Judged mark_after = CheckExample(dir, "python/sqlite-mark-after-commit", 20);
  EXPECT_EQ(mark_after.run.exit_code, kExitOk) << mark_after.run.output;
  EXPECT_EQ(mark_after.row.observed, "duplicate");

  Judged no_dedupe = CheckExample(dir, "python/sqlite-no-dedupe", 20);
  EXPECT_EQ(no_dedupe.run.exit_code, kExitOk) << no_dedupe.run.output;
  EXPECT_EQ(no_dedupe.row.observed, "duplicate");
  EXPECT_TRUE(Contains(no_dedupe.run.output, "1 event, 1 worker")) << no_dedupe.run.output;
  ASSERT_TRUE(no_dedupe.row.counterexample.has_value()) << no_dedupe.run.output;
  CommandOutput again = RunXackly(
      {"replay", dir.path() + "/python/sqlite-no-dedupe/python-sqlite-no-dedupe.replay.toml", "--quiet"});
  EXPECT_EQ(again.exit_code, kExitOk) << again.output;
  EXPECT_TRUE(Contains(again.output, "trace " + no_dedupe.row.counterexample->trace_hash)) << again.output;
}

// A lost reply closes the connection the request came on: the process sees
// it (redis-py raises ConnectionError), handles it and goes on in the same
// incarnation; the server side of the connection is new, so a MULTI it had
// open is gone, as after a real reset.
TEST(RealConsumerTest, ALostReplyResetsTheConnectionAndTheProcessGoesOn) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/resets.py",
                                  "import os, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "print('incarnation', os.environ['XACKLY_INCARNATION'], flush=True)\n"
                                  "for i in range(3):\n"
                                  "    try:\n"
                                  "        r.execute_command('MULTI')\n"
                                  "        r.execute_command('INCR', 'tries')\n"
                                  "        r.execute_command('EXEC')\n"
                                  "    except redis.ConnectionError as e:\n"
                                  "        r.echo('reset seen in incarnation ' + os.environ['XACKLY_INCARNATION'])\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/resets.toml",
                                  "name = \"resets\"\nexpect = \"lost\"\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"resets.py\"]\n"
                                  "[faults]\nkinds = []\n"
                                  "[schedule]\nfaults = [\"lost-reply w1 INCR #1\"]\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/resets.toml", "--trace", dir.path() + "/t"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "its connection is reset: the process sees it close and goes on")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ECHO \"reset seen in incarnation 1\"")) << *trace;
  EXPECT_FALSE(Contains(*trace, "restarts its loop")) << *trace;
  // The MULTI of the reset connection went with it: the next MULTI is not
  // nested, and two of the three EXECs ran.
  EXPECT_FALSE(Contains(*trace, "MULTI calls can not be nested")) << *trace;
  EXPECT_EQ(CountOf(*trace, "EXEC -> [2]") + CountOf(*trace, "EXEC -> [1]"), 2) << *trace;
}

// Only the consumer's processes see resets: xackly's own producer, whose
// XADD is lost, times out and adds it again (before, it took the reset as
// a reply and went on: the event was never produced, a false lost).
TEST(RealConsumerTest, TheBuiltInProducersLostRequestIsRetriedNotReset) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  const FaultedRun r = RunConsumerPy(dir, 1, 2, {"lost-request p1 XADD #1"});
  EXPECT_EQ(r.run.exit_code, kExitOk) << r.run.output;
  EXPECT_TRUE(Contains(r.run.output, "observed ok (expected ok): matched")) << r.run.output;
  EXPECT_TRUE(Contains(r.trace, "!lost-request")) << r.trace;
  EXPECT_FALSE(Contains(r.trace, "p1       its connection is reset")) << r.trace;
}

// An error-reply fault answers the consumer's own request with the server's
// error, never forwarding it: the client library raises what it raises for
// that error. redis-py's BusyLoadingError (-LOADING) is a ConnectionError,
// which consumer.py catches and goes on; its ReadOnlyError (-READONLY) is
// not, so the process dies with it, and a supervisor's restart follows: a
// correct consumer is still ok.
TEST(RealConsumerTest, AnErrorReplyIsRaisedByTheClientAndAnUnhandledOneEndsTheProcess) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  const FaultedRun r =
      RunConsumerPy(dir, 2, 4, {"error-reply w1 XACK #1 READONLY", "error-reply w2 XREADGROUP #1 LOADING"});
  EXPECT_EQ(r.run.exit_code, kExitOk) << r.run.output;
  EXPECT_TRUE(Contains(r.run.output, "observed ok (expected ok): matched")) << r.run.output;
  EXPECT_TRUE(Contains(r.run.output, "error-reply@XACK (1 time)")) << r.run.output;
  EXPECT_TRUE(Contains(r.run.output, "error-reply@XREADGROUP (1 time)")) << r.run.output;
  EXPECT_TRUE(Contains(LineWith(r.trace, "-READONLY"), "!error-reply (never reached the server)")) << r.trace;
  EXPECT_TRUE(Contains(LineWith(r.trace, "-LOADING"), "XREADGROUP")) << r.trace;
  EXPECT_TRUE(Contains(LineWith(r.trace, "exited with status 1"), "redis.exceptions.ReadOnlyError")) << r.trace;
  EXPECT_EQ(CountOf(r.trace, "exited with status"), 1) << r.trace;  // LOADING was caught
}

// getrandom (uuid4, os.urandom, random's seed) draws from the worker's own
// stream of the run's seed: the same values run after run, different ones
// for two workers. asyncio's timers (epoll_wait timeouts) and select's are
// the virtual clock's: an hour of asyncio.sleep costs nothing.
TEST(RealConsumerTest, RandomnessAndEventLoopTimersAreTheRunsOwn) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/seeded.py",
                                  "import asyncio, os, random, select, time, uuid, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "me = os.environ['XACKLY_WORKER']\n"
                                  "r.set('uuid:' + me, uuid.uuid4().hex + ' ' + str(random.random()))\n"
                                  "before = time.time()\n"
                                  "asyncio.run(asyncio.sleep(3600))\n"
                                  "r.echo(f'{me} slept {time.time() - before:.0f}')\n"
                                  "before = time.time()\n"
                                  "ready = select.select([r.connection_pool.get_connection('PING')._sock], [], [], 1800)\n"
                                  "r.echo(f'{me} selected {len(ready[0])} in {time.time() - before:.0f}')\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/seeded.toml",
                                  "name = \"seeded\"\nexpect = \"lost\"\n[workload]\nworkers = 2\nevents = 1\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"seeded.py\"]\n"
                                  "[faults]\nkinds = []\n")
                  .ok());
  std::vector<std::string> traces;
  for (const char* name : {"a", "b"}) {
    CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/seeded.toml", "--seed", "5", "--trace",
                                   dir.path() + "/" + name});
    ASSERT_EQ(run.exit_code, kExitOk) << run.output;
    Result<std::string> trace = ReadFile(dir.path() + "/" + name);
    ASSERT_TRUE(trace.ok());
    traces.push_back(*trace);
  }
  EXPECT_EQ(traces[0], traces[1]);
  EXPECT_TRUE(Contains(traces[0], "ECHO \"w1 slept 3600\"")) << traces[0];
  EXPECT_TRUE(Contains(traces[0], "ECHO \"w2 slept 3600\"")) << traces[0];
  // select's timeout (Python's select.select) too: nothing to read, so the
  // half hour passes on the virtual clock.
  EXPECT_TRUE(Contains(traces[0], "ECHO \"w1 selected 0 in 1800\"")) << traces[0];
  const std::string w1 = LineWith(traces[0], "SET uuid:w1 ");
  const std::string w2 = LineWith(traces[0], "SET uuid:w2 ");
  ASSERT_FALSE(w1.empty() || w2.empty()) << traces[0];
  EXPECT_NE(w1.substr(w1.find("SET uuid:w1 ") + 12, 32), w2.substr(w2.find("SET uuid:w2 ") + 12, 32));
}

// Node's timers wait in epoll_wait: its timeout is the virtual clock's too,
// so an hour of setTimeout passes at once, and ioredis (whose reconnects
// wait on a timer) works across it.
TEST(RealConsumerTest, TheNodeConsumersTimersAreTheRunsVirtualClock) {
  RequireNodeIoredis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/timer.js",
                                  "const Redis = require('ioredis');\n"
                                  "const r = new Redis({ path: process.env.REDIS_URL.slice('unix://'.length) });\n"
                                  "(async () => {\n"
                                  "  const t0 = Date.now();\n"
                                  "  await r.echo('before');\n"
                                  "  await new Promise((done) => setTimeout(done, 3600000));\n"
                                  "  await r.echo(`slept ${Math.round((Date.now() - t0) / 1000)}`);\n"
                                  "  process.exit(0);\n"
                                  "})();\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/timer.toml",
                                  "name = \"timer\"\nexpect = \"lost\"\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[protocol]\ncommand = [\"node\", \"timer.js\"]\n[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/timer.toml", "--trace", dir.path() + "/t"},
                                {"NODE_PATH=" + kExamples + "node/node_modules"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "ECHO before")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ECHO \"slept 3600\"")) << *trace;
  // The hour is a few long waits (Node wakes for its own timers on the
  // way), not thousands of short ones.
  EXPECT_LT(CountOf(*trace, " sleep "), 10) << *trace;
}

// A thread of the consumer's that is mid-job, waiting on something that
// ends by itself in real time (here a child process in a real 50 ms sleep,
// started without the clock preload), will still produce what the main
// thread waits for, so the main thread's timed wait is not slept past it on
// the virtual clock: the job's pipe write is seen at once, as in a real
// run. The same through a wrapper that does not exec (`sh -c`): the
// threads of its child count too.
// (Stop 47's CI: ioredis reads its package.json on the thread pool while
// the main thread waits; a wait slept past that read put "sleep 8100 ms" in
// one run's trace and not the other's.)
TEST(RealConsumerTest, AThreadMidJobInARealTimeWaitIsWaitedForNotSleptPast) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/job.py",
                                  "import os, select, subprocess, threading, time, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "rd, wr = os.pipe()\n"
                                  "def job():\n"
                                  "    subprocess.run(['/bin/sleep', '0.05'], env={})\n"
                                  "    os.write(wr, b'x')\n"
                                  "r.echo('start')\n"
                                  "before = time.time()\n"
                                  "threading.Thread(target=job).start()\n"
                                  "ready = select.select([rd], [], [], 600)\n"
                                  "r.echo(f'job done: {len(ready[0])} after {time.time() - before:.0f} s')\n")
                  .ok());
  for (const std::string command : {"\"/usr/bin/python3\", \"job.py\"",
                                    "\"/bin/sh\", \"-c\", \"/usr/bin/python3 job.py; exit $?\""}) {
    SCOPED_TRACE(command);
    ASSERT_TRUE(WriteFileAtomically(dir.path() + "/job.toml",
                                    "name = \"job\"\nexpect = \"lost\"\n[workload]\nworkers = 1\nevents = 1\n"
                                    "[protocol]\ncommand = [" + command + "]\n[faults]\nkinds = []\n")
                    .ok());
    CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/job.toml", "--trace", dir.path() + "/t"});
    ASSERT_EQ(run.exit_code, kExitOk) << run.output;
    Result<std::string> trace = ReadFile(dir.path() + "/t");
    ASSERT_TRUE(trace.ok());
    EXPECT_TRUE(Contains(*trace, "ECHO \"job done: 1 after 0 s\"")) << *trace;
    EXPECT_FALSE(Contains(*trace, " sleep ")) << *trace;
  }
}

// Two threads of one process in timed waits at once: the process sleeps
// until the earlier timeout, as a kernel would wake it, whichever thread's
// wait the front reads first. A ticker thread waits 10 s three times while
// the main thread waits 60 s: the ticks come at 10, 20 and 30 s and the
// main thread wakes at 60 s, in four sleeps, run after run.
TEST(RealConsumerTest, TwoThreadsInTimedWaitsWakeAtTheEarlierTimeoutEachTime) {
  RequirePythonRedis();
  FaultedRun r = RunThreadsScript(
                                 "ticks = []\n"
                                 "def ticker():\n"
                                 "    for i in range(3):\n"
                                 "        select.select([], [], [], 10)\n"
                                 "        ticks.append(round(time.monotonic() - start))\n"
                                 "threading.Thread(target=ticker).start()\n"
                                 "select.select([], [], [], 60)\n"
                                 "r.echo(f'main woke after {round(time.monotonic() - start)} s, ticks at {ticks}')\n");
  ASSERT_EQ(r.run.exit_code, kExitOk) << r.run.output;
  EXPECT_TRUE(Contains(r.trace, "ECHO \"main woke after 60 s, ticks at [10, 20, 30]\"")) << r.trace;
  std::vector<std::string> sleeps;
  for (size_t at = r.trace.find(" sleep "); at != std::string::npos; at = r.trace.find(" sleep ", at + 1)) {
    sleeps.push_back(r.trace.substr(at + 7, r.trace.find('\n', at) - at - 7));
  }
  // The main thread began its wait 1 ms before the ticker thread its first.
  EXPECT_EQ(sleeps, (std::vector<std::string>{"10000 ms", "10000 ms", "10000 ms", "29999 ms"})) << r.trace;
}

// A sleep is one of the process's timers too: a heartbeat thread's
// select(1 s) beside the main thread's time.sleep(5) beats at 1, 2, 3 and
// 4 s, and the main thread wakes at 5 s (before, the sleep was one step
// of 5 s whatever the heartbeat waited for, and the beats came late, at
// times that depended on which frame the front read first).
TEST(RealConsumerTest, ASleepAndAnotherThreadsTimedWaitWakeAtTheEarlierEachTime) {
  RequirePythonRedis();
  FaultedRun r = RunThreadsScript(
                                 "beats = []\n"
                                 "def heartbeat():\n"
                                 "    for i in range(4):\n"
                                 "        select.select([], [], [], 1)\n"
                                 "        beats.append(round(time.monotonic() - start))\n"
                                 "threading.Thread(target=heartbeat).start()\n"
                                 "time.sleep(5)\n"
                                 "r.echo(f'slept {round(time.monotonic() - start)} s, beats at {beats}')\n");
  ASSERT_EQ(r.run.exit_code, kExitOk) << r.run.output;
  EXPECT_TRUE(Contains(r.trace, "ECHO \"slept 5 s, beats at [1, 2, 3, 4]\"")) << r.trace;
}

// A thread that waited, and after its wait ran (wrote a pipe another
// thread waits on), is seen running before that other thread's wait is
// slept: the reader sees the byte when it was written, at 1 s, never at
// its own 5 s timeout (review of 1e97dd8: threads that had waited since
// the last request were left out of the snapshot, so the main thread's
// write went unseen whenever the reader looked before it ran).
TEST(RealConsumerTest, AThreadThatWaitedAndThenRanIsSeenBeforeAnotherWaitIsSlept) {
  RequirePythonRedis();
  for (int attempt = 0; attempt < 3; ++attempt) {  // the race it closes was lost in most runs, not all
    FaultedRun r = RunThreadsScript(
                                   "rd, wr = os.pipe()\n"
                                   "seen = []\n"
                                   "def reader():\n"
                                   "    ready = select.select([rd], [], [], 5)[0]\n"
                                   "    seen.append(f'{len(ready)} after {round(time.monotonic() - start)} s')\n"
                                   "t = threading.Thread(target=reader)\n"
                                   "t.start()\n"
                                   "select.select([], [], [], 1)\n"
                                   "os.write(wr, b'x')\n"
                                   "t.join()\n"
                                   "r.echo(f'reader saw {seen[0]}')\n");
    ASSERT_EQ(r.run.exit_code, kExitOk) << r.run.output;
    EXPECT_TRUE(Contains(r.trace, "ECHO \"reader saw 1 after 1 s\"")) << r.trace;
  }
}

// A lost request resets its connection: the process sees it close at once,
// even while another thread of xackly is forking (check -j 2 starting a
// case's server or consumers; each fork holds a copy of every descriptor
// until it execs). The consumer sends a request that is lost, then waits
// for its reply with a 10 s timeout: it must see the close before any time
// passes, never wait out the timeout (the close arriving a fork's lifetime
// late, after the front took its wait as seeing nothing).
TEST(RealConsumerTest, AResetConnectionIsSeenClosedAtOnceWhileXacklyForks) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  FaultedRun r = RunPythonScript(dir,
                                 "import os, select, socket, subprocess, time, redis\n"
                                 "s = socket.socket(socket.AF_UNIX)\n"
                                 "s.connect(os.environ['XACKLY_FRONT_SOCKET'])\n"
                                 "# older than a fork's copy: 0.2 s of real time\n"
                                 "subprocess.run(['/bin/sleep', '0.2'], env={})\n"
                                 "s.sendall(b'*1\\r\\n$4\\r\\nPING\\r\\n')\n"
                                 "start = time.monotonic()\n"
                                 "ready = select.select([s], [], [], 10)[0]\n"
                                 "closed = bool(ready) and s.recv(100) == b''\n"
                                 "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                 "r.echo(f'closed: {closed} after {round(time.monotonic() - start)} s')\n",
                                 {"lost-request w1 PING #1"}, {std::string("LD_PRELOAD=") + XACKLY_TEST_FORKER_LIB},
                                 /*once=*/true);
  ASSERT_EQ(r.run.exit_code, kExitOk) << r.run.output;
  EXPECT_TRUE(Contains(r.trace, "PING -> !lost-request")) << r.trace;
  EXPECT_TRUE(Contains(r.trace, "ECHO \"closed: True after 0 s\"")) << r.trace;
  EXPECT_FALSE(Contains(r.trace, " sleep ")) << r.trace;
}

TEST(RealConsumerTest, OneSeedGivesOneTraceByteForByte) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  for (const char* name : {"a", "b"}) {
    // Whatever the seed shows (a run is one schedule), the trace is the same.
    CommandOutput run = RunXackly({"run", "--scenario", kExamples + "python/no-idempotency-key.toml", "--seed", "7",
                                   "--trace", dir.path() + "/" + name + ".trace"});
    ASSERT_TRUE(run.exit_code == kExitOk || run.exit_code == kExitVerdictMismatch) << run.output;
  }
  Result<std::string> a = ReadFile(dir.path() + "/a.trace");
  Result<std::string> b = ReadFile(dir.path() + "/b.trace");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->size(), 1000u);
  EXPECT_EQ(*a, *b);
}

// The consumer's clocks are the run's virtual clock, and its sleeps are
// sleep steps on it: an hour of time.sleep between polls is never waited
// for in real time (the run would not finish within the test's timeout).
TEST(RealConsumerTest, TheConsumersClocksAndSleepsAreTheRunsVirtualClock) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/clock.py",
                                  "import os, time, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "start = time.monotonic()\n"
                                  "for i in range(3):\n"
                                  "    r.echo(f'at {time.time():.3f} after {time.monotonic() - start:.3f}')\n"
                                  "    time.sleep(3600)\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/clock.toml",
                                  "name = \"clock\"\nexpect = \"lost\"\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"clock.py\"]\n"
                                  "[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/clock.toml", "--trace", dir.path() + "/t"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  ASSERT_TRUE(trace.ok());
  // The run starts at 1700000000000 ms (Unix); each sleep is one step of an
  // hour (plus the 1 ms the next step takes).
  EXPECT_TRUE(Contains(*trace, "sleep 3600000 ms")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ECHO \"at 1700000000.000 after 0.000\"")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ECHO \"at 1700003600.002 after 3600.002\"")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ECHO \"at 1700007200.003 after 7200.003\"")) << *trace;
}

// A consumer that computes forever without a request is reported, with
// what it printed, once the wall-clock limit passes: never a hang.
TEST(RealConsumerTest, ABusyLoopIsReportedOnceTheLimitPasses) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/busy.py",
                                  "import os, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "r.ping()\n"
                                  "print('spinning', flush=True)\n"
                                  "while True:\n"
                                  "    pass\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/busy.toml",
                                  "name = \"busy\"\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"busy.py\"]\n")
                  .ok());
  CommandOutput run =
      RunXackly({"run", "--scenario", dir.path() + "/busy.toml"}, {std::string(kRequestTimeoutEnv) + "=1500"});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "sent no request for 1500 ms of wall time after its last reply: a busy loop"))
      << run.output;
  EXPECT_TRUE(Contains(run.output, "its last output: spinning")) << run.output;
  EXPECT_FALSE(Contains(run.output, "observed")) << run.output;
}

// A thread that computes forever while another waits on a timer is not
// under the scheduler either: the wait is not slept past it, and once the
// wall-clock limit passes the run says which thread kept running, never a
// hang (a seed-3 generated mutant that re-read the threads at once after
// every busy pass never reached the limit, and no test noticed). The
// spinning thread is a child process's (the process tree's threads all
// count): a Python thread would share the interpreter lock with the one
// that waits, and when it lags the wait is not sent at all.
TEST(RealConsumerTest, ABusyThreadBesideATimedWaitIsReportedOnceTheLimitPasses) {
  RequirePythonRedis();
  FaultedRun r = RunThreadsScript("import subprocess\n"
                                  "subprocess.Popen(['/bin/sh', '-c', 'while :; do :; done'])\n"
                                  "select.select([], [], [], 5)\n"
                                  "r.echo('woke')\n",
                                  {std::string(kRequestTimeoutEnv) + "=1500"}, /*once=*/true);
  EXPECT_EQ(r.run.exit_code, kExitUsage) << r.run.output;
  EXPECT_TRUE(Contains(r.run.output, "a thread kept running for 1500 ms of wall time while the process waited"))
      << r.run.output;
  EXPECT_FALSE(Contains(r.run.output, "observed")) << r.run.output;
}

// A replay file carries the consumer's own files with their hashes: replayed
// after consumer.py changed, it says so and judges the recorded workload and
// faults anew instead of reporting a trace that no longer applies.
TEST(RealConsumerTest, AReplayAfterTheConsumerChangedSaysSo) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  for (const char* file : {"consumer.py", "xackly_effect.py", "no-idempotency-key.toml"}) {
    Result<std::string> text = ReadFile(kExamples + "python/" + file);
    ASSERT_TRUE(text.ok());
    ASSERT_TRUE(WriteFileAtomically(dir.path() + "/" + file, *text).ok());
  }
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/no-idempotency-key.toml", "--seed", "3",
                                 "--out", dir.path() + "/out", "--format", "text"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  const std::string replay = dir.path() + "/out/python-no-idempotency-key.replay.toml";
  Result<std::string> recorded = ReadFile(replay);
  ASSERT_TRUE(recorded.ok()) << run.output;
  EXPECT_TRUE(Contains(*recorded, "path = \"../consumer.py\"")) << *recorded;
  EXPECT_FALSE(Contains(*recorded, "xackly_effect.py")) << "not an argument of the command";

  CommandOutput same = RunXackly({"replay", replay, "--quiet"});
  EXPECT_EQ(same.exit_code, kExitOk) << same.output;
  EXPECT_FALSE(Contains(same.output, "changed")) << same.output;

  Result<std::string> source = ReadFile(dir.path() + "/consumer.py");
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/consumer.py", *source + "\n# edited\n").ok());
  CommandOutput changed = RunXackly({"replay", replay});
  EXPECT_TRUE(Contains(changed.output, "your protocol changed since")) << changed.output;
  EXPECT_TRUE(Contains(changed.output, "consumer.py")) << changed.output;
  EXPECT_FALSE(Contains(changed.output, "DOES NOT MATCH")) << changed.output;
}

// A process that dies on its own after it has started (an exception it
// lets escape) is a crash, not a harness error: its supervisor restarts it
// and the run is judged. This one acks nothing and reads only new entries
// after its restart, so the entry it held is never handled (stuck).
TEST(RealConsumerTest, AProcessThatDiesAfterItStartedIsACrashAndTheRunIsJudged) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/dies.py",
                                  "import os, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "g, me, st = os.environ['XACKLY_GROUP'], os.environ['XACKLY_WORKER'], "
                                  "os.environ['XACKLY_STREAM']\n"
                                  "while True:\n"
                                  "    for _, entries in r.xreadgroup(g, me, {st: '>'}, count=1, block=2000) or []:\n"
                                  "        raise RuntimeError('cannot handle ' + entries[0][0].decode())\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/dies.toml",
                                  "name = \"dies\"\nexpect = \"stuck\"\n[workload]\nworkers = 1\nevents = 1\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"dies.py\"]\n[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/dies.toml", "--trace", dir.path() + "/t"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "observed stuck (expected stuck): matched")) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "dies.py exited with status 1: RuntimeError: cannot handle 0-1 (replacement starts in"))
      << *trace;
  EXPECT_TRUE(Contains(run.output, "w1 crashes at process exit")) << run.output;
}

// A consumer that is not a function of its replies (it writes its pid) is
// named by check's determinism self-check with the first trace line where
// two runs of one case differ (the pair that differed, and two more), never
// judged.
TEST(RealConsumerTest, ANondeterministicConsumerIsShownWhereItsRunsDiffer) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/drifts.py",
                                  PythonConsumer("            r.set('run-id', os.getpid())\n"
                                  "            try:\n"
                                  "                r.execute_command('XACKLY.EFFECT', fields[b'event_id'], 'KEY', "
                                  "fields[b'event_id'])\n"
                                  "            except redis.ResponseError:\n"
                                  "                continue\n"
                                  "            r.xack(st, g, id)\n"))
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/drifts.toml",
                                  "name = \"drifts\"\nexpect = \"ok\"\n[workload]\nworkers = 2\nevents = 4\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"drifts.py\"]\n")
                  .ok());
  CommandOutput run = RunXackly({"check", "--scenario", dir.path() + "/drifts.toml", "--cases", "40", "--out",
                                 dir.path() + "/out"});
  EXPECT_EQ(run.exit_code, kExitHarnessFailure) << run.output;
  EXPECT_TRUE(Contains(run.output, "determinism self-check failed")) << run.output;
  // The pair that differed kept its traces (a real consumer's runs do), so
  // a difference that comes and goes is still located; then two more runs.
  EXPECT_TRUE(Contains(run.output, "; the two runs first differ at trace line")) << run.output;
  EXPECT_TRUE(Contains(run.output, "two more runs first differ at trace line")) << run.output;
  EXPECT_TRUE(Contains(run.output, "SET run-id ")) << run.output;
  EXPECT_TRUE(Contains(run.output, "a real consumer must be a function of the replies it gets")) << run.output;
  // run --check-determinism says where, too, not only that the hashes differ.
  CommandOutput twice = RunXackly({"run", "--scenario", dir.path() + "/drifts.toml", "--check-determinism"});
  EXPECT_EQ(twice.exit_code, kExitHarnessFailure) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "NONDETERMINISM")) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "the two runs first differ at trace line")) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "SET run-id ")) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "no two threads that each send requests")) << twice.output;
}

// When two runs of a case differ, two more runs keeping their traces say
// where; when the second of them does not finish (its consumer fails), the
// message says so instead of reading a trace it does not have. The
// consumer counts its starts in a file and fails at the start given in
// FAIL_AT: first counted with none failing, then set to the last start,
// which is the second extra run's.
TEST(RealConsumerTest, ANondeterministicConsumerWhoseLastRerunFailsIsToldSo) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  const std::string counter = dir.path() + "/starts";
  ASSERT_TRUE(WriteFileAtomically(
                  dir.path() + "/drifts.py",
                  PythonConsumer("            r.set('run-id', os.getpid())\n"
                                 "            r.execute_command('XACKLY.EFFECT', fields[b'event_id'])\n"
                                 "            r.xack(st, g, id)\n",
                                 fmt::format("starts = int(open('{0}').read()) + 1 if os.path.exists('{0}') else 1\n"
                                             "open('{0}', 'w').write(str(starts))\n"
                                             "if starts == int(os.environ.get('FAIL_AT', '0')):\n"
                                             "    raise SystemExit('start ' + str(starts) + ' fails')\n",
                                             counter)))
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/drifts.toml",
                                  "name = \"drifts\"\nexpect = \"ok\"\n[workload]\nworkers = 1\nevents = 2\n"
                                  "[protocol]\ncommand = [\"/usr/bin/python3\", \"drifts.py\"]\n")
                  .ok());
  const std::vector<std::string> check = {"check", "--scenario", dir.path() + "/drifts.toml", "--cases", "2",
                                          "-j", "1", "--max-shrinks", "0"};
  CommandOutput counted = RunXackly(check);
  ASSERT_EQ(counted.exit_code, kExitHarnessFailure) << counted.output;
  ASSERT_TRUE(Contains(counted.output, "two more runs first differ at trace line")) << counted.output;
  Result<std::string> starts = ReadFile(counter);
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  std::filesystem::remove(counter);
  // The same check starts its consumers as often again: the harness's runs
  // are a function of the seed (a wall-time limit reached under heavy load
  // would change that, and fail this test rather than pass it).
  CommandOutput failed = RunXackly(check, {"FAIL_AT=" + *starts});
  EXPECT_EQ(failed.exit_code, kExitHarnessFailure) << failed.output;
  EXPECT_TRUE(Contains(failed.output, "the two runs first differ at trace line")) << failed.output;
  EXPECT_TRUE(Contains(failed.output, "two more runs keeping their traces did not both finish")) << failed.output;
}

TEST(RealConsumerTest, AConsumerThatFailsIsAHarnessErrorThatShowsWhatItPrinted) {
  RequirePythonRedis();
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/crashy.py",
                                  "import os, redis\n"
                                  "r = redis.Redis.from_url(os.environ['REDIS_URL'])\n"
                                  "raise RuntimeError('my consumer broke')\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/crashy.toml",
                                  "name = \"crashy\"\nexpect = \"ok\"\n\n[protocol]\n"
                                  "command = [\"/usr/bin/python3\", \"crashy.py\"]\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/crashy.toml"});
  // As a protocol script's runtime error: the user's input is at fault (2).
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "exited with status 1")) << run.output;
  EXPECT_TRUE(Contains(run.output, "RuntimeError: my consumer broke")) << run.output;
  EXPECT_FALSE(Contains(run.output, "observed")) << run.output;  // no verdict

  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/nowhere.toml",
                                  "name = \"nowhere\"\n\n[protocol]\ncommand = [\"./no-such-consumer\"]\n")
                  .ok());
  CommandOutput missing = RunXackly({"run", "--scenario", dir.path() + "/nowhere.toml"});
  EXPECT_EQ(missing.exit_code, kExitUsage) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "nowhere.toml: protocol.command")) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "no-such-consumer is not an executable file")) << missing.output;
}

}  // namespace
}  // namespace xackly
