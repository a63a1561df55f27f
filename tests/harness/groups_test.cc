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

// A counterexample whose fault hits a further group's worker (w3) must load
// and replay: the schedule's actors are every group's workers, not only the
// run's own group's (a replay file naming w3 was refused before).
TEST(GroupsTest, AFaultOnAFurtherGroupsWorkerIsAScheduleAReplayFileCanHold) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml",
                                  "expect = \"duplicate\"\n" + FanOut(false, "kinds = [\"crash\"]") +
                                      "[schedule]\nfaults = [\"crash w3 after-effect #1\"]\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", dir.path() + "/f.toml", "--out", dir.path() + "/out"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "in group search-indexer [crash:after-effect]")) << run.output;
  CommandOutput replay = RunXackly({"replay", dir.path() + "/out/fan-out.replay.toml"});
  EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "matches the file")) << replay.output;
}

TEST(GroupsTest, ABrokenGroupIsFoundAndNamedAndTheCorrectOneIsNot) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/f.toml",
                                  "expect = \"duplicate\"\n" +
                                      FanOut(false, "kinds = [\"crash\"]\ncrash_points = [\"after-effect\"]"))
                  .ok());
  CommandOutput check = RunXackly({"check", "--scenario", dir.path() + "/f.toml", "--cases", "100", "--out", dir.path() + "/out", "--format", "json,html", "--quiet"});
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
  // The HTML timeline's lanes say which group a worker reads for.
  const std::string html = *ReadFile(dir.path() + "/out/report.html");
  EXPECT_TRUE(Contains(html, "<small>worker, search-indexer")) << "no lane labelled with its group";
  // The story ends on the group's verdict.
  std::vector<std::string> story = report::Story(c);
  ASSERT_FALSE(story.empty());
  EXPECT_TRUE(Contains(story.back(), "in group search-indexer")) << story.back();
  // Its reads are told as the group's.
  EXPECT_TRUE(std::any_of(story.begin(), story.end(),
                          [](const std::string& s) { return Contains(s, "of group search-indexer"); }))
      << story.front();
}

TEST(GroupsTest, AKeyedFanOutStaysOkUnderCrashesStallsAndLostReplies) {
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
  // Crashes fired inside the handlers: after COMMIT (only the orders group
  // commits) and after an effect (either group's; coverage totals do not
  // say whose, so this does not prove the indexer crashed).
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


// The run's own group ("workers") handles each event at once; the indexer
// group one entry every 3 s. A janitor trims with XTRIM MINID below what a
// group still needs: only "workers" (unsafe for the slow indexer), or the
// lower of both groups (safe).
constexpr const char* kTrimScript = R"LUA(local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  if not w:sql("BEGIN").ok then return end
  local mark = w:sql("INSERT OR IGNORE INTO done(grp, event_id) VALUES (?, ?)", w.group, e.fields.event_id)
  if not mark.ok then return end
  if mark.changes == 1 and not w:effect(e.fields.event_id, "sql", {entry = e}) then w:sql("ROLLBACK") return end
  if w:sql("COMMIT").ok then w:redis("XACK", w.stream, w.group, e.id) end
end

local function serve(w, pause_ms)
  while not w:sql("CREATE TABLE IF NOT EXISTS done(grp TEXT, event_id TEXT, PRIMARY KEY (grp, event_id))").ok do
    w:sleep(1000)
  end
  for _, e in ipairs(w:read("0")) do handle(w, e) end
  while true do
    if pause_ms > 0 then w:sleep(pause_ms) end
    local batch = w:read(">", {count = 1})
    if #batch == 0 then w:park(2000) end
    for _, e in ipairs(batch) do handle(w, e) end
  end
end

function consumer(w) serve(w, 0) end
function indexer(w) serve(w, 3000) end   -- slow: one entry every 3 s

-- The lowest ID group `name` still needs: its oldest pending entry, else
-- the entry after its last delivered one.
local function needed(w, name)
  local p = w:redis("XPENDING", w.stream, name)
  if p[1] > 0 then return p[2] end
  for _, g in ipairs(w:redis("XINFO", "GROUPS", w.stream)) do
    local t = {}
    for i = 1, #g, 2 do t[g[i]] = g[i + 1] end
    if t.name == name then
      local ms, seq = string.match(t["last-delivered-id"], "(%d+)-(%d+)")
      return ms .. "-" .. (tonumber(seq) + 1)
    end
  end
end

function janitor(w)
  while true do
    w:sleep(1000)
    local keep = needed(w, "workers")
    if params.trim_for_all then
      local other = needed(w, "search-indexer")
      local a1, a2 = string.match(keep, "(%d+)-(%d+)")
      local b1, b2 = string.match(other, "(%d+)-(%d+)")
      if tonumber(b1) < tonumber(a1) or (b1 == a1 and tonumber(b2) < tonumber(a2)) then keep = other end
    end
    w:redis("XTRIM", w.stream, "MINID", keep)
  end
end
)LUA";

