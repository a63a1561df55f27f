// Hostile and sloppy scenario files (issue 16): names that would leave
// --out, numbers that would overflow virtual time, schedules that do not
// fit the run, and bytes that must never reach toml++. Each is rejected with
// one line naming file, line and field; the limits themselves are accepted.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "sim/limits.h"
#include "sim/protocol.h"

namespace xackly {
namespace {

std::string ErrorOf(const std::string& text) {
  Result<Scenario> s = ParseScenario(text, "h.toml");
  if (s.ok()) return "(parsed)";
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos) << s.status().message();
  return s.status().message();
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// --- Names: nothing derived from them leaves --out ---------------------------

TEST(ScenarioNames, PathsAndLongNamesAreRejectedWithTheirLine) {
  for (const char* name : {"../../escaped", "a/b/c", "/etc/x", ".hidden", "-flag", "a b", "..", "a\\\\b"}) {
    std::string m = ErrorOf(std::string("protocol = \"no-dedupe\"\nname = \"") + name + "\"\n");
    EXPECT_TRUE(StartsWith(m, "h.toml:2: name: expected a name of 1..128 characters")) << name << ": " << m;
  }
  std::string huge(1'000'000, 'x');
  std::string m = ErrorOf("protocol = \"no-dedupe\"\nname = \"" + huge + "\"\n");
  EXPECT_TRUE(StartsWith(m, "h.toml:2: name: ")) << m.substr(0, 200);
  EXPECT_LT(m.size(), 300u) << "a 1 MB name is not echoed in full";
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\nname = \"" + std::string(128, 'x') + "\"\n"), "(parsed)");
}

TEST(ScenarioNames, TheDefaultNameFromAnOddFileNameIsMadeSafe) {
  Result<Scenario> s = ParseScenario("protocol = \"no-dedupe\"\n", "dir/../my case (2).toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "my_case__2_");
  EXPECT_TRUE(IsScenarioName(s->name));
}

TEST(ScenarioNames, ReplayFileNamesArePlainFileNames) {
  EXPECT_EQ(ReplayFileName("txn-dedupe"), "txn-dedupe.replay.toml");
  EXPECT_EQ(ReplayFileName("../../escaped"), "_._.._escaped.replay.toml");
  EXPECT_EQ(ReplayFileName(""), "scenario.replay.toml");
  std::string long_name = ReplayFileName(std::string(10'000, 'y') + "/z");
  EXPECT_EQ(long_name, std::string(kMaxScenarioNameChars, 'y') + ".replay.toml");
  for (const std::string& n : {ReplayFileName("a/b/c"), ReplayFileName(".."), ReplayFileName("\n")}) {
    EXPECT_EQ(n.find('/'), std::string::npos) << n;
    EXPECT_NE(n[0], '.') << n;
  }
}

// --- Bytes toml++ must never see ----------------------------------------------

TEST(ScenarioText, NulInvalidUtf8AndStrayNonAsciiNeverReachTheTomlParser) {
  using namespace std::string_literals;
  // The two inputs that reach undefined behaviour inside toml++ 3.3.
  EXPECT_EQ(ErrorOf("[\0]\n"s), "h.toml:1: invalid TOML: a NUL byte");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\nseed = 0\xcd\x9a\n"),
            "h.toml:2: invalid TOML: a non-ASCII character outside a string or comment");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n\ndescription = \"\xff\"\n"),
            "h.toml:3: invalid TOML: not UTF-8 (byte 0xff)");
  EXPECT_EQ(ErrorOf("# overlong slash \xc0\xaf\nprotocol = \"no-dedupe\"\n"),
            "h.toml:1: invalid TOML: not UTF-8 (byte 0xc0)");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\ndescription = \"\xed\xa0\x80\"\n"),
            "h.toml:2: invalid TOML: not UTF-8 (byte 0xed)") << "a UTF-16 surrogate";
  // Non-ASCII where TOML allows it: strings of every kind and comments.
  Result<Scenario> ok = ParseScenario(
      "# commentaire \xc3\xa9t\xc3\xa9\nprotocol = \"no-dedupe\"\n"
      "description = \"caf\xc3\xa9 \\\" still a string \xe2\x9c\x93\"\n"
      "origin = '''\nr\xc3\xa9sum\xc3\xa9 ''x'' '''\n",
      "h.toml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->description, "caf\xc3\xa9 \" still a string \xe2\x9c\x93");
}

