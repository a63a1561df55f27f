// Killed-harness hygiene: no redis-server may outlive the xackly process that
// started it. Three layers make sure of it:
//   1. every server child runs with PR_SET_PDEATHSIG=SIGKILL in a process
//      group of its own with a guardian that kills the group when xackly
//      is gone (see harness/subprocess.h): this covers even `kill -9` of
//      xackly, and a --server wrapper script that does not `exec`;
//   2. this registry of live server pids, which the xackly executable's
//      SIGINT/SIGTERM/SIGHUP handlers SIGKILL before dying;
//   3. stale temp dirs left by a killed xackly are swept when the next
//      server starts (harness/server_dir.h).
#pragma once

#include <sys/types.h>

namespace xackly {

// Records `pid` as a live server. Async-signal-safe, lock-free.
// REQUIRES: pid > 0, and fewer than kMaxLiveServers servers are registered.
void RegisterLiveServer(pid_t pid);
// Forgets `pid` (no-op when it is not registered). Async-signal-safe.
void UnregisterLiveServer(pid_t pid);
// Sends SIGKILL to every registered pid and its process group (Spawn puts
// each server in its own). Async-signal-safe.
void KillLiveServers();
// How many pids are registered now (for tests and diagnostics).
int LiveServerCount();

inline constexpr int kMaxLiveServers = 64;

// Installs handlers for SIGINT, SIGTERM and SIGHUP that KillLiveServers(),
// restore the default action and re-raise the signal, so that the process
// still dies of that signal (its exit status tells the parent what happened).
// Call once, early in main().
void InstallLiveServerSignalHandlers();

}  // namespace xackly
