// GCC 12 miscompiles `co_await` inside an if/switch/while condition when the
// awaiter has a non-trivial destructor: the coroutine silently ends. This
// test fails when such a line enters the sources (see sim/task.h).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace {

// True when `line` has `if (`, `while (` or `switch (` whose parenthesised
// condition contains `co_await`.
bool CoAwaitInCondition(std::string_view line) {
  for (std::string_view kw : {"if (", "while (", "switch ("}) {
    for (size_t at = line.find(kw); at != std::string_view::npos; at = line.find(kw, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) continue;
      size_t open = at + kw.size() - 1;
      int depth = 0;
      for (size_t i = open; i < line.size(); ++i) {
        if (line[i] == '(') ++depth;
        if (line[i] == ')' && --depth == 0) {
          if (line.substr(open, i - open).find("co_await") != std::string_view::npos) return true;
          break;
        }
      }
    }
  }
  return false;
}

TEST(CoroutineStyleTest, TheCheckSeesWhatItMustSee) {
  EXPECT_TRUE(CoAwaitInCondition("  if (!co_await w.Effect(e)) co_return false;"));
  EXPECT_TRUE(CoAwaitInCondition("  while ((co_await r) > 0) {"));
  EXPECT_FALSE(CoAwaitInCondition("  if (done) co_await w.Ack(e.id);"));
  EXPECT_FALSE(CoAwaitInCondition("  bool ran = co_await w.Effect(e);"));
}

TEST(CoroutineStyleTest, NoCoAwaitInsideAConditionAnywhereInTheSources) {
  int scanned = 0;
  for (const char* dir : {"sim", "harness", "scenarios", "reports", "tests", "examples", "bench"}) {
    std::filesystem::path root = std::filesystem::path(XACKLY_SOURCE_DIR) / dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.path().extension() != ".cc" && entry.path().extension() != ".h") continue;
      if (entry.path().filename() == "coroutine_style_test.cc") continue;  // its examples above
      std::ifstream in(entry.path());
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        EXPECT_FALSE(CoAwaitInCondition(line)) << entry.path().string() << ":" << n << ": " << line;
      }
      ++scanned;
    }
  }
  EXPECT_GT(scanned, 10);
}

}  // namespace
