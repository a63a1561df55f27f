// The commands a user runs every day, as a user runs them: separate
// processes, exit codes, files left behind, and output a script can read.
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "reports/report.h"
#include "sim/protocol.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// The last non-empty line of a command's output.
std::string LastLine(const std::string& output) {
  std::string trimmed = output.substr(0, output.find_last_not_of('\n') + 1);
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

// The trace hash a run/replay printed ("trace 0123456789abcdef, ...").
std::string TraceHash(const std::string& output) {
  std::smatch m;
  std::regex re("trace ([0-9a-f]{16})");
  return std::regex_search(output, m, re) ? m[1].str() : "";
}

bool HasControlCharacters(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 && c != '\n') return true;
  }
  return false;
}

TEST(CliCommandsTest, TheSameSeedGivesTheSameTraceInAnotherProcess) {
  CommandOutput a = RunXackly({"run", "--protocol", "txn-dedupe", "--seed", "7"});
  CommandOutput b = RunXackly({"run", "--protocol", "txn-dedupe", "--seed", "7"});
  CommandOutput c = RunXackly({"run", "--protocol", "txn-dedupe", "--seed", "8"});
  ASSERT_EQ(a.exit_code, kExitOk) << a.output;
  ASSERT_FALSE(TraceHash(a.output).empty()) << a.output;
  EXPECT_EQ(TraceHash(a.output), TraceHash(b.output));
  EXPECT_NE(TraceHash(a.output), TraceHash(c.output));
}

TEST(CliCommandsTest, RunExitCodesFollowTheVerdict) {
  // no-dedupe, seed 3: a crash between effect and XACK (the expected verdict).
  CommandOutput dup = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3"});
  EXPECT_EQ(dup.exit_code, kExitOk) << dup.output;
  // The violation line names its cause in brackets (the header names the
  // expectation without them).
  EXPECT_TRUE(Contains(dup.output, "[crash:after-effect]")) << dup.output;
  // The same protocol without faults does not show its expected duplicate.
  CommandOutput none = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3", "--faults", "none"});
  EXPECT_EQ(none.exit_code, kExitVerdictMismatch) << none.output;
  EXPECT_TRUE(Contains(none.output, "DOES NOT MATCH")) << none.output;
}

TEST(CliCommandsTest, RunJsonCarriesTheFieldsScriptsNeed) {
  CommandOutput out = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3", "--format", "json"});
  ASSERT_EQ(out.exit_code, kExitOk) << out.output;
  size_t brace = out.output.find('{');
  ASSERT_NE(brace, std::string::npos);
  std::string json = out.output.substr(brace);
  for (const char* field : {"\"schema\"", "\"protocol\"", "\"seed\"", "\"expected\"", "\"violations\"",
                            "\"matched\"", "\"trace_hash\"", "\"steps\"", "\"events\""}) {
    EXPECT_TRUE(Contains(json, field)) << field << " missing in " << json;
  }
}

TEST(CliCommandsTest, CheckDeterminismPassesForADeterministicRun) {
  CommandOutput out = RunXackly({"run", "--protocol", "lua-dedupe", "--seed", "4", "--check-determinism"});
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "determinism: a second run on a fresh server gave the same trace")) << out.output;
}

TEST(CliCommandsTest, BadNamesExitTwoAndListTheValidValues) {
  CommandOutput p = RunXackly({"run", "--protocol", "no-such-protocol"});
  EXPECT_EQ(p.exit_code, kExitUsage);
  EXPECT_TRUE(Contains(p.output, "valid: ack-first, no-dedupe")) << p.output;
  CommandOutput f = RunXackly({"run", "--protocol", "no-dedupe", "--faults", "crash,meteor"});
  EXPECT_EQ(f.exit_code, kExitUsage);
  EXPECT_TRUE(Contains(f.output, "unknown fault kind 'meteor'")) << f.output;
  EXPECT_TRUE(Contains(f.output, "lost-reply")) << f.output;
  CommandOutput w = RunXackly({"run", "--protocol", "no-dedupe", "--workers", "0"});
  EXPECT_EQ(w.exit_code, kExitUsage) << w.output;
  CommandOutput c = RunXackly({"check", "--protocol", "no-dedupe", "--shard", "4/3"});
  EXPECT_EQ(c.exit_code, kExitUsage) << c.output;
}

TEST(CliCommandsTest, ProtocolsListsEveryProtocolWithItsFaultModel) {
  CommandOutput out = RunXackly({"protocols"});
  ASSERT_EQ(out.exit_code, kExitOk);
  for (const char* name : {"ack-first", "no-dedupe", "txn-dedupe", "lua-dedupe", "no-claim", "naive-trim"}) {
    EXPECT_TRUE(Contains(out.output, name)) << name;
  }
  EXPECT_TRUE(Contains(out.output, "faults: crash(after-read,after-effect,after-ack)")) << out.output;
  CommandOutput json = RunXackly({"protocols", "--format", "json"});
  EXPECT_TRUE(Contains(json.output, "\"fault_model\"")) << json.output;
}

