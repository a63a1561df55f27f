// The catalog as protocol scripts: every catalog protocol ships as a Lua
// script (scenarios/catalog/scripts/<name>.lua, run by <name>.toml), and
// this test keeps each script equal to its C++ form (sim/catalog.cc). The
// scripts share their worker loop (catalog_loop.lua, each scenario's
// include), so the test loads them as a user's scenario would. Both
// forms run the same runs (seed, workload, an explicit fault plan) on the
// same server, and must give
//   - the same trace, line for line, for every protocol but two (below),
//     after two renamings that are part of the script API, not differences
//     of behaviour:
//       * crash and stall sites: a script's are named by its commands
//         (after-XACK, after-INSERT, after-COMMIT...), the catalog's by its
//         typed steps (after-ack, after-mark, after-commit...);
//       * the two SQL dedupe statements: the catalog's typed steps show
//         their value inline and count "1 row", a script's statement shows
//         `?` with its parameters and counts "1 changed" / "1 rows";
//     The oracle's final reads of a script run also read the Redis effect
//     ledger (a script may write it: w:effect(.., "redis") or its own
//     EVAL), one line more than a catalog protocol without Redis effects.
//   - the same verdict, violation by violation (kind, cause, event).
// lua-dedupe and short-ttl-dedupe are verdict- and cause-identical only:
// the catalog's EVAL is compiled from its step list (CompileAtomicScript:
// a poison flag and a TTL argument) and keeps the worker busy for effect_ms
// (the effect runs inside it), while a script writes its own, shorter EVAL
// and a w:redis call takes no virtual time (only w:effect, w:sleep and
// w:park do): the scripts' timings, and so their traces, differ.
// short-ttl-dedupe's violations differ in their cause: the catalog's
// oracle knows the TTL its typed step sets and says dedupe-expired; for a
// script it does not observe TTLs yet (docs/scripts.md, "What the oracle
// sees") and names the crash before the redelivery (crash:after-EVAL).
// For both, the same verdict (kinds, and causes but there): which event
// shows it follows the timing.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>

#include "harness/scenario_files.h"
#include "scenarios/scenario.h"
#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const std::filesystem::path kScriptsDir = std::filesystem::path(XACKLY_SOURCE_DIR) / "scenarios/catalog/scripts";

// The two protocols whose traces must differ (see the top of this file).
bool SameTraceExpected(const std::string& name) {
  return name != "lua-dedupe" && name != "short-ttl-dedupe";
}

// The script site that names a catalog crash point ("" when none does: a
// script's reads of own pending and of new entries are both after-XREADGROUP,
// so their visit counts differ from after-read's).
std::string ScriptSite(const ProtocolDef& p, const std::string& point) {
  bool redis = p.dedupe == DedupeStore::kRedis;
  static const std::map<std::string, std::string> kSame = {
      {"after-ack", "after-XACK"},         {"after-commit", "after-COMMIT"},
      {"after-eval", "after-EVAL"},        {"after-claim", "after-XAUTOCLAIM"},
      {"after-dead-letter", "after-XADD"}, {"after-effect", "after-effect"},
      {"mid-batch", "mid-batch"}};
  if (point == "after-mark") return redis ? "after-SET" : "after-INSERT";
  if (point == "after-dedupe-check") return redis ? "after-EXISTS" : "after-SELECT";
  auto it = kSame.find(point);
  return it == kSame.end() ? "" : it->second;
}

