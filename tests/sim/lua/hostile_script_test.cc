// Issue 29: what a hostile script cannot do to the run that hosts it. Code
// the instruction budget cannot interrupt (a __gc finalizer, one C call of
// string.find) meets the CPU watchdog; table.sort is deterministic; memory
// is bounded per process, for all of a run's processes together, and for
// the results handed to a script.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/lua/lua_process.h"
#include "tests/sim/lua/fake_world.h"

namespace xackly {
namespace {

ProcessLimits FastWatchdog() {
  ProcessLimits limits;
  limits.cpu_ms_per_step = 300;
  return limits;
}

// --- Item 4: a CPU-time watchdog where the instruction budget cannot reach ----

// The message is written by hand in a signal handler: its numbers keep
// every digit, a leading 1 too (line 14, 100 ms).
TEST(CpuWatchdogDeathTest, APatternThatBacktracksForeverEndsXacklyWithExitTwoAndTheLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ProcessLimits limits;
  limits.cpu_ms_per_step = 100;
  EXPECT_EXIT(
      {
        FakeWorld world;
        (void)RunConsumer("function consumer(w)\n  w:redis('PING')\n" + std::string(10, '\n') +
                              "  local s = string.rep('a', 300000)\n  return s:find('.-b')\nend\n",
                          world, limits);
      },
      ::testing::ExitedWithCode(2), "test.lua:14: a single step of the protocol script used more than 100 ms of CPU");
}

TEST(CpuWatchdogDeathTest, AFinalizerThatNeverReturnsEndsXacklyWithExitTwo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Lua runs finalizers with hooks off: the instruction budget never sees it.
  EXPECT_EXIT(
      {
        FakeWorld world;
        (void)RunConsumer("function consumer(w)\n"
                          "  setmetatable({}, {__gc = function() while true do end end})\n"
                          "  local t = {}\n  for i = 1, 100000 do t[i % 10] = {i} end\n"
                          "  w:redis('PING')\nend\n",
                          world, FastWatchdog());
      },
      ::testing::ExitedWithCode(2), "test.lua:2: a single step of the protocol script used more than 300 ms");
}

TEST(CpuWatchdogTest, AStepThatEndsInTimeIsNotTouched) {
  FakeWorld world;
  std::vector<std::string> printed;
  Status s = RunConsumer("function consumer(w)\n  local s = string.rep('a', 2000)\n"
                         "  print(s:find('.-b'))\n  w:redis('PING')\nend\n",
                         world, FastWatchdog(), 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(printed, std::vector<std::string>{"nil"});
}

// The limit is per step, not per run: forty steps of a few tens of ms of CPU
// each (over a second in all, four limits) never meet the watchdog.
TEST(CpuWatchdogTest, StepsThatEachEndInTimeAreNotAddedUp) {
  FakeWorld world;
  std::vector<std::string> printed;
  Status s = RunConsumer("function consumer(w)\n  local s = string.rep('a', 3000)\n"
                         "  local misses = 0\n"
                         "  for i = 1, 40 do\n    if s:find('.-b') == nil then misses = misses + 1 end\n"
                         "    w:redis('PING')\n  end\n  print(misses)\nend\n",
                         world, FastWatchdog(), 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(printed, std::vector<std::string>{"40"});
}

// --- Item 7: table.sort without the real clock ---------------------------------

TEST(DeterministicSortTest, TableSortIsAStableSortOnEveryInput) {
  FakeWorld world;
  std::vector<std::string> printed;
  // 300 records on 3 keys: equal keys keep their order (Lua's quicksort
  // does not, and picks pivots from the real clock on inputs this size).
  Status s = RunConsumer(R"lua(
function consumer(w)
  local t = {}
  for i = 1, 300 do t[i] = {k = (i * 7) % 3, i = i} end
  table.sort(t, function(a, b) return a.k < b.k end)
  local ok = true
  for i = 2, #t do
    if t[i - 1].k > t[i].k or (t[i - 1].k == t[i].k and t[i - 1].i > t[i].i) then ok = false end
  end
  print(ok, t[1].i, t[300].i)
  local n = {5, 3, 9, 1, 1, 7}
  table.sort(n)
  print(table.concat(n, ","))
  local words = {"b", "a", "c"}
  table.sort(words, function(a, b) return a > b end)
  print(table.concat(words, ","))
end
)lua",
                         world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(printed, (std::vector<std::string>{"true\t3\t299", "1,1,3,5,7,9", "c,b,a"}));
}

// A long table of plain values (no comparison function) sorts in order: the
// merge sort leaves the Lua stack as it found it at each step, however many
// steps it takes.
TEST(DeterministicSortTest, AHundredThousandNumbersInReverseSortInOrder) {
  FakeWorld world;
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local t = {}
  for i = 1, 100000 do t[i] = 100001 - i end
  table.sort(t)
  local ok = true
  for i = 1, #t do ok = ok and t[i] == i end
  print(ok, #t)
end
)lua",
                         world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(printed, (std::vector<std::string>{"true\t100000"}));
}

// table.sort refuses what Lua's own refuses, with Lua's messages: a table
// too long to sort (a __len past INT_MAX, no memory needed), a comparison
// that is not a function, no table; and, as Lua's own, takes a table of
// one element with anything as its comparison.
TEST(DeterministicSortTest, WhatCannotBeSortedIsRefusedWithLuasOwnMessage) {
  FakeWorld world;
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local huge = setmetatable({}, {__len = function() return 2147483647 end})
  print(select(2, pcall(function() table.sort(huge) end)))
  print(select(2, pcall(function() table.sort({3, 1}, 5) end)))
  print(select(2, pcall(function() table.sort(nil) end)))
  local one = setmetatable({}, {__len = function() return 1 end})
  print(pcall(function() table.sort(one, 5) end))
end
)lua",
                         world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(printed, (std::vector<std::string>{"test.lua:4: bad argument #1 to 'sort' (array too big)",
                                               "test.lua:5: bad argument #2 to 'sort' (function expected, got number)",
                                               "test.lua:6: bad argument #1 to 'sort' (table expected, got nil)",
                                               "true"}));  // one element: nothing to compare, as Lua's own
}

// --- Item 9: memory bounded for all of a run's processes, replies included -------

TEST(MemoryCapTest, AllTheProcessesOfARunShareOneLimit) {
  ProcessLimits limits;
  limits.memory_bytes = size_t{16} << 20;
  limits.memory_bytes_per_thread = size_t{40} << 20;
  std::vector<std::unique_ptr<LuaProcess>> alive;
  Status failed;
  for (int i = 0; i < 10 && failed.ok(); ++i) {
    ProcessEnv env{Rng(1)};
    env.limits = limits;
    auto p = LuaProcess::Load({"big.lua", "keep = string.rep('x', 6 * 1024 * 1024)"}, std::move(env));
    if (p.ok()) {
      alive.push_back(std::move(p).value());
    } else {
      failed = p.status();
    }
  }
  EXPECT_FALSE(failed.ok()) << "ten processes of 6 MiB each fit a 40 MiB limit";
  EXPECT_GE(alive.size(), 4u);
  EXPECT_LE(alive.size(), 6u);
  EXPECT_NE(failed.message().find("for all the script's processes together"), std::string::npos)
      << failed.ToString();
  alive.clear();  // their memory is given back
  ProcessEnv env{Rng(1)};
  env.limits = limits;
  EXPECT_TRUE(LuaProcess::Load({"big.lua", "keep = string.rep('x', 6 * 1024 * 1024)"}, std::move(env)).ok());
}

TEST(MemoryCapTest, AReplyLargerThanTheLimitEndsTheScriptAtItsCall) {
  FakeWorld world;
  world.redis = [](const std::vector<std::string>&) { return Reply::String(std::string(size_t{20} << 20, 'x')); };
  ProcessLimits limits;
  limits.memory_bytes = size_t{8} << 20;
  Status s = RunConsumer("function consumer(w)\n  local r = w:redis('GET', 'big')\n  print(#r)\nend\n", world,
                         limits);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("test.lua:2: memory limit of 8388608 bytes exceeded", 0), 0u) << s.ToString();
}

}  // namespace
}  // namespace xackly
