// Workers crash by having their coroutine destroyed mid-step. That is only
// sound if destroying the outermost task destroys every frame below it (so
// locals such as an open transaction's guard run their destructors) and if
// the chain resumes in order while it lives.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/task.h"

namespace xackly {
namespace {

struct Log {
  std::vector<std::string> lines;
};

struct Guard {
  Log* log;
  std::string name;
  ~Guard() { log->lines.push_back("destroy " + name); }
};

// A leaf awaitable like sim/actor.h's Request: suspends until resumed.
std::coroutine_handle<> g_waiting;
struct Suspend {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { g_waiting = h; }
  int await_resume() const { return 7; }
};

Task<int> Leaf(Log* log) {
  Guard g{log, "leaf"};
  int v = co_await Suspend{};
  log->lines.push_back("leaf resumed");
  co_return v;
}

Task<bool> Middle(Log* log) {
  Guard g{log, "middle"};
  int a = co_await Leaf(log);
  int b = co_await Leaf(log);
  co_return a + b == 14;
}

Task<void> Top(Log* log, bool* result) {
  Guard g{log, "top"};
  bool ok = co_await Middle(log);
  *result = ok;
}

TEST(TaskTest, ChainRunsToCompletionInOrder) {
  Log log;
  bool result = false;
  Task<void> t = Top(&log, &result);
  t.Start();
  int resumes = 0;
  while (!t.done() && g_waiting) {
    std::coroutine_handle<> h = std::exchange(g_waiting, {});
    h.resume();
    ++resumes;
  }
  EXPECT_TRUE(t.done());
  EXPECT_TRUE(result);
  EXPECT_EQ(resumes, 2);
  std::vector<std::string> want = {"leaf resumed", "destroy leaf", "leaf resumed",
                                   "destroy leaf", "destroy middle", "destroy top"};
  EXPECT_EQ(log.lines, want);
}

TEST(TaskTest, DestroyingTheTopTaskMidStepDestroysEveryFrame) {
  Log log;
  bool result = false;
  {
    Task<void> t = Top(&log, &result);
    t.Start();  // suspended inside the first Leaf
    ASSERT_TRUE(g_waiting);
    g_waiting = {};
  }  // the "crash"
  EXPECT_FALSE(result);
  std::vector<std::string> want = {"destroy leaf", "destroy middle", "destroy top"};
  EXPECT_EQ(log.lines, want);
}

}  // namespace
}  // namespace xackly
