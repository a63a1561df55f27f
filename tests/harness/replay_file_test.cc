// A replay file travels (issue 30): it embeds the protocol script and
// includes it ran, so it replays from any directory with the same trace
// hash; `replay --current` re-judges its recorded workload and faults
// against the script as it is now ("your protocol changed", not
// "diverged"), and `--expect ok` makes a fixed counterexample a test.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/results.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// No dedupe: a crash after the effect runs it twice. The comment holds what
// a TOML multi-line string must escape: \ " and """.
const std::string kBroken = "-- quotes \" and \\ and \"\"\" survive the replay file" + PollingConsumer(R"lua(
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
)lua");

// The fix: the effect keyed by the event (the external service dedupes).
const std::string kFixed = PollingConsumer(R"lua(
      w:effect(e.fields.event_id, "external", {entry = e, key = e.fields.event_id})
      w:redis("XACK", w.stream, w.group, e.id)
)lua");

constexpr const char* kScenario = R"(
name = "orders"
expect = "duplicate"
seed = 1

[workload]
workers = 2
events = 3

[protocol]
script = "src/orders.lua"

[faults]
kinds = ["crash"]
)";

class ReplayFileTest : public ::testing::Test {
 protected:
  // Checks the broken script, then moves its replay file to a directory of
  // its own; returns that file.
  std::string RecordCounterexample() {
    std::filesystem::create_directories(dir_.path() + "/project/src");
    std::filesystem::create_directories(dir_.path() + "/artifact");
    EXPECT_TRUE(WriteFileAtomically(dir_.path() + "/project/src/orders.lua", kBroken).ok());
    EXPECT_TRUE(WriteFileAtomically(dir_.path() + "/project/orders.toml", kScenario).ok());
    CommandOutput check = RunXackly({"check", "--scenario", dir_.path() + "/project/orders.toml", "--cases", "20",
                                     "--out", dir_.path() + "/project/out", "--quiet"});
    EXPECT_EQ(check.exit_code, kExitOk) << check.output;
    const std::string moved = dir_.path() + "/artifact/orders.replay.toml";
    std::filesystem::rename(dir_.path() + "/project/out/orders.replay.toml", moved);
    return moved;
  }
  ScopedTempRoot dir_;
};

TEST_F(ReplayFileTest, AReplayFileMovedToAnotherDirectoryReplaysWithTheSameTraceHash) {
  const std::string file = RecordCounterexample();
  // The source files are gone too: only the embedded copies can run.
  std::filesystem::remove_all(dir_.path() + "/project");
  CommandOutput replay = RunXackly({"replay", file});
  EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "matches the file")) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "observed duplicate")) << replay.output;
}

TEST_F(ReplayFileTest, AFixedScriptReJudgedAgainstTheOldCounterexampleSaysTheProtocolChanged) {
  const std::string file = RecordCounterexample();
  ASSERT_TRUE(WriteFileAtomically(dir_.path() + "/project/src/orders.lua", kFixed).ok());
  CommandOutput news = RunXackly({"replay", file, "--current"});
  EXPECT_EQ(news.exit_code, kExitOk) << news.output;
  EXPECT_TRUE(Contains(news.output, "your protocol changed since")) << news.output;
  EXPECT_TRUE(Contains(news.output, "observed ok")) << news.output;
  EXPECT_FALSE(Contains(news.output, "diverged")) << news.output;
  // Not told as a mismatch or a missed search, and its replay line keeps --current.
  EXPECT_FALSE(Contains(news.output, "DOES NOT MATCH")) << news.output;
  EXPECT_FALSE(Contains(news.output, "one seed is one schedule")) << news.output;
  EXPECT_TRUE(Contains(news.output, "replay: " + ReplayCommand(file, {"--current"}) + "\n")) << news.output;
  // As a regression test: passes with the fix...
  CommandOutput test = RunXackly({"replay", file, "--current", "--expect", "ok"});
  EXPECT_EQ(test.exit_code, kExitOk) << test.output;
  // ...and fails when the bug comes back (the recorded trace then comes again).
  ASSERT_TRUE(WriteFileAtomically(dir_.path() + "/project/src/orders.lua", kBroken).ok());
  CommandOutput again = RunXackly({"replay", file, "--current", "--expect", "ok"});
  EXPECT_EQ(again.exit_code, kExitVerdictMismatch) << again.output;
  EXPECT_TRUE(Contains(again.output, "matches the file")) << again.output;
  EXPECT_TRUE(Contains(again.output, "replay: " + ReplayCommand(file, {"--current", "--expect", "ok"}))) << again.output;
}

// --current looks for the script beside the replay file (by the path it
// names), then where it was recorded: when neither has it, the error names
// both places, and nothing runs.
TEST_F(ReplayFileTest, CurrentNamesBothPlacesItLookedForTheScript) {
  const std::string file = RecordCounterexample();
  std::filesystem::remove_all(dir_.path() + "/project");
  CommandOutput replay = RunXackly({"replay", file, "--current"});
  EXPECT_EQ(replay.exit_code, kExitUsage) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "not beside the file as " + dir_.path() + "/src/orders.lua")) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "nor where it was recorded: " + dir_.path() + "/project/src/orders.lua"))
      << replay.output;
}

TEST_F(ReplayFileTest, AnEmbeddedScriptEditedByHandIsRefusedAtItsLine) {
  const std::string file = RecordCounterexample();
  Result<std::string> text = ReadFile(file);
  ASSERT_TRUE(text.ok());
  std::string edited = *text;
  const size_t at = edited.find("w:effect(");
  ASSERT_NE(at, std::string::npos);
  edited.insert(at, "-- edited\n");
  ASSERT_TRUE(WriteFileAtomically(file, edited).ok());
  CommandOutput replay = RunXackly({"replay", file});
  EXPECT_EQ(replay.exit_code, kExitUsage) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "embedded[0].hash")) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "does not match its hash")) << replay.output;
}

}  // namespace
}  // namespace xackly
