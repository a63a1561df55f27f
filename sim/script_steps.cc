#include "sim/script_steps.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/commands.h"
#include "sim/rng.h"

namespace xackly {

namespace {

Reply TakeReply(Step& s) { return std::move(s.reply); }
SqlResult TakeSql(Step& s) { return std::move(s.sql); }
bool TakeWoken(Step& s) { return s.woken_by_data; }
bool TakeNothing(Step&) { return true; }

EffectOutcome OutcomeOf(const Step& s) {
  if (s.op == Op::kRedisEffect && s.reply.is_error()) return EffectOutcome::kFailed;
  switch (s.outcome) {
    case BusinessOutcome::kOk: return EffectOutcome::kOk;
    case BusinessOutcome::kAlreadyDone: return EffectOutcome::kDuplicate;
    case BusinessOutcome::kUnavailable: return EffectOutcome::kUnavailable;
    default: return EffectOutcome::kFailed;
  }
}

// A caller with a timeout that gave up (Step::timed_out) does not know
// what the far side did; an unavailable service answered before it.
EffectOutcome FinishEffect(Step& s) {
  const EffectOutcome o = OutcomeOf(s);
  return s.timed_out && o != EffectOutcome::kUnavailable ? EffectOutcome::kTimeout : o;
}

// Every script call is one Request on the actor: the scheduler executes it
// as one step.
class SimScriptWorld final : public ScriptWorld {
 public:
  SimScriptWorld(Actor* actor, const ActorEnv* env) : actor_(actor), env_(env) {}

  Task<Reply> Redis(std::vector<std::string> argv) override {
    Step s;
    s.op = Op::kCommand;
    s.argv = std::move(argv);
    CanonicalizeCommand(&s.argv);
    Reply r = co_await Call<Reply>(actor_, std::move(s), &TakeReply);
    co_return r;
  }

  Task<SqlResult> Sql(std::string statement, std::vector<SqlValue> params) override {
    Step s;
    s.op = Op::kSqlStatement;
    s.label = std::move(statement);
    s.params = std::move(params);
    SqlResult r = co_await Call<SqlResult>(actor_, std::move(s), &TakeSql);
    co_return r;
  }

  Task<EffectOutcome> Effect(EffectCall c) override {
    Step s;
    int64_t duration_ms =
        c.duration_ms >= 0 ? c.duration_ms : EffectMsOf(*env_->timing, env_->seed, c.event_id);
    switch (c.sink) {
      case ScriptSink::kExternal:
        s.op = Op::kExternalEffect;
        s.label = c.key;               // the idempotency key ("" none)
        s.duration_ms = c.key_ttl_ms;  // how long the service remembers it
        break;
      case ScriptSink::kSql: s.op = Op::kSqlEffect; break;
      case ScriptSink::kCommitted:
        s.op = Op::kCommittedEffect;
        duration_ms = 0;  // it happened before the call
        break;
      case ScriptSink::kRedis:
        s.op = Op::kRedisEffect;
        s.argv = {"RPUSH", env_->names->effects,
                  EffectRecordText(c.event_id, c.stream_id, actor_->name, *env_->now_ms)};
        break;
    }
    s.event_id = std::move(c.event_id);
    s.stream_id = std::move(c.stream_id);
    s.origin = std::move(c.origin);
    // A caller with a timeout gives up after timeout_ms (the scheduler
    // decides, once it knows how long the far side took: a remembered
    // idempotency key is answered at once); the effect still ran (or not)
    // on the far side: the outcome is unknown to the script.
    s.busy_ms = duration_ms;
    s.timeout_ms = c.timeout_ms;
    EffectOutcome o = co_await Call<EffectOutcome>(actor_, std::move(s), &FinishEffect);
    co_return o;
  }

  Task<void> Point(std::string name) override {
    Step s;
    s.op = Op::kCheckpoint;
    s.label = std::move(name);
    co_await Call<bool>(actor_, std::move(s), &TakeNothing);
  }

  Task<void> Sleep(int64_t ms) override {
    Step s;
    s.op = Op::kSleep;
    s.duration_ms = ms;
    co_await Call<bool>(actor_, std::move(s), &TakeNothing);
  }

  Task<void> Exit(std::string why) override {
    Step s;
    s.op = Op::kExit;
    s.label = std::move(why);
    co_await Call<bool>(actor_, std::move(s), &TakeNothing);
  }

