#include "sim/lua/cpu_watchdog.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include <lua.hpp>

#include "sim/status.h"

namespace xackly {
namespace {

constexpr int kSignal = SIGXCPU;
// Ticks per limit: the watchdog fires after between 1 and 1 + 1/kTicks
// limits of CPU time in one step.
constexpr int kTicksPerLimit = 4;

// What the signal handler reads: trivially constructed thread-locals only.
thread_local lua_State* t_state = nullptr;  // the running step's thread; null: no step
thread_local const char* t_path = nullptr;
thread_local int64_t t_limit_ms = 0;
thread_local uint64_t t_serial = 0;       // steps started on this thread
thread_local uint64_t t_seen_serial = 0;  // the step the handler last saw
thread_local int t_ticks = 0;             // its ticks so far
thread_local bool t_timer_running = false;

// The thread's CPU-time timer, deleted when the thread exits.
struct ThreadTimer {
  timer_t id{};
  bool made = false;
  int64_t tick_ms = 0;
  ~ThreadTimer() {
    if (made) timer_delete(id);
  }
};
thread_local ThreadTimer t_timer;

// Async-signal-safe text building.
struct Text {
  char buf[1024];
  size_t len = 0;
  void Add(const char* s) {
    while (s != nullptr && *s != '\0' && len + 1 < sizeof buf) buf[len++] = *s++;
  }
  void AddNumber(int64_t n) {
    char digits[24];
    int k = 0;
    if (n < 0) n = 0;
    do {
      digits[k++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0 && k < 23);
    while (k > 0 && len + 1 < sizeof buf) buf[len++] = digits[--k];
  }
};

void OnTick(int /*sig*/) {
  const int saved_errno = errno;
  if (t_state == nullptr) {  // between steps: stop ticking until the next one
    t_timer_running = false;
    if (t_timer.made) {
      itimerspec off{};
      timer_settime(t_timer.id, 0, &off, nullptr);
    }
    errno = saved_errno;
    return;
  }
  if (t_serial != t_seen_serial) {
    t_seen_serial = t_serial;
    t_ticks = 0;
  }
  if (++t_ticks <= kTicksPerLimit) {
    errno = saved_errno;
    return;
  }
  // The same step for a whole limit: name where it is and end the process.
  Text m;
  m.Add("xackly: ");
  lua_Debug ar;
  bool placed = false;
  for (int level = 0; !placed && lua_getstack(t_state, level, &ar) != 0; ++level) {
    if (lua_getinfo(t_state, "Sl", &ar) != 0 && ar.currentline > 0) {
      m.Add(ar.short_src);
      m.Add(":");
      m.AddNumber(ar.currentline);
      placed = true;
    }
  }
  if (!placed) m.Add(t_path);
  m.Add(": a single step of the protocol script used more than ");
  m.AddNumber(t_limit_ms);
  m.Add(" ms of CPU time (a string pattern that backtracks without end, a __gc finalizer that "
        "never returns, or another call the instruction budget cannot interrupt); the run was "
        "stopped (exit 2)\n");
  ssize_t ignored = ::write(2, m.buf, m.len);
  (void)ignored;
  ::_exit(2);
}

void InstallHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_handler = &OnTick;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    XACKLY_CHECK(sigaction(kSignal, &sa, nullptr) == 0);
  });
}

// Starts (or re-paces) this thread's timer: a tick every limit/kTicks of
// the thread's CPU time.
void StartTimer(int64_t limit_ms) {
  const int64_t tick_ms = limit_ms / kTicksPerLimit > 0 ? limit_ms / kTicksPerLimit : 1;
  if (!t_timer.made) {
    InstallHandlerOnce();
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = kSignal;
    sev._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t_timer.id) != 0) return;  // no watchdog
    t_timer.made = true;
  }
  if (t_timer_running && t_timer.tick_ms == tick_ms) return;
  itimerspec every{};
  every.it_interval.tv_sec = tick_ms / 1000;
  every.it_interval.tv_nsec = (tick_ms % 1000) * 1'000'000;
  every.it_value = every.it_interval;
  t_timer.tick_ms = tick_ms;
  t_timer_running = timer_settime(t_timer.id, 0, &every, nullptr) == 0;
}

}  // namespace

CpuWatchdogStep::CpuWatchdogStep(lua_State* L, const char* script_path, int64_t cpu_ms_limit) {
  if (t_state != nullptr || cpu_ms_limit <= 0) return;
  outer_ = true;
  t_path = script_path;
  t_limit_ms = cpu_ms_limit;
  ++t_serial;
  StartTimer(cpu_ms_limit);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_state = L;  // last: the handler acts only on a fully described step
}

CpuWatchdogStep::~CpuWatchdogStep() {
  if (outer_) t_state = nullptr;
}

}  // namespace xackly
