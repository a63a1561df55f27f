// What a new user meets in the first hour (issue 17): machine formats on
// stdout and nothing else there, --version, replay files that name the
// server they were recorded on, usage errors in one shape with a hint, a
// run that missed says that `check` searches, and a check that leaves no
// replay file of an earlier run beside its report.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/progress.h"
#include "reports/report.h"
#include "sim/protocol.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// True when `text` is one JSON document (and says why not otherwise).
::testing::AssertionResult IsJson(const std::string& text) {
  if (nlohmann::json::accept(text)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not one JSON document:\n" << text.substr(0, 400);
}

TEST(FirstHourTest, RunFormatJsonPrintsOnlyJsonOnStdoutForEveryProtocol) {
  ScopedTempRoot dir;
  for (const ProtocolDef& p : Catalog()) {
    CommandOutput out = RunXacklyStdoutIn(dir.path(), {"run", "--protocol", p.name, "--format", "json"});
    EXPECT_TRUE(out.exit_code == kExitOk || out.exit_code == kExitVerdictMismatch) << p.name << out.output;
    EXPECT_TRUE(IsJson(out.output)) << p.name;
    Result<report::Report> r = report::ParseJsonReport(out.output);
    ASSERT_TRUE(r.ok()) << p.name << ": " << r.status().ToString();
    ASSERT_EQ(r->checks.size(), 1u);
    EXPECT_EQ(r->checks[0].name, p.name);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // run without --out writes nothing
}

TEST(FirstHourTest, CheckReplayMergeAndProtocolsPrintJsonOnStdout) {
  ScopedTempRoot dir;
  CommandOutput check =
      RunXacklyStdoutIn(dir.path(), {"check", "--protocol", "no-dedupe", "--cases", "20", "--format", "json", "-j", "1"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  ASSERT_TRUE(IsJson(check.output));
  Result<report::Report> checked = report::ParseJsonReport(check.output);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  ASSERT_TRUE(checked->checks[0].counterexample.has_value());
  // No report file was written; the replay file went to the default --out.
  const std::string replay = dir.path() + "/xackly-out/no-dedupe.replay.toml";
  EXPECT_TRUE(std::filesystem::exists(replay));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/xackly-out/report.json"));

  CommandOutput replayed = RunXacklyStdoutIn(dir.path(), {"replay", replay, "--format", "json"});
  EXPECT_EQ(replayed.exit_code, kExitOk) << replayed.output;
  EXPECT_TRUE(IsJson(replayed.output));

  // Two shards' report.json, merged to stdout.
  for (const char* shard : {"1/2", "2/2"}) {
    CommandOutput ran = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "10", "--shard", shard, "--out",
                                   dir.path() + "/s" + shard[0], "--format", "json", "--quiet", "-j", "1"});
    ASSERT_TRUE(ran.exit_code == kExitOk || ran.exit_code == kExitVerdictMismatch) << ran.output;
  }
  CommandOutput merged = RunXacklyStdoutIn(dir.path(), {"merge", dir.path() + "/s1", dir.path() + "/s2", "--format", "json"});
  EXPECT_EQ(merged.exit_code, kExitOk) << merged.output;
  EXPECT_TRUE(IsJson(merged.output)) << merged.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/xackly-merged"));

  // A shard run with other options is not part of that search: exit 2, naming the flag.
  CommandOutput other = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "12", "--shard", "2/2", "--out",
                                   dir.path() + "/t2", "--format", "json", "--quiet", "-j", "1"});
  ASSERT_TRUE(other.exit_code == kExitOk || other.exit_code == kExitVerdictMismatch) << other.output;
  CommandOutput refused = RunXackly({"merge", dir.path() + "/s1", dir.path() + "/t2", "--out", dir.path() + "/m"});
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.output;
  EXPECT_NE(refused.output.find("--cases 10 / 12"), std::string::npos) << refused.output;

  // Several formats without --out cannot share stdout: a usage error, and
  // nothing is merged, printed or written.
  CommandOutput two_merged = RunXacklyStdoutIn(dir.path(), {"merge", dir.path() + "/s1", dir.path() + "/s2", "--format", "json,md"});
  EXPECT_EQ(two_merged.exit_code, kExitUsage) << two_merged.output;
  EXPECT_FALSE(IsJson(two_merged.output)) << two_merged.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/xackly-merged"));

  CommandOutput protocols = RunXacklyStdoutIn(dir.path(), {"protocols", "--format", "json"});
  EXPECT_EQ(protocols.exit_code, kExitOk);
  EXPECT_TRUE(IsJson(protocols.output));

  // Several formats without --out cannot share stdout.
  CommandOutput two = RunXackly({"run", "--protocol", "no-dedupe", "--format", "json,md"});
  EXPECT_EQ(two.exit_code, kExitUsage) << two.output;
  EXPECT_TRUE(Contains(two.output, "xackly run: error: --format:")) << two.output;
}

