// Handler lanes ([workload] handlers, RunConfig::handlers): a worker
// process runs several handler lanes under one consumer name, and dies
// whole. A pool can race itself (its reclaim lane claims what another
// lane is still handling), which one lane at a time never does.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const std::string kExamples = std::string(XACKLY_SOURCE_DIR) + "/scenarios/examples/";

// The handler-pool example: one process with `handlers` lanes, whose first
// lane reclaims entries idle 1 s while an effect takes 3 s; `key`: the
// service dedupes by an idempotency key; `tail`: more of the file.
std::string Pool(int handlers, bool key, const std::string& expect, const std::string& tail) {
  return "name = \"pool\"\nseed = 1\nexpect = \"" + expect + "\"\n[workload]\nworkers = 1\nhandlers = " +
         std::to_string(handlers) + "\nevents = 4\n[timing]\neffect_ms = 3000\n[protocol]\nscript = \"" + kExamples +
         "handler-pool.lua\"\n[protocol.params]\nclaim_idle_ms = 1000\nkey = " + (key ? "true" : "false") + "\n" +
         tail;
}

Result<std::string> TraceOf(const ScopedTempRoot& dir, const std::string& scenario, CommandOutput* run) {
  const std::string file = dir.path() + "/pool.toml";
  if (Status s = WriteFileAtomically(file, scenario); !s.ok()) return s;
  *run = RunXackly({"run", "--scenario", file, "--trace", dir.path() + "/trace.txt"});
  return ReadFile(dir.path() + "/trace.txt");
}

// How many times `what` occurs in `text`.
size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HandlerPoolTest, ThePoolReclaimsWhatItsOwnOtherLaneIsStillHandlingWithoutAnyFault) {
  ScopedTempRoot dir;
  CommandOutput run;
  Result<std::string> trace = TraceOf(dir, Pool(3, false, "duplicate", "[faults]\nkinds = []\n"), &run);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "1 worker, 3 handler lanes per worker process (w1, w1#2..w1#3)")) << run.output;
  // Every lane reads under the process's consumer name.
  EXPECT_TRUE(Contains(*trace, "w1#2     XREADGROUP GROUP workers w1 COUNT 1")) << *trace;
  EXPECT_TRUE(Contains(*trace, "w1#3     XREADGROUP GROUP workers w1 COUNT 1")) << *trace;
  // The story names the lane that read it, not only the consumer name.
  EXPECT_TRUE(Contains(run.output, "w1#2 reads") || Contains(run.output, "w1#3 reads")) << run.output;
}

TEST(HandlerPoolTest, CheckFindsThePoolRaceAndItsCounterexampleSaysHowManyLanes) {
  ScopedTempRoot dir;
  CommandOutput check = RunXackly(
      {"check", "--scenario", kExamples + "handler-pool.toml", "--cases", "50", "--out", dir.path(), "--quiet"});
  EXPECT_EQ(check.exit_code, kExitOk) << check.output;
  EXPECT_TRUE(Contains(check.output, "minimal: 1 event, 1 worker x 3 lanes, ")) << check.output;
  // Every format's case line names the lanes; JSON carries them.
  for (const char* report : {"report.txt", "report.md", "junit.xml"}) {
    Result<std::string> text = ReadFile(dir.path() + "/" + report);
    ASSERT_TRUE(text.ok()) << report;
    EXPECT_TRUE(Contains(*text, "1 producer, 1 worker x 3 lanes, 1 event")) << report << "\n" << *text;
  }
  Result<std::string> json = ReadFile(dir.path() + "/report.json");
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(Contains(*json, "\"handlers\": 3")) << *json;
}

TEST(HandlerPoolTest, OneLaneAtATimeCannotRaceItself) {
  ScopedTempRoot dir;
  CommandOutput run;
  Result<std::string> trace = TraceOf(dir, Pool(1, false, "ok", "[faults]\nkinds = []\n"), &run);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_FALSE(Contains(*trace, "w1#2")) << *trace;
}

TEST(HandlerPoolTest, ACrashInOneLaneTakesTheWholeProcessDownAndBackUp) {
  ScopedTempRoot dir;
  CommandOutput run;
  Result<std::string> trace = TraceOf(
      dir, Pool(3, true, "ok", "[schedule]\nfaults = [\"crash w1 after-effect #1\"]\n"), &run);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(*trace, "!crash at after-effect")) << *trace;
  // The two other lanes go down with it, and all three start again.
  EXPECT_EQ(Occurrences(*trace, "!process down with "), 2u) << *trace;
  EXPECT_EQ(Occurrences(*trace, "starts again"), 3u) << *trace;
}