// Issue #5: check finds the expected violation, shrinks it to one event, one
// worker and one crash, and writes a replay file that reproduces its trace
// in another process.
TEST(CliCommandsTest, CheckShrinksToAMinimalCaseThatReplaysExactly) {
  ScopedTempRoot out;
  for (const char* protocol : {"no-dedupe", "ack-first"}) {
    // Not --quiet: its output is the rows' lines, without the report that ends here.
    CommandOutput check = RunXackly({"check", "--protocol", protocol, "--cases", "200", "--seed", "1",
                                     "--out", out.path()});
    ASSERT_EQ(check.exit_code, kExitOk) << check.output;
    EXPECT_TRUE(Contains(check.output, "1 event, 1 worker, 1 fault")) << check.output;
    std::string file = out.path() + "/" + protocol + ".replay.toml";
    Result<std::string> text = ReadFile(file);
    ASSERT_TRUE(text.ok()) << check.output;
    EXPECT_TRUE(Contains(*text, "crash w1 after-")) << *text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*text, m, std::regex("trace_hash = \"([0-9a-f]{16})\"")));
    std::string hash = m[1].str();
    // The last line of the check output is the replay command.
    EXPECT_EQ(LastLine(check.output), "replay: xackly replay " + file) << check.output;
    CommandOutput replay = RunXackly({"replay", file});
    EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;
    EXPECT_EQ(TraceHash(replay.output), hash) << replay.output;
  }
}

// A position reader (plain XREAD, no group) that parks when it finds
// nothing after its position waits for new entries, as XREAD BLOCK would:
// it used to return at once for ever ("N new entries since its read", read
// off group reads only) until the step guard stopped the run (found by a
// new user's trial).
TEST(CliCommandsTest, APositionReaderThatParksWaitsForNewEntries) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/park.lua", R"(
local last = "0-0"
function consumer(w)
  while true do
    local reply = w:redis("XREAD", "COUNT", 10, "STREAMS", w.stream, last)
    if not reply then  -- nil: nothing after `last`
      w:park(500)
    else
      for _, e in ipairs(xackly.entries(reply[1][2])) do
        w:effect(e.fields.event_id, "external", {entry = e})
        last = e.id
      end
    end
  end
end
)").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/park.toml",
                                  "name = \"park\"\n[protocol]\nscript = \"park.lua\"\n[workload]\nworkers = 1\nevents = 3\n")
                  .ok());
  CommandOutput run = RunXackly(
      {"run", "--scenario", dir.path() + "/park.toml", "--faults", "none", "--trace", dir.path() + "/t.txt"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "observed ok (expected ok): matched")) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/t.txt");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "park (nothing to read; wakes on new entries")) << *trace;
}

// A check draws each case's faults; a file's exact [schedule] plan is what
// run and replay fire, and check says so rather than seem to use it.
TEST(CliCommandsTest, CheckSaysAFilesScheduleIsNotWhatItDraws) {
  ScopedTempRoot out;
  CommandOutput check = RunXackly({"check", "--scenario", std::string(XACKLY_SOURCE_DIR) +
                                   "/scenarios/examples/xack-error-retried.toml", "--cases", "5",
                                   "--coverage-cap", "5", "--out", out.path()});
  EXPECT_TRUE(Contains(check.output, "xack-error-retried: note: check draws each case's faults from the model "
                                     "below; the file's [schedule] faults (1 fault) are what `xackly run` and "
                                     "`replay` fire\nxack-error-retried: fault model crash error-reply"))
      << check.output;
}

