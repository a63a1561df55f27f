// JSON: every field of the model survives a round trip, and a reader
// rejects what it cannot read with a message that says where.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <regex>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "reports/report.h"
#include "tests/rc_cases.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

// Field-by-field equality with a message that names the field.
#define EXPECT_FIELD(a, b, field) EXPECT_EQ((a).field, (b).field) << #field

void ExpectSame(const Expectation& a, const Expectation& b) {
  EXPECT_FIELD(a, b, kind);
  EXPECT_FIELD(a, b, cause);
  EXPECT_FIELD(a, b, alternatives);
}

void ExpectSame(const CaseReport& a, const CaseReport& b) {
  EXPECT_FIELD(a, b, protocol);
  EXPECT_FIELD(a, b, scenario_file);
  EXPECT_FIELD(a, b, seed);
  EXPECT_FIELD(a, b, producers);
  EXPECT_FIELD(a, b, workers);
  EXPECT_FIELD(a, b, handlers);
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
    EXPECT_FIELD(a.violations[i], b.violations[i], group);
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
    EXPECT_FIELD(a.trace[i], b.trace[i], brought_by);
    EXPECT_FIELD(a.trace[i], b.trace[i], waited_for);
    EXPECT_FIELD(a.trace[i], b.trace[i], duration_ms);
    EXPECT_FIELD(a.trace[i], b.trace[i], ids);
  }
  EXPECT_FIELD(a, b, worker_groups);
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
      EXPECT_FIELD(items[i], other[i], key);
      EXPECT_FIELD(items[i], other[i], fired_in);
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
    EXPECT_FIELD(x, y, shrink_cut);
    EXPECT_FIELD(x, y, first_hit_case);
    EXPECT_FIELD(x, y, fired_totals);
    EXPECT_FIELD(x, y, never_fired);
    EXPECT_FIELD(x, y, cases_for_coverage);
    EXPECT_FIELD(x, y, coverage_gaps);
    EXPECT_FIELD(x, y, gaps_allowed);
    EXPECT_FIELD(x, y, unfired_planned);
    EXPECT_FIELD(x, y, single_run);
    EXPECT_FIELD(x, y, seconds);
  }
}

// A report no search made (run, replay, explain) writes "search": null,
// not a search of 0 cases, and reads back with the default settings; a
// check's settings are an object.
TEST(JsonTest, ASearchIsNullWhenNoneRan) {
  Report run;
  run.command = "run";
  const std::string json = RenderJson(run);
  EXPECT_NE(json.find("\"search\": null"), std::string::npos) << json;
  Result<Report> back = ParseJsonReport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->search, SearchSettings{});
  Report check = run;
  check.search.cases = 100;
  EXPECT_NE(RenderJson(check).find("\"search\": {\n    \"cases\": 100"), std::string::npos) << RenderJson(check);
}

TEST(JsonTest, EveryFieldSurvivesARoundTrip) {
  const Report original = EverythingReport();
  const std::string json = RenderJson(original);
  Result<Report> back = ParseJsonReport(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(original, *back);
  EXPECT_EQ(RenderJson(*back), json);
}

// --- Generated reports -------------------------------------------------------
// Every field of the model drawn over its whole type (RenderJson's one
// condition: text is valid UTF-8), so a field the JSON forgets, or one it
// reads back differently, is found without a hand-made report naming it.

using testing::AnyOf;
using testing::AnyText;
using testing::Few;

rc::Gen<VerdictKind> AnyVerdictKind() { return AnyOf(VerdictKind::kStuck); }
rc::Gen<FaultKind> AnyFaultKind() { return AnyOf(FaultKind::kPoison); }

// Any finite double (JSON has no NaN or infinity), over every exponent.
rc::Gen<double> AnyFinite() {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t bits) {
    const double d = std::bit_cast<double>(bits);
    return std::isfinite(d) ? d : 0.0;
  });
}

template <typename V>
rc::Gen<std::map<std::string, V>> FewByName(rc::Gen<V> value) {
  return rc::gen::map(Few(rc::gen::pair(AnyText(), value)), [](const std::vector<std::pair<std::string, V>>& kv) {
    return std::map<std::string, V>(kv.begin(), kv.end());
  });
}