// A stall (a GC pause, a frozen VM) stops the process: while the lane that
// hit it waits, its other lanes take no step either.
TEST(HandlerPoolTest, AStallInOneLaneStopsTheWholeProcess) {
  ScopedTempRoot dir;
  CommandOutput run;
  Result<std::string> trace = TraceOf(
      dir, Pool(3, true, "ok", "[schedule]\nfaults = [\"stall w1 after-XREADGROUP #1 60000ms\"]\n"), &run);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  const size_t stall = trace->find("!stall at after-XREADGROUP for 60000 ms");
  ASSERT_NE(stall, std::string::npos) << *trace;
  EXPECT_EQ(Occurrences(*trace, "!process stalled with "), 2u) << *trace;
  // Nothing of the process happens inside the stall: the first worker line
  // after it is at least 60 s later.
  const int64_t stall_t = std::stoll(trace->substr(trace->rfind('\n', stall) + 1));
  const std::string after = trace->substr(trace->find('\n', trace->rfind("!process stalled with ")) + 1);
  bool seen = false;
  for (size_t line = 0; !seen && line < after.size(); line = after.find('\n', line) + 1) {
    const std::string text = after.substr(line, after.find('\n', line) - line);
    if (!Contains(text, " w1")) continue;
    EXPECT_GE(std::stoll(text), stall_t + 60000) << text << "\n" << *trace;
    seen = true;
  }
  EXPECT_TRUE(seen) << *trace;
}

// A scenario of one process with three lanes running `script`, no drawn
// faults, plus `tail`.
std::string LanesScript(const ScopedTempRoot& dir, const std::string& script, const std::string& tail) {
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/lanes.lua", script).ok());
  return "name = \"lanes\"\nseed = 1\n[workload]\nworkers = 1\nhandlers = 3\nevents = 1\n[protocol]\n"
         "script = \"lanes.lua\"\n[faults]\nkinds = []\n" + tail;
}

// The lanes of a process share its memory (one counter, counted by all
// three); the replacement after a crash starts from a fresh one.
TEST(HandlerPoolTest, LanesShareTheirProcesssMemoryAndAReplacementStartsAFreshOne) {
  ScopedTempRoot dir;
  const std::string script = R"(
function consumer(w)
  started = (started or 0) + 1
  w:redis("SET", "started:" .. w.incarnation .. ":" .. w.lane, started)
  while true do
    for _, e in ipairs(w:read(">", {count = 1, block_ms = 1000})) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)";
  CommandOutput run;
  Result<std::string> trace =
      TraceOf(dir, LanesScript(dir, script, "[schedule]\nfaults = [\"crash w1 after-SET #1\"]\n"), &run);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  // Lanes start in lane order: lane 2 counts the second start (in a memory
  // of its own it would count 1). Its SET is the process's first, where
  // the crash fires, taking lanes 1 and 3 down with it.
  EXPECT_TRUE(Contains(*trace, "w1#2     SET started:1:2 2 ")) << *trace;
  EXPECT_EQ(Occurrences(*trace, "!process down with w1#2 (crash at after-SET"), 2u) << *trace;
  for (const char* set : {"SET started:2:1 1 ", "SET started:2:2 2 ", "SET started:2:3 3 "}) {
    EXPECT_TRUE(Contains(*trace, set)) << set << "\n" << *trace;
  }
}

// Every actor of a pooled run sees its lane: the worker's lanes 1..3 of 3,
// the janitor and a script's producer lane 1 of 1 (they run no pool); w.slot
// is the process's, whichever lane.
TEST(HandlerPoolTest, EachActorSeesItsLaneAndHowManyItsProcessRuns) {
  ScopedTempRoot dir;
  const std::string script = R"(
local function tell(w) w:redis("SET", "lane:" .. w.slot .. ":" .. w.role, w.lane .. "/" .. w.lanes) end
function producer(w)
  tell(w)
  w:redis("XADD", w.stream, "*", "event_id", "order:1")
end
function janitor(w) tell(w) end
function consumer(w)
  tell(w)
  for _, e in ipairs(w:read(">", {count = 1, block_ms = 1000})) do
    w:effect(e.fields.event_id, "external", {entry = e})
    w:redis("XACK", w.stream, w.group, e.id)
  end
end
)";
  CommandOutput run;
  Result<std::string> trace = TraceOf(dir, LanesScript(dir, script, ""), &run);
  ASSERT_TRUE(trace.ok());
  for (const char* set : {"SET lane:w1:consumer 1/3 ", "SET lane:w1:consumer 2/3 ", "SET lane:w1:consumer 3/3 ",
                          "SET lane:j1:janitor 1/1 ", "SET lane:p1:producer 1/1 "}) {
    EXPECT_TRUE(Contains(*trace, set)) << set << "\n" << *trace;
  }
}