// --max-shrinks 0 keeps the first failing case as found, faults not shrunk
// away and all (here 2 events and 3 faults where 1 event and 1 fault
// show the loss): it matches because it shows the loss, every format says
// it is not minimal, and its replay file still replays exactly. (It may
// show more than the expectation; IsHitTest covers matching then.)
TEST(CliCommandsTest, CheckWithoutShrinkingMatchesWhatItShowsAndSaysItIsNotMinimal) {
  ScopedTempRoot out;
  CommandOutput check = RunXackly({"check", "--scenario", std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/xread-position-first.toml",
                                   "--cases", "100", "--max-shrinks", "0", "--out", out.path(), "--format", "text,json"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  EXPECT_TRUE(Contains(check.output, "observed lost")) << check.output;
  EXPECT_TRUE(Contains(check.output, "not minimal: 2 events, 1 worker, 3 faults")) << check.output;
  EXPECT_TRUE(Contains(check.output, "not shrunk: --max-shrinks stopped it; may not be minimal")) << check.output;
  EXPECT_TRUE(Contains(check.output, "at most 0 shrinks")) << check.output;
  Result<std::string> json = ReadFile(out.path() + "/report.json");
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(Contains(*json, "\"shrink_cut\": true")) << *json;
  CommandOutput replay = RunXackly({"replay", out.path() + "/xread-position-first.replay.toml"});
  EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;

  // Shrunk as by default, the same check shows exactly what it expects.
  CommandOutput shrunk = RunXackly({"check", "--scenario", std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/xread-position-first.toml",
                                    "--cases", "100", "--out", out.path(), "--format", "json"});
  ASSERT_EQ(shrunk.exit_code, kExitOk) << shrunk.output;
  EXPECT_TRUE(Contains(shrunk.output, "observed lost ")) << shrunk.output;
  EXPECT_TRUE(Contains(shrunk.output, "minimal: 1 event, 1 worker, 1 fault")) << shrunk.output;
  json = ReadFile(out.path() + "/report.json");
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(Contains(*json, "\"shrink_cut\": false")) << *json;
}

// A replay file of a script protocol names the script as seen from the
// replay file's own directory: it replays from wherever --out put it.
TEST(CliCommandsTest, AScriptCounterexampleReplaysFromItsOutDirectory) {
  ScopedTempRoot root;
  // An external effect and then XACK, no dedupe, claims after 10 s: a slow
  // effect or a crash before XACK runs an effect twice.
  const std::string script = R"(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 10000, "0-0", "COUNT", 10)
    local batch = xackly.is_error(r) and {} or xackly.entries(r[2])
    if #batch == 0 then batch = w:read(">", {count = 5, block_ms = 1000}) end
    for _, e in ipairs(batch) do
      if not e.deleted then w:effect(e.fields.event_id, "external", {entry = e}) end
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)";
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/src/effect-then-ack.lua", script).ok());
  ASSERT_TRUE(WriteFileAtomically(root.path() + "/src/effect-then-ack.toml",
                                  "name = \"effect-then-ack\"\nexpect = \"duplicate\"\n"
                                  "[protocol]\nscript = \"effect-then-ack.lua\"\n")
                  .ok());
  const std::string out_dir = root.path() + "/nested/out";
  CommandOutput check = RunXackly({"check", "--scenario", root.path() + "/src/effect-then-ack.toml", "--out",
                                   out_dir, "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  const std::string file = out_dir + "/effect-then-ack.replay.toml";
  Result<std::string> text = ReadFile(file);
  ASSERT_TRUE(text.ok()) << check.output;
  EXPECT_TRUE(Contains(*text, "\nscript = \"../../src/effect-then-ack.lua\"")) << *text;
  CommandOutput replay = RunXackly({"replay", file});
  EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;
}

// `xackly run` of a one-script scenario written into `root`: NAME.lua holds
// `script`, NAME.toml names it, expects ok and adds `scenario_tail`.
CommandOutput RunScriptScenario(const ScopedTempRoot& root, const std::string& name, const std::string& script,
                                const std::string& scenario_tail) {
  EXPECT_TRUE(WriteFileAtomically(root.path() + "/" + name + ".lua", script).ok());
  EXPECT_TRUE(WriteFileAtomically(root.path() + "/" + name + ".toml",
                                  "name = \"" + name + "\"\nexpect = \"ok\"\n[protocol]\nscript = \"" + name +
                                      ".lua\"\n" + scenario_tail)
                  .ok());
  return RunXackly({"run", "--scenario", root.path() + "/" + name + ".toml", "--out", root.path()});
}

// A correct script whose recovery waits two hours (its XAUTOCLAIM threshold)
// is judged after that wait, not after the default quiet window: a crash
// between its commit and its XACK is recovered, not `pel-leak`.
TEST(CliCommandsTest, AScriptsOwnLongClaimThresholdIsWaitedFor) {
  ScopedTempRoot root;
  const std::string script = R"lua(
local function handle(w, e)
  if e.deleted then w:redis("XACK", w.stream, w.group, e.id) return end
  w:sql("BEGIN")
  if w:sql("INSERT OR IGNORE INTO processed VALUES (?)", e.fields.event_id).changes == 1 then
    w:effect(e.fields.event_id, "sql", {entry = e})
  end
  w:sql("COMMIT")
  w:point("point:before-ack")
  w:redis("XACK", w.stream, w.group, e.id)
end
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 7200000, "0-0", "COUNT", 10)
    for _, e in ipairs(xackly.entries(r[2])) do handle(w, e) end
    for _, e in ipairs(w:read(">", {count = 5, block_ms = 60000})) do handle(w, e) end
  end
end
)lua";
  CommandOutput run = RunScriptScenario(root, "slow-claim", script,
                                        "[workload]\nworkers = 1\nevents = 2\n"
                                        "[schedule]\nfaults = [\"crash w1 point:before-ack #1\"]\n");
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "crash")) << run.output;
}

