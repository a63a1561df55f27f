// A protocol script's fault sites come from what the script does: `check`
// probes it and draws its crashes at before-/after-CMD, after-VERB,
// after-effect and w:point names, and coverage lists exactly those sites
// (not the built-in protocol's after-read, mid-batch...).
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

// Reads its own pending entries first, then new ones; effect, then a point
// of its own, then XACK, with no dedupe: a crash at after-commit (or
// anywhere between the effect and the XACK) runs the effect twice.
constexpr const char* kScript = R"(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local id = "0"
  while true do
    local batch = w:read(id, {count = 5, block_ms = 1000})
    if id == "0" and #batch == 0 then id = ">" end
    for _, e in ipairs(batch) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:point("after-commit")
      w:redis("XACK", w.stream, w.group, e.id)
    end
  end
end
)";

constexpr const char* kScenario = R"(
name = "point-then-ack"
expect = "duplicate"
seed = 1

[workload]
producers = 1
workers = 2
events = 4

[protocol]
script = "point_then_ack.lua"

[faults]
kinds = ["crash"]
)";

TEST(ScriptSitesTest, CheckCrashesAtTheSitesTheScriptVisitsAndFindsTheDuplicate) {
  ScopedTempRoot dir;
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/point_then_ack.lua", kScript).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/point-then-ack.toml", kScenario).ok());
  CommandOutput check = RunXackly({"check", "--scenario", dir.path() + "/point-then-ack.toml", "--cases",
                                   "100", "--out", dir.path() + "/out", "--format", "json", "--quiet"});
  ASSERT_EQ(check.exit_code, kExitOk) << check.output;
  Result<report::Report> json = report::ParseJsonReport(*ReadFile(dir.path() + "/out/report.json"));
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  ASSERT_EQ(json->checks.size(), 1u);
  const report::CheckReport& k = json->checks[0];
  std::vector<std::string> sites = k.never_fired;
  for (const auto& [site, n] : k.fired_totals) sites.push_back(site);
  for (const char* visited : {"crash@after-commit", "crash@before-XACK", "crash@after-XACK", "crash@after-effect",
                              "crash@after-XREADGROUP"}) {
    EXPECT_NE(std::find(sites.begin(), sites.end(), visited), sites.end()) << visited << " in " << check.output;
  }
  for (const char* built_in : {"crash@after-read", "crash@mid-batch", "crash@after-dedupe-check"}) {
    EXPECT_EQ(std::find(sites.begin(), sites.end(), built_in), sites.end()) << built_in << " is not visited";
  }
  EXPECT_FALSE(k.fired_totals.empty());
  // Nothing the script visits is listed as a site it cannot visit.
  EXPECT_FALSE(Contains(check.output, "sites it cannot visit")) << check.output;
}

}  // namespace
}  // namespace xackly
