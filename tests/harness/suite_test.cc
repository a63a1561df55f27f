// Suites (issue 30, item 3): `check` takes several --scenario files and
// directories and writes one report and one JUnit file for all of them;
// their shards merge to the unsharded verdicts. And --quiet (item 6): one
// line per row on stdout, nothing else.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "harness/redis_server.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

namespace fs = std::filesystem;

// A small suite in <root>/suite: the catalog scripts no-dedupe (at the top)
// and ack-first (in a subdirectory), each beside the loop they include.
// Their scenario names are "no-dedupe-script" and "ack-first-script".
std::string WriteSuite(const ScopedTempRoot& root) {
  const fs::path src = fs::path(XACKLY_SOURCE_DIR) / "scenarios" / "catalog" / "scripts";
  const fs::path suite = fs::path(root.path()) / "suite";
  fs::create_directories(suite / "more");
  for (const char* f : {"no-dedupe.toml", "no-dedupe.lua", "catalog_loop.lua"}) fs::copy_file(src / f, suite / f);
  for (const char* f : {"ack-first.toml", "ack-first.lua", "catalog_loop.lua"}) {
    fs::copy_file(src / f, suite / "more" / f);
  }
  return suite.string();
}

// The few cases a suite test needs, with the coverage rule off (a cap of
// --cases): the same cases however the search is split into shards.
std::vector<std::string> SmallCheck(std::vector<std::string> args) {
  for (const char* a : {"--cases", "8", "--coverage-cap", "8", "--seed", "1", "-j", "2"}) args.emplace_back(a);
  return args;
}

// The name attribute of every <testcase> element of a JUnit document.
std::vector<std::string> TestcaseNames(const std::string& junit) {
  std::vector<std::string> names;
  const std::regex testcase("<testcase\\b[^>]*\\bname=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(junit.begin(), junit.end(), testcase); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

report::Report ReadJsonReport(const std::string& file) {
  Result<std::string> text = ReadFile(file);
  EXPECT_TRUE(text.ok()) << file;
  if (!text.ok()) return {};
  Result<report::Report> r = report::ParseJsonReport(*text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : report::Report{};
}

// The lines of `text`, without their '\n'.
std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// A check that ran: it found what it looks for, or missed it in these few cases.
bool FoundOrMissed(int exit_code) { return exit_code == kExitOk || exit_code == kExitVerdictMismatch; }

// A directory is every scenario below it, in path order: one JUnit file
// with one testcase per scenario. Replay files a previous run left there
// (its --out inside the directory) are not part of the suite.
TEST(SuiteTest, ADirectoryIsOneJunitFileWithOneTestcasePerScenario) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  const std::string out = suite + "/out";
  for (int run = 1; run <= 2; ++run) {
    CommandOutput check = RunXackly(SmallCheck({"check", "--scenario", suite, "--out", out}));
    ASSERT_TRUE(FoundOrMissed(check.exit_code)) << check.output;
    ASSERT_TRUE(fs::exists(out + "/no-dedupe-script.replay.toml") || fs::exists(out + "/ack-first-script.replay.toml"))
        << "run " << run << ": no counterexample, so this test would not see one skipped\n"
        << check.output;
    Result<std::string> junit = ReadFile(out + "/junit.xml");
    ASSERT_TRUE(junit.ok()) << check.output;
    // "more/ack-first.toml" sorts before "no-dedupe.toml".
    EXPECT_EQ(TestcaseNames(*junit), (std::vector<std::string>{"ack-first-script", "no-dedupe-script"}))
        << "run " << run << "\n" << *junit;
  }
}

// Several --scenario values: one table with a row each, one report.json
// with a check each, in the order given.
TEST(SuiteTest, TwoScenarioFilesAreOneTableAndOneReport) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  const std::string out = root.path() + "/out";
  CommandOutput check = RunXackly(SmallCheck(
      {"check", "--scenario", suite + "/no-dedupe.toml", "--scenario", suite + "/more/ack-first.toml", "--out", out}));
  ASSERT_TRUE(FoundOrMissed(check.exit_code)) << check.output;
  const std::regex table_row("\n(matched|MISMATCH)[^\n]*  no-dedupe-script  [^\n]*\n(matched|MISMATCH)[^\n]*  "
                             "ack-first-script  ");
  EXPECT_TRUE(std::regex_search(check.output, table_row)) << check.output;
  report::Report json = ReadJsonReport(out + "/report.json");
  ASSERT_EQ(json.checks.size(), 2u);
  EXPECT_EQ(json.checks[0].name, "no-dedupe-script");
  EXPECT_EQ(json.checks[1].name, "ack-first-script");
}

// Two shards of a suite, merged, give the unsharded suite's verdicts.
TEST(SuiteTest, TwoShardsOfASuiteMergeToTheUnshardedVerdicts) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  CommandOutput whole = RunXackly(SmallCheck({"check", "--scenario", suite, "--out", root.path() + "/whole"}));
  ASSERT_TRUE(FoundOrMissed(whole.exit_code)) << whole.output;
  for (const char* shard : {"1", "2"}) {
    CommandOutput part = RunXackly(SmallCheck({"check", "--scenario", suite, "--shard", std::string(shard) + "/2",
                                               "--out", root.path() + "/shard" + shard, "--format", "json"}));
    ASSERT_TRUE(FoundOrMissed(part.exit_code)) << part.output;
  }
  CommandOutput merge = RunXackly({"merge", root.path() + "/shard1", root.path() + "/shard2", "--out",
                                   root.path() + "/merged", "--format", "json,junit"});
  EXPECT_EQ(merge.exit_code, whole.exit_code) << merge.output << "\n" << whole.output;
  const report::Report unsharded = ReadJsonReport(root.path() + "/whole/report.json");
  const report::Report merged = ReadJsonReport(root.path() + "/merged/report.json");
  ASSERT_EQ(merged.checks.size(), 2u);
  ASSERT_EQ(merged.checks.size(), unsharded.checks.size());
  EXPECT_EQ(merged.all_matched, unsharded.all_matched);
  for (size_t c = 0; c < merged.checks.size(); ++c) ExpectSameVerdict(merged.checks[c], unsharded.checks[c]);
  EXPECT_EQ(TestcaseNames(*ReadFile(root.path() + "/merged/junit.xml")),
            (std::vector<std::string>{"ack-first-script", "no-dedupe-script"}));
  // merge --quiet, as check --quiet: one line per check on stdout.
  CommandOutput quiet = RunXacklyStdout({"merge", root.path() + "/shard1", root.path() + "/shard2", "--out",
                                  root.path() + "/merged-quiet", "--quiet"});
  EXPECT_EQ(quiet.exit_code, whole.exit_code) << quiet.output;
  const std::vector<std::string> lines = SplitLines(quiet.output);
  ASSERT_EQ(lines.size(), 2u) << quiet.output;
  EXPECT_TRUE(lines[0].starts_with("ack-first-script ")) << lines[0];
  EXPECT_TRUE(lines[1].starts_with("no-dedupe-script ")) << lines[1];
}

