// JSON: every field of the model survives a round trip, and a reader
// rejects what it cannot read with a message that says where.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

// Field-by-field equality with a message that names the field.
#define EXPECT_FIELD(a, b, field) EXPECT_EQ((a).field, (b).field) << #field

void ExpectSame(const Expectation& a, const Expectation& b) {
  EXPECT_FIELD(a, b, kind);
  EXPECT_FIELD(a, b, cause);
}

void ExpectSame(const CaseReport& a, const CaseReport& b) {
  EXPECT_FIELD(a, b, protocol);
  EXPECT_FIELD(a, b, scenario_file);
  EXPECT_FIELD(a, b, seed);
  EXPECT_FIELD(a, b, producers);
  EXPECT_FIELD(a, b, workers);
  EXPECT_FIELD(a, b, events);
  EXPECT_FIELD(a, b, persistence);
  EXPECT_FIELD(a, b, restart_naming);
  ExpectSame(a.expected, b.expected);
  EXPECT_FIELD(a, b, observed);
  EXPECT_FIELD(a, b, matched);
  ASSERT_EQ(a.violations.size(), b.violations.size());
  for (size_t i = 0; i < a.violations.size(); ++i) {
    SCOPED_TRACE("violation " + std::to_string(i));
    EXPECT_FIELD(a.violations[i], b.violations[i], kind);
    EXPECT_FIELD(a.violations[i], b.violations[i], event_id);
    EXPECT_FIELD(a.violations[i], b.violations[i], cause);
    EXPECT_FIELD(a.violations[i], b.violations[i], detail);
    EXPECT_FIELD(a.violations[i], b.violations[i], effect_count);
  }
  EXPECT_FIELD(a, b, trace_hash);
  EXPECT_FIELD(a, b, steps);
  EXPECT_FIELD(a, b, virtual_ms);
  EXPECT_FIELD(a, b, fired);  // FaultSpec has operator==
  EXPECT_FIELD(a, b, coverage.fired);
  EXPECT_FIELD(a, b, coverage.enabled);
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (size_t i = 0; i < a.trace.size(); ++i) {
    SCOPED_TRACE("trace line " + std::to_string(i));
    EXPECT_FIELD(a.trace[i], b.trace[i], t_ms);
    EXPECT_FIELD(a.trace[i], b.trace[i], actor);
    EXPECT_FIELD(a.trace[i], b.trace[i], kind);
    EXPECT_FIELD(a.trace[i], b.trace[i], request);
    EXPECT_FIELD(a.trace[i], b.trace[i], reply);
    EXPECT_FIELD(a.trace[i], b.trace[i], event);
    EXPECT_FIELD(a.trace[i], b.trace[i], argv);
    EXPECT_FIELD(a.trace[i], b.trace[i], site);
    EXPECT_FIELD(a.trace[i], b.trace[i], fault);
    EXPECT_FIELD(a.trace[i], b.trace[i], replaces);
    EXPECT_FIELD(a.trace[i], b.trace[i], waited_for);
    EXPECT_FIELD(a.trace[i], b.trace[i], duration_ms);
    EXPECT_FIELD(a.trace[i], b.trace[i], ids);
  }
  ASSERT_EQ(a.histories.size(), b.histories.size());
  for (const auto& [event, items] : a.histories) {
    SCOPED_TRACE("history of " + event);
    ASSERT_EQ(b.histories.count(event), 1u);
    const std::vector<HistoryItem>& other = b.histories.at(event);
    ASSERT_EQ(items.size(), other.size());
    for (size_t i = 0; i < items.size(); ++i) {
      EXPECT_FIELD(items[i], other[i], kind);
      EXPECT_FIELD(items[i], other[i], t_ms);
      EXPECT_FIELD(items[i], other[i], line);
      EXPECT_FIELD(items[i], other[i], actor);
      EXPECT_FIELD(items[i], other[i], stream_id);
      EXPECT_FIELD(items[i], other[i], detail);
      EXPECT_FIELD(items[i], other[i], value);
      EXPECT_FIELD(items[i], other[i], command);
      EXPECT_FIELD(items[i], other[i], site);
      EXPECT_FIELD(items[i], other[i], sink);
      EXPECT_FIELD(items[i], other[i], consumer);
      EXPECT_FIELD(items[i], other[i], persistence);
      EXPECT_FIELD(items[i], other[i], payload_missing);
    }
  }
  EXPECT_FIELD(a, b, replay_file);
  EXPECT_FIELD(a, b, replay_command);
}