// A failover that cuts a WAIT the lagging replica held is told as a cut,
// not as the 0 the WAIT would have answered at its timeout (a new user's
// story said "is answered 0" of a WAIT that never answered). The worker
// restarts reading only new entries, so its entry stays pending: stuck.
TEST(CliCommandsTest, AStoryTellsALaggingWaitCutByAFailoverAsCut) {
  ScopedTempRoot root;
  const std::string script = R"lua(
function consumer(w)
  while true do
    for _, e in ipairs(w:read(">", {count = 5, block_ms = 1000})) do
      if w:redis("SET", "done:" .. e.fields.event_id, "1", "NX") then
        local acks = w:redis("WAIT", "1", "500")
        while acks ~= 1 do acks = w:redis("WAIT", "1", "500") end
        w:effect(e.fields.event_id, "external", {entry = e})
      end
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua";
  CommandOutput run = RunScriptScenario(root, "waited-mark-first", script,
                                        "[server]\nreplicas = 1\n[workload]\nworkers = 1\nevents = 1\n"
                                        "[schedule]\nfaults = [\"replica-lag w1 WAIT #1 2000ms\", "
                                        "\"failover lag:0 @100ms\"]\n");
  EXPECT_TRUE(Contains(run.output, "observed stuck")) << run.output;
  EXPECT_TRUE(Contains(run.output, "WAIT 1 500 waits for a lagging replica and is cut by a failover 97 ms later"))
      << run.output;
  EXPECT_FALSE(Contains(run.output, "is answered 0")) << run.output;
}

// A failover (or a restart) that drops an entry no worker had read loses
// its event for good; the story says why nobody had read it in the 500 ms
// before the failover: the only worker was down or stalled. (A new user's
// counterexample of the shipped wait-ignored producer said only that the
// failover lost the entry, and a consumer that reads within milliseconds
// made that look impossible.)
TEST(CliCommandsTest, AStoryOfAFailoverLossSaysWhyNoWorkerHadReadTheEntry) {
  ScopedTempRoot root;
  const std::string examples = std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/";
  const std::vector<std::pair<std::string, std::string>> away = {
      {"crash w1 before-XREADGROUP #1",
       "no worker had read it: w1 was down (it crashed at before-XREADGROUP, 503 ms earlier)"},
      {"stall w1 before-XREADGROUP #1 60000ms",
       "no worker had read it: w1 was stalled at before-XREADGROUP (a 60 s stall that began 503 ms earlier)"}};
  for (const auto& [fault, told] : away) {
    SCOPED_TRACE(fault);
    const std::string file = root.path() + "/wait-ignored.toml";
    ASSERT_TRUE(WriteFileAtomically(
                    file, "name = \"wait-ignored\"\nexpect = \"lost:failover\"\n[server]\nreplicas = 1\n"
                          "[workload]\nworkers = 1\nevents = 1\n[protocol]\nscript = \"" + examples +
                          "failover-wait-ignored-producer.lua\"\ninclude = [\"" + examples +
                          "failover-producer.lua\", \"" + examples + "../catalog/scripts/txn-dedupe.lua\", \"" +
                          examples + "../catalog/scripts/catalog_loop.lua\"]\n[schedule]\nfaults = [\"" + fault +
                          "\", \"replica-lag p1 WAIT #1 2000ms failover\"]\n")
                    .ok());
    CommandOutput run = RunXackly({"run", "--scenario", file, "--out", root.path()});
    EXPECT_TRUE(Contains(run.output, "the failover loses 1700000000003-0 (order:1) (the promoted replica never "
                                     "received its XADD); " + told))
        << run.output;
  }
}

