// Issue #12: each case thread and the redis-server it drives run on one CPU
// (a round trip on one CPU costs ~5 us, across CPUs ~64 us), parallel case
// threads on distinct CPUs, and --no-pin leaves both to the kernel. Where
// they run changes the speed, never the trace.
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/case_executor.h"
#include "harness/case_pool.h"
#include "harness/cpu_placement.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

std::string ThisThreadCpus() { return CpusAllowedList(gettid()); }

// The pids of every child of every thread of this process.
std::vector<pid_t> ChildPids() {
  std::vector<pid_t> pids;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return pids;
  while (dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream children(std::string("/proc/self/task/") + task->d_name + "/children");
    for (pid_t pid; children >> pid;) pids.push_back(pid);
  }
  closedir(tasks);
  return pids;
}

RunConfig SmallCase(uint64_t seed) {
  RunConfig config = RunConfig::For(*FindProtocol("txn-dedupe"));
  config.workers = 3;
  config.events = 10;
  config.seed = seed;
  return config;
}

// The CPUs of an affinity set, ascending; when the affinity cannot be read
// (a machine with more CPUs than a cpu_set_t holds), CPU 0, which every
// machine has.
TEST(PlacementTest, AnAffinitySetGivesItsCpusAndAnUnreadableOneCpuZero) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(5, &set);
  CPU_SET(2, &set);
  EXPECT_EQ(CpusIn(&set), (std::vector<int>{2, 5}));
  EXPECT_EQ(CpusIn(nullptr), (std::vector<int>{0}));
  CPU_ZERO(&set);
  EXPECT_EQ(CpusIn(&set), (std::vector<int>{0}));
}

// The placement line commands print: one CPU in the singular, a list of
// them ("0-1", "0,2") in the plural, and what the kernel says either way.
TEST(PlacementTest, APinnedThreadIsDescribedOnOneCpuAnUnpinnedOneOnItsList) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  {
    ThreadPin pin(allowed.back());
    ASSERT_TRUE(pin.pinned());
    EXPECT_EQ(DescribeCallingThreadPlacement(), "CPU " + std::to_string(allowed.back()));
  }
  if (allowed.size() > 1) {
    EXPECT_EQ(DescribeCallingThreadPlacement(), "CPUs " + CpusAllowedList(gettid()));
  }
}

TEST(PlacementTest, TheServerRunsOnTheCpuOfTheCaseThreadThatDrivesIt) {
  const std::string before = ThisThreadCpus();
  ASSERT_FALSE(before.empty());
  {
    CaseExecutor executor(TestServerOptions());
    ASSERT_GE(executor.cpu(), 0);
    Result<RedisServer*> server = executor.Server(Persistence::kNone);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    EXPECT_EQ(ThisThreadCpus(), std::to_string(executor.cpu()));
    EXPECT_EQ(CpusAllowedList((*server)->pid()), std::to_string(executor.cpu()));
  }
  EXPECT_EQ(ThisThreadCpus(), before) << "the executor gives the thread its CPUs back";
}

TEST(PlacementTest, NoPinLeavesTheThreadAndTheServerOnEveryAllowedCpu) {
  const std::string before = ThisThreadCpus();
  RedisServerOptions options = TestServerOptions();
  options.pin = false;
  CaseExecutor executor(options);
  EXPECT_EQ(executor.cpu(), -1);
  Result<RedisServer*> server = executor.Server(Persistence::kNone);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ(ThisThreadCpus(), before);
  EXPECT_EQ(CpusAllowedList((*server)->pid()), before);
}

TEST(PlacementTest, TwoCaseThreadsUseTwoCpusEachWithItsServer) {
  if (AllowedCpus().size() < 2) GTEST_SKIP() << "this thread may run on one CPU only: " << ThisThreadCpus();
  CasePool pool(2, TestServerOptions());
  ASSERT_EQ(pool.cpus().size(), 2u);
  EXPECT_NE(pool.cpus()[0], pool.cpus()[1]);
  // Enough cases that both workers start their server.
  std::vector<RunConfig> configs;
  for (uint64_t seed = 1; seed <= 8; ++seed) configs.push_back(SmallCase(seed));
  for (const Result<RunResult>& r : pool.RunAll(configs)) ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::set<std::string> server_cpus;
  for (pid_t pid : ChildPids()) server_cpus.insert(CpusAllowedList(pid));
  EXPECT_EQ(server_cpus, (std::set<std::string>{std::to_string(pool.cpus()[0]),
                                                std::to_string(pool.cpus()[1])}));
}

TEST(PlacementTest, MoreCaseThreadsThanCpusWrapAroundTheAllowedSet) {
  const std::vector<int> allowed = {0, 2, 5};
  EXPECT_EQ(CpuForThread(allowed, 2, 0), 2);
  EXPECT_EQ(CpuForThread(allowed, 2, 1), 5);
  EXPECT_EQ(CpuForThread(allowed, 2, 2), 0);
  EXPECT_EQ(CpuForThread(allowed, 3, 0), 5) << "a CPU outside the set starts at the next one";
  EXPECT_EQ(CpuForThread(allowed, 7, 1), 2);
}

TEST(PlacementTest, PinnedAndUnpinnedCasesHaveTheSameTraces) {
  RedisServerOptions unpinned = TestServerOptions();
  unpinned.pin = false;
  std::vector<uint64_t> hashes[2];
  for (int pinned = 0; pinned < 2; ++pinned) {
    CaseExecutor executor(pinned == 1 ? TestServerOptions() : unpinned);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      Result<RunResult> r = executor.Run(SmallCase(seed));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->matched) << r->observed;
      hashes[pinned].push_back(r->trace_hash);
    }
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

}  // namespace
}  // namespace xackly
