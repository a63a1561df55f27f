// The terminal summary: control characters only when colour is asked for,
// the table, and a failure that ends with its replay command.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

// The first byte below 0x20 other than '\n' (or 0x7f), as an offset, or npos.
size_t FirstControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return i;
  }
  return std::string::npos;
}

Report FailingReport() {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  CheckReport k = CheckFromCase(config, NoDedupeCase());
  k.expected = {VerdictKind::kOk, ""};
  k.matched = false;
  return ReportOf({k});
}

TEST(TextTest, NoControlCharactersWithoutColor) {
  for (const Report& report : {FailingReport(), EverythingReport()}) {
    const std::string text = RenderText(report, /*color=*/false);
    const size_t at = FirstControl(text);
    EXPECT_EQ(at, std::string::npos) << "control byte at " << at << ": "
                                     << text.substr(at == std::string::npos ? 0 : at, 40);
    EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << "a C1 control (CSI)";
  }
}

TEST(TextTest, AnsiCodesWithColor) {
  const std::string text = RenderText(FailingReport(), /*color=*/true);
  EXPECT_NE(text.find("\x1b[1;31m"), std::string::npos);
  EXPECT_NE(text.find("\x1b[0m"), std::string::npos);
  // Data never brings its own escapes, even with colour on.
  const std::string hostile = RenderText(EverythingReport(), /*color=*/true);
  EXPECT_EQ(hostile.find("\x1b[31mred"), std::string::npos);
  EXPECT_NE(hostile.find("\\x1b[31mred"), std::string::npos);
}

TEST(TextTest, TableNamesEveryColumn) {
  const std::string text = RenderText(FailingReport(), false);
  for (const char* column : {"protocol", "expected", "observed", "cases", "minimal counterexample", "replay file"}) {
    EXPECT_NE(text.find(column), std::string::npos) << column;
  }
  EXPECT_NE(text.find("MISMATCH  no-dedupe  ok"), std::string::npos) << text;
  EXPECT_NE(text.find("/tmp/xackly-out/replay-no-dedupe-1.toml"), std::string::npos);
}

TEST(TextTest, AFailureShowsItsStoryViolationsAndEndsWithTheReplayCommand) {
  const Report report = FailingReport();
  const std::string text = RenderText(report, false);
  EXPECT_NE(text.find("w1 crashes at after-effect, before XACK."), std::string::npos) << text;
  EXPECT_NE(text.find("duplicate order:1 [crash:after-effect]"), std::string::npos) << text;
  EXPECT_NE(text.find("!crash at after-effect"), std::string::npos) << "the violating path";
  const std::string replay = "replay: " + report.checks[0].counterexample->replay_command + "\n";
  ASSERT_GE(text.size(), replay.size());
  EXPECT_EQ(text.substr(text.size() - replay.size()), replay) << text;
}

TEST(TextTest, MismatchesComeLast) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  CheckReport found = CheckFromCase(config, NoDedupeCase());
  Report report = FailingReport();
  ASSERT_TRUE(report.checks[0].counterexample.has_value());
  ASSERT_TRUE(found.counterexample.has_value());
  report.checks[0].counterexample->replay_command = "xackly replay mismatch.toml";
  found.counterexample->replay_command = "xackly replay matched.toml";
  report.checks.push_back(found);  // matched, listed after the mismatch
  const std::string text = RenderText(report, false);
  EXPECT_TRUE(text.ends_with("replay: xackly replay mismatch.toml\n")) << text;
}

// A check that counts violated cases it did not shrink (another violation
// than the one looked for) says so next to the count.
TEST(TextTest, ViolatedCasesWithoutTheirOwnCounterexampleAreExplained) {
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  CheckReport k = CheckFromCase(config, NoDedupeCase());
  k.expected = {VerdictKind::kDuplicate, ""};
  k.cases_run = 40;
  k.cases_failed = 3;
  k.first_hit_case = 39;
  k.other_violations = {{"lost", 2}};
  std::string text = RenderText(ReportOf({k}), false);
  EXPECT_NE(text.find("cases: 40 run, 3 violated\n2 of them showed a violation other than duplicate (2 lost): "
                      "not shrunk"),
            std::string::npos)
      << text;
  k.first_hit_case = -1;  // nothing showed the duplicate: the counterexample is the first other one
  k.cases_failed = 2;
  text = RenderText(ReportOf({k}), false);
  EXPECT_NE(text.find("no case showed duplicate; 2 cases showed another violation (2 lost): the counterexample "
                      "below is the first of them"),
            std::string::npos)
      << text;
}

