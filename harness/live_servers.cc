#include "harness/live_servers.h"

#include <signal.h>

#include <atomic>

#include "sim/status.h"

namespace xackly {

namespace {

// Zero marks a free slot. std::atomic<pid_t> is lock-free on Linux, which is
// what makes the registry usable from a signal handler.
std::atomic<pid_t> g_live_pids[kMaxLiveServers];
static_assert(std::atomic<pid_t>::is_always_lock_free);

void KillAndReraise(int sig) {
  KillLiveServers();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

}  // namespace

void RegisterLiveServer(pid_t pid) {
  XACKLY_CHECK(pid > 0);
  for (auto& slot : g_live_pids) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
  XACKLY_CHECK(!"more than kMaxLiveServers live servers");
}

void UnregisterLiveServer(pid_t pid) {
  for (auto& slot : g_live_pids) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void KillLiveServers() {
  for (auto& slot : g_live_pids) {
    pid_t pid = slot.load();
    if (pid > 0) {
      kill(-pid, SIGKILL);  // its process group (harness/subprocess.h): a wrapper's server too
      kill(pid, SIGKILL);
    }
  }
}

int LiveServerCount() {
  int n = 0;
  for (auto& slot : g_live_pids) n += slot.load() > 0 ? 1 : 0;
  return n;
}

void InstallLiveServerSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = KillAndReraise;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

}  // namespace xackly