// An explicit fault plan in the catalog's site names, for `workers`
// workers: crashes at two of the protocol's own crash points, a stall, a
// lost reply and a lost request, a store outage, a clock jump, and the
// protocol's poison and restarts.
std::vector<FaultSpec> FaultPlanFor(const ProtocolDef& p, int workers) {
  std::vector<std::string> points;
  for (const std::string& point : CrashPointsOf(p)) {
    bool in_model = p.faults.crash_points.empty() ||
                    std::find(p.faults.crash_points.begin(), p.faults.crash_points.end(), point) !=
                        p.faults.crash_points.end();
    if (in_model && !ScriptSite(p, point).empty()) points.push_back(point);
  }
  std::vector<std::string> text;
  std::string last = "w" + std::to_string(workers);
  if (!points.empty()) text.push_back("crash w1 " + points[0] + " #1");
  if (points.size() > 1) text.push_back("crash " + last + " " + points[1] + " #2");
  text.push_back("stall " + last + " after-effect #3 40000ms");
  text.push_back("lost-reply w1 XACK #2");
  text.push_back("lost-request " + last + " XREADGROUP #4");
  text.push_back("store-outage 500ms @20ms");  // every failure branch of the business store
  text.push_back("clock-jump +40000ms @600ms");  // idle entries become claimable
  if (p.faults.Has(FaultKind::kPoison)) text.push_back("poison event 2");
  if (p.faults.Has(FaultKind::kRestart)) text.push_back("restart @40ms");
  std::vector<FaultSpec> plan;
  for (const std::string& t : text) {
    Result<FaultSpec> spec = ParseFaultSpec(t);
    EXPECT_TRUE(spec.ok()) << t;
    if (spec.ok()) plan.push_back(*spec);
  }
  return plan;
}

std::vector<FaultSpec> InScriptNames(const ProtocolDef& p, std::vector<FaultSpec> plan) {
  for (FaultSpec& f : plan) {
    if (f.kind == FaultKind::kCrash || f.kind == FaultKind::kStall) f.site = ScriptSite(p, f.site);
  }
  return plan;
}

// A script's trace line in the catalog's words (the renamings at the top).
std::string InCatalogWords(const ProtocolDef& p, std::string line) {
  for (const std::string& point : CrashPointsOf(p)) {
    std::string site = ScriptSite(p, point);
    if (site.empty() || site == point) continue;
    for (const char* what : {"!crash at ", "!stall at "}) {
      std::string from = what + site + " ";
      if (size_t at = line.find(from); at != std::string::npos) line.replace(at, from.size(), what + point + " ");
    }
  }
  if (line.find(" processed") == std::string::npos) return line;
  static const std::regex kInsert(R"(VALUES \(\?\) \['([^']*)'\])");
  static const std::regex kSelect(R"(event_id = \? \['([^']*)'\])");
  line = std::regex_replace(line, kInsert, "VALUES ('$1')");
  line = std::regex_replace(line, kSelect, "event_id = '$1'");
  static const std::regex kCount(R"( -> (\d) (changed|rows)$)");
  std::smatch m;
  if (std::regex_search(line, m, kCount)) {
    line = m.prefix().str() + " -> " + m[1].str() + (m[1].str() == "1" ? " row" : " rows");
  }
  return line;
}

bool SameCauseExpected(const std::string& name) { return name != "short-ttl-dedupe"; }