TEST(FirstHourTest, VersionNamesTheServerDefault) {
  CommandOutput out = RunXackly({"--version"});
  EXPECT_EQ(out.exit_code, kExitOk);
  EXPECT_TRUE(std::regex_search(out.output, std::regex("^xackly [0-9]+\\.[0-9]+"))) << out.output;
  EXPECT_TRUE(Contains(out.output, "XACKLY_REDIS_SERVER")) << out.output;
  EXPECT_TRUE(Contains(out.output, "redis-server")) << out.output;
}

TEST(FirstHourTest, AReplayFromAnotherServerExitsThreeNamingBoth) {
  ScopedTempRoot dir;
  CommandOutput run = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3", "--out", dir.path()});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  const std::string file = dir.path() + "/no-dedupe.replay.toml";
  std::string text = *ReadFile(file);
  std::smatch server;
  ASSERT_TRUE(std::regex_search(text, server, std::regex("\nserver = \"(redis [0-9.]+)\""))) << text;
  const std::string recorded_on = server[1].str();

  // The same server: the hash is checked and said to match.
  CommandOutput same = RunXackly({"replay", file});
  EXPECT_EQ(same.exit_code, kExitOk) << same.output;
  EXPECT_TRUE(Contains(same.output, "matches the file")) << same.output;

  // Recorded on another server, which traced differently.
  std::string other = std::regex_replace(text, std::regex("\nserver = \"[^\"]*\""), "\nserver = \"valkey 9.9.9\"");
  other = std::regex_replace(other, std::regex("trace_hash = \"[0-9a-f]{16}\""), "trace_hash = \"0123456789abcdef\"");
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/other.toml", other).ok());
  CommandOutput diverged = RunXackly({"replay", dir.path() + "/other.toml"});
  EXPECT_EQ(diverged.exit_code, kExitHarnessFailure) << diverged.output;
  EXPECT_TRUE(Contains(diverged.output, "valkey 9.9.9")) << diverged.output;
  EXPECT_TRUE(Contains(diverged.output, "this run used " + recorded_on)) << diverged.output;

  // The same file with this server's own hash (server_hashes, as
  // tests/rerecord-corpus --server records it): held to that hash.
  std::smatch hash;
  ASSERT_TRUE(std::regex_search(text, hash, std::regex("trace_hash = \"([0-9a-f]{16})\""))) << text;
  for (const bool right : {true, false}) {
    SCOPED_TRACE(right ? "this server's hash" : "a wrong hash for this server");
    const std::string own = std::regex_replace(
        other, std::regex("\nserver = \"valkey 9.9.9\""),
        "\nserver = \"valkey 9.9.9\"\nserver_hashes = { \"" + recorded_on + "\" = \"" +
            (right ? hash[1].str() : std::string("fedcba9876543210")) + "\" }");
    ASSERT_TRUE(WriteFileAtomically(dir.path() + "/own.toml", own).ok());
    CommandOutput replayed = RunXackly({"replay", dir.path() + "/own.toml"});
    EXPECT_EQ(replayed.exit_code, right ? kExitOk : kExitHarnessFailure) << replayed.output;
    EXPECT_TRUE(Contains(replayed.output, right ? "matches the file's hash for " + recorded_on
                                                : "recorded fedcba9876543210 for that server"))
        << replayed.output;
  }

  // A file without a hash: replay says it did not check one.
  std::string unhashed = std::regex_replace(text, std::regex("trace_hash = \"[0-9a-f]{16}\"\n"), "");
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/unhashed.toml", unhashed).ok());
  CommandOutput unchecked = RunXackly({"replay", dir.path() + "/unhashed.toml"});
  EXPECT_TRUE(Contains(unchecked.output, "trace hash: not checked")) << unchecked.output;
}

