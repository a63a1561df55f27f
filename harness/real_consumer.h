// Your real consumer, not a model of it: `[protocol] command = [...]` runs
// the user's own consumer program, one process per worker, behind a RESP
// front (docs/real-consumers.md).
//
// Each worker incarnation starts the command as a child process whose Redis
// is a Unix socket of the front's (REDIS_URL=unix://...), never the server
// itself. The front reads one request frame at a time and performs it as one
// simulator step on the worker's ScriptWorld, exactly as a protocol script's
// w:redis call is: the seeded scheduler decides when it reaches the real
// server, faults fire at the step's named sites (before-XACK, after-XACK,
// ...), and the reply goes back to the process only once the step ran. So
// the processes run in lockstep: while one computes its next request every
// other one waits for a reply the front holds, and the run is the same for
// the same seed as long as each process is a function of the replies it gets
// (single-threaded; its wall clock is the run's, see below).
//
// What the process sees:
//   REDIS_URL          unix://<front socket>
//   XACKLY_WORKER      its consumer name (the same after a restart when the
//                      run's restart_naming is "same")
//   XACKLY_SLOT, XACKLY_INCARNATION, XACKLY_STREAM, XACKLY_GROUP, XACKLY_EVENTS
//   XACKLY_SQLITE      the run's SQLite database, shared by every process of
//                      the run and made with the table the oracle reads:
//                      xackly_effects(id, event, entry). Before each request
//                      of a process (and when it exits) the rows committed
//                      since are its effects (effect steps, ScriptSink::
//                      kCommitted); a row rolled back never appears.
//   its clocks         gettimeofday, time and clock_gettime (REALTIME and
//                      MONOTONIC) read the run's virtual clock, and its
//                      sleeps (nanosleep, clock_nanosleep, usleep, sleep) are
//                      timed waits with nothing to look at (below): the
//                      clock preload that redis-server
//                      runs with, in consumer mode (XACKLY_FRONT_SOCKET,
//                      harness/clock_preload.c); PYTHONHASHSEED=0
//   its timed waits    poll/ppoll/epoll_wait/epoll_pwait with a timeout that
//                      find nothing ready send XACKLY.WAIT <ms>: answered at
//                      once while something may still change (a reply since
//                      its last request, a request not yet read, a thread
//                      of its process tree that ran), else a sleep step to
//                      the earliest timeout of every thread waiting then
//   its randomness     getrandom/getentropy draw from XACKLY_RANDOM_SEED
// Commands the front answers itself, never forwarded:
//   XACKLY.EFFECT <event> [KEY k] [KEY_TTL ms] [ENTRY id] [DURATION ms] [TIMEOUT ms]
//       the side effect the oracle judges (an external call; KEY: the
//       service dedupes by it). Replies +OK, +DUPLICATE, -UNAVAILABLE ...,
//       -FAILED ... or -TIMEOUT ... as w:effect's outcomes.
//   XACKLY.POINT <name>   a named crash point (w:point)
//   XACKLY.SLEEP <ms>     a sleep on the virtual clock (w:sleep)
//   CLIENT SETNAME/SETINFO, SELECT 0   +OK (connection set-up)
//   INFO                  a fixed reply (loading:0, role:master): the
//                         server's own differs from run to run (pid, memory)
// XREADGROUP ... BLOCK ms reading ">" parks the worker on the virtual clock
// (as w:read does); everything else is one step (w:redis's rules: blocking
// and server-control commands are refused with an error reply).
//
// A lost request or reply closes the connection it came on (the process
// sees a reset and its client's error handling runs); an error-reply fault
// answers a request with the server's error without forwarding it (the
// step executor's, as for scripts); a crash is SIGKILL of the process group
// at a step's crash point.
//
// Not yet (said, not hidden): condition-variable, semaphore and lock
// timeouts do not work (a deadline on the virtual clock, waited for on the
// kernel's); randomness read other than through getrandom/getentropy is not
// controlled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/script_world.h"
#include "sim/status.h"