// merge --out holds everything a reader of the merged report needs: each
// counterexample's replay file is copied there from its shard, and the
// report and its replay command point at the copy.
TEST(SuiteTest, MergeOutHoldsTheShardsReplayFiles) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  for (const char* shard : {"1", "2"}) {
    CommandOutput part = RunXackly(SmallCheck({"check", "--scenario", suite + "/no-dedupe.toml", "--shard",
                                               std::string(shard) + "/2", "--out", root.path() + "/shard" + shard,
                                               "--format", "json"}));
    ASSERT_TRUE(FoundOrMissed(part.exit_code)) << part.output;
  }
  const std::string out = root.path() + "/merged";
  CommandOutput merge = RunXackly({"merge", root.path() + "/shard1", root.path() + "/shard2", "--out", out,
                                   "--format", "json"});
  ASSERT_TRUE(FoundOrMissed(merge.exit_code)) << merge.output;
  const report::Report merged = ReadJsonReport(out + "/report.json");
  ASSERT_EQ(merged.checks.size(), 1u);
  ASSERT_TRUE(merged.checks[0].counterexample.has_value()) << merge.output;
  const report::CaseReport& cx = *merged.checks[0].counterexample;
  EXPECT_EQ(fs::path(cx.replay_file).parent_path(), fs::path(out)) << cx.replay_file;
  Result<std::string> copy = ReadFile(cx.replay_file);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_NE(copy->find(cx.trace_hash), std::string::npos);
  EXPECT_EQ(cx.replay_command, "xackly replay " + cx.replay_file);
}