// An expectation as Expectation::Parse leaves it: one term in kind and
// cause, or several alternatives whose first term is also kind and cause.
rc::Gen<Expectation> AnyExpectation() {
  return rc::gen::exec([] {
    const auto term = rc::gen::build<ExpectTerm>(rc::gen::set(&ExpectTerm::kind, AnyVerdictKind()),
                                                 rc::gen::set(&ExpectTerm::cause, AnyText()));
    Expectation e;
    const auto alternatives = *Few(rc::gen::nonEmpty(Few(term, 3)), 3);
    if (alternatives.size() + (alternatives.empty() ? 0 : alternatives[0].size()) <= 2) {
      const ExpectTerm one = *term;
      e.kind = one.kind;
      e.cause = one.cause;
    } else {
      e.alternatives = alternatives;
      e.kind = alternatives[0][0].kind;
      e.cause = alternatives[0][0].cause;
    }
    return e;
  });
}

rc::Gen<FaultSpec> AnyFaultSpec() {
  return rc::gen::build<FaultSpec>(
      rc::gen::set(&FaultSpec::kind, AnyFaultKind()), rc::gen::set(&FaultSpec::actor, AnyText()),
      rc::gen::set(&FaultSpec::site, AnyText()), rc::gen::set(&FaultSpec::nth),
      rc::gen::set(&FaultSpec::at_ms), rc::gen::set(&FaultSpec::duration_ms),
      rc::gen::set(&FaultSpec::target, AnyText()), rc::gen::set(&FaultSpec::event));
}

rc::Gen<TraceLine> AnyTraceLine() {
  return rc::gen::build<TraceLine>(
      rc::gen::set(&TraceLine::t_ms), rc::gen::set(&TraceLine::actor, AnyText()),
      rc::gen::set(&TraceLine::kind, AnyOf(kLastLineKind)), rc::gen::set(&TraceLine::request, AnyText()),
      rc::gen::set(&TraceLine::reply, AnyText()), rc::gen::set(&TraceLine::event, AnyOf(kLastLineEvent)),
      rc::gen::set(&TraceLine::argv, Few(AnyText())), rc::gen::set(&TraceLine::site, AnyText()),
      rc::gen::set(&TraceLine::fault, AnyText()), rc::gen::set(&TraceLine::replaces, AnyText()),
      rc::gen::set(&TraceLine::brought_by, AnyText()),
      rc::gen::set(&TraceLine::duration_ms), rc::gen::set(&TraceLine::waited_for, AnyText()),
      rc::gen::set(&TraceLine::ids, Few(AnyText())));
}

rc::Gen<HistoryItem> AnyHistoryItem() {
  return rc::gen::build<HistoryItem>(
      rc::gen::set(&HistoryItem::kind, AnyOf(kLastHistoryKind)), rc::gen::set(&HistoryItem::t_ms),
      rc::gen::set(&HistoryItem::line), rc::gen::set(&HistoryItem::actor, AnyText()),
      rc::gen::set(&HistoryItem::stream_id, AnyText()), rc::gen::set(&HistoryItem::detail, AnyText()),
      rc::gen::set(&HistoryItem::value), rc::gen::set(&HistoryItem::command, AnyText()),
      rc::gen::set(&HistoryItem::site, AnyText()), rc::gen::set(&HistoryItem::sink, AnyText()),
      rc::gen::set(&HistoryItem::consumer, AnyText()), rc::gen::set(&HistoryItem::persistence, AnyText()),
      rc::gen::set(&HistoryItem::key, AnyText()), rc::gen::set(&HistoryItem::fired_in, AnyText()),
      rc::gen::set(&HistoryItem::payload_missing));
}

rc::Gen<Violation> AnyViolation() {
  return rc::gen::build<Violation>(
      rc::gen::set(&Violation::kind, AnyVerdictKind()), rc::gen::set(&Violation::event_id, AnyText()),
      rc::gen::set(&Violation::cause, AnyText()), rc::gen::set(&Violation::detail, AnyText()),
      rc::gen::set(&Violation::effect_count), rc::gen::set(&Violation::group, AnyText()));
}

