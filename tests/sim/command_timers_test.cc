// The timers a script's commands name: what sizes a script run's quiet
// window, so a correct script with slow recovery is not judged early.
#include "sim/command_timers.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/limits.h"

namespace xackly {
namespace {

// The longest timer one command names.
int64_t CommandTimerMs(const std::vector<std::string>& argv) {
  ScriptTimers t;
  t.AddCommand(argv);
  return t.Longest();
}

TEST(CommandTimersTest, ClaimThresholdsAreRead) {
  EXPECT_EQ(CommandTimerMs({"XAUTOCLAIM", "s", "g", "c", "7200000", "0-0", "COUNT", "10"}), 7200000);
  EXPECT_EQ(CommandTimerMs({"xclaim", "s", "g", "c", "60000", "1-0", "JUSTID"}), 60000);
  EXPECT_EQ(CommandTimerMs({"XPENDING", "s", "g", "IDLE", "30000", "-", "+", "10"}), 30000);
  EXPECT_EQ(CommandTimerMs({"XPENDING", "s", "g", "-", "+", "10"}), 0);  // no IDLE filter
}

TEST(CommandTimersTest, KeyExpiriesAreReadInMilliseconds) {
  EXPECT_EQ(CommandTimerMs({"SET", "done:1", "1", "NX", "EX", "3600"}), 3600000);
  EXPECT_EQ(CommandTimerMs({"SET", "lock", "me", "PX", "5000", "NX"}), 5000);
  EXPECT_EQ(CommandTimerMs({"SETEX", "k", "10", "v"}), 10000);
  EXPECT_EQ(CommandTimerMs({"PSETEX", "k", "250", "v"}), 250);
  EXPECT_EQ(CommandTimerMs({"EXPIRE", "k", "60"}), 60000);
  EXPECT_EQ(CommandTimerMs({"PEXPIRE", "k", "60"}), 60);
  EXPECT_EQ(CommandTimerMs({"GETEX", "k", "PX", "900"}), 900);
}

TEST(CommandTimersTest, WhatIsNotADurationIsNoTimer) {
  EXPECT_EQ(CommandTimerMs({"SET", "k", "EX"}), 0);                     // value "EX", no option
  EXPECT_EQ(CommandTimerMs({"SET", "k", "v", "PXAT", "99999999"}), 0);  // absolute
  EXPECT_EQ(CommandTimerMs({"EXPIRE", "k", "-1"}), 0);
  EXPECT_EQ(CommandTimerMs({"XCLAIM", "s", "g", "c", "1e3", "1-0"}), 0);
  EXPECT_EQ(CommandTimerMs({"XACK", "s", "g", "1-0"}), 0);
  EXPECT_EQ(CommandTimerMs({}), 0);
  EXPECT_EQ(CommandTimerMs({"SET", "k", "v", "EX", "99999999999999999"}), kMaxDurationMs);
}

TEST(CommandTimersTest, ARunsTimersAreKeptByWhatTheyTime) {
  ScriptTimers t;
  t.AddCommand({"XAUTOCLAIM", "s", "g", "c", "60000", "0-0"});
  t.AddCommand({"SET", "done:1", "1", "NX", "PX", "5000"});
  t.AddCommand({"XPENDING", "s", "g", "IDLE", "30000", "-", "+", "10"});
  t.AddWait(2000);
  EXPECT_EQ(t.claim_threshold_ms, 60000);
  EXPECT_EQ(t.key_expiry_ms, 5000);
  EXPECT_EQ(t.wait_ms, 2000);
  EXPECT_EQ(t.Longest(), 60000);
}

}  // namespace
}  // namespace xackly