TEST(TextTest, AllMatchedSaysSo) {
  CheckReport k;
  k.name = "txn-dedupe";
  k.matched = true;
  k.observed = "ok";
  k.cases_run = 10;
  const std::string text = RenderText(ReportOf({k}), false);
  EXPECT_NE(text.find("1 of 1 check matched its expectation"), std::string::npos) << text;
  EXPECT_EQ(text.find("replay:"), std::string::npos);
}

// Evidence before green: a check that found nothing says, in the text
// report too, which sites fired how often; one that fired nothing says none.
TEST(TextTest, AGreenCheckSaysWhichFaultsFiredWhere) {
  CheckReport fired;
  fired.name = "txn-dedupe";
  fired.matched = true;
  fired.observed = "ok";
  fired.cases_run = 10;
  fired.fired_totals = {{"crash@after-commit", 3}, {"lost-reply@XACK", 1}};
  CheckReport quiet = fired;
  quiet.name = "no-faults";
  quiet.fired_totals.clear();
  const std::string text = RenderText(ReportOf({fired, quiet}), false);
  EXPECT_NE(text.find("  txn-dedupe: crash@after-commit 3, lost-reply@XACK 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  no-faults: none\n"), std::string::npos) << text;
}

// The never-fired list names exactly the sites that never fired: a site
// that fired is evidence, not a gap.
TEST(TextTest, TheNeverFiredListNamesOnlyTheSitesThatNeverFired) {
  CheckReport k;
  k.name = "txn-dedupe";
  k.matched = true;
  k.observed = "ok";
  k.cases_run = 10;
  k.fired_totals = {{"crash@after-commit", 3}};
  k.never_fired = {"crash@after-ack"};
  const std::string text = RenderText(ReportOf({k}), false);
  const size_t list = text.find("fault sites that never fired:\n");
  ASSERT_NE(list, std::string::npos) << text;
  const std::string line = text.substr(list, text.find('\n', text.find('\n', list) + 1) - list);
  EXPECT_NE(line.find("txn-dedupe: crash@after-ack"), std::string::npos) << line;
  EXPECT_EQ(line.find("after-commit"), std::string::npos) << line;
}

