// The xackly executable as a user meets it: help text, exit codes, and the
// doctor both passing and failing.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

TEST(CliTest, HelpSaysWhatXacklyIsAndListsSubcommands) {
  CommandOutput help = RunXackly({"--help"});
  EXPECT_EQ(help.exit_code, kExitOk);
  for (const char* part : {"Redis Streams", "virtual clock", "doctor", "Exit codes"}) {
    EXPECT_TRUE(Contains(help.output, part)) << "missing '" << part << "' in:\n" << help.output;
  }
}

TEST(CliTest, UsageErrorsExitWithTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"--bogus"}, {"frobnicate"}, {"doctor", "--persistence", "sometimes"},
           {"doctor", "--server"}}) {
    CommandOutput out = RunXackly(args);
    EXPECT_EQ(out.exit_code, kExitUsage) << "args: " << ::testing::PrintToString(args) << "\n"
                                         << out.output;
  }
}

TEST(CliTest, DoctorPassesEveryCheckOnThisMachine) {
  CommandOutput out = RunXackly({"doctor"});
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  std::vector<std::string> lines = Lines(out.output);
  EXPECT_EQ(lines.size(), 8u) << out.output;
  for (const std::string& line : lines) EXPECT_TRUE(line.starts_with("ok   ")) << line;
}

TEST(CliTest, DoctorWithAMissingServerSaysWhatToDo) {
  CommandOutput out = RunXackly({"doctor", "--server", "/nonexistent/redis-server"});
  EXPECT_EQ(out.exit_code, kExitHarnessFailure);
  EXPECT_TRUE(out.output.starts_with("FAIL server: ")) << out.output;
  EXPECT_TRUE(Contains(out.output, "/nonexistent/redis-server")) << out.output;
  EXPECT_TRUE(Contains(out.output, "apt-get install redis-server")) << out.output;
}

// A server on the real clock (a preload library that is not the clock) must
// fail the clock checks, and the doctor must say which ones.
TEST(CliTest, DoctorNamesTheFailingCheck) {
  CommandOutput out =
      RunXackly({"doctor", "--persistence", "none"}, {"XACKLY_CLOCK_LIB=/lib/x86_64-linux-gnu/libm.so.6"});
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  EXPECT_TRUE(Contains(out.output, "FAIL TIME equals the virtual clock: `TIME` replied"))
      << out.output;
  EXPECT_TRUE(Contains(out.output, "ok   crash + restart with persistence none")) << out.output;
}

}  // namespace
}  // namespace xackly