// A process crash takes every lane down, those that have finished their
// function too (a lane holding no step): the replacement starts them all
// again, and the run goes on to its verdict.
TEST(HandlerPoolTest, ACrashTakesDownALaneThatHadFinishedAndTheReplacementStartsItAgain) {
  ScopedTempRoot dir;
  const std::string script = PollingConsumer(R"(
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
)", R"(
  w:redis("INCR", "started:" .. w.lane)
  if w.lane ~= 1 then return end
)");
  const std::string file = dir.path() + "/lanes.toml";
  ASSERT_TRUE(WriteFileAtomically(file, LanesScript(dir, script, "[schedule]\nfaults = [\"crash w1 after-XACK #1\"]\n"))
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", file, "--trace", dir.path() + "/trace.txt"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/trace.txt");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(Occurrences(*trace, "!process down with "), 2u) << *trace;
  EXPECT_EQ(Occurrences(*trace, "INCR started:2"), 2u) << *trace;
  EXPECT_EQ(Occurrences(*trace, "INCR started:3"), 2u) << *trace;
}

// A lane waiting to reconnect (its reply was lost) when another lane stalls
// the process: it reconnects in the same process once the stall ends, the
// same incarnation as its sibling, not as a replacement process of its own.
TEST(HandlerPoolTest, ALaneWaitingToReconnectWhenItsProcessStallsReconnectsInTheSameProcessAfterTheStall) {
  ScopedTempRoot dir;
  const std::string script = R"(
function consumer(w)
  w:redis("INCR", "started:" .. w.incarnation .. ":" .. w.lane)
  if w.lane == 2 then w:redis("SET", "probe", "x") else w:sleep(10) w:redis("GET", "probe") end
  w:sleep(1000000)
end
)";
  CommandOutput run;
  Result<std::string> trace = TraceOf(
      dir, LanesScript(dir, script, "[schedule]\nfaults = [\"lost-reply w1 SET #1\", \"stall w1 before-GET #1 3000ms\"]\n"),
      &run);
  ASSERT_TRUE(trace.ok()) << run.output;
  ASSERT_TRUE(Contains(*trace, "w1#2     timeout: reconnects and restarts its loop in 1000 ms")) << *trace;
  const size_t stall = trace->find("!stall at before-GET for 3000 ms");
  ASSERT_NE(stall, std::string::npos) << *trace;
  const int64_t stalled_at = std::stoll(trace->substr(trace->rfind('\n', stall) + 1));
  EXPECT_TRUE(Contains(*trace, fmt::format("{:>8} w1#2     starts again", stalled_at + 3000))) << *trace;
  EXPECT_EQ(Occurrences(*trace, "INCR started:1:2"), 2u) << *trace;
  EXPECT_EQ(Occurrences(*trace, "INCR started:2:"), 0u) << *trace;
}

// Each lane calls the world with its own w: another lane's raises an error
// (exit 2, naming the line), and so does the w of a lane that has ended.
TEST(HandlerPoolTest, ALaneCannotCallTheWorldWithAnotherLanesW) {
  for (const auto& [script, message] : std::vector<std::pair<std::string, std::string>>{
           {"function consumer(w)\n  if w.lane == 1 then first = w end\n  w:sleep(10)\n"
            "  if w.lane == 2 then first:redis(\"PING\") end\n  w:sleep(1000000)\nend\n",
            "lanes.lua:4: w:redis was called from a coroutine the script created or from another lane"},
           {"function consumer(w)\n  if w.lane == 1 then first = w return end\n  w:sleep(10)\n"
            "  if w.lane == 2 then first:redis(\"PING\") end\n  w:sleep(1000000)\nend\n",
            "lanes.lua:4: w:redis: this w belongs to a lane of the process that has ended"}}) {
    ScopedTempRoot dir;
    CommandOutput run;
    (void)TraceOf(dir, LanesScript(dir, script, ""), &run);
    EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
    EXPECT_TRUE(Contains(run.output, message)) << run.output;
  }
}