// Two replicas: the waited producer's WAIT 1 500 is answered 1 at once by
// the replica that keeps up, and the lag's failover promotes the lagging
// one, which never received the XADD. The producer did what WAIT 1 asks of
// it, the event is lost, and the story says why WAIT 1 was not enough. The
// same schedule on one replica answers 0 and the producer adds it again.
TEST(CliCommandsTest, WithTwoReplicasTheStorySaysTheLaggingReplicaLackedWhatWaitOneConfirmed) {
  ScopedTempRoot root;
  const std::string examples = std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/";
  for (const int replicas : {2, 1}) {
    SCOPED_TRACE(fmt::format("{} replicas", replicas));
    const std::string file = root.path() + "/waited.toml";
    ASSERT_TRUE(WriteFileAtomically(
                    file, fmt::format("name = \"waited\"\n[server]\nreplicas = {}\n[workload]\nworkers = 1\n"
                                      "events = 1\n[protocol]\nscript = \"{}failover-waited-producer.lua\"\n"
                                      "include = [\"{}failover-producer.lua\", \"{}../catalog/scripts/txn-dedupe.lua\", "
                                      "\"{}../catalog/scripts/catalog_loop.lua\"]\n[schedule]\nfaults = [\"crash w1 "
                                      "before-XREADGROUP #1\", \"replica-lag p1 WAIT #1 2000ms failover\"]\n",
                                      replicas, examples, examples, examples, examples))
                    .ok());
    CommandOutput run = RunXackly({"run", "--scenario", file, "--out", root.path()});
    EXPECT_TRUE(Contains(run.output, fmt::format("persistence none, {} replica{},", replicas, replicas == 1 ? "" : "s")))
        << run.output;  // the header says what the run has
    if (replicas == 2) {
      EXPECT_TRUE(Contains(run.output, "observed lost")) << run.output;
      EXPECT_TRUE(Contains(run.output, "p1's WAIT 1 500 is answered 1 at once by the replicas that keep up; the "
                                       "lagging one has not received the writes since it began to lag"))
          << run.output;
      EXPECT_TRUE(Contains(run.output, "no worker had read it: w1 was down")) << run.output;
      // The failover is the lag's, not one drawn on its own.
      EXPECT_TRUE(Contains(run.output, "the lag at p1's WAIT fails the primary over to the lagging replica, which "
                                       "never received this write: XADD"))
          << run.output;
    } else {
      EXPECT_TRUE(Contains(run.output, "observed ok")) << run.output;
    }
  }
}

// A worker ten minutes into its effect is busy, not stuck: the quiet window
// counts from the end of work longer than the run's effect_ms (it ended the
// run at 214 s and called this correct protocol `stuck`).
TEST(CliCommandsTest, AnEffectLongerThanTheQuietWindowIsWaitedFor) {
  ScopedTempRoot root;
  const std::string script = R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    for _, e in ipairs(w:read(">", {count = 5, block_ms = 5000})) do
      w:sql("BEGIN")
      if w:sql("INSERT OR IGNORE INTO processed VALUES (?)", e.fields.event_id).changes == 1 then
        w:effect(e.fields.event_id, "sql", {entry = e, duration_ms = 600000})
      end
      w:sql("COMMIT")
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua";
  CommandOutput run = RunScriptScenario(root, "slow-effect", script,
                                        "[workload]\nworkers = 1\nevents = 2\n[faults]\nkinds = []\n");
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
}

// A timer no command shows (a batch flushed 5 minutes after its first
// entry, kept in a variable and compared with w:now()) is waited out: a
// script's liveness verdict needs kScriptQuietFloorMs of silence. With the
// built-in loop's window this correct consumer was called `stuck`.
TEST(CliCommandsTest, AScriptsHiddenFlushTimerIsWaitedFor) {
  ScopedTempRoot root;
  const std::string script = R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local held, first = {}, nil
  while true do
    for _, e in ipairs(w:read(">", {count = 5, block_ms = 1000})) do
      held[#held + 1] = e
      first = first or w:now()
    end
    if first and w:now() - first >= 300000 then
      for _, e in ipairs(held) do
        w:effect(e.fields.event_id, "external", {entry = e})
        w:redis("XACK", w.stream, w.group, e.id)
      end
      held, first = {}, nil
    end
  end
end
)lua";
  CommandOutput run = RunScriptScenario(root, "flush-later", script,
                                        "[workload]\nworkers = 1\nevents = 1\n[faults]\nkinds = []\n");
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
}

// A consumer that pays with an idempotency key the service remembers for
// `key_ttl_ms`, gives up on the call after 2 s (the scenarios make the
// effect take 5 s) and acks only when the call says it is done: on a
// timeout the entry stays pending and the consumer tries again.
std::string RetryingPaymentScript(int key_ttl_ms) {
  return fmt::format(R"lua(
local function handle(w, e)
  local ok = w:effect(e.fields.event_id, "external",
                      {{entry = e, key = "pay:" .. e.fields.event_id, key_ttl_ms = {}, timeout_ms = 2000}})
  if ok then w:redis("XACK", w.stream, w.group, e.id) end
end
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    for _, e in ipairs(w:read("0")) do handle(w, e) end
    for _, e in ipairs(w:read(">", {{block_ms = 1000}})) do handle(w, e) end
  end
end
)lua",
                     key_ttl_ms);
}