std::string TrimScenario(bool trim_for_all) {
  return std::string("[workload]\nworkers = 1\nevents = 6\n[protocol]\nscript = \"trim.lua\"\n") +
         "[protocol.params]\ntrim_for_all = " + (trim_for_all ? "true" : "false") +
         "\n[faults]\nkinds = []\n[[groups]]\nname = \"search-indexer\"\nconsumer = \"indexer\"\n";
}

TEST(GroupsTest, ARetentionSafeForOneGroupAndNotTheOtherLosesInTheOtherOnly) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/trim.lua", kTrimScript).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/one.toml", "expect = \"lost:payload-deleted\"\n" + TrimScenario(false)).ok());
  CommandOutput one = RunXackly({"run", "--scenario", dir.path() + "/one.toml"});
  EXPECT_EQ(one.exit_code, kExitOk) << one.output;
  EXPECT_TRUE(Contains(one.output, "lost order:1 in group search-indexer [payload-deleted]")) << one.output;
  EXPECT_FALSE(Contains(one.output, "lost order:1 [")) << "the orders group lost nothing: " << one.output;

  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/all.toml", "expect = \"ok\"\n" + TrimScenario(true)).ok());
  CommandOutput all = RunXackly({"run", "--scenario", dir.path() + "/all.toml"});
  EXPECT_EQ(all.exit_code, kExitOk) << all.output;
  EXPECT_TRUE(Contains(all.output, "observed ok (expected ok): matched")) << all.output;
}

// Each group's workers run the same handler; the run's own group acks a
// failed event without saving it (lost), the further group dead-letters it
// into a stream of its own choosing first, unless params.notifier_acks.
const char* kDeadLetterScript = R"(
local function handle(w, e, dead_letter)
  local ok = w:effect(e.fields.event_id, "external", {entry = e})
  if not ok and dead_letter then
    w:redis("XADD", w.group .. ":dlq", "*", "event_id", e.fields.event_id, "source_id", e.id)
  end
  w:redis("XACK", w.stream, w.group, e.id)
end
local function loop(w, dead_letter)
  while true do
    for _, e in ipairs(w:read(">", {count = 10, block_ms = 1000})) do handle(w, e, dead_letter) end
  end
end
function consumer(w) loop(w, false) end
function notifier(w) loop(w, not params.notifier_acks) end
)";

CommandOutput RunDeadLetterFanOut(const ScopedTempRoot& dir, bool notifier_acks) {
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/dlq.lua", kDeadLetterScript).ok());
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/dlq.toml",
                                  std::string("name = \"dlq\"\nexpect = \"lost\"\n[protocol]\nscript = \"dlq.lua\"\n") +
                                      "[protocol.params]\nnotifier_acks = " + (notifier_acks ? "true" : "false") +
                                      "\n[workload]\nworkers = 1\nevents = 2\n"
                                      "[[groups]]\nname = \"notifications\"\nconsumer = \"notifier\"\nworkers = 1\n"
                                      "[schedule]\nfaults = [\"poison event 1\"]\n")
                  .ok());
  return RunXackly({"run", "--scenario", dir.path() + "/dlq.toml"});
}

// A further group that dead-letters into a stream of its own choosing
// (notifications:dlq) did keep the event: before the final reads read every
// group's dead-letter streams, only the run's own group's were read, and
// this correct group was judged `lost` (found by a new user's trial).
TEST(GroupsTest, AFurtherGroupsOwnDeadLetterStreamKeepsItsPoisonEvent) {
  ScopedTempRoot dir;
  CommandOutput run = RunDeadLetterFanOut(dir, /*notifier_acks=*/false);
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "lost order:1 in group workers")) << run.output;
  EXPECT_FALSE(Contains(run.output, "order:1 in group notifications")) << run.output;
}

// Each group tried order:1 once: the story counts each group's attempts
// alone (it told "after 2 failed attempts", the other group's included).
TEST(GroupsTest, TheStoryCountsEachGroupsOwnAttempts) {
  ScopedTempRoot dir;
  CommandOutput run = RunDeadLetterFanOut(dir, /*notifier_acks=*/true);
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "lost order:1 in group notifications")) << run.output;
  EXPECT_TRUE(Contains(run.output, "w1 gives up on order:1 after 1 failed attempt ")) << run.output;
  EXPECT_TRUE(Contains(run.output, "w2 gives up on order:1 after 1 failed attempt ")) << run.output;
  EXPECT_FALSE(Contains(run.output, "2 failed attempts")) << run.output;
}

}  // namespace
}  // namespace xackly