TEST(FirstHourTest, ARunThatMissesSaysOneSeedIsOneScheduleAndPointsToCheck) {
  CommandOutput out = RunXackly({"run", "--protocol", "no-dedupe", "--faults", "none"});
  EXPECT_EQ(out.exit_code, kExitVerdictMismatch) << out.output;
  EXPECT_TRUE(Contains(out.output, "one seed is one schedule")) << out.output;
  EXPECT_TRUE(Contains(out.output, "xackly check --protocol no-dedupe")) << out.output;
  // The seed line comes first, before the run's result.
  EXPECT_TRUE(out.output.starts_with("xackly run: no-dedupe seed 1 on ")) << out.output;
}

// --quiet on run and replay (as on check): stdout is one line, the verdict
// against the expectation and the trace hash of the full run; a mismatch
// says so there too, and the exit code still follows the verdict.
TEST(FirstHourTest, QuietRunAndReplayPrintOneLineWithTheVerdictAndTraceHash) {
  ScopedTempRoot dir;
  CommandOutput loud = RunXacklyStdoutIn(dir.path(), {"run", "--protocol", "no-dedupe", "--seed", "3"});
  std::smatch hash;
  ASSERT_TRUE(std::regex_search(loud.output, hash, std::regex("trace ([0-9a-f]{16}),"))) << loud.output;
  const std::string out = dir.path() + "/out";
  CommandOutput run = RunXacklyStdoutIn(dir.path(), {"run", "--protocol", "no-dedupe", "--seed", "3", "--out", out, "--quiet"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_EQ(run.output, "no-dedupe seed 3: observed duplicate (expected duplicate:crash:after-effect): matched, trace " + hash[1].str() +
                            "\n");
  for (const char* command : {"replay", "explain"}) {
    CommandOutput again = RunXacklyStdoutIn(dir.path(), {command, out + "/no-dedupe.replay.toml", "--quiet"});
    EXPECT_EQ(again.exit_code, kExitOk) << command << ": " << again.output;
    EXPECT_EQ(again.output, run.output) << command;
  }
  CommandOutput missed =
      RunXacklyStdoutIn(dir.path(), {"run", "--protocol", "no-dedupe", "--seed", "3", "--faults", "none", "--quiet"});
  EXPECT_EQ(missed.exit_code, kExitVerdictMismatch) << missed.output;
  EXPECT_EQ(std::count(missed.output.begin(), missed.output.end(), '\n'), 1) << missed.output;
  EXPECT_TRUE(missed.output.find("observed ok (expected duplicate:crash:after-effect): DOES NOT MATCH") != std::string::npos)
      << missed.output;
}

TEST(FirstHourTest, UsageErrorsHaveOneShapeAndAHint) {
  CommandOutput positional = RunXackly({"run", "no-dedupe"});
  EXPECT_EQ(positional.exit_code, kExitUsage);
  EXPECT_TRUE(Contains(positional.output, "xackly run: error: ")) << positional.output;
  EXPECT_TRUE(Contains(positional.output, "did you mean `xackly run --protocol no-dedupe`")) << positional.output;

  CommandOutput typo = RunXackly({"run", "--protocol", "no-dedup"});
  EXPECT_EQ(typo.exit_code, kExitUsage);
  EXPECT_TRUE(Contains(typo.output, "did you mean no-dedupe?")) << typo.output;

  CommandOutput convert = RunXackly({"run", "--protocol", "no-dedupe", "--workers", "three"});
  EXPECT_EQ(convert.exit_code, kExitUsage);
  EXPECT_TRUE(convert.output.starts_with("xackly run: error: ")) << convert.output;

  CommandOutput twice = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "1", "--cases", "2"});
  EXPECT_EQ(twice.exit_code, kExitUsage);
  EXPECT_TRUE(twice.output.starts_with("xackly check: error: ")) << twice.output;

  for (const char* option : {"--out", "--trace"}) {
    CommandOutput empty = RunXackly({"run", "--protocol", "no-dedupe", option, ""});
    EXPECT_EQ(empty.exit_code, kExitUsage) << option << empty.output;
    EXPECT_TRUE(Contains(empty.output, "must not be empty")) << option << empty.output;
  }
  CommandOutput seed = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "-1"});
  EXPECT_TRUE(Contains(seed.output, "0..2^64-1")) << seed.output;
  // A workload size out of range names its flag (it used to say only
  // "workers must be in 1..64", as if from a file).
  for (const auto& [flag, value] : {std::pair{"--workers", "0"}, std::pair{"--events", "-5"},
                                    std::pair{"--producers", "17"}, std::pair{"--workers", "65"}}) {
    CommandOutput range = RunXackly({"run", "--protocol", "no-dedupe", flag, value});
    EXPECT_EQ(range.exit_code, kExitUsage) << flag << range.output;
    EXPECT_TRUE(range.output.starts_with(std::string("xackly run: error: ") + flag + ": ")) << range.output;
  }
}

