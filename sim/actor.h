// An actor is one simulated process (a producer, a consumer worker or the
// janitor) running as a coroutine. Its coroutine submits one Step at a time
// through a Request awaiter and stays suspended until the scheduler has
// executed that step. The scheduler owns every actor and is the only code
// that resumes, crashes or restarts one.
#pragma once

#include <coroutine>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/actor_name.h"
#include "sim/lossy_connection.h"
#include "sim/status.h"
#include "sim/step.h"
#include "sim/task.h"

namespace xackly {

enum class ActorKind : uint8_t { kProducer, kWorker, kJanitor };

enum class ActorState : uint8_t {
  kReady,   // has a pending step; runnable once now >= ready_at_ms
  kParked,  // waiting for new entries or park_until_ms
  kDown,    // crashed; a replacement starts at restart_at_ms
  kDone,    // finished (a producer with nothing left to send)
};

struct Actor {
  ActorKind kind = ActorKind::kWorker;
  int number = 1;          // producer, worker or janitor number (sim/actor_name.h)
  std::string slot;        // "p1", "w2", "j1": stable across incarnations
  std::string name;        // trace label; for workers the consumer name
  // A worker process's handler lanes (RunConfig::handlers): this lane's
  // number (1: the first, which keeps the process's plain name); its
  // process's slot ("w2"), which fault draws name; and the consumer name
  // every lane of the process reads under (== name without lanes).
  int lane = 1;
  std::string process;
  std::string consumer;
  int incarnation = 1;
  int owner_id = 0;        // unique per incarnation (SQL transaction owner)
  // Workers of a further consumer group (RunConfig::groups): its index
  // (1-based; 0 for the run's own group), and the group's name and the
  // script function its workers run (empty for the run's own group).
  int group = 0;
  std::string group_name;
  std::string function;

  ActorState state = ActorState::kReady;
  int64_t ready_at_ms = 0;
  int64_t park_until_ms = 0;
  int64_t park_seq = 0;    // order of parking, for FIFO wake-ups
  int64_t restart_at_ms = 0;
  // A stall of its process (fired in another handler lane) holds it until
  // then: woken from a park, it waits that long before its next step.
  int64_t frozen_until_ms = 0;
  // A WAIT a lagging replica holds (replica-lag: WAIT n T's timeout with
  // nothing confirmed, or WAIT n 0 until the replica has caught up) keeps
  // the actor until then: a failover before it cuts the WAIT, as it cuts
  // any request in flight (Simulation::FailoverServer); -1: none.
  int64_t lagging_wait_until_ms = -1;
  bool restart_as_new_process = false;  // crash: yes; reconnect after a timeout: no
  // It runs a script that sees resets (ProtocolScript::SeesConnectionResets,
  // set where the script starts; a built-in producer beside it times out
  // instead), and its last request's connection was cut by a lost request
  // or reply, the actor going on.
  bool sees_resets = false;
  bool connection_cut = false;
  // Successful XADDs of the run when this worker's last XREADGROUP > ran:
  // a park after an empty read returns at once if more were made since
  // (XREADGROUP BLOCK semantics).
  int64_t produced_seen = 0;

  Task<void> task;
  Step* pending = nullptr;                // set by Submit, cleared by the scheduler
  std::coroutine_handle<> resume_point;   // the leaf coroutine waiting on `pending`

  std::unique_ptr<LossyConnection> conn;  // lost requests/replies are injected here
  uint64_t conn_generation = 0;           // the server generation `conn` belongs to

  // Whether this incarnation holds the SQL store's open transaction (kept
  // by the scheduler, which executes Begin/Commit/Rollback).
  bool in_transaction = false;
  // Since when its pending SQL step has waited for another incarnation's open
  // transaction (-1: not waiting), and that holder's name when the wait began
  // (kept by the scheduler; the statement's trace line tells the wait).
  int64_t store_wait_since_ms = -1;
  std::string store_wait_for;

  // Producer progress survives resets (it is the producer's durable outbox).
  int next_event = 0;
  // A producer with a replica to wait for: the entry its last XADD added
  // whose WAIT never answered (a failover came in between), "" if none.
  // Survives resets, like next_event.
  std::string unconfirmed_entry;

  // Called by Request::await_suspend. REQUIRES: no step pending.
  void Submit(Step* step, std::coroutine_handle<> h) {
    XACKLY_CHECK(pending == nullptr);
    pending = step;
    resume_point = h;
  }
};

// Awaitable for one step. `finish` turns the executed step into the value the
// coroutine sees (parsing replies, mapping outcomes).
template <typename T>
class [[nodiscard]] Request {
 public:
  using Finish = T (*)(Step&);
  Request(Actor* actor, Step step, Finish finish)
      : actor_(actor), step_(std::move(step)), finish_(finish) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { actor_->Submit(&step_, h); }
  T await_resume() { return finish_(step_); }

 private:
  Actor* actor_;
  Step step_;
  Finish finish_;
};

}  // namespace xackly
