// Issue 16: what a hostile or sloppy input, or a hostile environment, must
// not be able to do. Nothing is written outside --out; no case runs on a
// real clock; the clock page never wraps; a server killed from outside is
// noticed; bad flags are bad input (exit 2) found before anything runs.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/case_executor.h"
#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/virtual_clock.h"
#include "sim/limits.h"
#include "sim/protocol.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

namespace fs = std::filesystem;

// Every path under `dir`, recursively, relative to it.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Test server options with their temp dirs under `root`.
RedisServerOptions OptionsIn(const ScopedTempRoot& root) {
  RedisServerOptions options = TestServerOptions();
  options.temp_root = root.path();
  return options;
}

// --- The clock ------------------------------------------------------------------

TEST(ClockRangeTest, MovesPastTheYear2262StopThereInsteadOfWrapping) {
  ScopedTempRoot root;
  Result<std::unique_ptr<VirtualClock>> clock =
      VirtualClock::Create(root.path() + "/page", kDefaultStartEpochMs);
  ASSERT_TRUE(clock.ok());
  VirtualClock& c = **clock;
  c.SetMs(kMaxClockEpochMs);
  EXPECT_FALSE(c.out_of_range()) << "the last representable millisecond is in range";
  EXPECT_EQ(c.NowMs(), kMaxClockEpochMs);
  c.AdvanceMs(1);
  EXPECT_TRUE(c.out_of_range());
  EXPECT_EQ(c.NowMs(), kMaxClockEpochMs);
  c.AdvanceMs(INT64_MAX);  // no signed overflow (UBSan would say so)
  EXPECT_EQ(c.NowMs(), kMaxClockEpochMs);
  c.ResetMs(kDefaultStartEpochMs);
  EXPECT_FALSE(c.out_of_range());
  EXPECT_EQ(c.NowMs(), kDefaultStartEpochMs);
}

TEST(ClockProofTest, AServerOnTheRealClockNeverStarts) {
  // /bin/true is skipped by the loader ("cannot be preloaded"); libm loads
  // but replaces no clock function. Either way redis-server would run on
  // the real clock.
  std::vector<std::string> libraries = {"/bin/true"};
  for (const char* libm : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}) {
    if (fs::exists(libm)) {
      libraries.push_back(libm);
      break;
    }
  }
  for (const std::string& library : libraries) {
    ScopedTempRoot root;
    RedisServerOptions options = OptionsIn(root);
    options.clock_library = library;
    Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
    ASSERT_FALSE(server.ok()) << library << " was accepted as the clock library";
    EXPECT_EQ(server.status().code(), Status::Code::kInternal);
    const std::string m = server.status().message();
    EXPECT_TRUE(Contains(m, "does not run on the virtual clock")) << m;
    EXPECT_TRUE(Contains(m, "clock library " + library)) << m;
    EXPECT_TRUE(Contains(m, "XACKLY_CLOCK_LIB")) << m;
    EXPECT_TRUE(Listing(root.path()).empty()) << "the failed start left its temp dir behind";
  }
}

TEST(ClockProofTest, AServerThatAddsACycleCounterToTheTimeNeverStarts) {
  // The stand-in answers its first two TIMEs exactly (the start's TIME
  // before and after the jump) and later ones a few microseconds off, as
  // valkey 8.1+ built with its processor clock does when calls come less
  // than a real millisecond apart: only the burst of TIMEs catches it.
  ScopedTempRoot root;
  RedisServerOptions options = OptionsIn(root);
  options.server_path = std::string(XACKLY_SOURCE_DIR) + "/tests/harness/data/cycle_counter_server.py";
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
  ASSERT_FALSE(server.ok()) << "a server whose TIME runs ahead of the clock page was accepted";
  EXPECT_EQ(server.status().code(), Status::Code::kInternal);
  const std::string m = server.status().message();
  EXPECT_TRUE(Contains(m, "does not run on the virtual clock")) << m;
  EXPECT_TRUE(Contains(m, "monotonic_clock:X86 TSC")) << m;
  EXPECT_TRUE(Contains(m, "CFLAGS=-DNO_PROCESSOR_CLOCK")) << m;
  EXPECT_FALSE(Contains(m, "was not preloaded")) << "blames the clock library: " << m;
  EXPECT_TRUE(Listing(root.path()).empty()) << "the failed start left its temp dir behind";
}

TEST(ClockProofTest, TheProofLeavesTheClockWhereItStarts) {
  ScopedTempRoot root;
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(OptionsIn(root));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ((*server)->ClockMs(), kDefaultStartEpochMs);
}

