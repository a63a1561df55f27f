// The coroutine bridge: each w: call is exactly one world call, in order,
// with the script's arguments; the script resumes with the result as a Lua
// value (errors as values); script errors come back as "file:line: message
// (actor, step)" and a script that fails to load runs nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <lua.hpp>

#include "sim/lua/lua_values.h"
#include "tests/sim/lua/fake_world.h"

namespace xackly {
namespace {

using Log = std::vector<std::string>;

Reply ReadReply(std::vector<Reply> rows) {
  return Reply::Array({Reply::Array({Reply::String("events"), Reply::Array(std::move(rows))})});
}
Reply Row(const std::string& id, const std::string& event) {
  return Reply::Array({Reply::String(id), Reply::Array({Reply::String("event_id"), Reply::String(event)})});
}

// The issue's example consumer, bounded to one read so that it ends.
constexpr const char* kExample = R"lua(
function consumer(w)
  w:redis("XGROUP", "CREATE", w.stream, w.group, "0", "MKSTREAM")
  local batch = w:read(">", {count = 10, block_ms = 2000})
  for _, e in ipairs(batch) do
    w:sql("BEGIN")
    if w:sql("INSERT OR IGNORE INTO processed VALUES (?)", e.id).changes == 1 then
      w:effect(e.fields.event_id, "sql", {entry = e})
    end
    w:sql("COMMIT")
    w:redis("XACK", w.stream, w.group, e.id)
    w:point("after-ack")
    w:redis("XDEL", w.stream, e.id)
  end
end
)lua";

TEST(ScriptActorTest, EachCallIsOneWorldCallInOrder) {
  FakeWorld world;
  world.redis = [](const std::vector<std::string>& argv) {
    if (argv[0] == "XGROUP") return Reply::Error("BUSYGROUP Consumer Group name already exists");
    if (argv[0] == "XREADGROUP") return ReadReply({Row("1-0", "order:1"), Row("2-0", "order:2")});
    return Reply::Integer(1);
  };
  int inserts = 0;
  world.sql = [&](const std::string& stmt, const std::vector<SqlValue>&) {
    SqlResult r;
    if (stmt.rfind("INSERT", 0) == 0) r.changes = ++inserts == 1 ? 1 : 0;  // order:2 is a duplicate
    return r;
  };
  Status s = RunConsumer(kExample, world);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Log want = {
      "redis XGROUP CREATE events workers 0 MKSTREAM",
      "redis XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >",
      "sql BEGIN",
      "sql INSERT OR IGNORE INTO processed VALUES (?) '1-0'",
      "effect order:1 sql entry=1-0 key= ttl=0 duration=-1 timeout=0",
      "sql COMMIT",
      "redis XACK events workers 1-0",
      "point after-ack",
      "redis XDEL events 1-0",
      "sql BEGIN",
      "sql INSERT OR IGNORE INTO processed VALUES (?) '2-0'",
      "sql COMMIT",
      "redis XACK events workers 2-0",
      "point after-ack",
      "redis XDEL events 2-0",
  };
  EXPECT_EQ(world.log, want);
}

TEST(ScriptActorTest, RepliesReachTheScriptAsValues) {
  FakeWorld world;
  world.redis = [](const std::vector<std::string>& argv) {
    const std::string& c = argv[1];
    if (c == "nil") return Reply::Nil();
    if (c == "int") return Reply::Integer(-7);
    if (c == "status") return Reply::StatusText("QUEUED");
    if (c == "err") return Reply::Error("NOGROUP No such key");
    // XAUTOCLAIM's shape, with a deleted id
    return Reply::Array({Reply::String("0-0"),
                         Reply::Array({Row("3-0", "order:3"),
                                       Reply::Array({Reply::String("4-0"), Reply::Nil()})}),
                         Reply::Array({Reply::String("5-0")})});
  };
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  print(w:redis("X", "nil"), math.type(w:redis("X", "int")), w:redis("X", "int"), w:redis("X", "status"))
  local e = w:redis("X", "err")
  print(type(e), e.err, xackly.is_error(e), xackly.is_error("OK"))
  local c = w:redis("X", "array")
  local entries = xackly.entries(c[2])
  print(c[1], #entries, entries[1].id, entries[1].fields.event_id, entries[2].id, entries[2].deleted, c[3][1])
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(printed.size(), 3u);
  EXPECT_EQ(printed[0], "false\tinteger\t-7\tQUEUED");
  EXPECT_EQ(printed[1], "table\tNOGROUP No such key\ttrue\tfalse");
  EXPECT_EQ(printed[2], "0-0\t2\t3-0\torder:3\t4-0\ttrue\t5-0");
}

// An entry's fields are its name-value pairs, each name once: a value is
// never a field name (a flat [f1, v1, f2, v2] read a pair at a time).
TEST(ScriptActorTest, AnEntrysFieldsAreItsNameValuePairsAndNothingElse) {
  FakeWorld world;
  world.redis = [&](const std::vector<std::string>&) {
    return ReadReply({Reply::Array({Reply::String("1-0"),
                                    Reply::Array({Reply::String("event_id"), Reply::String("order:1"),
                                                  Reply::String("attempt"), Reply::String("2"),
                                                  Reply::String("note"), Reply::String("x")})})});
  };
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local batch = w:read(">")
  local names = {}
  for name, value in pairs(batch[1].fields) do names[#names + 1] = name .. "=" .. value end
  table.sort(names)
  print(#names, table.concat(names, " "))
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(printed.size(), 1u);
  EXPECT_EQ(printed[0], "3\tattempt=2 event_id=order:1 note=x");
}

TEST(ScriptActorTest, ReadGivesEntriesDeletedPayloadsAndErrorsAsValues) {
  FakeWorld world;
  int reads = 0;
  world.redis = [&](const std::vector<std::string>&) {
    if (++reads == 1) {
      return ReadReply({Row("1-0", "order:1"), Reply::Array({Reply::String("2-0"), Reply::Nil()})});
    }
    return Reply::Error("NOGROUP No such key 'events' or consumer group 'workers'");
  };
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local batch, err = w:read("0", {stream = "other", group = "g2", consumer = "shared", count = 2})
  print(#batch, batch[1].id, batch[1].stream, batch[1].fields.event_id, batch[2].deleted, err)
  local none, err2 = w:read(">")
  print(#none, err2)
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(world.log[0], "redis XREADGROUP GROUP g2 shared COUNT 2 STREAMS other 0");
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_EQ(printed[0], "2\t1-0\tevents\torder:1\ttrue\tnil");
  EXPECT_EQ(printed[1], "0\tNOGROUP No such key 'events' or consumer group 'workers'");
}

TEST(ScriptActorTest, BlockingReadParksInsteadOfSendingBlock) {
  for (bool woken : {false, true}) {
    FakeWorld world;
    world.park_woken = woken;
    int reads = 0;
    world.redis = [&](const std::vector<std::string>&) {
      return ++reads == 1 ? Reply::Nil() : ReadReply({Row("9-0", "order:9")});
    };
    std::vector<std::string> printed;
    Status s = RunConsumer("function consumer(w) print(#w:read('>', {block_ms = 2000})) end", world,
                           {}, 42, &printed);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Log want = {"redis XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "park 2000"};
    if (woken) want.push_back(want[0]);  // woken by new entries: read again, once
    EXPECT_EQ(world.log, want) << "woken=" << woken;
    EXPECT_EQ(printed, Log{woken ? "1" : "0"});
    for (const std::string& line : world.log) EXPECT_EQ(line.find("BLOCK"), std::string::npos);
  }
}

TEST(ScriptActorTest, ParkIsOneCallThatSaysWhetherNewEntriesWokeIt) {
  for (bool woken : {false, true}) {
    FakeWorld world;
    world.park_woken = woken;
    world.redis = [](const std::vector<std::string>&) { return Reply::Nil(); };
    std::vector<std::string> printed;
    Status s = RunConsumer("function consumer(w) w:read('>'); print(w:park(1500)) end", world, {}, 42,
                           &printed);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(world.log, (Log{"redis XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "park 1500"}));
    EXPECT_EQ(printed, Log{woken ? "true" : "false"});
  }
}

TEST(ScriptActorTest, SqlParametersAndResults) {
  FakeWorld world;
  world.sql = [](const std::string&, const std::vector<SqlValue>&) {
    SqlResult r;
    r.columns = {"event_id", "n", "note"};
    r.rows = {{std::string("order:1"), int64_t{2}, std::monostate{}}};
    return r;
  };
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local r = w:sql("SELECT event_id, n, note FROM t WHERE a = ? AND b = ? AND c IS ?", "x", 3, nil)
  print(r.ok, r.changes, #r.rows, r.rows[1].event_id, r.rows[1].n, r.rows[1].note, r.err)
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(world.log, Log{"sql SELECT event_id, n, note FROM t WHERE a = ? AND b = ? AND c IS ? 'x' 3 NULL"});
  EXPECT_EQ(printed, Log{"true\t0\t1\torder:1\t2\tnil\tnil"});
}

TEST(ScriptActorTest, EffectOptionsAndOutcome) {
  FakeWorld world;
  world.effect = EffectOutcome::kTimeout;
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  print(w:effect("order:4", "external", {entry = "4-0", key = "pay:4", key_ttl_ms = 60000, duration_ms = 250, timeout_ms = 100}))
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(world.log, Log{"effect order:4 external entry=4-0 key=pay:4 ttl=60000 duration=250 timeout=100"});
  EXPECT_EQ(printed, Log{"false\ttimeout"});
}

// `ok` means "the effect is done, move on": true when it ran and when the
// idempotency key absorbed a replay (nothing ran because it already had), so
// a script that acks on `ok` acks a redelivery; false when it may not have
// run. docs/scripts.md, w:effect.
TEST(ScriptActorTest, EffectIsDoneWhenItRanOrItsKeyAbsorbedAReplay) {
  const struct {
    EffectOutcome outcome;
    const char* printed;
  } kOutcomes[] = {
      {EffectOutcome::kOk, "true\tok"},
      {EffectOutcome::kDuplicate, "true\tduplicate"},
      {EffectOutcome::kUnavailable, "false\tunavailable"},
      {EffectOutcome::kFailed, "false\tfailed"},
      {EffectOutcome::kTimeout, "false\ttimeout"},
  };
  for (const auto& o : kOutcomes) {
    FakeWorld world;
    world.effect = o.outcome;
    std::vector<std::string> printed;
    Status s = RunConsumer(R"lua(
function consumer(w)
  print(w:effect("order:4", "external", {entry = "4-0", key = "pay:4"}))
end
)lua", world, {}, 42, &printed);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(printed, Log{o.printed}) << EffectOutcomeName(o.outcome);
  }
}

TEST(ScriptActorTest, BadCallsAreErrorsAtTheCallersLine) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"w:redis('SET', 'k', {})", "w:redis: argument 3 is a table"},
      {"w:redis()", "w:redis: no command given"},
      {"w.redis('PING')", "call w:redis(...) with a colon"},
      {"w:read('>', {blockms = 1, zz = 2})", "w:read: unknown option 'blockms'"},
      {"w:read('>', {count = 0})", "option count must be an integer >= 1"},
      {"w:effect('')", "the first argument must be the event id"},
      {"w:effect('order:1', 'kafka')", "unknown sink 'kafka'"},
      {"w:effect('order:1', 'sql', {timeout_ms = 5})", "apply to the external sink only"},
      {"w:point('after commit')", "is not a point name"},
      {"w:sleep(-1)", "milliseconds must be >= 0"},
      {"w:park(0)", "w:park: milliseconds must be >= 1"},
      {"coroutine.wrap(function() w:redis('PING') end)()", "called from a coroutine the script created"},
      {"coroutine.yield()", "only w: calls suspend an actor"},
      {"local x = nil; x.y = 1", "attempt to index a nil value"},
      {"error('boom')", "boom"},
      {"error({})", "(error object is a table value)"},
      // Level 0 adds no position, and "ns::" is none (no line number).
      {"error('ns::thing failed', 0)", "ns::thing failed"},
  };
  for (const Case& c : cases) {
    FakeWorld world;
    Status s = RunConsumer(std::string("function consumer(w)\n  ") + c.body + "\nend\n", world);
    ASSERT_FALSE(s.ok()) << c.body;
    EXPECT_EQ(s.message().rfind("test.lua:2: ", 0), 0u) << c.body << " -> " << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.body << " -> " << s.message();
    EXPECT_NE(s.message().find("(actor w1, step 1)"), std::string::npos) << s.message();
    EXPECT_TRUE(world.log.empty()) << c.body;
  }
}

TEST(ScriptActorTest, AScriptThatFailsToLoadRunsNothing) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"w:redis('PING')\nfunction consumer(w) end", "test.lua:1: attempt to index a nil value (global 'w')"},
      {"function consumer(w)\n  w:redis('PING'\nend\n", "test.lua:3: ')' expected (to close '(' at line 2)"},
      {"function producer(w) end\n", "test.lua: defines no function consumer(w)"},
  };
  for (const Case& c : cases) {
    FakeWorld world;
    Status s = RunConsumer(c.text, world);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
    EXPECT_TRUE(world.log.empty());
  }
}

TEST(ScriptActorTest, PcallAroundACallStillYieldsToTheWorld) {
  FakeWorld world;
  std::vector<std::string> printed;
  Status s = RunConsumer(R"lua(
function consumer(w)
  local ok, r = pcall(w.redis, w, "PING")
  print(ok, r)
  local ok2, err = pcall(function() w:redis("PING") error("after the call") end)
  print(ok2, err)
end
)lua", world, {}, 42, &printed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(world.log.size(), 2u);
  EXPECT_EQ(printed, (Log{"true\tOK", "false\ttest.lua:5: after the call"}));
}

// A crash destroys the task mid-call; the replacement starts from a fresh
// process, so no global survives.
TEST(ScriptActorTest, DestroyingTheTaskMidCallEndsTheProcess) {
  auto script = LuaScript::Load({"crash.lua", R"lua(
count = (count or 0) + 1
function consumer(w)
  w:redis("SET", "starts", count)
  w:redis("PING")
end
)lua"});
  ASSERT_TRUE(script.ok()) << script.status().ToString();

  // A world whose Redis suspends until the test resumes it.
  struct SuspendingWorld : FakeWorld {
    std::coroutine_handle<> waiting;
    struct Wait {
      SuspendingWorld* w;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) { w->waiting = h; }
      void await_resume() const noexcept {}
    };
    Task<Reply> Redis(std::vector<std::string> argv) override {
      std::string line = "redis";
      for (const std::string& a : argv) line += " " + a;
      log.push_back(line);
      co_await Wait{this};
      co_return Reply::StatusText("OK");
    }
  };
  for (int start = 1; start <= 2; ++start) {
    SuspendingWorld world;
    Status result = Status::Internal("unset");
    auto drive = [](const LuaScript& s, ScriptWorld& w, Status* out) -> Task<void> {
      ScriptActorInfo info;
      info.slot = info.name = "w1";
      info.stream = "events";
      info.group = "workers";
      *out = co_await s.Run(info, w);
    };
    Task<void> t = drive(**script, world, &result);
    t.Start();
    ASSERT_FALSE(t.done());
    EXPECT_EQ(world.log, Log{"redis SET starts 1"});  // fresh globals every start
    t = Task<void>();  // the crash
    EXPECT_EQ(result.message(), "unset");
  }
}

// --- Reply <-> Lua -----------------------------------------------------------

TEST(LuaValuesTest, RepliesRoundTripThroughLua) {
  auto p = LuaProcess::Load({"v.lua", ""}, ProcessEnv{Rng(1)});
  ASSERT_TRUE(p.ok());
  lua_State* L = (*p)->state();
  const Reply cases[] = {
      Reply::Integer(42),
      Reply::String(std::string("bin\0ary", 7)),
      Reply::Error("ERR wrong"),
      Reply::Array({}),
      Reply::Array({Reply::Integer(1), Reply::Array({Reply::String("a"), Reply::Nil()}),
                    Reply::Error("E")}),
  };
  for (const Reply& r : cases) {
    PushReply(L, r);
    Result<Reply> back = ToReply(L, -1);
    lua_pop(L, 1);
    ASSERT_TRUE(back.ok()) << r.Render();
    EXPECT_EQ(*back, r) << r.Render() << " came back as " << back->Render();
  }
  // Documented lossy cases: nil becomes false and comes back nil; a status
  // reply reads as its text.
  PushReply(L, Reply::Nil());
  EXPECT_TRUE(lua_isboolean(L, -1) && !lua_toboolean(L, -1));
  EXPECT_TRUE(ToReply(L, -1)->is_nil());
  lua_pop(L, 1);
  PushReply(L, Reply::StatusText("OK"));
  EXPECT_EQ(ToReply(L, -1)->Render(), "\"OK\"");
  lua_pop(L, 1);
}

TEST(LuaValuesTest, LuaValuesWithoutAReplyFormAreErrors) {
  auto p = LuaProcess::Load({"v.lua", "map = {a = 1}\nfrac = 1.5\nfn = print\nok = {ok = 'PONG'}\n"},
                            ProcessEnv{Rng(1)});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  lua_State* L = (*p)->state();
  for (const char* name : {"map", "frac", "fn"}) {
    lua_getglobal(L, name);
    EXPECT_FALSE(ToReply(L, -1).ok()) << name;
    lua_pop(L, 1);
  }
  lua_getglobal(L, "ok");
  EXPECT_EQ(ToReply(L, -1)->Render(), "+PONG");
  lua_pop(L, 1);
}

}  // namespace
}  // namespace xackly