namespace xackly {

// Overrides RealConsumerOptions::request_timeout_ms (milliseconds).
inline constexpr char kRequestTimeoutEnv[] = "XACKLY_REQUEST_TIMEOUT_MS";

// The effect a consumer asks for with
//   XACKLY.EFFECT <event> [KEY k] [KEY_TTL ms] [ENTRY stream-id] [DURATION ms] [TIMEOUT ms]
// (argv[0] is the verb; options in any case, in any order, the last of one
// kind wins). Fails with kInvalidArgument, whose message is the error reply
// the consumer gets ("ERR xackly: ..."), on a missing event, an option
// without its value, an unknown option, or a millisecond value that is not
// a whole number in 0..kMaxDurationMs.
Result<EffectCall> ParseEffect(const std::vector<std::string>& argv);

// Where an XREADGROUP's BLOCK option is (its index in argv, argv[0] being
// the verb), or 0 when it has none: options come in any order before
// STREAMS (the server reads `XREADGROUP BLOCK 100 GROUP g c STREAMS s >`
// too), nothing after STREAMS is an option, and neither is an option's
// argument (a consumer named BLOCK).
size_t BlockOption(const std::vector<std::string>& argv);

// Whether the front answers `argv` itself as the connection set-up a client
// library sends (CLIENT SETNAME name, CLIENT SETINFO attr value, SELECT 0):
// "OK", as the server it stands for would. Anything else, a malformed
// CLIENT SETNAME without its name too, goes on to the server, which
// answers or refuses it as it would any script's command.
bool IsConnectionSetUp(const std::vector<std::string>& argv);

// Whether a sleeping thread's system call, as /proc/PID/task/TID/syscall
// shows it (the call's number, then its six arguments in hex; "running" or
// "-1 ..." when in none), ends by itself in real time: a raw sleep, or a
// futex, poll, select or epoll wait with a timeout (the clock preload's
// virtual waits reach the kernel with none, so they never do).
bool InTimedWait(std::string_view syscall_line);

struct RealConsumerOptions {
  // argv of one consumer process. argv[0] is looked up in PATH unless it
  // holds a '/' (then it is relative to working_dir).
  std::vector<std::string> command;
  std::string working_dir;      // where the process starts: the scenario's directory
  std::string clock_library;    // libxackly_clock.so ("" finds it as redis-server's)
  // Wall-clock time a process may take to send its next request (or exit)
  // after it got a reply (three times that for its first request, after it
  // starts): longer is a harness finding (a busy loop, a wait the front does
  // not see), never a hang. $XACKLY_REQUEST_TIMEOUT_MS
  // overrides it (Create reads it).
  int64_t request_timeout_ms = 20'000;
};

class RealConsumer final : public ProtocolScript {
 public:
  // Resolves argv[0] (PATH, or relative to working_dir) and the clock
  // library. Errors (kInvalidArgument) name what is missing.
  static Result<std::shared_ptr<const RealConsumer>> Create(RealConsumerOptions options);

  // The command as one line ("python3 consumer.py"): messages and reports.
  const std::string& path() const override { return shown_; }
  bool Defines(ScriptRole role) const override { return role == ScriptRole::kConsumer; }
  // A lost request or reply closes the connection it came on; the process
  // goes on (its client's own error handling runs).
  bool SeesConnectionResets() const override { return true; }
  // Starts one process and serves its requests until it exits (Ok when with
  // status 0) or the task is destroyed (a crash: the process is SIGKILLed
  // with its process group). A process that exits with another status after
  // its first request died on its own: world.Exit takes the actor down as a
  // crash (its supervisor restarts it). Errors (kInvalidArgument,
  // "<command>: ... (actor w1, step 57)"): it could not start or exited
  // before its first request (its last output lines are in the message),
  // sent something that is not a RESP request, or sent nothing for
  // request_timeout_ms.
  Task<Status> Run(ScriptActorInfo info, ScriptWorld& world) const override;

 private:
  RealConsumer(RealConsumerOptions options, std::string program, std::string shown)
      : options_(std::move(options)), program_(std::move(program)), shown_(std::move(shown)) {}
  RealConsumerOptions options_;
  std::string program_;  // argv[0] resolved to a path
  std::string shown_;
};

// The RESP2 encoding of `reply` (what a client reads).
std::string EncodeResp2(const Reply& reply);

// What a real consumer whose two runs of one seed differ most likely does
// (the determinism checks' hint, docs/real-consumers.md).
std::string NondeterministicConsumerHint();

}  // namespace xackly