// With a key that expires after 1 s, before the caller gives up, every
// retry charges again and times out again: the consumer never settles. It
// used to run into the step guard: exit 3, "not a verdict", no replay
// file. It is judged a virtual day after the faults stop: the duplicates
// it made are real, and the entry never leaves the PEL.
TEST(CliCommandsTest, AConsumerThatRetriesForeverIsJudgedNotCut) {
  ScopedTempRoot root;
  CommandOutput run = RunScriptScenario(root, "retry-forever", RetryingPaymentScript(1000),
                                        "[workload]\nworkers = 1\nevents = 1\n[timing]\neffect_ms = 5000\n"
                                        "[faults]\nkinds = []\n");
  EXPECT_EQ(run.exit_code, kExitVerdictMismatch) << run.output;
  EXPECT_TRUE(Contains(run.output, "duplicate order:1 [dedupe-expired]")) << run.output;
  EXPECT_FALSE(Contains(run.output, "harness limit")) << run.output;
  EXPECT_TRUE(Contains(run.output, "ms after the faults stopped, while the run was still acting without settling"))
      << run.output;
}

// With a key remembered for a minute the consumer is correct: its first
// try times out but went through, and the retry's remembered key is
// answered at once ("duplicate", ok = true), so it acks. It was judged
// `pel-leak` (a false verdict) while a remembered key took the effect's
// whole 5 s and timed out again, forever.
TEST(CliCommandsTest, ARetryAfterATimeoutLearnsFromTheKeyThatTheFirstTryWentThrough) {
  ScopedTempRoot root;
  CommandOutput run = RunScriptScenario(root, "retry-remembered", RetryingPaymentScript(60000),
                                        "[workload]\nworkers = 1\nevents = 2\n[timing]\neffect_ms = 5000\n"
                                        "[faults]\nkinds = []\n");
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_FALSE(Contains(run.output, "pel-leak")) << run.output;
  const std::string trace_file = root.path() + "/trace.txt";
  ASSERT_EQ(RunXackly({"run", "--scenario", root.path() + "/retry-remembered.toml", "--trace", trace_file}).exit_code,
            kExitOk);
  Result<std::string> trace = ReadFile(trace_file);
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(Contains(*trace, "apply order:2 key=pay:order:2 ttl=60000ms")) << *trace;
  EXPECT_TRUE(Contains(*trace, "ok (replayed: key already used, no effect)")) << *trace;
}

// A claim with JUSTID moves ownership and delivers nothing; the story says
// so, and tells a restart and a claim 20 s later at their own times (it
// used to say "20 s later w1.2 starts ... and claims 1-0").
TEST(CliCommandsTest, TheStoryTellsAJustIdClaimAsOwnershipOnlyAndARestartAtItsOwnTime) {
  ScopedTempRoot root;
  const std::string script = R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 20000, "0-0", "COUNT", 5, "JUSTID")
    for _, e in ipairs(w:read(">")) do
      if w:effect(e.fields.event_id, "external", {entry = e}) then w:redis("XACK", w.stream, w.group, e.id) end
    end
    w:sleep(4000)
  end
end
)lua";
  CommandOutput run = RunScriptScenario(root, "justid", script,
                                        "[workload]\nworkers = 1\nevents = 1\nrestart_naming = \"fresh\"\n"
                                        "[timing]\nrestart_delay_ms = 100\n"
                                        "[schedule]\nfaults = [\"crash w1 after-XREADGROUP #1\"]\n");
  EXPECT_EQ(run.exit_code, kExitVerdictMismatch) << run.output;
  EXPECT_TRUE(Contains(run.output, "w1.2 starts (replacing w1); 20 s later it takes over")) << run.output;
  EXPECT_TRUE(Contains(run.output, "without reading it (XAUTOCLAIM min-idle 20000 JUSTID: ownership only")) << run.output;
}

TEST(CliCommandsTest, ATamperedReplayFileIsCaughtByItsTraceHash) {
  ScopedTempRoot out;
  CommandOutput check = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "50", "--out", out.path(), "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  std::string file = out.path() + "/no-dedupe.replay.toml";
  std::string text = *ReadFile(file);
  text = std::regex_replace(text, std::regex("seed = [0-9]+"), "seed = 99");
  ASSERT_TRUE(WriteFileAtomically(file, text).ok());
  CommandOutput replay = RunXackly({"replay", file});
  EXPECT_EQ(replay.exit_code, kExitHarnessFailure) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "replay diverged")) << replay.output;
}