// A mistyped protocol name suggests the catalog names nearest to it: within
// a third of its length in edits, or 3 for a short one ("nclam" is no-claim
// less 3 letters; "ncla", 4 edits away, gets no suggestion), a part of a
// name counting as 2, and never more than three names however many tie.
TEST(FirstHourTest, AMistypedProtocolSuggestsAtMostThreeOfTheNearestNames) {
  EXPECT_TRUE(Contains(RunXackly({"run", "--protocol", "nclam"}).output, "'nclam'; did you mean no-claim? (valid:"));
  const CommandOutput far = RunXackly({"run", "--protocol", "ncla"});
  EXPECT_TRUE(Contains(far.output, "unknown protocol 'ncla' (valid:")) << far.output;
  EXPECT_TRUE(Contains(RunXackly({"run", "--protocol", "dedup"}).output,
                       "'dedup'; did you mean no-dedupe or batch-ack-no-dedupe or txn-dedupe? (valid:"));
}

TEST(FirstHourTest, CheckRemovesTheReplayFilesOfThePreviousRun) {
  ScopedTempRoot dir;
  const std::string out = dir.path() + "/out";
  CommandOutput first = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "20", "--out", out, "--quiet"});
  ASSERT_EQ(first.exit_code, kExitOk) << first.output;
  ASSERT_TRUE(std::filesystem::exists(out + "/no-dedupe.replay.toml"));
  ASSERT_TRUE(WriteFileAtomically(out + "/mine.txt", "a user's file").ok());
  CommandOutput second = RunXackly({"check", "--protocol", "ack-first", "--cases", "20", "--out", out, "--quiet"});
  ASSERT_EQ(second.exit_code, kExitOk) << second.output;
  EXPECT_FALSE(std::filesystem::exists(out + "/no-dedupe.replay.toml"));
  EXPECT_TRUE(std::filesystem::exists(out + "/ack-first.replay.toml"));
  EXPECT_TRUE(std::filesystem::exists(out + "/mine.txt"));
}