void ExpectSame(const Report& a, const Report& b) {
  EXPECT_FIELD(a, b, schema);
  EXPECT_FIELD(a, b, tool_version);
  EXPECT_FIELD(a, b, command);
  EXPECT_FIELD(a, b, command_line);
  EXPECT_FIELD(a, b, seed);
  EXPECT_FIELD(a, b, server_version);
  EXPECT_FIELD(a, b, options);
  EXPECT_FIELD(a, b, all_matched);
  EXPECT_FIELD(a, b, shard);
  EXPECT_FIELD(a, b, search);
  ASSERT_EQ(a.checks.size(), b.checks.size());
  for (size_t i = 0; i < a.checks.size(); ++i) {
    SCOPED_TRACE("check " + std::to_string(i));
    const CheckReport& x = a.checks[i];
    const CheckReport& y = b.checks[i];
    EXPECT_FIELD(x, y, name);
    EXPECT_FIELD(x, y, description);
    EXPECT_FIELD(x, y, fault_model);
    ExpectSame(x.expected, y.expected);
    EXPECT_FIELD(x, y, observed);
    EXPECT_FIELD(x, y, matched);
    EXPECT_FIELD(x, y, undecided);
    EXPECT_FIELD(x, y, cases_run);
    EXPECT_FIELD(x, y, cases_failed);
    EXPECT_FIELD(x, y, cases_unjudged);
    EXPECT_FIELD(x, y, other_violations);
    ASSERT_EQ(x.counterexample.has_value(), y.counterexample.has_value());
    if (x.counterexample) ExpectSame(*x.counterexample, *y.counterexample);
    EXPECT_FIELD(x, y, counterexample_size);
    EXPECT_FIELD(x, y, shrink_steps);
    EXPECT_FIELD(x, y, first_hit_case);
    EXPECT_FIELD(x, y, fired_totals);
    EXPECT_FIELD(x, y, never_fired);
    EXPECT_FIELD(x, y, cases_for_coverage);
    EXPECT_FIELD(x, y, coverage_gaps);
    EXPECT_FIELD(x, y, gaps_allowed);
    EXPECT_FIELD(x, y, seconds);
  }
}

TEST(JsonTest, EveryFieldSurvivesARoundTrip) {
  const Report original = EverythingReport();
  const std::string json = RenderJson(original);
  Result<Report> back = ParseJsonReport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(original, *back);
  EXPECT_EQ(RenderJson(*back), json);
}

TEST(JsonTest, ARealCounterexampleSurvivesARoundTrip) {
  const CaseReport& c = NoDedupeCase();
  ASSERT_FALSE(c.trace.empty());
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const Report original = ReportOf({CheckFromCase(config, c)});
  Result<Report> back = ParseJsonReport(RenderJson(original));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(original, *back);
  EXPECT_EQ(Story(*back->checks[0].counterexample), Story(c));
}

// A counterexample of a script that polls for hours has tens of thousands
// of trace lines: the JSON keeps the path, the start and the end, writes
// null for the rest, and still tells the same story.
TEST(JsonTest, ALongTraceKeepsItsPathAndStaysSmall) {
  CaseReport c = NoDedupeCase();
  const std::vector<int64_t> path = PathLines(c);
  ASSERT_FALSE(path.empty());
  const TraceLine poll = c.trace.back();
  c.trace.insert(c.trace.end(), 40000, poll);
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const std::string json = RenderJson(ReportOf({CheckFromCase(config, c)}));
  EXPECT_LT(json.size(), 2'000'000u);
  Result<Report> back = ParseJsonReport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const CaseReport& b = *back->checks[0].counterexample;
  ASSERT_EQ(b.trace.size(), c.trace.size());  // line numbers stay valid
  for (int64_t line : path) EXPECT_EQ(b.trace[line].request, c.trace[line].request) << line;
  EXPECT_EQ(b.trace.back().request, c.trace.back().request);
  EXPECT_EQ(b.trace[20000].request, "(line left out of the JSON report)");
  EXPECT_EQ(Story(b), Story(c));
  EXPECT_NE(json.find("\"trace_lines_elided\": "), std::string::npos);
}

TEST(JsonTest, StartsWithTheSchemaVersion) {
  const std::string json = RenderJson(Report{});
  EXPECT_TRUE(json.starts_with(fmt::format("{{\n  \"schema\": {},", kSchemaVersion))) << json.substr(0, 40);
}

TEST(JsonTest, RejectsAnotherSchemaVersion) {
  std::string json = RenderJson(EverythingReport());
  const std::string ours = fmt::format("\"schema\": {}", kSchemaVersion);
  json.replace(json.find(ours), ours.size(), "\"schema\": 1");  // an older xackly's report
  Result<Report> back = ParseJsonReport(json);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(back.status().message().find("schema 1 is not supported"), std::string::npos)
      << back.status().message();
  EXPECT_NE(back.status().message().find(fmt::format("reads schema {}", kSchemaVersion)), std::string::npos);
}

TEST(JsonTest, RejectsWhatIsNotAReport) {
  for (const char* text : {"", "not json", "[1, 2]", "{\"checks\": []}", "{\"schema\": \"1\"}"}) {
    Result<Report> back = ParseJsonReport(text);
    EXPECT_FALSE(back.ok()) << text;
  }
}

TEST(JsonTest, NamesThePathOfAMissingOrWrongField) {
  std::string json = RenderJson(EverythingReport());
  const size_t at = json.find("\"t_ms\": 0");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 9, "\"t_ms\": \"0\"");
  Result<Report> back = ParseJsonReport(json);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(), "report: checks[0].counterexample.trace[0].t_ms: expected an integer");

  std::string missing = RenderJson(EverythingReport());
  missing.replace(missing.find("\"shard\""), 7, "\"shart\"");
  back = ParseJsonReport(missing);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(), "report: shard: missing");
}

TEST(JsonTest, RejectsUnknownEnumNames) {
  std::string json = RenderJson(EverythingReport());
  const size_t at = json.find("\"kind\": \"crash\"");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 15, "\"kind\": \"meteor\"");
  Result<Report> back = ParseJsonReport(json);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("unknown fault kind 'meteor'"), std::string::npos)
      << back.status().message();
}

}  // namespace
}  // namespace xackly::report
