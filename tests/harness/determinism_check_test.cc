// `run --check-determinism` is only worth its flag if it notices two runs
// that differ. A wrapper around redis-server makes the second server run on
// the real clock instead of the virtual one: same verdict, another trace.
#include <sys/stat.h>

#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// A redis-server wrapper whose starts number `from` and later run without
// the clock preload.
std::string RealClockFrom(const ScopedTempRoot& dir, int from) {
  std::string script = dir.path() + "/redis-server";
  std::string text = "#!/bin/sh\n"
                     "n=$(cat '" + dir.path() + "/starts' 2>/dev/null || echo 0)\n"
                     "n=$((n + 1))\n"
                     "echo $n > '" + dir.path() + "/starts'\n"
                     "if [ $n -ge " + std::to_string(from) + " ]; then unset LD_PRELOAD; fi\n"
                     "exec redis-server \"$@\"\n";
  EXPECT_TRUE(WriteFileAtomically(script, text).ok());
  chmod(script.c_str(), 0700);
  return script;
}

CommandOutput RunTwice(const std::string& server) {
  // dup-no-ack's counterexample ends with an entry pending forever: the
  // final XPENDING's idle times (and what XAUTOCLAIM claims) follow the
  // server's clock; the verdict, pel-leak, does not.
  return RunXackly({"run", "--scenario", std::string(XACKLY_SOURCE_DIR) + "/scenarios/regressions/dup-no-ack.toml",
                    "--server", server, "--check-determinism"});
}

TEST(DeterminismCheckTest, TwoDifferentTracesFailTheRunWithExitThree) {
  ScopedTempRoot dir;
  CommandOutput out = RunTwice(RealClockFrom(dir, 2));
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out.output, m,
                                std::regex("NONDETERMINISM: the same seed gave trace ([0-9a-f]{16}) and then ([0-9a-f]{16})")))
      << out.output;
  EXPECT_NE(m[1].str(), m[2].str());
}

TEST(DeterminismCheckTest, TheWrapperAloneChangesNothing) {
  // Positive control: the same wrapper, both servers on the virtual clock.
  ScopedTempRoot dir;
  CommandOutput out = RunTwice(RealClockFrom(dir, 3));
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "determinism: a second run on a fresh server gave the same trace")) << out.output;
  EXPECT_EQ(*ReadFile(dir.path() + "/starts"), "2\n");
}

}  // namespace
}  // namespace xackly
