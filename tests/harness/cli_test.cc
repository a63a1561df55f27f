// The xackly executable as a user meets it: help text, exit codes, and the
// doctor both passing and failing.
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "reports/report.h"
#include "reports/text_util.h"
#include "tests/approved_file.h"
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

// An override the run cannot take is a usage error that names the flag and
// the value, before any server starts: a misspelt verdict or fault kind
// would otherwise judge the run against something else.
TEST(CliTest, ABadOverrideIsAUsageErrorNamingTheFlagAndTheValue) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--expect", "meteor"}, "xackly run: error: --expect: 'meteor': 'meteor' is not a verdict kind"},
           {{"--expect", "duplicate:meteor"},
            "xackly run: error: --expect: 'duplicate:meteor': 'meteor' is not a cause of duplicate"},
           {{"--faults", "crash,meteor"}, "xackly run: error: --faults: unknown fault kind 'meteor' (valid: crash,"},
           {{"--workers", "0"}, "--workers: Value 0 not in range 1 to 64"},
       }) {
    std::vector<std::string> args = {"run", "--protocol", "no-dedupe"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandOutput out = RunXackly(args);
    EXPECT_EQ(out.exit_code, kExitUsage) << ::testing::PrintToString(args) << "\n" << out.output;
    EXPECT_NE(out.output.find(c.says), std::string::npos) << out.output;
  }
}

// Every number flag with a range, as each command's --help states it
// ("INT:INT in [0 - 64]"), so a flag added with a range is tested
// unedited: both ends are taken, and one past either is a usage error
// naming the flag and its range. The target is unknown, so a value that
// is taken ends at the protocol lookup instead of starting a search. The
// ranges themselves are approved (tests/harness/data/cli-ranges.approved),
// so a bound that moves is read by a person before it ships.
TEST(CliTest, EveryNumberFlagTakesTheEndsOfItsRangeAndRefusesOnePastThem) {
  const std::regex ranged(R"((--[a-z][a-z-]*) INT:INT in \[(-?[0-9]+) - (-?[0-9]+)\])");
  int flags = 0;
  std::string approved;
  for (const char* command : {"run", "check"}) {
    const std::string help = RunXackly({command, "--help"}).output;
    for (std::sregex_iterator it(help.begin(), help.end(), ranged), end; it != end; ++it) {
      ++flags;
      const std::string flag = (*it)[1];
      const int64_t min = std::stoll((*it)[2]), max = std::stoll((*it)[3]);
      approved += fmt::format("{} {} {}..{}\n", command, flag, min, max);
      SCOPED_TRACE(std::string(command) + " " + flag);
      for (const int64_t value : {min - 1, min, max, max + 1}) {
        CommandOutput out = RunXackly({command, "--protocol", "no-such-protocol", flag, std::to_string(value)});
        EXPECT_EQ(out.exit_code, kExitUsage) << value << ": " << out.output;
        const std::string refusal =
            fmt::format("{}: Value {} not in range {} to {}", flag, value, min, max);
        if (value < min || value > max) {
          EXPECT_NE(out.output.find(refusal), std::string::npos) << value << ": " << out.output;
        } else {
          EXPECT_EQ(out.output.find("not in range"), std::string::npos) << value << ": " << out.output;
          EXPECT_NE(out.output.find("unknown protocol 'no-such-protocol'"), std::string::npos) << out.output;
        }
      }
    }
  }
  EXPECT_GE(flags, 10) << "the ranges were not found in --help";
  ExpectMatchesApprovedFile(std::string(XACKLY_SOURCE_DIR) + "/tests/harness/data/cli-ranges.approved", approved);
}

