// The virtual clock: the page the harness writes is what a preloaded process
// reads, and every clock-dependent Redis behaviour the simulator relies on
// follows it exactly and ignores real time.
#include "harness/virtual_clock.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// Runs `program` with the preload library and `page_env` as
// XACKLY_CLOCK_PAGE.
CommandOutput RunWithClock(const std::string& program, const std::vector<std::string>& args,
                           const std::string& page_env) {
  return RunProgram(program, args,
                    {std::string("LD_PRELOAD=") + XACKLY_TEST_CLOCK_LIB,
                     std::string(kClockPageEnv) + "=" + page_env});
}

TEST(VirtualClockTest, MovesOnlyWhenTold) {
  ScopedTempRoot root;
  Result<std::unique_ptr<VirtualClock>> clock =
      VirtualClock::Create(root.path() + "/page", kDefaultStartEpochMs);
  ASSERT_TRUE(clock.ok()) << clock.status().ToString();
  EXPECT_EQ((*clock)->NowMs(), kDefaultStartEpochMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ((*clock)->NowMs(), kDefaultStartEpochMs) << "real time leaked into the clock";
  (*clock)->AdvanceMs(1'500);
  EXPECT_EQ((*clock)->NowMs(), kDefaultStartEpochMs + 1'500);
  (*clock)->SetMs(kDefaultStartEpochMs + 2'000);
  EXPECT_EQ((*clock)->NowMs(), kDefaultStartEpochMs + 2'000);
  (*clock)->ResetMs(kDefaultStartEpochMs);
  EXPECT_EQ((*clock)->NowMs(), kDefaultStartEpochMs);
}

// A page that cannot be created (its folder is gone) is an error naming the
// path and why, not a clock on a closed file.
TEST(VirtualClockTest, APageThatCannotBeCreatedIsAnErrorNamingIt) {
  ScopedTempRoot root;
  const std::string page = root.path() + "/no-such-folder/page";
  Result<std::unique_ptr<VirtualClock>> clock = VirtualClock::Create(page, kDefaultStartEpochMs);
  ASSERT_FALSE(clock.ok());
  EXPECT_EQ(clock.status().message(), "cannot create clock page " + page + ": No such file or directory");
}

TEST(VirtualClockDeathTest, SetMsRefusesToGoBackwards) {
  ScopedTempRoot root;
  Result<std::unique_ptr<VirtualClock>> clock =
      VirtualClock::Create(root.path() + "/page", kDefaultStartEpochMs);
  ASSERT_TRUE(clock.ok());
  EXPECT_DEATH((*clock)->SetMs(kDefaultStartEpochMs - 1), "check failed");
}

TEST(VirtualClockTest, EveryWallClockCallOfAPreloadedProcessReadsThePage) {
  ScopedTempRoot root;
  Result<std::unique_ptr<VirtualClock>> clock =
      VirtualClock::Create(root.path() + "/page", 1'234'567'890'123);
  ASSERT_TRUE(clock.ok());
  CommandOutput probe = RunWithClock(XACKLY_TEST_CLOCK_PROBE, {}, (*clock)->page_path());
  EXPECT_EQ(probe.exit_code, 0) << probe.output;
  EXPECT_EQ(probe.output,
            "gettimeofday_us 1234567890123000\n"
            "realtime_ns 1234567890123000000\n"
            "realtime_coarse_ns 1234567890123000000\n"
            "time_s 1234567890\n"
            "monotonic_runs 1\n"
            "bad_clock rc -1 errno_is_einval 1\n");
  // An ordinary program sees it too.
  CommandOutput date = RunWithClock("/bin/date", {"+%s"}, (*clock)->page_path());
  EXPECT_EQ(date.output, "1234567890\n");
}

TEST(VirtualClockTest, PreloadRefusesToRunOnRealTimeWhenThePageIsMissing) {
  CommandOutput date = RunWithClock("/bin/date", {"+%s"}, "/nonexistent/clock.page");
  EXPECT_EQ(date.exit_code, 70);
  EXPECT_NE(date.output.find("refusing to run on the real clock"), std::string::npos)
      << date.output;
}

TEST(VirtualClockTest, FindClockLibraryNamesWhereItLooked) {
  ScopedEnv env(kClockLibEnv, "/nonexistent/libxackly_clock.so");
  Result<std::string> found = FindClockLibrary("");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), Status::Code::kNotFound);
  EXPECT_NE(found.status().message().find("XACKLY_CLOCK_LIB=/nonexistent/libxackly_clock.so"),
            std::string::npos)
      << found.status().message();
}

// The server side: the behaviours `xackly doctor` checks, one test each.
class ServerClockTest : public ConnectedServerTest {
 protected:
  // Adds 1-1 to stream s, creates group g and delivers 1-1 to consumer c1.
  void DeliverOneEntry() {
    ASSERT_EQ(Render(*conn_, {"XADD", "s", "1-1", "f", "v"}), "\"1-1\"");
    ASSERT_EQ(Render(*conn_, {"XGROUP", "CREATE", "s", "g", "0"}), "+OK");
    ASSERT_EQ(Render(*conn_, {"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"}),
              "[[\"s\", [[\"1-1\", [\"f\", \"v\"]]]]]");
  }

};

TEST_F(ServerClockTest, TimeCommandEqualsTheVirtualClock) {
  EXPECT_EQ(server_->ClockMs(), kDefaultStartEpochMs);
  EXPECT_EQ(Render(*conn_, {"TIME"}), "[\"1700000000\", \"0\"]");
  server_->AdvanceClockMs(1'234);
  EXPECT_EQ(Render(*conn_, {"TIME"}), "[\"1700000001\", \"234000\"]");
  server_->SetClockMs(kDefaultStartEpochMs + 86'400'000);
  EXPECT_EQ(Render(*conn_, {"TIME"}), "[\"1700086400\", \"0\"]");
}

TEST_F(ServerClockTest, AutoIdsUseTheVirtualMilliseconds) {
  EXPECT_EQ(Render(*conn_, {"XADD", "s", "*", "f", "v"}), "\"1700000000000-0\"");
  EXPECT_EQ(Render(*conn_, {"XADD", "s", "*", "f", "v"}), "\"1700000000000-1\"");
  server_->AdvanceClockMs(5);
  EXPECT_EQ(Render(*conn_, {"XADD", "s", "*", "f", "v"}), "\"1700000000005-0\"");
}

TEST_F(ServerClockTest, PendingIdleIsExactlyTheVirtualTimeAdvanced) {
  DeliverOneEntry();
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "-", "+", "10"}), "[[\"1-1\", \"c1\", 0, 1]]");
  server_->AdvanceClockMs(60'000);
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "-", "+", "10"}),
            "[[\"1-1\", \"c1\", 60000, 1]]");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "-", "+", "10"}),
            "[[\"1-1\", \"c1\", 60000, 1]]")
      << "real time leaked into the server's clock";
  // The IDLE filter reads the same clock.
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "IDLE", "60001", "-", "+", "10"}), "[]");
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "IDLE", "60000", "-", "+", "10"}),
            "[[\"1-1\", \"c1\", 60000, 1]]");
}

