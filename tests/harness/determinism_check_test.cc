// `run --check-determinism` is only worth its flag if it notices two runs
// that differ. A wrapper around redis-server makes the second server refuse
// XAUTOCLAIM (rename-command in its config): the same verdict, another trace.
#include <sys/stat.h>

#include <regex>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "harness/check.h"
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

// `check` runs about one case in twenty twice (IsRecheckCase) and compares
// the two runs with CompareRerun. A run that stops at the harness limit has
// no trace to compare: when both stop, the case is unjudged and the check
// goes on; when only one stops, the same case did two different things, and
// that is the nondeterminism the self-check is there to catch.
TEST(DeterminismSelfCheckTest, ARerunThatStopsAtTheHarnessLimitOnlyOnceFailsTheCheck) {
  RunResult run;
  run.trace_hash = 0x0123456789abcdefULL;
  const Status limit = Status::HarnessLimit("harness limit: the run reached the step guard, timing.max_steps = 5");
  const std::string which = "case 7 of seed 3 (1 worker, 1 event)";
  EXPECT_TRUE(CompareRerun(run, run, which).ok());
  EXPECT_TRUE(CompareRerun(limit, limit, which).ok());
  for (const auto& [first, again, stopped] : {std::tuple{Result<RunResult>(limit), Result<RunResult>(run), "first"},
                                              std::tuple{Result<RunResult>(run), Result<RunResult>(limit), "second"}}) {
    const Status s = CompareRerun(first, again, which);
    ASSERT_FALSE(s.ok()) << stopped;
    EXPECT_EQ(s.code(), Status::Code::kInternal);
    EXPECT_EQ(s.message(), std::string("determinism self-check failed: case 7 of seed 3 (1 worker, 1 event) ran twice "
                                       "and stopped at the harness limit only on its ") +
                               stopped + " run; replaying it cannot be trusted");
  }
}

TEST(DeterminismSelfCheckTest, TwoTracesThatDifferFailTheCheckNamingBothHashes) {
  RunResult first, again;
  first.trace_hash = 0x0123456789abcdefULL;
  again.trace_hash = 0xfedcba9876543210ULL;
  const Status s = CompareRerun(first, again, "case 7 of seed 3 (1 worker, 1 event)");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_EQ(s.message(), "determinism self-check failed: case 7 of seed 3 (1 worker, 1 event) ran twice with "
                         "different traces: trace hash 0123456789abcdef then fedcba9876543210; replaying it cannot "
                         "be trusted");
}

}  // namespace
}  // namespace xackly