// "kind:cause event" of each violation, without what is not compared; as a
// set (the same kind and cause for several events counts once without them).
std::vector<std::string> Violations(const RunResult& r, bool with_cause, bool with_event) {
  std::vector<std::string> out;
  for (const Violation& v : r.violations) {
    out.push_back(std::string(VerdictKindName(v.kind)) + (with_cause ? ":" + v.cause : "") +
                  (with_event ? " " + v.event_id : ""));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class CatalogScriptTest : public ServerTest, public ::testing::WithParamInterface<std::string> {
 protected:
  RunResult Run(const RunConfig& config) {
    Status valid = ValidateRunConfig(config);
    EXPECT_TRUE(valid.ok()) << valid.ToString();
    RedisServer*& server = servers_[static_cast<int>(config.persistence)];
    if (server == nullptr) server = StartServer(config.persistence);
    if (server == nullptr) return {};
    Result<RunResult> r = RunSimulation(config, server);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : RunResult{};
  }
  RedisServer* servers_[3] = {nullptr, nullptr, nullptr};
};

TEST_P(CatalogScriptTest, ScriptAndCppFormGiveTheSameRuns) {
  const ProtocolDef* p = FindProtocol(GetParam());
  ASSERT_NE(p, nullptr);
  // The shipped scenario file: the catalog protocol as its base, its
  // expectation, and a script that loads.
  std::filesystem::path toml = kScriptsDir / (p->name + ".toml");
  Result<Scenario> scenario = LoadScenarioFile(toml.string());  // the script with its include
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  const RunConfig& file = scenario->config;
  if (SameCauseExpected(p->name)) {
    EXPECT_EQ(file.expected.ToString(), p->expected.ToString()) << toml;
  } else {
    EXPECT_EQ(file.expected.ToString(), VerdictKindName(p->expected.Alternatives()[0][0].kind)) << toml;
  }
  EXPECT_EQ(file.protocol.loop, p->loop);
  EXPECT_EQ(file.protocol.janitor, p->janitor);
  EXPECT_EQ(file.naming, p->naming);
  EXPECT_EQ(file.persistence, p->persistence);
  EXPECT_EQ(file.faults.kinds, p->faults.kinds);
  for (const std::string& point : p->faults.crash_points) {  // the same model, in script names
    std::string site = ScriptSite(*p, point);
    if (site.empty()) site = "after-XREADGROUP";
    EXPECT_NE(std::find(file.faults.crash_points.begin(), file.faults.crash_points.end(), site),
              file.faults.crash_points.end())
        << toml << ": " << point << " as " << site;
  }
  ASSERT_NE(file.protocol.script, nullptr) << toml;

  const bool same_trace = SameTraceExpected(p->name);
  for (uint64_t seed : {1, 2}) {
    for (auto [workers, events] : {std::pair{1, 3}, std::pair{3, 8}}) {
      for (bool faults : {false, true}) {
        RunConfig cpp = RunConfig::For(*p);
        cpp.seed = seed;
        cpp.workers = workers;
        cpp.events = events;
        cpp.keep_trace = true;
        cpp.fault_schedule = faults ? FaultPlanFor(*p, workers) : std::vector<FaultSpec>{};
        RunConfig lua_form = cpp;
        lua_form.protocol.cpp_handler = nullptr;
        lua_form.protocol.script = file.protocol.script;
        lua_form.protocol.script_path = file.protocol.script_path;
        lua_form.fault_schedule = InScriptNames(*p, *cpp.fault_schedule);
        // A script's liveness waits out kScriptQuietFloorMs; the C++ form
        // knows its timers. The same window for both keeps them comparable.
        cpp.timing.quiet_window_ms = lua_form.timing.quiet_window_ms = kScriptQuietFloorMs;
        std::string what = p->name + " seed " + std::to_string(seed) + ", " + std::to_string(workers) +
                           " workers, " + std::to_string(events) + " events" +
                           (faults ? ", faults" : ", no faults");
        RunResult a = Run(cpp);
        RunResult b = Run(lua_form);
        if (HasFailure()) return;
        EXPECT_EQ(a.observed, b.observed) << what;
        const bool cause = SameCauseExpected(p->name);
        EXPECT_EQ(Violations(a, cause, same_trace), Violations(b, cause, same_trace)) << what;
        if (!same_trace) continue;
        if (p->effect != EffectSink::kRedis && !b.trace.empty() &&
            Trace::Render(b.trace.back()).find("oracle   LRANGE xackly:effects") != std::string::npos) {
          b.trace.pop_back();  // the final read of the Redis effect ledger (above)
        }
        size_t n = std::min(a.trace.size(), b.trace.size());
        size_t first_diff = n;
        for (size_t i = 0; i < n && first_diff == n; ++i) {
          if (Trace::Render(a.trace[i]) != InCatalogWords(*p, Trace::Render(b.trace[i]))) first_diff = i;
        }
        if (first_diff < n || a.trace.size() != b.trace.size()) {
          std::string context;
          for (size_t i = first_diff >= 3 ? first_diff - 3 : 0; i < std::min(n, first_diff + 3); ++i) {
            context += "  c++:    " + Trace::Render(a.trace[i]) + "\n  script: " +
                       InCatalogWords(*p, Trace::Render(b.trace[i])) + "\n";
          }
          ADD_FAILURE() << what << ": traces differ at line " << first_diff << " of " << a.trace.size()
                        << " (c++) / " << b.trace.size() << " (script)\n"
                        << context;
        }
      }
    }
  }
}

std::vector<std::string> CatalogNamesList() {
  std::vector<std::string> names;
  for (const ProtocolDef& p : Catalog()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Catalog, CatalogScriptTest, ::testing::ValuesIn(CatalogNamesList()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace xackly
