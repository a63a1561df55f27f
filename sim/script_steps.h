// Protocol scripts as simulated actors: every call a script makes to the
// world becomes exactly one scheduler Step, so it is a scheduling point, a
// named crash point and a fault site like every step of the C++ loop.
//
//   w:redis(cmd, ...)   Op::kCommand       crash points before-CMD, after-CMD; lost site CMD
//   w:sql(stmt, ...)    Op::kSqlStatement  crash point after-VERB; lost site VERB
//   w:effect(id, sink)  the C++ loop's effect steps (external, sql, redis): after-effect
//   w:point(name)       Op::kCheckpoint    crash point `name`
//   w:sleep(ms)         Op::kSleep
//   w:read(...)         Op::kCommand (XREADGROUP, never BLOCK) and Op::kPark
//
// The scheduler (sim/simulation.cc) executes these steps and feeds the
// oracle from the replies it observes by command name; nothing a script
// returns is trusted.
#pragma once

#include "sim/actor.h"
#include "sim/script_world.h"
#include "sim/worker.h"

namespace xackly {

// Runs the protocol script's `role` function as the actor's whole life.
// When the script fails (a runtime error, a budget, a bad call) its error
// goes to *env->script_error (the run then ends with it).
// REQUIRES: env->protocol->script != nullptr and defines `role`
Task<void> ScriptActorMain(Actor* actor, const ActorEnv* env, ScriptRole role);

// Why a script's command is refused without being sent ("" when it may be
// sent): blocking commands (XREAD(GROUP) ... BLOCK, BLPOP, WAIT...) would
// stall the single-threaded simulation; connection-state and server-control
// commands (SUBSCRIBE, MONITOR, SHUTDOWN, DEBUG...) would break the harness;
// writes to the effect ledger outside w:effect and EVAL would fake effects.
// With `replicas` > 0 WAIT is sent: the harness answers it without blocking
// (harness/replicated_server.h), or, `in_multi` (queued in the caller's
// MULTI), the server answers it at EXEC without blocking.
std::string RefusedCommand(const std::vector<std::string>& argv, const WorldNames& names, int replicas = 0,
                           bool in_multi = false);

}  // namespace xackly