// Each UTF-8 length at its lowest and highest code point is text; one step
// past an edge (overlong, above U+10FFFF, a lead byte no sequence has) is
// refused naming its first byte.
TEST(ScenarioText, EveryUtf8LengthIsTextAtItsEdgesAndRefusedJustPastThem) {
  const char* edges[] = {"\xc2\x80",         "\xdf\xbf",         "\xe0\xa0\x80", "\xef\xbf\xbf",
                         "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"};
  for (const char* text : edges) {
    Result<Scenario> ok =
        ParseScenario(std::string("protocol = \"no-dedupe\"\ndescription = \"") + text + "\"\n", "h.toml");
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ(ok->description, text);
  }
  const std::pair<const char*, const char*> past[] = {
      {"\xc1\xbf", "0xc1"},             // U+007F in two bytes
      {"\xe0\x9f\xbf", "0xe0"},         // U+07FF in three
      {"\xf0\x8f\xbf\xbf", "0xf0"},     // U+FFFF in four
      {"\xf4\x90\x80\x80", "0xf4"},     // U+110000
      {"\xf5\x80\x80\x80", "0xf5"},     // no sequence starts with it
      {"\xe0\xa0", "0xe0"},             // cut short
  };
  // A sequence the text ends inside (no newline after it) is cut short too.
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n# cut \xc3"), "h.toml:2: invalid TOML: not UTF-8 (byte 0xc3)");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n# cut \xe0\xa0"), "h.toml:2: invalid TOML: not UTF-8 (byte 0xe0)");
  for (const auto& [text, byte] : past) {
    EXPECT_EQ(ErrorOf(std::string("protocol = \"no-dedupe\"\ndescription = \"") + text + "\"\n"),
              std::string("h.toml:2: invalid TOML: not UTF-8 (byte ") + byte + ")");
  }
}

// --- Numbers: every one within its limit, and their sum -----------------------

TEST(ScenarioLimits, ValuesThatOverflowedVirtualTimeAreRejectedAtTheirLine) {
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[timing]\nstep_ms = 4611686018427387904\n"),
            "h.toml:3: timing.step_ms: expected an integer <= 31536000000, got 4611686018427387904");
  EXPECT_EQ(ErrorOf("[protocol]\nbase = \"txn-dedupe\"\ndedupe_ttl_ms = 9223372036854775807\n"),
            "h.toml:3: protocol.dedupe_ttl_ms: expected an integer <= 31536000000, got "
            "9223372036854775807");
  const char* keys[] = {"step_ms", "effect_ms", "produce_every_ms", "restart_delay_ms",
                        "reconnect_ms", "fault_phase_ms", "quiet_window_ms", "max_steps"};
  for (const char* key : keys) {
    std::string m = ErrorOf(std::string("protocol = \"no-dedupe\"\n[timing]\n") + key +
                            " = 9223372036854775807\n");
    EXPECT_TRUE(StartsWith(m, std::string("h.toml:3: timing.") + key + ": expected an integer <= "))
        << m;
  }
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[faults]\nclock_jump_ms = 9000000000000\n"),
            "h.toml:3: faults.clock_jump_ms: expected an integer <= 31536000000, got 9000000000000");
  for (const char* jump : {"+9223372036854775807ms", "+9000000000000ms"}) {
    std::string m = ErrorOf(std::string("protocol = \"no-dedupe\"\n[schedule]\nfaults = [\"clock-jump ") +
                            jump + " @10ms\"]\n");
    EXPECT_TRUE(StartsWith(m, "h.toml:3: schedule.faults")) << m;
  }
}

TEST(ScenarioLimits, EveryDurationAtItsLimitIsAcceptedAndOneMoreIsNot) {
  const std::string max = std::to_string(kMaxDurationMs);
  const std::string at_limit =
      "protocol = \"no-dedupe\"\n[timing]\neffect_ms = " + max + "\nrestart_delay_ms = " + max +
      "\nreconnect_ms = " + max + "\nquiet_window_ms = " + max + "\nmax_steps = 1\n";
  Result<Scenario> s = ParseScenario(at_limit, "h.toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->config.timing.effect_ms, kMaxDurationMs);
  std::string over = std::to_string(kMaxDurationMs + 1);
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[timing]\neffect_ms = " + over + "\n"),
            "h.toml:3: timing.effect_ms: expected an integer <= 31536000000, got 31536000001");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[timing]\nmax_steps = 10000001\n"),
            "h.toml:3: timing.max_steps: expected an integer <= 10000000, got 10000001");
}

TEST(ScenarioLimits, TheSumOfAllDurationsIsCheckedAtTheLargestDuration) {
  // Each value is within its own limit; together they exceed 100 years.
  std::string m = ErrorOf("protocol = \"no-dedupe\"\n\n[timing]\nstep_ms = 31536000000\nmax_steps = 101\n");
  EXPECT_TRUE(StartsWith(m, "h.toml:4: timing.step_ms: the run's durations add up to more than "
                            "3153600000000 ms (100 years)"))
      << m;
  // Issue 29: durations in [faults] alone were reported at line 1 as "timing".
  m = ErrorOf("protocol = \"no-dedupe\"\n\n[faults]\nscheduled_count = 100000\n"
              "clock_jump_ms = 31536000000\n");
  EXPECT_TRUE(StartsWith(m, "h.toml:5: faults.clock_jump_ms: the run's durations add up")) << m;
  // Just inside: 99 steps of a year.
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[timing]\nstep_ms = 31536000000\nmax_steps = 99\n"
                    "fault_phase_ms = 1\n"),
            "(parsed)");
}

