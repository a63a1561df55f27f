#include "tests/approved_file.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

#include "harness/files.h"
#include "reports/text_util.h"

namespace xackly {
namespace {

// Line `n` (from 1) of `text` with control bytes escaped, or "(end of text)".
std::string ShownLine(std::string_view text, size_t n) {
  size_t start = 0;
  for (size_t i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return "(end of text)";
    ++start;
  }
  if (start >= text.size()) return "(end of text)";
  const size_t end = std::min(text.find('\n', start), text.size());
  const std::string shown = report::Printable(text.substr(start, end - start));
  return end < text.size() ? shown + "\\n" : shown + " (end of text, no newline)";
}

// The ctest command that approves what the running test produced.
std::string ApproveCommand() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test == nullptr ? "GoldenTest|ScenarioRunsTest.Every|CliOutputTest"
                                           : std::string(test->test_suite_name()) + "." + test->name();
  return "XACKLY_UPDATE_GOLDEN=1 ctest --test-dir build -R '" + name + "'";
}

}  // namespace

bool UpdatingApprovedFiles() {
  const char* v = std::getenv("XACKLY_UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) == "1";
}

void ExpectMatchesApprovedFile(const std::string& path, const std::string& actual) {
  if (UpdatingApprovedFiles()) {
    Result<std::string> before = ReadFile(path);
    if (before.ok() && *before == actual) return;
    Status written = WriteFileAtomically(path, actual);
    EXPECT_TRUE(written.ok()) << written.ToString();
    if (written.ok()) std::printf("approved: rewrote %s\n", path.c_str());
    return;
  }
  Result<std::string> approved = ReadFile(path);
  if (!approved.ok()) {
    ADD_FAILURE() << approved.status().ToString() << " (a new approved file? XACKLY_UPDATE_GOLDEN=1 writes it)";
    return;
  }
  if (actual == *approved) return;
  size_t at = 0, line = 1, column = 1;
  for (; at < actual.size() && at < approved->size() && actual[at] == (*approved)[at]; ++at) {
    if (actual[at] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  ADD_FAILURE() << path << " differs from what the test produced at line " << line << ", column " << column
                << ":\n  approved: " << ShownLine(*approved, line) << "\n  produced: " << ShownLine(actual, line)
                << "\n  (" << approved->size() << " bytes approved, " << actual.size() << " produced)"
                << "\nIf the change is meant: " << ApproveCommand() << ", read `git diff " << path
                << "`, and mend the tests that assert the old text (git grep it in tests/).";
}

}  // namespace xackly