TEST(ClockProofTest, AServerClockMovedPastThePageRangeStopsThereAndSaysSo) {
  ScopedTempRoot root;
  Result<std::unique_ptr<RedisServer>> started = RedisServer::Start(OptionsIn(root));
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  RedisServer& server = **started;
  server.SetClockMs(kMaxClockEpochMs + 1'000);
  EXPECT_TRUE(server.clock_out_of_range());
  std::unique_ptr<Connection> conn = std::move(server.Connect()).value();
  // The server sees the last time the page holds, never a wrapped-around one.
  EXPECT_EQ(Render(*conn, {"TIME"}),
            fmt::format("[\"{}\", \"{}\"]", kMaxClockEpochMs / 1000, kMaxClockEpochMs % 1000 * 1000));
  ASSERT_TRUE(server.Reset(kDefaultStartEpochMs).ok());
  EXPECT_FALSE(server.clock_out_of_range());
}

// --- Numbers at their limits ------------------------------------------------------

TEST(LimitsTest, SaturatingArithmeticNeverOverflows) {
  EXPECT_EQ(SaturatingAdd(INT64_MAX, 1), INT64_MAX);
  EXPECT_EQ(SaturatingAdd(INT64_MAX - 1, 1), INT64_MAX);
  EXPECT_EQ(SaturatingAdd(2, 3), 5);
  EXPECT_EQ(SaturatingMul(INT64_MAX / 2 + 1, 2), INT64_MAX);
  EXPECT_EQ(SaturatingMul(kMaxSteps, kMaxDurationMs), kMaxSteps * kMaxDurationMs);
  EXPECT_EQ(SaturatingMul(0, INT64_MAX), 0);
}

TEST(LimitsTest, ValidateRunConfigAppliesTheFilesLimitsToConfigsBuiltAnyOtherWay) {
  const RunConfig base = RunConfig::For(*FindProtocol("txn-dedupe"));
  ASSERT_TRUE(ValidateRunConfig(base).ok());
  struct Case {
    const char* want;
    void (*set)(RunConfig&);
  };
  const Case cases[] = {
      {"timing.step_ms: expected an integer in 1..31536000000, got 4611686018427387904",
       [](RunConfig& c) { c.timing.step_ms = 4611686018427387904; }},
      {"timing.max_steps: expected an integer in 0..10000000, got 9223372036854775807",
       [](RunConfig& c) { c.timing.max_steps = INT64_MAX; }},
      {"protocol.dedupe_ttl_ms: expected an integer in 0..31536000000, got 9223372036854775807",
       [](RunConfig& c) { c.protocol.dedupe_ttl_ms = INT64_MAX; }},
      {"faults.clock_jump_ms: expected an integer in 1..31536000000, got 9000000000000",
       [](RunConfig& c) { c.faults.clock_jump_ms = 9'000'000'000'000; }},
      {"protocol.loop.dead_letter_after: expected an integer in 0..100000, got 2147483647",
       [](RunConfig& c) { c.protocol.loop.dead_letter_after = INT32_MAX; }},
      {"timing: the run's durations add up to more than 3153600000000 ms (100 years)",
       [](RunConfig& c) {
         c.timing.step_ms = kMaxDurationMs;
         c.timing.max_steps = 101;
       }},
      {"schedule.faults: 'clock-jump +9223372036854775807ms @0ms': durations are at most",
       [](RunConfig& c) {
         FaultSpec jump;
         jump.kind = FaultKind::kClockJump;
         jump.duration_ms = INT64_MAX;
         c.fault_schedule = std::vector<FaultSpec>{jump};
       }},
  };
  for (const Case& k : cases) {
    RunConfig c = base;
    k.set(c);
    Status s = ValidateRunConfig(c);
    ASSERT_FALSE(s.ok()) << k.want;
    EXPECT_EQ(s.message().substr(0, std::string(k.want).size()), k.want);
  }
}

TEST(LimitsTest, ARunWithEveryDurationAtItsLimitCompletesInsideTheClockRange) {
  // Every duration a year, every clock-moving fault enabled, and as many
  // year-long steps as the 100-year budget leaves: the arithmetic on
  // virtual time stays exact (the sanitizer job runs this under UBSan).
  RunConfig c = RunConfig::For(*FindProtocol("txn-dedupe"));
  const int64_t year = kMaxDurationMs;
  Timing& t = c.timing;
  t.effect_ms = t.produce_every_ms = t.restart_delay_ms = t.reconnect_ms = year;
  t.fault_phase_ms = t.quiet_window_ms = year;
  c.protocol.loop.claim_min_idle_ms = c.protocol.loop.claim_every_ms = c.protocol.loop.block_ms = year;
  c.faults.kinds = {FaultKind::kClockJump, FaultKind::kStoreOutage, FaultKind::kStall, FaultKind::kCrash};
  c.faults.stall_ms = c.faults.clock_jump_ms = c.faults.store_outage_ms = year;
  c.events = 3;
  t.step_ms = year;
  t.max_steps = 40;
  Status valid = ValidateRunConfig(c);
  ASSERT_TRUE(valid.ok()) << valid.message();
  ScopedTempRoot root;
  CaseExecutor executor(OptionsIn(root));
  Result<RunResult> run = executor.Run(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_GT(run->virtual_ms, 3 * year) << "the durations were used";
  EXPECT_LT(kEpochMs + run->virtual_ms, kMaxClockEpochMs);
}

// --- Servers killed from outside ---------------------------------------------------

TEST(SpareServerTest, AServerKilledFromOutsideIsNoticedEvenWhenTheCaseDoesNotUseIt) {
  ScopedTempRoot root;
  CaseExecutor executor(OptionsIn(root));
  Result<RedisServer*> spare = executor.Server(Persistence::kNone);  // as check's version probe does
  ASSERT_TRUE(spare.ok()) << spare.status().ToString();
  pid_t pid = (*spare)->pid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(WaitUntilGone(pid, 5'000));
  RunConfig config = RunConfig::For(*FindProtocol("txn-dedupe-restart-aof"));
  ASSERT_NE(config.persistence, Persistence::kNone);
  Result<RunResult> run = executor.Run(config);
  ASSERT_FALSE(run.ok()) << "the dead spare server went unnoticed";
  EXPECT_TRUE(Contains(run.status().message(), "killed by signal 9") ||
              Contains(run.status().message(), "SIGKILL"))
      << run.status().message();
  EXPECT_TRUE(Contains(run.status().message(), "persistence none")) << run.status().message();
}

// --- Files ------------------------------------------------------------------------------

TEST(FilesTest, WritingOntoADirectoryFailsAndLeavesNothingBehind) {
  ScopedTempRoot root;
  std::string dir = root.path() + "/d";
  fs::create_directories(dir);
  Status s = WriteFileAtomically(dir, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir + ": is a directory");
  EXPECT_EQ(Listing(root.path()), std::vector<std::string>{"d"});
}

TEST(FilesTest, TheTemporaryFileLivesNextToItsTarget) {
  ScopedTempRoot root;
  // A target whose directory exists but cannot take the rename: the temp
  // file is written there (not into its parent) and removed on failure.
  std::string file = root.path() + "/out/report.txt";
  ASSERT_TRUE(WriteFileAtomically(file, "a").ok());
  EXPECT_EQ(Listing(root.path()), (std::vector<std::string>{"out", "out/report.txt"}));
  fs::create_directories(root.path() + "/out/sub/inner");
  Status s = WriteFileAtomically(root.path() + "/out/sub/", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Listing(root.path()),
            (std::vector<std::string>{"out", "out/report.txt", "out/sub", "out/sub/inner"}));
}

TEST(FilesTest, PlainFileNamesStayInTheirDirectory) {
  EXPECT_TRUE(IsPlainFileName("a.replay.toml"));
  for (const char* bad : {"", ".", "..", "a/b", "../x"}) EXPECT_FALSE(IsPlainFileName(bad)) << bad;
  EXPECT_FALSE(IsPlainFileName(std::string(256, 'x')));
}

// --- The command line ----------------------------------------------------------------

class CliHardeningTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = root_.path() + "/" + name;
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return path;
  }
  ScopedTempRoot root_;
};

TEST_F(CliHardeningTest, AScenarioNameCannotWriteOutsideOut) {
  std::string out = root_.path() + "/a/b/out";
  for (const char* name : {"../../escaped", "a/b/c"}) {
    std::string file = Write("s.toml", std::string("protocol = \"no-dedupe\"\nname = \"") + name +
                                           "\"\n[workload]\nevents = 2\n");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"run", "--scenario", file, "--out", out},
          std::vector<std::string>{"check", "--scenario", file, "--out", out, "--cases", "1"}}) {
      CommandOutput r = RunXackly(args);
      EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
      EXPECT_TRUE(Contains(r.output, file + ":2: name: expected a name of 1..128")) << r.output;
    }
  }
  EXPECT_EQ(Listing(root_.path()), std::vector<std::string>{"s.toml"}) << "something was written";
}