// --- Schedules that do not fit the run ----------------------------------------

TEST(ScenarioSchedule, APoisonedEventBeyondTheEventCountIsRejected) {
  std::string m = ErrorOf(
      "protocol = \"no-dedupe\"\n[workload]\nevents = 3\n[schedule]\nfaults = [\"poison event 50\"]\n");
  EXPECT_EQ(m, "h.toml:5: schedule.faults: 'poison event 50': this run produces only 3 events");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\n[workload]\nevents = 3\n[schedule]\n"
                    "faults = [\"poison event 3\"]\n"),
            "(parsed)");
}

TEST(ScenarioSchedule, CheckScheduleFitsRunNamesTheEntryAnOverrideBroke) {
  Result<Scenario> s = ParseScenario(
      "protocol = \"no-dedupe\"\n[schedule]\nfaults = [\"crash w3 after-effect #1\"]\npicks = \"p1 w2\"\n",
      "h.toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(CheckScheduleFitsRun(s->config).ok());
  RunConfig fewer = s->config;
  fewer.workers = 2;
  EXPECT_EQ(CheckScheduleFitsRun(fewer).message(),
            "schedule.faults[0]: expected an actor of this run (p1, w1..w2), got 'w3' in "
            "'crash w3 after-effect #1'");
  fewer.workers = 1;
  fewer.fault_schedule->clear();
  EXPECT_EQ(CheckScheduleFitsRun(fewer).message(),
            "schedule.picks: expected an actor of this run (p1, w1), got 'w2' as pick 2");
}

// --- Seeds and messages ---------------------------------------------------------

TEST(ScenarioSeeds, ParseSeedTakesDecimalDigitsUpTo2To64Minus1Only) {
  uint64_t seed = 0;
  EXPECT_TRUE(ParseSeed("18446744073709551615", &seed));
  EXPECT_EQ(seed, UINT64_MAX);
  EXPECT_TRUE(ParseSeed("0", &seed));
  EXPECT_EQ(seed, 0u);
  for (const char* bad : {"-1", "18446744073709551616", "99999999999999999999999", "", "+1", " 1",
                          "1e3", "0x10", "12a"}) {
    EXPECT_FALSE(ParseSeed(bad, &seed)) << bad;
  }
  EXPECT_TRUE(StartsWith(ErrorOf("protocol = \"no-dedupe\"\nseed = \"18446744073709551616\"\n"),
                         "h.toml:2: seed: expected an integer >= 0"));
}

TEST(ScenarioErrors, AHugeUnknownKeyIsCutInTheMessage) {
  std::string key(200'000, 'k');
  std::string m = ErrorOf("protocol = \"no-dedupe\"\n" + key + " = 1\n");
  EXPECT_TRUE(StartsWith(m, "h.toml:2: " + std::string(60, 'k') + "...: unknown key (valid: ")) << m.substr(0, 200);
  EXPECT_LT(m.size(), 400u);
}


// Issue 29, item 5: toml++ recurses once per dotted part of a key; a table
// header of 40 000 parts overflowed its stack (SIGSEGV).
TEST(ScenarioText, KeysAndValuesTooDeepForTheParserAreRefusedBeforeIt) {
  std::string header = "[a";
  for (int i = 0; i < 40'000; ++i) header += ".a";
  EXPECT_EQ(ErrorOf(header + "]\nx = 1\n"), "h.toml:1: invalid TOML: a key of more than 64 dotted parts");
  std::string key = "protocol = \"no-dedupe\"\n\nx";
  for (int i = 0; i < 1000; ++i) key += ".y";
  EXPECT_EQ(ErrorOf(key + " = 1\n"), "h.toml:3: invalid TOML: a key of more than 64 dotted parts");
  EXPECT_EQ(ErrorOf("protocol = \"no-dedupe\"\nx = {a = {b = " + std::string(100, '[') + "]}}\n"),
            "h.toml:2: invalid TOML: values nested more than 64 deep");
  // Dots in values and strings are not key parts.
  std::string floats = "protocol = \"no-dedupe\"\ndescription = \"" + std::string(200, '.') + "\"\n";
  EXPECT_EQ(ErrorOf(floats), "(parsed)");
}

}  // namespace
}  // namespace xackly
