// A protocol script's swarm ranges come from the timers it uses (issue 15):
// check's probe runs read its claim threshold, key expiries and waits off
// its commands, and the fault phase, stalls and clock jumps are sized by
// them exactly as by a built-in protocol's declared timers. A script that
// claims after 10 minutes is broken by 10-minute stalls found at the
// default settings; one that claims after 50 ms gets stalls of that order.
#include <memory>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/exit_codes.h"
#include "harness/files.h"
#include "sim/script_world.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// No dedupe: every pass claims entries idle longer than params.min_idle_ms
// and handles them like new ones (effect, XACK). An entry is handled twice
// only when its worker is still busy with it (stalled, or a long effect)
// after the threshold and another worker claims it.
constexpr const char* kScript = R"(
function handle(w, entries)
  for _, e in ipairs(entries) do
    if not e.deleted then
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end

function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  while true do
    local r = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, params.min_idle_ms, "0-0", "COUNT", 10)
    if not xackly.is_error(r) then handle(w, xackly.entries(r[2])) end
    handle(w, w:read(">", {count = 10, block_ms = 1000}))
  end
end
)";

std::string Scenario(int64_t min_idle_ms) {
  return "name = \"claim-no-dedupe\"\n"
         "expect = \"duplicate\"\n"
         "[protocol]\nscript = \"claim_no_dedupe.lua\"\n"
         "[protocol.params]\nmin_idle_ms = " +
         std::to_string(min_idle_ms) +
         "\n"
         "[faults]\nkinds = [\"stall\"]\n";
}

struct Checked {
  CommandOutput out;
  // From the line check printed, "claim-no-dedupe: swarm: fault phase P ms;
  // ... stalls A..B ms, ..." (-1: not printed).
  int64_t fault_phase_ms = -1, stall_min_ms = -1, stall_max_ms = -1;
};

// `xackly check` of the script with `min_idle_ms`, at the default settings
// (workload bounds too: up to 3 workers and 8 events) but for shrinking:
// where the search reaches, not how small its hit shrinks.
Checked CheckScript(const ScopedTempRoot& dir, int64_t min_idle_ms) {
  std::string toml = dir.path() + "/claim-no-dedupe.toml";
  EXPECT_TRUE(WriteFileAtomically(dir.path() + "/claim_no_dedupe.lua", kScript).ok());
  EXPECT_TRUE(WriteFileAtomically(toml, Scenario(min_idle_ms)).ok());
  Checked c;
  c.out = RunXackly({"check", "--scenario", toml, "--out", dir.path() + "/out", "-j", "2", "--max-shrinks", "0"});
  std::smatch m;
  if (std::regex_search(c.out.output, m,
                        std::regex("claim-no-dedupe: swarm: fault phase ([0-9]+) ms;.* stalls ([0-9]+)\\.\\.([0-9]+) ms"))) {
    c.fault_phase_ms = std::stoll(m[1]);
    c.stall_min_ms = std::stoll(m[2]);
    c.stall_max_ms = std::stoll(m[3]);
  }
  return c;
}

TEST(ScriptRangesTest, ATenMinuteClaimThresholdIsReachedAndItsStallDuplicateFoundAtDefaults) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, 600000);
  EXPECT_EQ(c.out.exit_code, kExitOk) << "the duplicate must be found in the default 100 cases:\n" << c.out.output;
  EXPECT_TRUE(Contains(c.out.output, "first hit at case")) << c.out.output;
  // The ranges printed are the script's: two 10-minute claim cycles in the
  // fault phase, stalls from half the threshold to past a cycle.
  ASSERT_GE(c.fault_phase_ms, 0) << "check prints the ranges it used:\n" << c.out.output;
  EXPECT_GE(c.fault_phase_ms, 2 * 600000);
  EXPECT_LE(c.stall_min_ms, 600000);
  EXPECT_GT(c.stall_max_ms, 600000);
}

TEST(ScriptRangesTest, AFiftyMillisecondThresholdGetsShortStalls) {
  ScopedTempRoot dir;
  Checked c = CheckScript(dir, 50);
  EXPECT_EQ(c.out.exit_code, kExitOk) << c.out.output;
  ASSERT_GE(c.fault_phase_ms, 0) << c.out.output;
  EXPECT_LE(c.stall_min_ms, 50);
  EXPECT_GT(c.stall_max_ms, 50);
  EXPECT_LE(c.stall_max_ms, 2000) << "stalls of the script's scale (its 1 s block), not the built-in 15..65 s";
}

// The sizing itself, from timers as the probes report them: a stand-in
// script (never run).
class UnrunScript : public ProtocolScript {
 public:
  const std::string& path() const override { return path_; }
  bool Defines(ScriptRole role) const override { return role == ScriptRole::kConsumer; }
  Task<Status> Run(ScriptActorInfo, ScriptWorld&) const override { co_return Status::Ok(); }

 private:
  std::string path_ = "x.lua";
};

RunConfig ScriptBase() {
  RunConfig base;
  base.protocol.script_path = "x.lua";
  base.protocol.script = std::make_shared<const UnrunScript>();
  return base;
}

TEST(ScriptRangesTest, RangesFollowTheScriptsClaimThresholdTtlAndWaits) {
  RunConfig script = ScriptBase();
  SwarmRanges slow = SwarmRangesFor(script, CaseBounds{}, ScriptTimers{600000, 0, 1000});
  EXPECT_GE(slow.fault_phase_ms, 2 * (600000 + 1000)) << "two claim cycles with faults on";
  EXPECT_LE(slow.stall_min_ms, 600000);
  EXPECT_GT(slow.stall_max_ms, 600000) << "stalls straddle the claim threshold";
  EXPECT_GT(slow.effect_max_ms, 300000) << "effects of the threshold's scale";
  EXPECT_LT(slow.effect_max_ms, 600000) << "one duration for every effect of a case stays below the threshold";
  EXPECT_GT(slow.clock_jump_max_ms, 600000);

  SwarmRanges fast = SwarmRangesFor(script, CaseBounds{}, ScriptTimers{50, 0, 100});
  EXPECT_LE(fast.stall_min_ms, 50);
  EXPECT_GT(fast.stall_max_ms, 50);
  EXPECT_LT(fast.stall_max_ms, 1000) << "short stalls, not the built-in loop's 15..65 s";
  EXPECT_LT(fast.fault_phase_ms, 60000) << "no 75 s phase for a 50 ms threshold";

  // A 2-minute key expiry (dedupe record) expires inside the fault phase,
  // and clock jumps can cross it.
  SwarmRanges ttl = SwarmRangesFor(script, CaseBounds{}, ScriptTimers{50, 120000, 100});
  EXPECT_GE(ttl.fault_phase_ms, 120000);
  EXPECT_GE(ttl.clock_jump_max_ms, 120000);

  // The built-in loop's defaults do not leak into a script that never claims.
  SwarmRanges none = SwarmRangesFor(script, CaseBounds{}, ScriptTimers{0, 0, 200});
  EXPECT_LT(none.stall_max_ms, 15000) << "stall range " << none.stall_min_ms << ".." << none.stall_max_ms;
  EXPECT_FALSE(TimedProtocol(script, ScriptTimers{0, 0, 200}).loop.claim);
}

}  // namespace
}  // namespace xackly