rc::Gen<CaseReport> AnyCase() {
  return rc::gen::exec([] {
    CaseReport c;
    c.protocol = *AnyText();
    c.scenario_file = *AnyText();
    c.seed = *rc::gen::arbitrary<uint64_t>();
    c.producers = *rc::gen::arbitrary<int>();
    c.workers = *rc::gen::arbitrary<int>();
    c.handlers = *rc::gen::arbitrary<int>();
    c.events = *rc::gen::arbitrary<int>();
    c.persistence = *AnyText();
    c.restart_naming = *AnyText();
    c.expected = *AnyExpectation();
    c.observed = *AnyText();
    c.matched = *rc::gen::arbitrary<bool>();
    c.violations = *Few(AnyViolation());
    c.trace_hash = *AnyText();
    c.steps = *rc::gen::arbitrary<int64_t>();
    c.virtual_ms = *rc::gen::arbitrary<int64_t>();
    c.fired = *Few(AnyFaultSpec());
    c.coverage.fired = *FewByName(rc::gen::arbitrary<int>());
    const std::vector<std::string> enabled = *Few(AnyText());
    c.coverage.enabled = {enabled.begin(), enabled.end()};
    c.trace = *Few(AnyTraceLine(), 6);
    c.histories = *FewByName(Few(AnyHistoryItem(), 3));
    c.worker_groups = *FewByName(AnyText());
    c.replay_file = *AnyText();
    c.replay_command = *AnyText();
    return c;
  });
}

rc::Gen<CheckReport> AnyCheck() {
  return rc::gen::exec([] {
    CheckReport k;
    k.name = *AnyText();
    k.description = *AnyText();
    k.fault_model = *AnyText();
    k.expected = *AnyExpectation();
    k.observed = *AnyText();
    k.matched = *rc::gen::arbitrary<bool>();
    k.undecided = *rc::gen::arbitrary<bool>();
    k.cases_run = *rc::gen::arbitrary<int>();
    k.cases_failed = *rc::gen::arbitrary<int>();
    k.cases_unjudged = *rc::gen::arbitrary<int>();
    k.other_violations = *FewByName(rc::gen::arbitrary<int>());
    if (*rc::gen::arbitrary<bool>()) k.counterexample = *AnyCase();
    k.counterexample_size = *AnyText();
    k.shrink_steps = *rc::gen::arbitrary<int>();
    k.shrink_cut = *rc::gen::arbitrary<bool>();
    k.first_hit_case = *rc::gen::arbitrary<int>();
    k.fired_totals = *FewByName(rc::gen::arbitrary<int>());
    k.never_fired = *Few(AnyText());
    k.cases_for_coverage = *rc::gen::arbitrary<int>();
    k.coverage_gaps = *Few(AnyText());
    k.gaps_allowed = *rc::gen::arbitrary<bool>();
    for (const std::string& fault : *Few(AnyText())) k.unfired_planned.push_back({fault, *AnyText()});
    k.single_run = *rc::gen::arbitrary<bool>();
    k.seconds = *AnyFinite();
    return k;
  });
}

rc::Gen<Report> AnyReport() {
  return rc::gen::exec([] {
    Report r;
    r.tool_version = *AnyText();
    r.command = *AnyText();
    r.command_line = *AnyText();
    r.seed = *rc::gen::arbitrary<uint64_t>();
    r.server_version = *AnyText();
    r.options = *AnyText();
    r.checks = *Few(AnyCheck(), 3);
    r.all_matched = *rc::gen::arbitrary<bool>();
    r.shard = *AnyText();
    r.search = *rc::gen::build<SearchSettings>(
        rc::gen::set(&SearchSettings::cases), rc::gen::set(&SearchSettings::max_workers),
        rc::gen::set(&SearchSettings::max_events), rc::gen::set(&SearchSettings::max_faults),
        rc::gen::set(&SearchSettings::fixed_workload), rc::gen::set(&SearchSettings::swarm));
    return r;
  });
}

