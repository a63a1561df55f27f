// Several consumer groups on one stream ([[groups]], RunConfig::groups):
// each group's exactly-once is judged on its own. A fan-out's two groups
// each run an event's effect once, which is not a duplicate; a broken
// group is found and named, whatever the other group does.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "reports/report.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const std::string kExamples = std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/";

// The fan-out example's scenario text with `faults` and `indexer_key` set.
std::string FanOut(bool indexer_key, const std::string& faults) {
  return "name = \"fan-out\"\nseed = 1\n[workload]\nworkers = 2\nevents = 6\n[protocol]\nscript = \"" + kExamples +
         "fan-out-groups.lua\"\n[protocol.params]\nindexer_key = " + (indexer_key ? "true" : "false") +
         "\n[faults]\n" + faults + "\n[[groups]]\nname = \"search-indexer\"\nconsumer = \"indexer\"\nworkers = 2\n";
}

TEST(GroupsTest, EachGroupRunningAnEventsEffectOnceIsNotADuplicate) {
  // Before groups were modelled, this fault-free fan-out was a `duplicate`
  // of every event: both groups' effects were counted as one event's.
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml", FanOut(true, "kinds = []")).ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/f.toml"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "observed ok (expected ok): matched")) << run.output;
  EXPECT_TRUE(Contains(run.output, "2 workers in group workers + 2 in group search-indexer (w3..w4)")) << run.output;
}

TEST(GroupsTest, ABrokenGroupIsFoundAndNamedAndTheCorrectOneIsNot) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml",
                                  "expect = \"duplicate\"\n" +
                                      FanOut(false, "kinds = [\"crash\"]\ncrash_points = [\"after-effect\"]"))
                  .ok());
  CommandOutput check = RunXackly({"check", "--scenario", dir.path() + "/f.toml", "--cases", "100", "--out", dir.path() + "/out", "--format", "json", "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  Result<report::Report> json = report::ParseJsonReport(*ReadFile(dir.path() + "/out/report.json"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  ASSERT_EQ(json->checks.size(), 1u);
  ASSERT_TRUE(json->checks[0].counterexample.has_value()) << check.output;
  const report::CaseReport& c = *json->checks[0].counterexample;
  ASSERT_FALSE(c.violations.empty());
  for (const Violation& v : c.violations) {
    // The orders group dedupes in SQL: every violation is the indexer's.
    EXPECT_EQ(v.group, "search-indexer") << v.event_id << " " << v.cause << ": " << v.detail;
    EXPECT_EQ(c.histories.count(HistoryKey(v)), 1u) << HistoryKey(v);
  }
  // The story ends on the group's verdict.
  std::vector<std::string> story = report::Story(c);
  ASSERT_FALSE(story.empty());
  EXPECT_TRUE(Contains(story.back(), "in group search-indexer")) << story.back();
  // Its reads are told as the group's.
  EXPECT_TRUE(std::any_of(story.begin(), story.end(),
                          [](const std::string& s) { return Contains(s, "of group search-indexer"); }))
      << story.front();
}

TEST(GroupsTest, AKeyedFanOutStaysOkUnderCrashesInBothGroups) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml",
                                  FanOut(true, "kinds = [\"crash\", \"stall\", \"lost-reply\"]")).ok());
  CommandOutput check = RunXackly({"check", "--scenario", dir.path() + "/f.toml", "--cases", "150", "--out",
                                   dir.path() + "/out", "--format", "json", "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  Result<report::Report> json = report::ParseJsonReport(*ReadFile(dir.path() + "/out/report.json"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  const report::CheckReport& k = json->checks[0];
  EXPECT_EQ(k.cases_failed, 0) << check.output;
  // Crashes fired after the effect in both groups' code (the SQL group's
  // effect is followed by COMMIT, the indexer's by XACK).
  EXPECT_GT(k.fired_totals.count("crash@after-COMMIT"), 0u) << check.output;
  EXPECT_GT(k.fired_totals.count("crash@after-effect"), 0u) << check.output;
}

TEST(GroupsTest, AGroupWhoseFunctionTheScriptLacksIsAnErrorNamingIt) {
  ScopedTempRoot dir;
  std::string text = FanOut(true, "kinds = []");
  text.replace(text.find("consumer = \"indexer\""), 20, "consumer = \"indexr\"");
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml", text).ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/f.toml"});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "defines no function indexr(w)")) << run.output;
}

TEST(GroupsTest, AnEffectOfAnEntryReadThroughAnotherGroupIsRefused) {
  // A worker of the run's own group reading through a group it does not
  // belong to and running the effect: its effect would count for the wrong
  // group, so the run stops with an error that says how to model it.
  ScopedTempRoot dir;
  const std::string script = R"(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, "audit", "0")
  while true do
    local batch = w:read(">", {group = "audit"})
    if #batch == 0 then w:park(1000) end
    for _, e in ipairs(batch) do w:effect(e.fields.event_id, "external", {entry = e}) end
  end
end
)";
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/c.lua", script).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/c.toml",
                                  "[workload]\nworkers = 1\nevents = 2\n[protocol]\nscript = \"c.lua\"\n"
                                  "[faults]\nkinds = []\n").ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/c.toml"});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "read through consumer group 'audit'")) << run.output;
  EXPECT_TRUE(Contains(run.output, "[[groups]]")) << run.output;
}

}  // namespace
}  // namespace xackly