// --quiet: stdout is one line per row (result word, name, expected,
// observed, cases), nothing else; the reports are in --out.
TEST(SuiteTest, QuietPrintsOneLinePerRowOnStdout) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  const std::string out = root.path() + "/out";
  CommandOutput quiet = RunXacklyStdout(SmallCheck({"check", "--scenario", suite, "--out", out, "--quiet"}));
  ASSERT_TRUE(FoundOrMissed(quiet.exit_code)) << quiet.output;
  const std::vector<std::string> lines = SplitLines(quiet.output);
  ASSERT_EQ(lines.size(), 2u) << quiet.output;
  const report::Report json = ReadJsonReport(out + "/report.json");
  ASSERT_EQ(json.checks.size(), 2u);
  for (size_t row = 0; row < lines.size(); ++row) {
    const report::CheckReport& k = json.checks[row];
    EXPECT_TRUE(lines[row].starts_with(k.name + " ")) << lines[row];
    for (const std::string& part : {"expected " + k.expected.ToString(), "observed " + k.observed,
                                    std::string(report::ResultWord(k)), std::to_string(k.cases_run) + " case"}) {
      EXPECT_NE(lines[row].find(part), std::string::npos) << part << " in " << lines[row];
    }
  }
  EXPECT_TRUE(fs::exists(out + "/report.txt"));
}

// The server matrix: `check --server A --server B` runs the same cases on
// each server, each server's reports in --out/<server>/, and prints the
// verdicts side by side. One server given twice must agree with itself.
TEST(ServerMatrixTest, OneServerTwiceGivesTheSameVerdictsInTwoReportDirectories) {
  ScopedTempRoot root;
  Result<std::string> redis = FindServerBinary("");
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  const std::string out = root.path() + "/out";
  CommandOutput matrix = RunXacklyStdout(
      SmallCheck({"check", "--protocol", "no-dedupe", "--server", *redis, "--server", *redis, "--out", out}));
  EXPECT_EQ(matrix.exit_code, kExitOk) << matrix.output;
  EXPECT_TRUE(Contains(matrix.output, "every check gives the same verdict on all 2 servers")) << matrix.output;
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.is_directory()) dirs.push_back(e.path().filename().string());
  }
  std::sort(dirs.begin(), dirs.end());
  ASSERT_EQ(dirs.size(), 2u) << matrix.output;
  EXPECT_TRUE(dirs[0].starts_with("redis-7.")) << dirs[0];
  EXPECT_EQ(dirs[1], dirs[0] + "-2");
  for (const std::string& d : dirs) {
    const report::Report r = ReadJsonReport(out + "/" + d + "/report.json");
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_EQ(r.checks[0].observed, "duplicate");
    EXPECT_TRUE(fs::exists(out + "/" + d + "/no-dedupe.replay.toml")) << d;
  }
  Result<std::string> json = ReadFile(out + "/matrix.json");
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(Contains(*json, "\"differs\": false")) << *json;
  // --quiet: one line per check on stdout, the matrix row.
  CommandOutput quiet = RunXacklyStdout(SmallCheck(
      {"check", "--protocol", "no-dedupe", "--server", *redis, "--server", *redis, "--out", out, "--quiet"}));
  EXPECT_EQ(quiet.exit_code, kExitOk) << quiet.output;
  ASSERT_EQ(SplitLines(quiet.output).size(), 1u) << quiet.output;
  EXPECT_TRUE(quiet.output.starts_with("same     no-dedupe")) << quiet.output;
  // One --server is an ordinary check on that server: its own line, its
  // reports in --out itself, no matrix.
  const std::string single = root.path() + "/single";
  CommandOutput one = RunXacklyStdout(
      SmallCheck({"check", "--protocol", "no-dedupe", "--server", *redis, "--out", single, "--quiet"}));
  EXPECT_EQ(one.exit_code, kExitOk) << one.output;
  EXPECT_TRUE(one.output.starts_with("no-dedupe ")) << one.output;
  EXPECT_TRUE(fs::exists(single + "/report.json"));
  EXPECT_FALSE(fs::exists(single + "/matrix.json"));
  // Several servers print one table, so their reports cannot share stdout.
  CommandOutput json_out =
      RunXackly(SmallCheck({"check", "--protocol", "no-dedupe", "--server", *redis, "--server", *redis, "--format",
                            "json"}));
  EXPECT_EQ(json_out.exit_code, kExitUsage) << json_out.output;
  EXPECT_TRUE(Contains(json_out.output, "add --out DIR")) << json_out.output;
}

