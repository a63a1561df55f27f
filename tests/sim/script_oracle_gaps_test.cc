// Known false verdicts of protocol scripts, as runnable reproductions. Each
// test states what a correct script should be judged; it is DISABLED while
// the harness gets it wrong (run it with --gtest_also_run_disabled_tests).
// Enable it with the fix.
#include <gtest/gtest.h>

#include "sim/lua/script_actor.h"
#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

class ScriptOracleGapTest : public ServerTest {};

// A failing event's payload is saved to a dead-letter stream of the
// script's own choice, then acked: nothing is lost. (The oracle once
// watched only events:dlq and said lost (acked-without-effect).)
TEST_F(ScriptOracleGapTest, DeadLettersToAStreamOfOnesChoiceAreNotLost) {
  constexpr const char* kScript = R"lua(
function consumer(w)
  while true do
    for _, e in ipairs(w:read(">", {block_ms = 1000})) do
      if not w:effect(e.fields.event_id, "external", {entry = e}) then
        w:redis("XADD", "orders:dead", "*", "source_id", e.id, "event_id", e.fields.event_id)
      end
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)lua";
  auto script = LuaScript::Load({"dead-letter.lua", kScript});
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  ProtocolDef p;
  p.name = "dead-letter-own-stream";
  p.script_path = "dead-letter.lua";
  p.script = *script;
  RunConfig c = RunConfig::For(p);
  c.workers = 1;
  c.events = 1;
  c.fault_schedule = std::vector<FaultSpec>{*ParseFaultSpec("poison event 1")};
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  Result<RunResult> r = RunSimulation(c, server);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->observed, "ok");
  // Without the XADD the same failing event is acked and gone: lost.
  std::string dropping = kScript;
  dropping.replace(dropping.find("w:redis(\"XADD\""), std::string("w:redis(\"XADD\"").size(), "w:redis(\"PING\"");  // an error reply, no XADD
  auto dropper = LuaScript::Load({"drop.lua", dropping});
  ASSERT_TRUE(dropper.ok()) << dropper.status().ToString();
  c.protocol.script = *dropper;
  Result<RunResult> lost = RunSimulation(c, server);
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_EQ(lost->observed, "lost");
}

}  // namespace
}  // namespace xackly