// A server matrix: one row per check, a column per server; a row whose
// verdict or cause differs by server says DIFFERS, a server that missed the
// expectation says MISMATCH, and the JSON carries the same rows.
TEST(MatrixTest, ARowWhoseVerdictOrCauseDiffersByServerIsFlagged) {
  auto check = [](const std::string& name, const std::string& expected, const std::string& observed,
                  const std::string& cause) {
    CheckReport k;
    k.name = name;
    std::string why;
    EXPECT_TRUE(Expectation::Parse(expected, &k.expected, &why)) << why;
    k.observed = observed;
    k.matched = observed == expected.substr(0, expected.find(':'));
    k.cases_run = 10;
    if (!cause.empty()) {
      k.counterexample = CaseReport{};
      k.counterexample->violations.push_back({VerdictKind::kDuplicate, "order:1", cause, "", 2});
    }
    return k;
  };
  Report redis = ReportOf({check("same-ok", "ok", "ok", ""),
                           check("other-cause", "duplicate", "duplicate", "crash:after-effect"),
                           check("missed", "duplicate", "duplicate", "stall")});
  redis.server_version = "redis 7.0.15";
  Report valkey = ReportOf({check("same-ok", "ok", "ok", ""), check("other-cause", "duplicate", "duplicate", "stall"),
                            check("missed", "duplicate", "ok", "")});
  valkey.server_version = "valkey 8.0.1";
  const std::vector<ServerResult> servers = {{"redis-7.0.15", "out/redis-7.0.15", redis, 0},
                                             {"valkey-8.0.1", "out/valkey-8.0.1", valkey, 1}};
  const std::vector<MatrixRow> rows = MatrixRows(servers);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows[0].differs);
  EXPECT_TRUE(rows[1].differs);
  EXPECT_EQ(rows[1].verdicts, (std::vector<std::string>{"duplicate [crash:after-effect]", "duplicate [stall]"}));
  EXPECT_TRUE(rows[2].differs);
  EXPECT_EQ(rows[2].passed, (std::vector<bool>{true, false}));
  const std::string text = RenderMatrixText(servers, false);
  EXPECT_NE(text.find("redis 7.0.15"), std::string::npos) << text;
  EXPECT_NE(text.find("valkey 8.0.1"), std::string::npos) << text;
  EXPECT_NE(text.find("ok MISMATCH"), std::string::npos) << text;
  EXPECT_NE(text.find("2 checks of 3 differ by server: other-cause, missed"), std::string::npos) << text;
  EXPECT_NE(text.find("valkey 8.0.1: 2 of 3 checks matched"), std::string::npos) << text;
  EXPECT_NE(text.find("(exit 1), reports in out/valkey-8.0.1"), std::string::npos) << text;
  const nlohmann::json json = nlohmann::json::parse(RenderMatrixJson(servers));
  ASSERT_EQ(json["rows"].size(), 3u);
  EXPECT_EQ(json["rows"][1]["differs"], true);
  EXPECT_EQ(json["rows"][0]["differs"], false);
  EXPECT_EQ(json["servers"][1]["server_version"], "valkey 8.0.1");
  EXPECT_EQ(json["servers"][1]["exit_code"], 1);
}

// A matrix cell says why a server's check did not pass: a check that
// matched its expectation with coverage gaps is GAPS (it matched: calling it
// a mismatch would be a false verdict), an undecided one UNDECIDED, and
// only a missed expectation MISMATCH.
TEST(MatrixTest, ACellSaysGapsOrUndecidedRatherThanMismatchWhenTheCheckDidNotMissItsExpectation) {
  auto check = [](const std::string& name, bool matched, bool gaps, bool undecided) {
    CheckReport k;
    k.name = name;
    std::string why;
    EXPECT_TRUE(Expectation::Parse("ok", &k.expected, &why)) << why;
    k.observed = matched ? "ok" : "duplicate";
    k.matched = matched;
    k.undecided = undecided;
    k.cases_run = 10;
    if (gaps) k.coverage_gaps = {"crash@after-XCLAIM"};
    return k;
  };
  Report redis = ReportOf({check("gaps", true, true, false), check("undecided", false, false, true),
                           check("missed", false, false, false), check("fine", true, false, false)});
  redis.server_version = "redis 7.0.15";
  const std::vector<ServerResult> servers = {{"redis-7.0.15", "out/redis-7.0.15", redis, 4}};
  const std::vector<MatrixRow> rows = MatrixRows(servers);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].marks, std::vector<std::string>{"GAPS"});
  EXPECT_EQ(rows[1].marks, std::vector<std::string>{"UNDECIDED"});
  EXPECT_EQ(rows[2].marks, std::vector<std::string>{"MISMATCH"});
  EXPECT_EQ(rows[3].marks, std::vector<std::string>{""});
  const std::string text = RenderMatrixText(servers, false);
  EXPECT_NE(text.find("ok GAPS"), std::string::npos) << text;
  EXPECT_EQ(text.find("ok MISMATCH"), std::string::npos) << text;
  EXPECT_NE(text.find("duplicate MISMATCH"), std::string::npos) << text;
  const nlohmann::json json = nlohmann::json::parse(RenderMatrixJson(servers));
  EXPECT_EQ(json["rows"][0]["marks"][0], "GAPS");
  EXPECT_EQ(json["rows"][1]["marks"][0], "UNDECIDED");
}

}  // namespace
}  // namespace xackly::report