// Valkey 8.0.1 (from bookworm-backports, unpacked by `.ci/setup --tests`)
// beside the default redis-server: the same verdicts on a broken and a
// correct protocol, in one table with a column per server.
TEST(ServerMatrixTest, RedisAndValkeyGiveTheSameVerdictsSideBySide) {
  if (!fs::exists(XACKLY_TEST_VALKEY_SERVER)) {
    GTEST_SKIP() << XACKLY_TEST_VALKEY_SERVER << " is missing: bash .ci/setup --servers unpacks it";
  }
  ScopedTempRoot root;
  Result<std::string> redis = FindServerBinary("");
  ASSERT_TRUE(redis.ok());
  const std::string suite = WriteSuite(root);
  const std::string out = root.path() + "/out";
  CommandOutput matrix = RunXacklyStdout(SmallCheck(
      {"check", "--scenario", suite, "--server", *redis, "--server", XACKLY_TEST_VALKEY_SERVER, "--out", out}));
  EXPECT_EQ(matrix.exit_code, kExitOk) << matrix.output;
  EXPECT_TRUE(Contains(matrix.output, "valkey 8.0.1")) << matrix.output;
  EXPECT_TRUE(std::regex_search(matrix.output, std::regex("same +no-dedupe-script +duplicate:crash:after-effect +"
                                                          "duplicate \\[crash:after-effect\\] +duplicate "
                                                          "\\[crash:after-effect\\]")))
      << matrix.output;
  EXPECT_TRUE(Contains(matrix.output, "every check gives the same verdict on all 2 servers")) << matrix.output;
  const report::Report valkey = ReadJsonReport(out + "/valkey-8.0.1/report.json");
  EXPECT_EQ(valkey.server_version, "valkey 8.0.1");
  CommandOutput doctor = RunXackly({"doctor", "--server", XACKLY_TEST_VALKEY_SERVER});
  EXPECT_EQ(doctor.exit_code, kExitOk) << doctor.output;
}