TEST_F(ServerClockTest, AutoclaimMinIdleFollowsTheVirtualClock) {
  DeliverOneEntry();
  server_->AdvanceClockMs(60'000);
  EXPECT_EQ(Render(*conn_, {"XAUTOCLAIM", "s", "g", "c2", "70000", "0-0"}), "[\"0-0\", [], []]");
  EXPECT_EQ(Render(*conn_, {"XAUTOCLAIM", "s", "g", "c2", "50000", "0-0"}),
            "[\"0-0\", [[\"1-1\", [\"f\", \"v\"]]], []]");
  // Claiming restarts the idle time and counts a delivery.
  EXPECT_EQ(Render(*conn_, {"XPENDING", "s", "g", "-", "+", "10"}), "[[\"1-1\", \"c2\", 0, 2]]");
}

TEST_F(ServerClockTest, KeyExpiresStrictlyAfterItsTtl) {
  ASSERT_EQ(Render(*conn_, {"SET", "k", "v", "PX", "10000"}), "+OK");
  server_->AdvanceClockMs(9'999);
  EXPECT_EQ(Render(*conn_, {"EXISTS", "k"}), "1");
  EXPECT_EQ(Render(*conn_, {"PTTL", "k"}), "1");
  server_->AdvanceClockMs(1);
  // Redis expires a key when now > expire time, so at +10000 it is still there.
  EXPECT_EQ(Render(*conn_, {"PTTL", "k"}), "0");
  EXPECT_EQ(Render(*conn_, {"EXISTS", "k"}), "1");
  server_->AdvanceClockMs(1);
  EXPECT_EQ(Render(*conn_, {"EXISTS", "k"}), "0");
}

TEST_F(ServerClockTest, ClockSurvivesARestart) {
  server_->AdvanceClockMs(42'000);
  ASSERT_TRUE(server_->CrashAndRestart().ok());
  std::unique_ptr<Connection> conn = ConnectTo(*server_);
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(Render(*conn, {"TIME"}), "[\"1700000042\", \"0\"]");
}

}  // namespace
}  // namespace xackly