// An edited replay file (its crash moved to another point) still fails as
// a replay, but says what the edited run observed and how to judge the
// edit as a scenario of its own; `run` of it fails the same way.
TEST(CliCommandsTest, AnEditedReplayFileShowsItsOwnVerdictAndFails) {
  ScopedTempRoot out;
  CommandOutput check = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "50", "--out", out.path(), "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  std::string file = out.path() + "/no-dedupe.replay.toml";
  std::string text = *ReadFile(file);
  ASSERT_TRUE(Contains(text, "after-effect #1")) << text;
  text = std::regex_replace(text, std::regex("after-effect #1"), "after-read #1");
  ASSERT_TRUE(WriteFileAtomically(file, text).ok());
  for (const char* command : {"replay", "run"}) {
    CommandOutput run = std::string(command) == "run" ? RunXackly({"run", "--scenario", file})
                                                      : RunXackly({"replay", file});
    EXPECT_EQ(run.exit_code, kExitHarnessFailure) << command << run.output;
    EXPECT_TRUE(Contains(run.output, "the file was edited after it was recorded")) << run.output;
    EXPECT_TRUE(Contains(run.output, "delete its trace_hash line")) << run.output;
    EXPECT_TRUE(Contains(run.output, "observed ok (expected duplicate:crash:after-effect)")) << run.output;
    EXPECT_TRUE(Contains(run.output, "replay diverged: observed ok")) << run.output;
  }
}

// `run` without --out names its own command line as the way to reproduce
// it: a --seed given there overrides the file's, so `replay FILE` would run
// another schedule.
TEST(CliCommandsTest, ARunsReplayHintKeepsTheSeedItWasGiven) {
  CommandOutput run = RunXackly({"run", "--scenario", std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/fan-out-groups.toml",
                                 "--seed", "7"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "replay: xackly run --scenario ")) << run.output;
  EXPECT_TRUE(Contains(run.output, "fan-out-groups.toml --seed 7")) << run.output;
}

TEST(CliCommandsTest, TxnDedupePassesFiveHundredCasesOfItsFullFaultModel) {
  ScopedTempRoot dir;  // --out '' is refused (it used to mean "no files" silently)
  CommandOutput out = RunXackly({"check", "--protocol", "txn-dedupe", "--cases", "500", "--out", dir.path()});
  EXPECT_EQ(out.exit_code, kExitOk) << out.output;
  EXPECT_TRUE(Contains(out.output, "500 (0 violated)")) << out.output;
}

TEST(CliCommandsTest, AMalformedScenarioIsOneLineWithFileAndLineAndExitsTwo) {
  ScopedTempRoot dir;
  std::string file = dir.path() + "/bad.toml";
  ASSERT_TRUE(WriteFileAtomically(file, "protocol = \"txn-dedupe\"\n\n[workload]\nevents = -3\n").ok());
  for (const char* command : {"run", "check"}) {
    CommandOutput out = RunXackly({command, "--scenario", file});
    EXPECT_EQ(out.exit_code, kExitUsage) << out.output;
    EXPECT_TRUE(Contains(out.output, file + ":4:")) << out.output;
    EXPECT_TRUE(Contains(out.output, "workload.events")) << out.output;
  }
  CommandOutput replay = RunXackly({"replay", dir.path() + "/missing.toml"});
  EXPECT_EQ(replay.exit_code, kExitUsage) << replay.output;
}

TEST(CliCommandsTest, OutputWithoutATerminalHasNoControlCharacters) {
  ScopedTempRoot out;
  CommandOutput check = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "40", "--out", out.path()});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  ASSERT_TRUE(Contains(check.output, "no-dedupe")) << check.output;
  EXPECT_FALSE(HasControlCharacters(check.output)) << check.output;
  CommandOutput run = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.output;
  ASSERT_TRUE(Contains(run.output, "replay: ")) << run.output;
  EXPECT_FALSE(HasControlCharacters(run.output)) << run.output;
}

TEST(CliCommandsTest, RunFirstLineSaysSeedServerAndOptionsAndLastLineReplays) {
  CommandOutput out = RunXackly({"run", "--protocol", "no-dedupe", "--seed", "3"});
  std::string first = out.output.substr(0, out.output.find('\n'));
  EXPECT_TRUE(Contains(first, "seed 3")) << first;
  EXPECT_TRUE(Contains(first, "redis 7.")) << first;
  EXPECT_TRUE(Contains(first, "3 workers, 10 events")) << first;
  const std::string last = LastLine(out.output);
  EXPECT_TRUE(last.starts_with("replay: xackly run --protocol no-dedupe --seed 3")) << last;
}