// A replay file of a user's own protocol travels to a server whose replies
// differ (this consumer reads XINFO CONSUMERS, which valkey answers with a
// field redis 7.0 lacks): replayed there it diverges, exit 3, until
// tests/rerecord-corpus --server records that server's hash in the file;
// then it reproduces on both servers, each held to its own hash.
TEST(ServerMatrixTest, AUsersReplayFileCarriesAnotherServersOwnHash) {
  if (!fs::exists(XACKLY_TEST_VALKEY_SERVER)) {
    GTEST_SKIP() << XACKLY_TEST_VALKEY_SERVER << " is missing: bash .ci/setup --servers unpacks it";
  }
  ScopedTempRoot root;
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/looks.lua", PollingConsumer(R"(
      w:redis("XINFO", "CONSUMERS", w.stream, w.group)
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
)")).ok());
  const std::string scenario = root.path() + "/looks.toml";
  ASSERT_TRUE(WriteFileAtomically(scenario, "name = \"looks\"\n[workload]\nworkers = 1\nevents = 2\n"
                                            "[protocol]\nscript = \"looks.lua\"\n[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", scenario, "--out", root.path() + "/out"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  const std::string file = root.path() + "/out/looks.replay.toml";
  CommandOutput before = RunXackly({"replay", file, "--server", XACKLY_TEST_VALKEY_SERVER});
  EXPECT_EQ(before.exit_code, kExitHarnessFailure) << before.output;
  CommandOutput record = RunProgram(std::string(XACKLY_SOURCE_DIR) + "/tests/rerecord-corpus",
                                    {XACKLY_TEST_EXE, "--server", XACKLY_TEST_VALKEY_SERVER, file});
  EXPECT_EQ(record.exit_code, kExitOk) << record.output;
  EXPECT_TRUE(Contains(record.output, "re-recorded " + file + ": valkey 8.0.1")) << record.output;
  CommandOutput valkey = RunXackly({"replay", file, "--server", XACKLY_TEST_VALKEY_SERVER});
  EXPECT_EQ(valkey.exit_code, kExitOk) << valkey.output;
  EXPECT_TRUE(Contains(valkey.output, "matches the file's hash for valkey 8.0.1")) << valkey.output;
  CommandOutput redis = RunXackly({"replay", file});
  EXPECT_EQ(redis.exit_code, kExitOk) << redis.output;
  EXPECT_TRUE(Contains(redis.output, "matches the file\n")) << redis.output;
}

// Redis 8.0 and valkey 9, built from Debian's source packages by
// `.ci/setup --servers` (not by --tests: the build takes minutes), join the
// table: each passes doctor, and a broken and a correct protocol, with and
// without a failover, get the same verdicts as on Debian 12's redis.
TEST(ServerMatrixTest, SourceBuiltRedis8AndValkey9PassDoctorAndAgree) {
  for (const char* built : {XACKLY_TEST_REDIS8_SERVER, XACKLY_TEST_VALKEY9_SERVER}) {
    if (!fs::exists(built)) GTEST_SKIP() << built << " is missing: bash .ci/setup --servers builds it";
  }
  for (const char* built : {XACKLY_TEST_REDIS8_SERVER, XACKLY_TEST_VALKEY9_SERVER}) {
    CommandOutput doctor = RunXackly({"doctor", "--server", built});
    EXPECT_EQ(doctor.exit_code, kExitOk) << built << "\n" << doctor.output;
  }
  ScopedTempRoot root;
  Result<std::string> redis = FindServerBinary("");
  ASSERT_TRUE(redis.ok());
  const std::string suite = WriteSuite(root);
  const std::string examples = std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/";
  const std::string out = root.path() + "/out";
  CommandOutput matrix = RunXacklyStdout(SmallCheck({"check", "--scenario", suite, "--scenario",
                                              examples + "failover-setnx-first.toml", "--scenario",
                                              examples + "failover-txn-dedupe.toml", "--server", *redis, "--server",
                                              XACKLY_TEST_REDIS8_SERVER, "--server", XACKLY_TEST_VALKEY9_SERVER,
                                              "--out", out}));
  EXPECT_TRUE(Contains(matrix.output, "redis 8.0.")) << matrix.output;
  EXPECT_TRUE(Contains(matrix.output, "valkey 9.")) << matrix.output;
  EXPECT_TRUE(Contains(matrix.output, "every check gives the same verdict on all 3 servers")) << matrix.output;
  // At 8 cases its failover sites need not all fire: `ok GAPS`, the same on each.
  EXPECT_TRUE(std::regex_search(matrix.output, std::regex("same +failover-txn-dedupe +ok( +ok( GAPS)?){3}\n")))
      << matrix.output;
}

// What cannot be one suite is exit 2 before anything runs, naming what.
TEST(SuiteTest, ASuiteThatCannotRunIsAnInputError) {
  ScopedTempRoot root;
  const std::string suite = WriteSuite(root);
  // The same name twice: their replay files and testcases would collide.
  fs::create_directories(root.path() + "/twin");
  for (const char* f : {"no-dedupe.toml", "no-dedupe.lua", "catalog_loop.lua"}) {
    fs::copy_file(fs::path(suite) / f, fs::path(root.path()) / "twin" / f);
  }
  CommandOutput twice = RunXackly({"check", "--scenario", suite, "--scenario", root.path() + "/twin"});
  EXPECT_EQ(twice.exit_code, kExitUsage) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "'no-dedupe-script': " + suite + "/no-dedupe.toml and " + root.path() +
                                         "/twin/no-dedupe.toml"))
      << twice.output;
  // One file named twice is not two scenarios with one name: say so.
  CommandOutput same = RunXackly({"check", "--scenario", suite, suite + "/no-dedupe.toml"});
  EXPECT_EQ(same.exit_code, kExitUsage) << same.output;
  EXPECT_TRUE(Contains(same.output, suite + "/no-dedupe.toml is named twice")) << same.output;
  // A directory without scenario files (replay files do not count).
  fs::create_directories(root.path() + "/empty");
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/empty/old.replay.toml", "name = \"old\"\n").ok());
  CommandOutput empty = RunXackly({"check", "--scenario", suite, "--scenario", root.path() + "/empty"});
  EXPECT_EQ(empty.exit_code, kExitUsage) << empty.output;
  EXPECT_TRUE(Contains(empty.output, root.path() + "/empty: a directory with no scenario file")) << empty.output;
  // A malformed file below a directory: file, line and field.
  ASSERT_TRUE(WriteFileAtomically(suite + "/more/bad.toml", "protocol = \"txn-dedupe\"\n\n[workload]\nevents = -3\n").ok());
  CommandOutput bad = RunXackly({"check", "--scenario", suite});
  EXPECT_EQ(bad.exit_code, kExitUsage) << bad.output;
  EXPECT_TRUE(Contains(bad.output, suite + "/more/bad.toml:4:")) << bad.output;
  EXPECT_TRUE(Contains(bad.output, "workload.events")) << bad.output;
}

}  // namespace
}  // namespace xackly
