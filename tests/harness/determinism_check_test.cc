// `run --check-determinism` is only worth its flag if it notices two runs
// that differ. A wrapper around redis-server makes the second server refuse
// XAUTOCLAIM (rename-command in its config): the same verdict, another trace.
#include <sys/stat.h>

#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// A redis-server wrapper whose starts number `from` and later have no
// XAUTOCLAIM command.
std::string NoClaimFrom(const ScopedTempRoot& dir, int from) {
  std::string script = dir.path() + "/redis-server";
  std::string text = "#!/bin/sh\n"
                     "n=$(cat '" + dir.path() + "/starts' 2>/dev/null || echo 0)\n"
                     "n=$((n + 1))\n"
                     "echo $n > '" + dir.path() + "/starts'\n"
                     "if [ $n -ge " + std::to_string(from) + " ]; then echo 'rename-command XAUTOCLAIM \"\"' >> \"$1\"; fi\n"
                     "exec redis-server \"$@\"\n";
  EXPECT_TRUE(WriteFileAtomically(script, text).ok());
  chmod(script.c_str(), 0700);
  return script;
}

CommandOutput RunTwice(const std::string& server) {
  // dup-no-ack's counterexample ends with an entry pending forever: its
  // worker claims it again and again (XAUTOCLAIM), and never acks it; with
  // the claims refused, the entry stays pending just the same: pel-leak.
  return RunXackly({"run", "--scenario", std::string(XACKLY_SOURCE_DIR) + "/scenarios/regressions/dup-no-ack.toml",
                    "--server", server, "--check-determinism"});
}

TEST(DeterminismCheckTest, TwoDifferentTracesFailTheRunWithExitThree) {
  ScopedTempRoot dir;
  CommandOutput out = RunTwice(NoClaimFrom(dir, 2));
  EXPECT_EQ(out.exit_code, kExitHarnessFailure) << out.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out.output, m,
                                std::regex("NONDETERMINISM: the same seed gave trace ([0-9a-f]{16}) and then ([0-9a-f]{16})")))
      << out.output;
  EXPECT_NE(m[1].str(), m[2].str());
}

TEST(DeterminismCheckTest, TheWrapperAloneChangesNothing) {
  // Positive control: the same wrapper, both servers unchanged.
  ScopedTempRoot dir;
  CommandOutput out = RunTwice(NoClaimFrom(dir, 3));
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "determinism: a second run on a fresh server gave the same trace")) << out.output;
  EXPECT_EQ(*ReadFile(dir.path() + "/starts"), "2\n");
}

}  // namespace
}  // namespace xackly