TEST_F(CliHardeningTest, SeedsAreParsedAsScenarioFilesParseThem) {
  for (const char* seed : {"-1", "99999999999999999999999", "1e3", "18446744073709551616"}) {
    for (const char* command : {"run", "check"}) {
      CommandOutput r = RunXackly({command, "--protocol", "no-dedupe", "--seed", seed, "--out", root_.path() + "/o"});
      EXPECT_EQ(r.exit_code, kExitUsage) << command << " --seed " << seed << ": " << r.output;
      EXPECT_TRUE(Contains(r.output, "--seed")) << r.output;
    }
  }
  CommandOutput top = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "18446744073709551615", "--faults", "none"});
  EXPECT_TRUE(Contains(top.output, "seed 18446744073709551615")) << top.output;
}

TEST_F(CliHardeningTest, OverridesGetTheSameActorChecksAsTheFile) {
  std::string file = Write("plan.toml",
                           "protocol = \"no-dedupe\"\n[workload]\nworkers = 3\n[schedule]\n"
                           "faults = [\"crash w3 after-effect #1\"]\n");
  CommandOutput r = RunXackly({"run", "--scenario", file, "--workers", "1"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
  EXPECT_TRUE(Contains(r.output, "got 'w3' in 'crash w3 after-effect #1'")) << r.output;
  CommandOutput poison = RunXackly({"run", "--scenario",
                                    Write("p.toml", "protocol = \"no-dedupe\"\n[schedule]\n"
                                                    "faults = [\"poison event 9\"]\n"),
                                    "--events", "3"});
  EXPECT_EQ(poison.exit_code, kExitUsage) << poison.output;
  EXPECT_TRUE(Contains(poison.output, "'poison event 9': this run produces only 3 events")) << poison.output;
}

TEST_F(CliHardeningTest, BadOutputFlagsAreBadInputFoundBeforeTheRun) {
  std::string a_file = Write("file", "not a directory");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"run", "--protocol", "no-dedupe", "--trace", root_.path()}, "is a directory"},
      {{"run", "--protocol", "no-dedupe", "--trace", a_file + "/t"}, "--trace: " + a_file + ": cannot create"},
      {{"run", "--protocol", "no-dedupe", "--out", root_.path() + "/o", "--format", "pdf"}, "--format"},
      {{"run", "--protocol", "no-dedupe", "--out", a_file + "/sub"}, "--out: " + a_file + "/sub: cannot create"},
      {{"check", "--protocol", "no-dedupe", "--out", a_file}, "--out: " + a_file + ": cannot create"},
  };
  for (const Case& c : cases) {
    CommandOutput r = RunXackly(c.args);
    EXPECT_EQ(r.exit_code, kExitUsage) << r.output;
    EXPECT_TRUE(Contains(r.output, c.says)) << r.output;
    EXPECT_FALSE(Contains(r.output, "observed")) << "the case ran first: " << r.output;
  }
  EXPECT_EQ(Listing(root_.path()), std::vector<std::string>{"file"});
  // The trace's temporary file is never written outside the trace's directory.
  std::string trace = root_.path() + "/t/trace.txt";
  CommandOutput ok = RunXackly({"run", "--protocol", "no-dedupe", "--faults", "none", "--trace", trace});
  EXPECT_EQ(ok.exit_code, kExitVerdictMismatch) << ok.output;
  EXPECT_EQ(Listing(root_.path()), (std::vector<std::string>{"file", "t", "t/trace.txt"}));
}

TEST_F(CliHardeningTest, ARealClockIsExitThreeNamingTheLibraryAndTheFix) {
  CommandOutput r = RunXackly({"run", "--protocol", "txn-dedupe", "--seed", "3"},
                              {"XACKLY_CLOCK_LIB=/bin/true"});
  EXPECT_EQ(r.exit_code, kExitHarnessFailure) << r.output;
  EXPECT_TRUE(Contains(r.output, "clock library /bin/true")) << r.output;
  EXPECT_TRUE(Contains(r.output, "unset $XACKLY_CLOCK_LIB")) << r.output;
  EXPECT_FALSE(Contains(r.output, "observed")) << r.output;
}

}  // namespace
}  // namespace xackly
