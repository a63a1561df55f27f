// A ScriptWorld for tests: answers every call at once from a function of the
// request, logs each call as one line, and never suspends, so a whole script
// runs to its end inside Task::Start().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/lua/script_actor.h"
#include "sim/script_world.h"

namespace xackly {

class FakeWorld : public ScriptWorld {
 public:
  std::vector<std::string> log;  // "redis XACK events workers 1-0", "park 2000", ...
  int64_t now_ms = 0;
  std::function<Reply(const std::vector<std::string>&)> redis = [](const auto&) {
    return Reply::StatusText("OK");
  };
  std::function<SqlResult(const std::string&, const std::vector<SqlValue>&)> sql =
      [](const auto&, const auto&) { return SqlResult{}; };
  EffectOutcome effect = EffectOutcome::kOk;
  bool park_woken = false;

  Task<Reply> Redis(std::vector<std::string> argv) override {
    std::string line = "redis";
    for (const std::string& a : argv) line += " " + a;
    log.push_back(line);
    co_return redis(argv);
  }
  Task<SqlResult> Sql(std::string statement, std::vector<SqlValue> params) override {
    std::string line = "sql " + statement;
    for (const SqlValue& p : params) {
      if (const auto* s = std::get_if<std::string>(&p)) line += " '" + *s + "'";
      if (const auto* i = std::get_if<int64_t>(&p)) line += " " + std::to_string(*i);
      if (std::holds_alternative<std::monostate>(p)) line += " NULL";
    }
    log.push_back(line);
    co_return sql(statement, params);
  }
  Task<EffectOutcome> Effect(EffectCall c) override {
    static const char* kSinks[] = {"external", "sql", "redis"};
    log.push_back("effect " + c.event_id + " " + kSinks[static_cast<int>(c.sink)] + " entry=" +
                  c.stream_id + " key=" + c.key + " ttl=" + std::to_string(c.key_ttl_ms) +
                  " duration=" + std::to_string(c.duration_ms) + " timeout=" +
                  std::to_string(c.timeout_ms));
    co_return effect;
  }
  Task<void> Point(std::string name) override {
    log.push_back("point " + name);
    co_return;
  }
  Task<void> Sleep(int64_t ms) override {
    log.push_back("sleep " + std::to_string(ms));
    now_ms += ms;
    co_return;
  }
  Task<bool> Park(int64_t max_ms) override {
    log.push_back("park " + std::to_string(max_ms));
    co_return park_woken;
  }
  int64_t NowMs() const override { return now_ms; }
  std::vector<std::string> printed;
  void Print(const std::string& line) override { printed.push_back(line); }
  std::string Where() const override { return "actor w1, step " + std::to_string(log.size() + 1); }
};

// Loads `text` as test.lua and runs its consumer(w) against `world` to its
// end. Returns the script's exit status (or its load error).
inline Status RunConsumer(const std::string& text, FakeWorld& world, ProcessLimits limits = {},
                          uint64_t seed = 42, std::vector<std::string>* printed = nullptr) {
  auto script = LuaScript::Load({"test.lua", text}, limits);
  if (!script.ok()) return script.status();
  ScriptActorInfo info;
  info.slot = "w1";
  info.name = "w1";
  info.stream = "events";
  info.group = "workers";
  info.events = 10;
  info.seed = seed;
  info.epoch_ms = 1'700'000'000'000;
  Status result = Status::Internal("the script did not finish");
  auto drive = [](const LuaScript& s, ScriptActorInfo i, ScriptWorld& w, Status* out) -> Task<void> {
    Status st = co_await s.Run(std::move(i), w);
    *out = st;
  };
  world.printed.clear();
  Task<void> t = drive(**script, info, world, &result);
  t.Start();
  if (printed != nullptr) *printed = world.printed;
  if (!t.done()) return Status::Internal("the script suspended on a world that never suspends");
  return result;
}

}  // namespace xackly
