// The replay command a failure ends with is pasted into a shell: a replay
// file's path must come back from the shell as the same one word.
#include "harness/results.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

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

}  // namespace
}  // namespace xackly