// Issue #6: when check fails (an observed verdict differs from the
// expected one), the last line it prints is the command that replays it.
TEST(CliCommandsTest, AFailingCheckEndsWithItsReplayCommand) {
  ScopedTempRoot out;
  Result<std::string> catalog = ReadFile(std::string(XACKLY_SOURCE_DIR) + "/scenarios/catalog/no-dedupe.toml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  // The same protocol, wrongly expected to hold.
  std::string wrong = std::regex_replace(*catalog, std::regex("\nexpect = \"[^\"]*\""), "\nexpect = \"ok\"");
  ASSERT_NE(wrong, *catalog);
  std::string scenario = out.path() + "/no-dedupe-expected-ok.toml";
  ASSERT_TRUE(WriteFileAtomically(scenario, wrong).ok());
  CommandOutput check = RunXackly({"check", "--scenario", scenario, "--cases", "50", "--seed", "1",
                                   "--out", out.path(), "--quiet"});
  EXPECT_EQ(check.exit_code, kExitVerdictMismatch) << check.output;
  EXPECT_EQ(LastLine(check.output), "replay: xackly replay " + out.path() + "/no-dedupe.replay.toml")
      << check.output;
}

// Issue #6: check --all writes every report CI and people read.
TEST(CliCommandsTest, CheckAllWritesMarkdownHtmlJunitAndJson) {
  ScopedTempRoot out;
  // The scripts --all adds come from $XACKLY_SCENARIO_DIR: a small copy of
  // scenarios/ (a catalog script, an example, one library with its shared
  // handler) keeps this test fast; scripts_check_* and library_check_* run
  // the real directories.
  namespace fs = std::filesystem;
  const fs::path src = fs::path(XACKLY_SOURCE_DIR) / "scenarios";
  const fs::path root = fs::path(out.path()) / "scenarios";
  fs::create_directories(root / "catalog" / "scripts");
  fs::create_directories(root / "examples");
  fs::create_directories(root / "library");
  for (const char* f : {"catalog/scripts/no-dedupe.toml", "catalog/scripts/no-dedupe.lua", "catalog/scripts/catalog_loop.lua",
                        "examples/txn-ack-xdel.toml",
                        "examples/txn-ack-xdel.lua", "library/common.lua"}) {
    fs::copy_file(src / f, root / f);
  }
  fs::copy(src / "library" / "watermill", root / "library" / "watermill");
  // Its 10-minute claim threshold makes its cases (and their shrinking) the
  // slowest of the library; library_check_watermill runs it.
  fs::remove(root / "library" / "watermill" / "long-idle-plain.toml");
  ScopedEnv scenario_dir("XACKLY_SCENARIO_DIR", root.c_str());
  const std::string reports = out.path() + "/reports";
  // The formats are what this test is about, not how small a hit shrinks.
  CommandOutput check = RunXackly({"check", "--all", "--cases", "10", "--max-shrinks", "0", "--out", reports,
                                   "--format", "md,html,junit,json", "--quiet"});
  // 10 cases are too few to find every broken protocol's violation, so
  // some checks may mismatch; the run itself must not fail.
  ASSERT_TRUE(check.exit_code == kExitOk || check.exit_code == kExitVerdictMismatch) << check.output;
  for (const char* file : {"report.md", "report.html", "junit.xml", "report.json"}) {
    EXPECT_TRUE(std::filesystem::exists(reports + "/" + file)) << file;
  }
  EXPECT_FALSE(std::filesystem::exists(reports + "/report.txt"));  // not asked for
  std::string junit = *ReadFile(reports + "/junit.xml");
  size_t testcases = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos; at = junit.find("<testcase ", at + 1)) {
    ++testcases;
  }
  // One row per catalog protocol, then one per protocol script: the catalog
  // as scripts, the examples and the library pack.
  size_t scripts = 2;
  for (const auto& entry : fs::directory_iterator(root / "library" / "watermill")) {
    if (entry.path().extension() == ".toml") ++scripts;
  }
  EXPECT_EQ(testcases, Catalog().size() + scripts);
  EXPECT_NE(junit.find("no-dedupe-script"), std::string::npos);
  EXPECT_NE(junit.find("txn-ack-xdel"), std::string::npos);
  EXPECT_NE(junit.find("watermill"), std::string::npos);
  Result<report::Report> json = report::ParseJsonReport(*ReadFile(reports + "/report.json"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->schema, report::kSchemaVersion);
  EXPECT_EQ(json->all_matched, check.exit_code == kExitOk);
  ASSERT_EQ(json->checks.size(), Catalog().size() + scripts);
  for (const report::CheckReport& k : json->checks) {
    EXPECT_FALSE(k.observed.empty()) << k.name;
    if (k.fault_model != "none") {  // library rows found with no fault at all have no sites
      EXPECT_FALSE(k.fired_totals.empty() && k.never_fired.empty()) << k.name << " has no coverage";
    }
    // A counterexample, with its replay file on disk, only when a case
    // violated, and always when a broken protocol's violation was found.
    // (A violation of another cause than the expected one is counted but
    // not shrunk: 10 cases may show one.)
    if (k.counterexample) {
      EXPECT_GT(k.cases_failed, 0) << k.name;
    }
    if (k.matched && !k.expected.IsOk()) {
      EXPECT_TRUE(k.counterexample.has_value()) << k.name;
    }
    if (k.counterexample) {
      EXPECT_TRUE(std::filesystem::exists(k.counterexample->replay_file)) << k.counterexample->replay_file;
    }
  }
}

}  // namespace
}  // namespace xackly