// 1000 generated reports (the count is the test's, RC_PARAMS gives only the
// seed): each comes back from its JSON field for field, and writes the same
// JSON again.
TEST(JsonTest, EveryGeneratedReportSurvivesARoundTrip) {
  testing::CheckCases(1000, [] {
    const Report original = *AnyReport();
    const std::string json = RenderJson(original);
    Result<Report> back = ParseJsonReport(json);
    if (!back.ok()) RC_FAIL(back.status().ToString());
    testing::RcAssertExpectations([&] { ExpectSame(original, *back); });
    RC_ASSERT(RenderJson(*back) == json);
  });
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

// Fields added within a schema version (a pool's lanes, a cut shrink, the
// lane a process's fault fired in) may be absent from a report an earlier
// xackly wrote: it still merges, with their defaults.
TEST(JsonTest, ReadsAReportWrittenBeforeItsLaterFields) {
  Report r = EverythingReport();
  r.checks[0].shrink_cut = true;
  r.checks[0].counterexample->handlers = 3;
  const std::string json = RenderJson(r);
  for (const char* field : {"\"handlers\": 3,", "\"shrink_cut\": true,", "\"fired_in\": ", "\"brought_by\": "}) {
    ASSERT_NE(json.find(field), std::string::npos) << field;
  }
  const std::string older =
      std::regex_replace(json, std::regex("\n *\"(handlers|shrink_cut|fired_in|brought_by)\": [^\n]*"), "");
  ASSERT_EQ(older.find("\"fired_in\""), std::string::npos);
  ASSERT_EQ(older.find("\"brought_by\""), std::string::npos);
  Result<Report> back = ParseJsonReport(older);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->checks[0].shrink_cut);
  EXPECT_EQ(back->checks[0].counterexample->handlers, 1);
  EXPECT_EQ(back->checks[0].counterexample->histories.at("order:1").front().fired_in, "");
  ASSERT_FALSE(back->checks[0].counterexample->trace.empty());
  EXPECT_EQ(back->checks[0].counterexample->trace.front().brought_by, "");
  EXPECT_EQ(back->checks[0].counterexample->trace_hash, r.checks[0].counterexample->trace_hash);
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

// A number that fits the JSON but not the field it is read into (an int
// count or a fired tally past 2^31, a time past 2^63) is refused naming its
// path, never wrapped into another value a merge would then add up.
TEST(JsonTest, ANumberPastItsFieldsWidthIsRefusedNamingItsPath) {
  const std::string json = RenderJson(EverythingReport());
  struct Case {
    std::string find, number, path;
  };
  const std::vector<Case> cases = {
      {"\"workers\": 3", "2147483648", "checks[0].counterexample.workers"},
      {"\"workers\": 3", "-2147483649", "checks[0].counterexample.workers"},
      {"\"crash@after-effect\": 3", "2147483648", "checks[0].counterexample.coverage.fired.crash@after-effect"},
      {"\"crash@after-effect\": 3", "-2147483649", "checks[0].counterexample.coverage.fired.crash@after-effect"},
      {"\"t_ms\": 0", "9223372036854775808", "checks[0].counterexample.trace[0].t_ms"},
  };
  for (const Case& c : cases) {
    std::string changed = json;
    const size_t at = changed.find(c.find);
    ASSERT_NE(at, std::string::npos) << c.find;
    const size_t colon = c.find.find(':');
    changed.replace(at, c.find.size(), c.find.substr(0, colon + 2) + c.number);
    Result<Report> back = ParseJsonReport(changed);
    ASSERT_FALSE(back.ok()) << c.path << " = " << c.number;
    EXPECT_EQ(back.status().message(), "report: " + c.path + ": out of range") << c.number;
  }
  // The widest values that fit are read as they are.
  for (const Case& c : std::vector<Case>{{"\"workers\": 3", "2147483647", ""},
                                         {"\"crash@after-effect\": 3", "-2147483648", ""}}) {
    std::string changed = json;
    const size_t at = changed.find(c.find);
    changed.replace(at, c.find.size(), c.find.substr(0, c.find.find(':') + 2) + c.number);
    Result<Report> back = ParseJsonReport(changed);
    ASSERT_TRUE(back.ok()) << c.number << ": " << back.status().ToString();
    ASSERT_TRUE(back->checks[0].counterexample.has_value());
    const CaseReport& ce = *back->checks[0].counterexample;
    EXPECT_EQ(c.find.starts_with("\"workers") ? ce.workers : ce.coverage.fired.at("crash@after-effect"),
              std::stoll(c.number));
  }
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
