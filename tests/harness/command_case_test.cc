// Redis reads command names in any case; so does xackly (sim/commands.h).
// A protocol script that spells its commands in lower case must be checked
// exactly like the same script in upper case: the same trace, the same
// verdicts, the same report, timeline glyphs included. (Reports once
// compared argv[0] with "XACK" case-sensitively, so a script's `xack` got
// the "other" glyph.)
#include <gtest/gtest.h>

#include <regex>

#include "harness/results.h"
#include "reports/report.h"
#include "sim/lua/script_actor.h"
#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// A no-dedupe consumer (effect, then XACK) that claims what others left,
// with a subcommand; its command names are lowered for the twin.
constexpr const char* kUpper = R"lua(
function consumer(w)
  while true do
    local claimed = w:redis("XAUTOCLAIM", w.stream, w.group, w.consumer, "5000", "0-0", "COUNT", "10")
    for _, e in ipairs(xackly.entries(claimed[2])) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
    end
    for _, e in ipairs(w:read(">", {block_ms = 1000})) do
      w:effect(e.fields.event_id, "external", {entry = e})
      w:redis("XACK", w.stream, w.group, e.id)
      w:redis("XGROUP", "CREATECONSUMER", w.stream, w.group, "spare")
    end
  end
end
)lua";

std::string Lowered(std::string source) {
  for (const char* verb : {"XAUTOCLAIM", "XACK", "XGROUP", "CREATECONSUMER"}) {
    std::string lower = verb;
    for (char& c : lower) c = static_cast<char>(c - 'A' + 'a');
    source = std::regex_replace(source, std::regex(std::string("\"") + verb + "\""), "\"" + lower + "\"");
  }
  return source;
}

Result<RunConfig> Config(const std::string& source) {
  auto script = LuaScript::Load({"consumer.lua", source});
  if (!script.ok()) return script.status();
  ProtocolDef p;
  p.name = "consumer";
  p.script_path = "consumer.lua";
  p.script = *script;
  RunConfig c = RunConfig::For(p);
  c.workers = 2;
  c.events = 4;
  c.seed = 3;
  c.keep_trace = true;  // the timeline needs it
  c.fault_schedule = std::vector<FaultSpec>{};
  for (const char* f : {"crash w1 after-effect #1", "lost-reply w2 XACK #1"}) c.fault_schedule->push_back(*ParseFaultSpec(f));
  return c;
}

class CommandCaseTest : public ServerTest {};

TEST_F(CommandCaseTest, ALowerCaseScriptRunsAndReportsLikeItsUpperCaseTwin) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string lower_source = Lowered(kUpper);
  ASSERT_NE(lower_source.find("\"xack\""), std::string::npos);
  Result<RunConfig> upper = Config(kUpper);
  Result<RunConfig> lower = Config(lower_source);
  ASSERT_TRUE(upper.ok() && lower.ok());
  Result<RunResult> a = RunSimulation(*upper, server);
  Result<RunResult> b = RunSimulation(*lower, server);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->observed, "duplicate");  // a control: the faults fired and mattered
  EXPECT_EQ(b->trace_hash, a->trace_hash);
  EXPECT_EQ(b->observed, a->observed);
  ASSERT_EQ(b->violations.size(), a->violations.size());
  for (size_t i = 0; i < a->violations.size(); ++i) {
    EXPECT_EQ(b->violations[i].cause, a->violations[i].cause);
    EXPECT_EQ(b->violations[i].detail, a->violations[i].detail);
  }
  EXPECT_EQ(b->fired, a->fired);
  // The reports, timeline glyphs included, are the same page.
  auto html = [](const RunConfig& c, const RunResult& r) {
    report::Report rep;
    rep.command = "run";
    rep.checks.push_back(SingleRunCheck("consumer", "", c, r, "consumer.toml", 0.0));
    return report::RenderHtml(rep);
  };
  const std::string page = html(*upper, *a);
  EXPECT_NE(page.find("class=\"step ack"), std::string::npos) << "the timeline draws XACK with its own glyph";
  EXPECT_EQ(html(*lower, *b), page);
}

}  // namespace
}  // namespace xackly