TEST(FirstHourTest, ExplainShowsTheViolatingPathNotTheWholeTrace) {
  ScopedTempRoot dir;
  ASSERT_EQ(RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3", "--out", dir.path()}).exit_code, kExitOk);
  CommandOutput path = RunXackly({"explain", dir.path() + "/no-dedupe.replay.toml"});
  EXPECT_EQ(path.exit_code, kExitOk) << path.output;
  EXPECT_TRUE(Contains(path.output, "Timeline of the violating path")) << path.output;
  EXPECT_TRUE(std::regex_search(path.output, std::regex("\n  \\.\\.\\. [0-9]+ lines?\n"))) << path.output;
  CommandOutput all = RunXackly({"explain", dir.path() + "/no-dedupe.replay.toml", "--all-steps"});
  EXPECT_GT(all.output.size(), path.output.size());
  CommandOutput json = RunXacklyStdoutIn(dir.path(), {"explain", dir.path() + "/no-dedupe.replay.toml", "--format", "json"});
  EXPECT_TRUE(IsJson(json.output));
}

// A duplicate by one worker that reads the same entry twice with the same
// request (a consumer that rewinds its group on start-up): the timeline
// must show both reads and both effects, not fold the second pair away as
// "repeating" lines, for they are the duplicate; and the rewind (XGROUP
// SETID, read back by the oracle) is named as its cause and shown.
TEST(FirstHourTest, ExplainShowsASecondIdenticalReadAndEffect) {
  ScopedTempRoot dir;
  std::ofstream(dir.path() + "/rewind.lua") << R"(
function consumer(w)
  if xackly.is_error(w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")) then
    w:redis("XGROUP", "SETID", w.stream, w.group, "0")
  end
  while true do
    for _, e in ipairs(w:read(">", {count = 10, block_ms = 2000})) do
      if w:effect(e.fields.event_id, "external", {entry = e}) then w:redis("XACK", w.stream, w.group, e.id) end
    end
  end
end
)";
  std::ofstream(dir.path() + "/rewind.toml") << R"(name = "rewind"
expect = "duplicate"
[workload]
workers = 1
events = 1
[timing]
restart_delay_ms = 100
fault_phase_ms = 10000
[protocol]
script = "rewind.lua"
[schedule]
faults = ["crash w1 before-XREADGROUP #2"]
)";
  CommandOutput out = RunXackly({"explain", dir.path() + "/rewind.toml"});
  ASSERT_EQ(out.exit_code, kExitOk) << out.output;
  const std::string timeline = out.output.substr(out.output.find("Timeline of the violating path"));
  const std::regex effect("\n> +[0-9]+ w1 +ext apply order:1 -> ok");
  EXPECT_EQ(std::distance(std::sregex_iterator(timeline.begin(), timeline.end(), effect), std::sregex_iterator()), 2)
      << timeline;
  // The rewind is the cause, named, and on the path.
  EXPECT_TRUE(Contains(out.output, "duplicate order:1 [rewound]")) << out.output;
  EXPECT_TRUE(Contains(timeline, "XGROUP SETID events workers 0")) << timeline;
}

// On a terminal the text report is coloured, unless NO_COLOR is set
// (https://no-color.org). script(1) gives the command a pseudo-terminal.
TEST(FirstHourTest, NoColorTurnsTheColourOff) {
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "no /usr/bin/script (bsdutils) for a pseudo-terminal";
  ScopedTempRoot dir;
  const std::string command = std::string(XACKLY_TEST_EXE) + " check --protocol no-dedupe --cases 10 -j 1 --out " +
                              dir.path() + "/out";
  const std::regex sgr("\x1b\\[[0-9;]*m");
  CommandOutput colour = RunProgram("/usr/bin/script", {"-qec", command, "/dev/null"}, {"NO_COLOR="});
  ASSERT_EQ(colour.exit_code, kExitOk) << colour.output;
  EXPECT_TRUE(std::regex_search(colour.output, sgr)) << "a terminal gets colour";
  CommandOutput plain = RunProgram("/usr/bin/script", {"-qec", command, "/dev/null"}, {"NO_COLOR=1"});
  ASSERT_EQ(plain.exit_code, kExitOk) << plain.output;
  EXPECT_FALSE(std::regex_search(plain.output, sgr)) << plain.output;
}

