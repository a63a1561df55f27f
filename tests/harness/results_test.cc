// The replay command a failure ends with is pasted into a shell: a replay
// file's path must come back from the shell as the same one word. And the
// replay file itself gives back the run that wrote it.
#include "harness/results.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <array>
#include <cstdio>
#include <string>

#include "tests/rc_cases.h"
#include "tests/scenarios/scenario_gen.h"
#include "tests/scenarios/scenario_test_util.h"

namespace xackly {
namespace {

// What /bin/sh makes of `word`: the words it splits it into, one a line.
std::string ShellWords(const std::string& word) {
  FILE* pipe = popen(("printf '%s\\n' " + word).c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  pclose(pipe);
  return out;
}

// The path as the shell hands it to `xackly replay`.
std::string RoundTrip(const std::string& file) {
  const std::string prefix = "xackly replay ";
  const std::string command = ReplayCommand(file);
  if (!command.starts_with(prefix)) return "no prefix: " + command;
  return ShellWords(command.substr(prefix.size()));
}

TEST(ResultsTest, AReplayPathWithASpaceIsQuotedIntoOneShellWord) {
  const std::string file = "/tmp/my runs/no-dedupe.replay.toml";
  EXPECT_EQ(ReplayCommand(file), "xackly replay '/tmp/my runs/no-dedupe.replay.toml'");
  EXPECT_EQ(RoundTrip(file), file + "\n");
}

TEST(ResultsTest, AReplayPathWithAQuoteRoundTripsThroughTheShell) {
  const std::string file = "/tmp/bob's runs/no-dedupe.replay.toml";
  EXPECT_EQ(RoundTrip(file), file + "\n");
}

TEST(ResultsTest, APlainReplayPathIsLeftUnquoted) {
  EXPECT_EQ(ReplayCommand("out/no-dedupe.replay.toml"), "xackly replay out/no-dedupe.replay.toml");
}

// 1000 generated runs (the count is the test's, RC_PARAMS gives only the
// seed): a scenario drawn by AnyScenario, run with an explicit plan of its
// own or with one drawn from its rates (then the faults that fired are the
// plan), recorded as a replay file (ReplayScenario, and the server as
// OutDir::WriteReplay sets it) and parsed back: the same RunConfig (seed,
// explicit plan, picks and every other setting), trace hash and server.
TEST(ResultsTest, EveryGeneratedReplayFileGivesBackItsRun) {
  testing::CheckCases(1000, [] {
    const Scenario like = *testing::AnyScenario();
    RunResult result;
    result.fired = *testing::AnyFaultSchedule(like.config);
    result.trace_hash = *rc::gen::arbitrary<uint64_t>();
    Scenario replay = ReplayScenario(like, like.config, result, *testing::AnyText());
    replay.server = *testing::AnyText();
    const std::string text = WriteScenario(replay);
    RC_LOG() << text;
    Result<Scenario> back = ParseScenario(text, "run.replay.toml");
    if (!back.ok()) RC_FAIL(back.status().ToString());
    RC_ASSERT(back->config.fault_schedule == (like.config.fault_schedule ? like.config.fault_schedule : result.fired));
    RC_ASSERT(back->trace_hash == result.TraceHashHex());
    RC_ASSERT(back->server == replay.server);
    testing::RcAssertExpectations([&] { testing::ExpectSameRunConfig(back->config, replay.config); });
  });
}

}  // namespace
}  // namespace xackly
