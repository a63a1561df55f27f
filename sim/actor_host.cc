// Actor lifecycle (see sim/run_internal.h): setup of the world, starting an
// actor's coroutine, crash and take-down (a restart after
// restart_delay_ms), reset after a timeout, park and wake.
#include "sim/run_internal.h"

#include <fmt/format.h>

#include "sim/script_steps.h"

namespace xackly::run_internal {

Status Simulation::Setup() {
  Status reset = server_->Reset(kEpochMs);
  if (!reset.ok()) return reset;
  last_clock_written_ = 0;
  env_.protocol = &config_.protocol;
  env_.names = &names_;
  env_.timing = &config_.timing;
  env_.now_ms = &now_;
  env_.events = config_.events;
  env_.producers = config_.producers;
  env_.replicas = config_.replicas;
  env_.producer_waits = config_.producer_waits;
  env_.handlers = config_.handlers;
  process_memory_.assign(static_cast<size_t>(config_.TotalWorkers()) + 1, {});
  env_.process_memory = &process_memory_;
  run_memory_.reset();
  env_.run_memory = &run_memory_;
  env_.atomic_script = CompileAtomicScript(config_.protocol);
  env_.atomic = AtomicGroupOf(config_.protocol);
  env_.seed = config_.seed;
  env_.epoch_ms = kEpochMs;
  env_.steps = &steps_;
  env_.script_error = &script_error_;

  const Timing& t = config_.timing;
  fault_phase_end_ms_ = FaultPhaseEndMs(t, config_.events, config_.producers);
  if (config_.fault_schedule) {
    plan_ = std::make_unique<FaultPlan>(config_.faults, *config_.fault_schedule);
  } else {
    plan_ = std::make_unique<FaultPlan>(config_.faults, Rng(config_.seed).Split("faults"),
                                        fault_phase_end_ms_, config_.events);
  }
  env_.faults = plan_.get();

  Result<Reply> created = HarnessCall(
      {"XGROUP", "CREATE", names_.stream, names_.group, "0", "MKSTREAM"}, kSetupActor);
  if (!created.ok()) return created.status();
  for (const ConsumerGroupSpec& g : config_.groups) {  // further groups exist before anything is produced
    Result<Reply> more = HarnessCall({"XGROUP", "CREATE", names_.stream, g.name, "0"}, kSetupActor);
    if (!more.ok()) return more.status();
  }
  if (Status s = server_->Replicate(); !s.ok()) return s;
  AddGroupJudges();

  auto add = [&](ActorKind kind, ActorRole role, int number, int lane) {
    auto a = std::make_unique<Actor>();
    a->kind = kind;
    a->number = number;
    a->lane = lane;
    a->process = ActorName(role, number);
    a->slot = ActorName(role, number, 1, false, lane);
    a->name = a->slot;
    a->consumer = a->process;
    actors_.push_back(std::move(a));
  };
  for (int i = 1; i <= config_.producers; ++i) add(ActorKind::kProducer, ActorRole::kProducer, i, 1);
  for (int i = 1; i <= config_.TotalWorkers(); ++i) {
    for (int lane = 1; lane <= config_.handlers; ++lane) {
      add(ActorKind::kWorker, ActorRole::kWorker, i, lane);
      Actor& w = *actors_.back();
      w.group = config_.GroupOfWorker(i);
      if (w.group > 0) {
        const ConsumerGroupSpec& spec = config_.groups[w.group - 1];
        w.group_name = spec.name;
        w.function = spec.function;
      }
    }
  }
  bool janitor = script() ? config_.protocol.script->Defines(ScriptRole::kJanitor)
                          : config_.protocol.janitor.enabled();
  if (janitor) add(ActorKind::kJanitor, ActorRole::kJanitor, 1, 1);
  for (auto& a : actors_) {
    Status s = StartActor(*a);
    if (!s.ok()) return s;
  }
  return script_error_;
}

Status Simulation::StartActor(Actor& a) {
  auto conn = server_->Connect();
  if (!conn.ok()) return conn.status();
  a.conn = std::make_unique<LossyConnection>(std::move(conn).value());
  a.conn_generation = generation_;
  a.owner_id = next_owner_id_++;
  a.state = ActorState::kReady;
  a.pending = nullptr;
  a.in_transaction = false;
  a.store_wait_since_ms = -1;
  a.sees_resets = false;
  a.connection_cut = false;
  const ProtocolScript* script = config_.protocol.script.get();
  ForEachFeed([&a](OracleFeed& f) { f.Forget(a.slot); });
  switch (a.kind) {
    case ActorKind::kProducer:
      a.task = script != nullptr && script->Defines(ScriptRole::kProducer)
                   ? ScriptActorMain(&a, &env_, ScriptRole::kProducer)
                   : ProducerMain(&a, &env_);
      break;
    case ActorKind::kWorker:
      a.task = script != nullptr ? ScriptActorMain(&a, &env_, ScriptRole::kConsumer)
                                 : ConsumerMain(Worker(&a, &env_));
      break;
    case ActorKind::kJanitor:
      a.task = script != nullptr ? ScriptActorMain(&a, &env_, ScriptRole::kJanitor)
                                 : JanitorMain(&a, &env_);
      break;
  }
  a.task.Start();
  if (a.task.done()) a.state = ActorState::kDone;
  return Status::Ok();
}

void Simulation::ResumeActor(Actor& a) {
  a.pending = nullptr;
  std::coroutine_handle<> h = a.resume_point;
  a.resume_point = {};
  h.resume();
  if (a.task.done()) a.state = ActorState::kDone;
}

void Simulation::TakeDown(Actor& a, int64_t restart_in_ms, bool new_process) {
  store_.Abandon(a.owner_id);
  a.task = Task<void>();  // destroys the whole coroutine chain mid-step
  a.pending = nullptr;
  a.lagging_wait_until_ms = -1;
  // A dead process's connection closes and the server drops its open MULTI;
  // a connection handed back to a pool must not keep it either.
  if (feed_.InMulti(a.slot) && a.conn && a.conn->alive()) {
    (void)a.conn->Call({"DISCARD"});
    ++harness_rtt_;
  }
  ForEachFeed([&a](OracleFeed& f) { f.Forget(a.slot); });
  a.conn.reset();
  a.in_transaction = false;
  a.state = ActorState::kDown;
  a.restart_at_ms = now_ + restart_in_ms;
  a.restart_as_new_process = new_process;
  // A process that dies loses its memory: its lanes' replacement starts a
  // fresh one (a lane that only reconnects keeps it).
  if (new_process && a.kind == ActorKind::kWorker && static_cast<size_t>(a.number) < process_memory_.size()) {
    process_memory_[static_cast<size_t>(a.number)].reset();
  }
}

void Simulation::Crash(Actor& a, const std::string& point) {
  TakeDown(a, config_.timing.restart_delay_ms, /*new_process=*/true);
  trace_.Add(now_, a.name, LineKind::kFault,
             fmt::format("!crash at {} (replacement starts in {} ms)", point,
                         config_.timing.restart_delay_ms),
             "",
             {.event = LineEvent::kCrash, .site = point, .duration_ms = config_.timing.restart_delay_ms});
  FaultOtherLanes(a, HistoryKind::kCrash, point, config_.timing.restart_delay_ms);
}

void Simulation::FaultOtherLanes(const Actor& a, HistoryKind kind, const std::string& point, int64_t duration_ms) {
  if (a.kind != ActorKind::kWorker || config_.handlers == 1) return;
  const bool crash = kind == HistoryKind::kCrash;
  for (auto& other : actors_) {
    Actor& o = *other;
    if (&o == &a || o.kind != ActorKind::kWorker || o.number != a.number) continue;
    if (o.state == ActorState::kDown) {
      // A lane waiting to reconnect dies with its process and starts with
      // the replacement, in its memory; a stalled process reconnects it no
      // sooner than the stall ends.
      if (crash && !o.restart_as_new_process) {
        o.restart_at_ms = now_ + duration_ms;
        o.restart_as_new_process = true;
      } else if (!crash) {
        o.restart_at_ms = std::max(o.restart_at_ms, now_ + duration_ms);
      }
      continue;
    }
    if (!crash && o.state == ActorState::kDone) continue;
    // Its history names the point (a cause reads "crash:<point>", as the
    // lane's that hit it), its trace line the lane that hit it.
    const std::string site =
        fmt::format("{} in {} (the whole process {})", point, a.name, crash ? "went down" : "stalls");
    SetOracleLine(trace_.size());  // its history is told at its own line, next
    OracleOf(o).WorkerFault(kind, now_, o.name, point,
                            o.pending != nullptr ? EventsOf(*o.pending) : std::vector<std::string>{},
                            crash ? 0 : duration_ms, a.name);
    std::string text;
    if (crash) {
      TakeDown(o, duration_ms, /*new_process=*/true);
      text = fmt::format("!process down with {} (crash at {}; replacement starts in {} ms)", a.name, point,
                         duration_ms);
    } else {
      o.frozen_until_ms = std::max(o.frozen_until_ms, now_ + duration_ms);
      if (o.state == ActorState::kReady) o.ready_at_ms = std::max(o.ready_at_ms, o.frozen_until_ms);
      text = fmt::format("!process stalled with {} (stall at {} for {} ms)", a.name, point, duration_ms);
    }
    trace_.Add(now_, o.name, LineKind::kFault, text, "",
               {.event = crash ? LineEvent::kCrash : LineEvent::kStall, .site = site, .duration_ms = duration_ms});
  }
}

void Simulation::Reset(Actor& a, const std::string& why) {
  TakeDown(a, config_.timing.reconnect_ms, /*new_process=*/false);
  trace_.Add(now_, a.name, LineKind::kLifecycle,
             fmt::format("{}: reconnects and restarts its loop in {} ms", why,
                         config_.timing.reconnect_ms),
             "", {.event = LineEvent::kReconnect, .duration_ms = config_.timing.reconnect_ms});
}

void Simulation::CutConnection(Actor& a) {
  // The server drops a closed connection's MULTI, WATCH and client state: a
  // new connection leaves them behind as well.
  ForEachFeed([&a](OracleFeed& f) { f.Forget(a.slot); });
  Result<std::unique_ptr<Connection>> conn = server_->Connect();
  if (conn.ok()) {
    a.conn = std::make_unique<LossyConnection>(std::move(conn).value());
    a.conn_generation = generation_;
  } else {
    a.conn.reset();  // its next request finds no connection: an I/O error, and a restart
  }
  trace_.Add(now_, a.name, LineKind::kLifecycle, "its connection is reset: the process sees it close and goes on",
             "", {.event = LineEvent::kReconnect});
  a.connection_cut = true;
  ResumeActor(a);
}

void Simulation::Wake(Actor& a, bool by_data) {
  a.state = ActorState::kReady;
  a.ready_at_ms = std::max(now_, a.frozen_until_ms);
  a.pending->woken_by_data = by_data;
  ResumeActor(a);
}

void Simulation::WakeOneParkedWorker() {
  Actor* first = nullptr;
  for (auto& a : actors_) {
    if (a->state == ActorState::kParked && (first == nullptr || a->park_seq < first->park_seq)) {
      first = a.get();
    }
  }
  if (first != nullptr) Wake(*first, /*by_data=*/true);
}

}  // namespace xackly::run_internal