// Outside a TTY progress prints a few plain lines; the last one must be the
// final state, not the one at the last quarter (issue 17: "0 smaller cases
// kept" while the report said 27 shrinks).
// What plain (not a TTY) progress prints for the updates `drive` makes.
std::string PlainProgressText(const std::function<void(Progress&)>& drive) {
  std::FILE* f = std::tmpfile();
  if (f == nullptr) return "(no temporary file)";
  {
    Progress progress(f, /*tty=*/false, /*quiet=*/false);
    drive(progress);
    progress.End();
  }
  std::rewind(f);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
  std::fclose(f);
  return text;
}

// The elapsed and left times of a progress line at each unit's edge: a
// search of exactly an hour reads "1 h 00 min", never "60 min 00 s".
TEST(FirstHourTest, ProgressTimesChangeUnitAtAMinuteAndAnHour) {
  EXPECT_EQ(WallDurationText(-3), "0 s");
  EXPECT_EQ(WallDurationText(0.4), "0 s");
  EXPECT_EQ(WallDurationText(0.6), "1 s");  // rounded, below a second too
  EXPECT_EQ(WallDurationText(59.4), "59 s");
  EXPECT_EQ(WallDurationText(59.5), "1 min 00 s");
  EXPECT_EQ(WallDurationText(125), "2 min 05 s");
  EXPECT_EQ(WallDurationText(3599), "59 min 59 s");
  EXPECT_EQ(WallDurationText(3600), "1 h 00 min");
  EXPECT_EQ(WallDurationText(3720), "1 h 02 min");
  EXPECT_EQ(WallDurationText(7199), "1 h 59 min");  // minutes are what the hour leaves
}

TEST(FirstHourTest, PlainProgressEndsWithTheFinalState) {
  const std::string text = PlainProgressText([](Progress& progress) {
    progress.Begin("no-dedupe (protocol 2 of 19)", 8);
    for (int done = 1; done <= 8; ++done) progress.Update(done, 1);
    progress.Update(8, 1, "shrinking", "0 smaller cases kept of 2 tried");
    progress.Update(8, 1, "shrinking", "27 smaller cases kept of 40 tried");
  });
  const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_TRUE(Contains(last, "27 smaller cases kept of 40 tried")) << text;
  EXPECT_TRUE(Contains(text, "no-dedupe (protocol 2 of 19): 4/8 cases")) << text;
  EXPECT_TRUE(Contains(text, " elapsed")) << text;
  EXPECT_TRUE(Contains(text, " left")) << text;  // an estimate while cases remain
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

// A search whose cases stop at the step guard says so while it runs, not
// only in its final undecided row (a new user watched "0 violations, about
// 48 s left" for minutes, each case ending at the guard).
TEST(FirstHourTest, ProgressSaysHowManyCasesStoppedAtAHarnessLimit) {
  const std::string text = PlainProgressText([](Progress& progress) {
    progress.Begin("retries", 8);
    progress.Update(2, 0);
    progress.Update(4, 0, "", "", 3);
  });
  EXPECT_TRUE(Contains(text, "retries: 2/8 cases, 0 violations, 0 s elapsed")) << text;
  EXPECT_TRUE(Contains(text, "retries: 4/8 cases, 0 violations, 3 stopped at a harness limit,")) << text;
  // From the first one.
  const std::string one = PlainProgressText([](Progress& progress) {
    progress.Begin("retries", 8);
    progress.Update(4, 0, "", "", 1);
  });
  EXPECT_TRUE(Contains(one, "retries: 4/8 cases, 0 violations, 1 stopped at a harness limit,")) << one;
}

}  // namespace
}  // namespace xackly