// A scenario's exact plan names faults; one that never fired is named with
// why, and a green run without it is exit 4 (no evidence), while a
// violation that matched keeps exit 0 (it happened whatever else the plan
// named).
TEST(CliTest, APlannedFaultThatNeverFiredIsNamedAndAGreenWithoutItIsExitFour) {
  ScopedTempRoot dir;
  const std::string plan =
      "[workload]\nworkers = 1\nevents = 1\n[schedule]\nfaults = [\"crash w1 after-effect #1\", "
      "\"crash w1 after-effect #5\"]\n";
  const std::string green = dir.path() + "/green.toml", found = dir.path() + "/found.toml";
  ASSERT_TRUE(WriteFileAtomically(green, "protocol = \"txn-dedupe\"\nexpect = \"ok\"\n" + plan).ok());
  ASSERT_TRUE(WriteFileAtomically(found, "protocol = \"no-dedupe\"\nexpect = \"duplicate\"\n" + plan).ok());
  const std::string line =
      "planned fault never fired: 'crash w1 after-effect #5': w1 reached after-effect only 2 times while faults "
      "could fire";
  for (const char* command : {"run", "replay"}) {
    CommandOutput ok = command == std::string("run") ? RunXackly({"run", "--scenario", green})
                                                     : RunXackly({"replay", green});
    EXPECT_EQ(ok.exit_code, kExitCoverageGaps) << command << "\n" << ok.output;
    EXPECT_NE(ok.output.find("observed ok (expected ok): matched"), std::string::npos) << ok.output;
    EXPECT_NE(ok.output.find(line), std::string::npos) << ok.output;
    EXPECT_NE(ok.output.find("matched, but 1 fault of the plan never fired (above)"), std::string::npos) << ok.output;
  }
  CommandOutput duplicate = RunXackly({"run", "--scenario", found});
  EXPECT_EQ(duplicate.exit_code, kExitOk) << duplicate.output;
  EXPECT_NE(duplicate.output.find("observed duplicate"), std::string::npos) << duplicate.output;
  EXPECT_NE(duplicate.output.find("planned fault never fired: 'crash w1 after-effect #5'"), std::string::npos)
      << duplicate.output;

  // --quiet's one line says so, and stderr says why, as `check --quiet` does.
  CommandOutput quiet = RunXackly({"run", "--scenario", green, "--quiet"});
  EXPECT_EQ(quiet.exit_code, kExitCoverageGaps) << quiet.output;
  EXPECT_NE(quiet.output.find("observed ok (expected ok): matched with gaps, trace"), std::string::npos) << quiet.output;
  EXPECT_NE(quiet.output.find(line), std::string::npos) << quiet.output;

  // The reports CI keeps say it too: the JSON names the fault and why, and
  // JUnit fails the green run with a failure element (not only a count).
  const std::string out = dir.path() + "/out";
  CommandOutput written = RunXackly({"run", "--scenario", green, "--out", out});
  ASSERT_EQ(written.exit_code, kExitCoverageGaps) << written.output;
  Result<std::string> json = ReadFile(out + "/report.json");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  Result<report::Report> back = report::ParseJsonReport(*json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->checks.size(), 1u);
  EXPECT_EQ(back->checks[0].unfired_planned,
            (std::vector<report::CheckReport::UnfiredFault>{
                {"crash w1 after-effect #5", "w1 reached after-effect only 2 times while faults could fire"}}));
  EXPECT_FALSE(back->all_matched);
  Result<std::string> junit = ReadFile(out + "/junit.xml");
  ASSERT_TRUE(junit.ok()) << junit.status().ToString();
  EXPECT_NE(junit->find("failures=\"1\""), std::string::npos) << *junit;
  EXPECT_NE(junit->find("<failure message=\"matched with gaps: expected ok, observed ok\" type=\"coverage-gaps\">" +
                        report::EscapeXml(line) + "\n</failure>"),
            std::string::npos)
      << *junit;
  for (const char* file : {"/report.md", "/report.html", "/report.txt"}) {
    Result<std::string> text = ReadFile(out + file);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    // HTML writes the quotes as entities, Markdown escapes the '#'.
    const size_t at = text->find("planned fault never fired: ");
    ASSERT_NE(at, std::string::npos) << file << "\n" << *text;
    EXPECT_NE(text->find("crash w1 after-effect", at), std::string::npos) << file << "\n" << *text;
    EXPECT_NE(text->find("only 2 times while faults could fire", at), std::string::npos) << file << "\n" << *text;
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
