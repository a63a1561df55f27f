// check's probe runs (WithVisitedSites) of a protocol whose fault sites and
// timers are known only once it runs: a protocol script, or a C++ handler
// of an embedding test. What the probes miss, the search never draws: a
// claim timer the probes never saw sizes no stall, a site they never
// visited gets no crash. Each test below is a protocol a new user wrote
// whose bug the default search missed because of one such blind spot.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/case_pool.h"
#include "harness/check.h"
#include "sim/lua/script_actor.h"
#include "sim/worker.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

RunConfig ScriptConfig(const char* name, const char* text) {
  auto script = LuaScript::Load({std::string(name) + ".lua", text});
  EXPECT_TRUE(script.ok()) << script.status().ToString();
  ProtocolDef p;
  p.name = name;
  p.script_path = std::string(name) + ".lua";
  if (script.ok()) p.script = *script;
  RunConfig c = RunConfig::For(p);
  c.faults.kinds = {FaultKind::kCrash, FaultKind::kLostReply};
  return c;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The claim loop first runs 3 s after start-up, long after a small case's
// events are done: a probe that ended when the run settled never saw its
// 15 s threshold, and the search was sized for a 2 s protocol.
TEST(ProbeTest, AClaimLoopThatFirstRunsAfterTheWorkIsDoneShowsItsThreshold) {
  RunConfig c = ScriptConfig("late-claim", R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local next_claim = w:now() + 3000
  while true do
    if w:now() >= next_claim then
      w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, 15000, "0-0", "COUNT", 10)
      next_claim = w:now() + 3000
    end
    for _, e in ipairs(w:read(">", {block_ms = math.max(1, next_claim - w:now())})) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua");
  CasePool pool(1, TestServerOptions());
  Result<ProbedConfig> probed = WithVisitedSites(c, pool, 1);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  EXPECT_EQ(probed->timers.claim_threshold_ms, 15000);
  EXPECT_TRUE(Has(probed->config.faults.crash_points, "after-XAUTOCLAIM"));
  SwarmRanges r = SwarmRangesFor(probed->config, CaseBounds{}, probed->timers);
  EXPECT_GE(r.fault_phase_ms, 2 * 15000) << SwarmRangesText(r);
  EXPECT_GT(r.stall_max_ms, 15000) << SwarmRangesText(r);
}

// The dedupe record's expiry is set inside the script's own EVAL, where no
// command shows it: the probe reads the TTLs of the keys the EVAL names.
TEST(ProbeTest, AnExpirySetInsideTheScriptsOwnEvalIsSeen) {
  RunConfig c = ScriptConfig("eval-ttl", R"lua(
local ONCE = "if redis.call('SET', KEYS[1], 1, 'NX', 'PX', 60000) then " ..
             "redis.call('RPUSH', KEYS[2], ARGV[1]) end return redis.call('XACK', KEYS[3], ARGV[2], ARGV[3])"
function consumer(w)
  while true do
    for _, e in ipairs(w:read(">", {block_ms = 1000})) do
      local record = e.fields.event_id .. "|" .. e.id .. "|" .. w.consumer .. "|" .. w:now()
      w:redis("EVAL", ONCE, 3, "done:" .. e.fields.event_id, w.effects_key, w.stream, record, w.group, e.id)
    end
  end
end
)lua");
  CasePool pool(1, TestServerOptions());
  Result<ProbedConfig> probed = WithVisitedSites(c, pool, 1);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  EXPECT_EQ(probed->timers.key_expiry_ms, 60000);
  // Restarts and stalls reach past it: a worker can be away longer than
  // its dedupe record lives.
  SwarmRanges r = SwarmRangesFor(probed->config, CaseBounds{}, probed->timers);
  EXPECT_GT(r.restart_delay_max_ms, 60000) << SwarmRangesText(r);
  EXPECT_GT(r.stall_max_ms, 60000) << SwarmRangesText(r);
  EXPECT_GE(r.fault_phase_ms, 60000) << SwarmRangesText(r);
}

// Lost requests and replies go to every command the script sends that
// changes something, whatever it is (here SET NX and HSET), not only to
// XACK/XADD/COMMIT/EVAL; reads get none (a lost read is a reconnect).
TEST(ProbeTest, LostFaultsGoToEveryVisitedCommandThatChangesState) {
  RunConfig c = ScriptConfig("own-commands", R"lua(
function consumer(w)
  while true do
    for _, e in ipairs(w:read(">", {block_ms = 1000})) do
      if w:redis("SET", "lock:" .. e.fields.event_id, w.consumer, "NX", "PX", 30000) then
        w:redis("GET", "lock:" .. e.fields.event_id)
        w:effect(e.fields.event_id, "external", {entry = e})
        w:redis("HSET", "done", e.fields.event_id, 1)
      end
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua");
  CasePool pool(1, TestServerOptions());
  Result<ProbedConfig> probed = WithVisitedSites(c, pool, 1);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  const std::vector<std::string>& lost = probed->config.faults.lost_sites;
  EXPECT_TRUE(Has(lost, "SET")) << probed->config.faults.ToString();
  EXPECT_TRUE(Has(lost, "HSET")) << probed->config.faults.ToString();
  EXPECT_TRUE(Has(lost, "XACK")) << probed->config.faults.ToString();
  EXPECT_TRUE(Has(lost, "XREADGROUP")) << probed->config.faults.ToString();
  EXPECT_FALSE(Has(lost, "GET")) << probed->config.faults.ToString();
}

// An embedding test's C++ handler does more than its `steps` say (a SQL
// transaction with a done-record, the steps only "effect, ack"): its crash
// points come from what it does, so a crash between COMMIT and XACK is drawn.
Task<bool> TxnHandlerWithStaleSteps(Worker& w, const StreamEntry& e) {
  bool begun = co_await w.Begin();
  if (!begun) co_return false;
  Dedupe d = co_await w.MarkDone(e);
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  bool committed = co_await w.Commit();
  if (!committed) co_return false;
  co_await w.Ack(e.id);
  co_return true;
}

TEST(ProbeTest, ACppHandlersCrashPointsComeFromWhatItDoesNotFromItsSteps) {
  ProtocolDef p = *FindProtocol("txn-dedupe");
  p.name = "my-txn";
  p.steps = {HandlerOp::kEffect, HandlerOp::kAck};
  p.cpp_handler = &TxnHandlerWithStaleSteps;
  p.faults.crash_points.clear();
  ASSERT_TRUE(SitesFoundByRunning(p));
  ASSERT_FALSE(SitesFoundByRunning(*FindProtocol("txn-dedupe"))) << "the catalog's own handler keeps its steps";
  RunConfig c = RunConfig::For(p);
  EXPECT_TRUE(c.faults.crash_points.empty()) << "no sites from stale steps before the probes";
  EXPECT_TRUE(UnreachableSites(c).empty());
  CasePool pool(1, TestServerOptions());
  Result<ProbedConfig> probed = WithVisitedSites(c, pool, 1);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  EXPECT_TRUE(Has(probed->config.faults.crash_points, "after-commit")) << probed->config.faults.ToString();
  EXPECT_TRUE(Has(probed->config.faults.crash_points, "after-mark")) << probed->config.faults.ToString();
}

}  // namespace
}  // namespace xackly
