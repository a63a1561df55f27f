// Starting and reaping child processes (redis-server, mostly). The only
// place in xackly that calls fork/exec.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sim/status.h"

namespace xackly {

struct SpawnOptions {
  std::string path;               // executable to run (no PATH search)
  std::vector<std::string> args;  // argv[1..]; argv[0] is `path`
  std::vector<std::string> env;   // the whole environment, "NAME=value" each
  std::string output_path;        // stdout and stderr are appended here
  int cpu = -1;                   // >= 0: the child runs on this CPU alone
  std::string working_dir;        // non-empty: the child starts there (else xackly's)
};

// Starts `options.path` as a child of the calling thread. The child:
//   - has stdin on /dev/null and stdout+stderr appended to output_path;
//   - runs in its own process group (a terminal's Ctrl-C reaches only
//     xackly, which then decides what happens to the server);
//   - has default signal dispositions and an empty signal mask;
//   - runs, with every thread it starts, on CPU `cpu` alone when cpu >= 0
//     (sched_setaffinity before exec), else on the calling thread's CPUs;
//   - gets SIGKILL when the thread that spawned it exits, for any reason,
//     including `kill -9` of xackly (PR_SET_PDEATHSIG). Linux ties this to
//     the spawning *thread*, not the process: the owner must keep that
//     thread alive for as long as the child should run;
//   - has a guardian in its process group: a forked copy of xackly that
//     holds nothing but the read end of a pipe only xackly can write to,
//     and SIGKILLs the whole group once xackly is gone. That covers what
//     the parent-death signal cannot: a child that is a wrapper script and
//     starts the real server without `exec` (the server is a grandchild).
//     The group's id is the child's pid. Reaping the child (WaitForExit,
//     ReapIfExited, KillAndReap) kills what is left of its group and
//     reaps the guardian.
// Fails with kIoError when the output file cannot be opened, the CPU
// cannot be bound (not in the allowed set) or exec fails (the message
// carries errno's text); the child is reaped in that case.
Result<pid_t> Spawn(const SpawnOptions& options);

// Waits up to `timeout_ms` for `pid` (a child of this process) to exit and
// reaps it. Returns true and sets *wait_status when it exited in time.
bool WaitForExit(pid_t pid, int timeout_ms, int* wait_status);

// If `pid` has exited, reaps it, sets *wait_status and returns true.
bool ReapIfExited(pid_t pid, int* wait_status);

// SIGKILLs `pid` (a child of this process started by Spawn) with its whole
// process group, and reaps it.
void KillAndReap(pid_t pid);

// "exited with status 1", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int wait_status);

// True while `pid` is a process that has not exited (a zombie counts as
// exited). Works for processes that are not our children.
bool ProcessRunning(pid_t pid);

// This process's environment with every NAME in `overrides` ("NAME=value")
// replacing any existing NAME.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides);

}  // namespace xackly
