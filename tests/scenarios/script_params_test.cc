// [protocol.params]: a protocol script's options, written in the scenario
// (docs/scripts.md), so one library script serves several settings
// (scenarios/library/). They must survive a replay file's round trip and
// reach the script as exactly the values the file wrote.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "sim/lua/script_actor.h"

namespace xackly {
namespace {

constexpr const char* kWithParams = R"(expect = "ok"
[protocol]
script = "consumer.lua"
[protocol.params]
handler = "idem"
claim_every_ms = 5000
auto_ack = true
odd = "a\"]]\n\\ é"
)";

TEST(ScriptParams, AreReadWrittenAndReadBackUnchanged) {
  Result<Scenario> s = ParseScenario(kWithParams, "p.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->script_params.size(), 4u);
  EXPECT_EQ(std::get<std::string>(s->script_params.at("handler")), "idem");
  EXPECT_EQ(std::get<int64_t>(s->script_params.at("claim_every_ms")), 5000);
  EXPECT_EQ(std::get<bool>(s->script_params.at("auto_ack")), true);
  Result<Scenario> again = ParseScenario(WriteScenario(*s), "p.replay.toml");
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << WriteScenario(*s);
  EXPECT_EQ(again->script_params, s->script_params) << "a replay file keeps the script's options";
}

TEST(ScriptParams, ReachTheScriptAsTheSameLuaValuesWithoutMovingItsLines) {
  Result<Scenario> s = ParseScenario(kWithParams, "p.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::string prelude = ScriptParamsPrelude(s->script_params);
  EXPECT_EQ(prelude.find('\n'), std::string::npos) << "line numbers of the script stay the same";
  // The script's top-level code runs once when it loads: a failed assert is a load error.
  std::string script = prelude +
                       "assert(params.handler == 'idem' and params.claim_every_ms == 5000 and "
                       "math.type(params.claim_every_ms) == 'integer' and params.auto_ack == true and "
                       "params.odd == 'a\"]]\\n\\\\ \\195\\169' and params.missing == nil)\n"
                       "function consumer(w) end\n"
                       "error('line 3')\n";
  auto loaded = LuaScript::Load({"p.lua", script});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("p.lua:3:"), std::string::npos)
      << "the asserts held and the error is on line 3: " << loaded.status().message();
  EXPECT_TRUE(LuaScript::Load({"p.lua", ScriptParamsPrelude({}) + "function consumer(w) end"}).ok())
      << "no params: an empty table";
}

TEST(ScriptIncludes, AreKeptByAReplayFileAndRunBeforeTheScriptWithTheirOwnLineNumbers) {
  Result<Scenario> s = ParseScenario("[protocol]\nscript = \"c.lua\"\ninclude = [\"../common.lua\", \"x.lua\"]\n",
                                     "p.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->script_includes, (std::vector<std::string>{"../common.lua", "x.lua"}));
  Result<Scenario> again = ParseScenario(WriteScenario(*s), "p.replay.toml");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->script_includes, s->script_includes);

  std::string common = "-- shared\nfunction twice(x)\n  return 2 * x\nend\n";
  std::string prelude = ScriptIncludePrelude("lib/common.lua", common);
  EXPECT_EQ(prelude.find('\n'), std::string::npos);
  EXPECT_TRUE(LuaScript::Load({"c.lua", prelude + "assert(twice(21) == 42)\nfunction consumer(w) end\n"}).ok())
      << "the include's globals are the script's";
  auto broken = LuaScript::Load({"c.lua", ScriptIncludePrelude("lib/common.lua", "\n\nerror('in common')\n") +
                                              "function consumer(w) end\n"});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("lib/common.lua:3:"), std::string::npos) << broken.status().message();
}

TEST(ScriptParams, BadParamsAreRefusedWithLineAndField) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"[protocol]\nsteps = [\"ack\"]\n[protocol.params]\nx = 1\n",
                "p.toml:3: protocol.params: expected only with protocol.script"},
           Case{"[protocol]\nscript = \"c.lua\"\n[protocol.params]\nx = 1.5\n",
                "p.toml:4: protocol.params.x: expected a string, an integer or a boolean, got 1.5"},
           Case{"[protocol]\nscript = \"c.lua\"\n[protocol.params]\nBad-Key = 1\n",
                "p.toml:4: protocol.params.Bad-Key: expected a key of 1..64 characters a-z 0-9 _"},
           Case{"[protocol]\nsteps = [\"ack\"]\ninclude = [\"a.lua\"]\n",
                "p.toml:3: protocol.include: expected only with protocol.script"},
           Case{"[protocol]\nscript = \"c.lua\"\ninclude = \"a.lua\"\n",
                "p.toml:3: protocol.include: expected an array of paths to Lua files"},
       }) {
    Result<Scenario> s = ParseScenario(c.text, "p.toml");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.status().message().rfind(c.message, 0), 0u) << s.status().message();
  }
}


// Issue 29, item 10: errors name the right file, line and field.
TEST(ScriptIncludes, ASyntaxErrorInAnIncludeNamesTheIncludeAndItsLine) {
  auto broken = LuaScript::Load({"c.lua", ScriptIncludePrelude("common.lua", "-- ok\nfunction f(\n") +
                                              "function consumer(w) end\n"});
  ASSERT_FALSE(broken.ok());
  const std::string m = broken.status().message();
  EXPECT_EQ(m.rfind("common.lua:3:", 0), 0u) << m;
  EXPECT_EQ(m.find("nil value"), std::string::npos) << m;
}

TEST(ScriptParams, AParamNamedLikeALuaKeywordReachesTheScript) {
  Result<Scenario> s = ParseScenario("[protocol]\nscript = \"c.lua\"\n[protocol.params]\nend = 1\nand = \"x\"\n",
                                     "p.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto script = LuaScript::Load({"c.lua", ScriptParamsPrelude(s->script_params) +
                                              "assert(params['end'] == 1 and params['and'] == 'x')\n"
                                              "function consumer(w) end\n"});
  EXPECT_TRUE(script.ok()) << script.status().ToString();
}

TEST(ScriptParams, OnlyLuaFilesCanBeAScriptOrAnInclude) {
  for (const char* text : {"[protocol]\nscript = \"/etc/shadow\"\n",
                           "[protocol]\nscript = \"c.lua\"\ninclude = [\"../secrets.txt\"]\n"}) {
    Result<Scenario> s = ParseScenario(text, "p.toml");
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(".lua"), std::string::npos) << s.status().message();
    EXPECT_TRUE(s.status().message().rfind("p.toml:2: protocol.script:", 0) == 0 ||
                s.status().message().rfind("p.toml:3: protocol.include:", 0) == 0)
        << s.status().message();
  }
}

TEST(ScriptIncludes, ACompileErrorNeverQuotesALongToken) {
  const std::string secret = "root:$y$j9T$Vq0dKxk3mW8pQpM2mZx1c0$ZL0bT5nq";
  auto script = LuaScript::Load({"x.lua", secret + ":19000:0:99999:7:::\n"});
  ASSERT_FALSE(script.ok());
  EXPECT_EQ(script.status().message().find("j9T"), std::string::npos) << script.status().message();
  EXPECT_EQ(script.status().message().rfind("x.lua:1:", 0), 0u) << script.status().message();
}

}  // namespace
}  // namespace xackly