// The dispatcher-pool example: a poller lane hands entries to two handler
// lanes through a queue in the process's memory; its reclaim queues again
// what still waits in that queue.
TEST(HandlerPoolTest, ADispatcherQueueInTheProcesssMemoryFeedsItsHandlerLanes) {
  ScopedTempRoot dir;
  CommandOutput run = RunXackly({"run", "--scenario", kExamples + "dispatcher-pool.toml", "--faults", "none", "--trace",
                                 dir.path() + "/trace.txt"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_TRUE(Contains(run.output, "observed duplicate (expected duplicate)")) << run.output;
  Result<std::string> trace = ReadFile(dir.path() + "/trace.txt");
  ASSERT_TRUE(trace.ok());
  // Only the poller reads; only the handlers run effects.
  EXPECT_TRUE(Contains(*trace, "w1       XREADGROUP")) << *trace;
  EXPECT_FALSE(Contains(*trace, "w1#2     XREADGROUP")) << *trace;
  EXPECT_TRUE(Contains(*trace, "w1#2     ext apply")) << *trace;
  EXPECT_TRUE(Contains(*trace, "w1#3     ext apply")) << *trace;
  EXPECT_FALSE(Contains(*trace, "w1       ext apply")) << *trace;
}

// A poller lane that claims an entry again while it waits in the process's
// queue (or runs in a handler lane) has not skipped it: the story tells the
// claims and the effects, never the duplicate branch of a single loop.
TEST(HandlerPoolTest, TheStoryDoesNotCallAClaimThatQueuesAnEntryASkip) {
  ScopedTempRoot dir;
  const std::string file = dir.path() + "/claims.toml";
  ASSERT_TRUE(WriteFileAtomically(file, "name = \"claims\"\nseed = 1\nexpect = \"duplicate\"\n[workload]\nworkers = 1\n"
                                        "handlers = 3\nevents = 1\n[timing]\neffect_ms = 3000\n[protocol]\nscript = \"" +
                                            kExamples + "dispatcher-pool.lua\"\n[protocol.params]\nkey = false\n"
                                            "claim_idle_ms = 1000\nclaim_every_ms = 500\n[faults]\nkinds = []\n")
                  .ok());
  CommandOutput run = RunXackly({"run", "--scenario", file});
  EXPECT_EQ(run.exit_code, kExitOk) << run.output;
  EXPECT_GE(Occurrences(run.output, "w1 claims 1-0"), 2u) << run.output;
  EXPECT_FALSE(Contains(run.output, "skips it without XACK")) << run.output;
}

TEST(HandlerPoolTest, TheKeyedPoolIsOkUnderTheDefaultFaults) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/pool.toml", Pool(3, true, "ok", "")).ok());
  CommandOutput check = RunXackly({"check", "--scenario", dir.path() + "/pool.toml", "--cases", "200", "-j", "1",
                                   "--out", dir.path() + "/out", "--quiet"});
  EXPECT_EQ(check.exit_code, kExitOk) << check.output;
}

TEST(HandlerPoolTest, LanesNeedAScriptAndFitTheActorLimit) {
  ScopedTempRoot dir;
  const std::string catalog = dir.path() + "/catalog.toml";
  ASSERT_TRUE(WriteFileAtomically(catalog, "protocol = \"txn-dedupe\"\n[workload]\nhandlers = 2\n").ok());
  CommandOutput run = RunXackly({"run", "--scenario", catalog});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "workload.handlers")) << run.output;
  EXPECT_TRUE(Contains(run.output, "need a Lua protocol script")) << run.output;

  const std::string big = dir.path() + "/big.toml";
  ASSERT_TRUE(WriteFileAtomically(big, Pool(40, true, "ok", "")).ok());
  std::string text = *ReadFile(big);
  text.replace(text.find("workers = 1"), 11, "workers = 2");
  ASSERT_TRUE(WriteFileAtomically(big, text).ok());
  run = RunXackly({"run", "--scenario", big});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.output;
  EXPECT_TRUE(Contains(run.output, "2 workers x 40 handlers")) << run.output;
}

// DotNetCore.CAP reads as one consumer named after its group in every
// instance: a re-read of that consumer's pending list is told by the name it
// reads as, not as the process's own list (which would hide that another
// instance's in-flight entries come back too).
TEST(HandlerPoolTest, AConsumerNameSharedByEveryProcessIsToldByThatName) {
  CommandOutput replay = RunXackly(
      {"replay", std::string(XACKLY_SOURCE_DIR) + "/scenarios/regressions/library/dotnetcore-cap-defaults-plain.toml"});
  EXPECT_EQ(replay.exit_code, kExitOk) << replay.output;
  EXPECT_TRUE(Contains(replay.output, "w1 starts again and re-reads the pending list of consumer workers, 1-0 "
                                      "(XREADGROUP 0; every process reading as workers shares that list"))
      << replay.output;
  EXPECT_FALSE(Contains(replay.output, "its process's pending")) << replay.output;
}

}  // namespace
}  // namespace xackly