  Task<bool> Park(int64_t max_ms) override {
    Step s;
    s.op = Op::kPark;
    s.duration_ms = max_ms;
    bool woken = co_await Call<bool>(actor_, std::move(s), &TakeWoken);
    co_return woken;
  }

  bool ConnectionWasCut() const override { return actor_->connection_cut; }
  int64_t NowMs() const override { return *env_->now_ms; }
  int64_t ReadyAtMs() const override { return std::max(*env_->now_ms, actor_->ready_at_ms); }
  std::string Where() const override {
    return "actor " + actor_->name + ", step " + std::to_string(*env_->steps + 1);
  }

 private:
  // One step; ConnectionWasCut then tells of this call alone.
  template <typename T>
  Request<T> Call(Actor* actor, Step step, T (*finish)(Step&)) {
    actor->connection_cut = false;
    return Request<T>(actor, std::move(step), finish);
  }

  Actor* actor_;
  const ActorEnv* env_;
};

}  // namespace

std::string RefusedCommand(const std::vector<std::string>& argv, const WorldNames& names, int replicas,
                           bool in_multi) {
  const CommandInfo& info = CommandOf(argv);
  if (replicas > 0 && info.verb == "WAIT") {
    if (in_multi) return "";  // EXEC answers it at once: a transaction never blocks
    // WAIT numreplicas 0 for more replicas than the run has would wait for
    // ever on a real server (a timeout T answers the count after T ms:
    // Simulation::ExecuteRedis holds the caller that long).
    const std::optional<WaitRequest> wait = ParseWait(argv);
    if (wait && wait->replicas > replicas && wait->timeout_ms == 0) {
      return fmt::format("WAIT {} 0 would wait for ever: the run has {} replica{} (a server answers WAIT only "
                         "once that many acknowledge, or its timeout passes: give it one)",
                         wait->replicas, replicas, replicas == 1 ? "" : "s");
    }
    return "";
  }
  if (info.group == CommandGroup::kStream && HasOption(argv, "BLOCK") &&
      (info.verb == "XREAD" || info.verb == "XREADGROUP")) {
    return "a blocking read would stall the simulation: use w:read(id, {block_ms = ...}), which parks";
  }
  switch (info.script) {
    case ScriptRefusal::kBlocking:
      return info.verb == "WAIT" ? "WAIT would stall the simulation of a server without replicas (set [server] "
                                   "replicas = 1 to model one: xackly answers WAIT then)"
                                 : "a blocking command would stall the simulation";
    case ScriptRefusal::kHarness: return "this command controls the connection or the server the harness owns";
    case ScriptRefusal::kAllowed: break;
  }
  if (!info.runs_code && std::find(argv.begin() + 1, argv.end(), names.effects) != argv.end()) {
    return "the effect ledger " + names.effects +
           " is written only by w:effect(id, \"redis\") or inside an EVAL/FCALL";
  }
  return "";
}

Task<void> ScriptActorMain(Actor* actor, const ActorEnv* env, ScriptRole role) {
  SimScriptWorld world(actor, env);
  ScriptActorInfo info;
  info.role = role;
  info.slot = actor->process;
  info.name = actor->consumer;
  info.lane = actor->lane;
  info.lanes = actor->kind == ActorKind::kWorker ? env->handlers : 1;
  info.incarnation = actor->incarnation;
  info.stream = env->names->stream;
  info.group = actor->group_name.empty() ? env->names->group : actor->group_name;
  info.function = actor->function;
  info.effects_key = env->names->effects;
  info.events = env->events;
  info.epoch_ms = env->epoch_ms;
  // Each incarnation draws from its own split of the run's seed.
  info.seed = Rng(env->seed).Split("script:" + actor->slot + ":" + std::to_string(actor->incarnation)).Next();
  // A process's lanes share its memory (the first lane to start creates it).
  if (actor->kind == ActorKind::kWorker && env->handlers > 1) {
    info.process_memory = &env->process_memory->at(static_cast<size_t>(actor->number));
  }
  info.run_memory = env->run_memory;
  actor->sees_resets = env->protocol->script->SeesConnectionResets();
  Status s = co_await env->protocol->script->Run(std::move(info), world);
  if (!s.ok() && env->script_error->ok()) *env->script_error = s;
}

}  // namespace xackly
