#include "harness/subprocess.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace xackly {

namespace {

// Pointers into `strings`, NULL-terminated, for execve.
std::vector<char*> CStringArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecChild(pid_t parent, int null_fd, int out_fd, int errno_pipe,
                            const cpu_set_t* cpus, const char* cwd, const char* path,
                            char* const* argv, char* const* envp) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died between fork() and prctl(); then the death
  // signal will never come, so stop here.
  if (getppid() != parent) _exit(127);
  setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // fails harmlessly for some
  sigset_t none;  // Spawn() blocked everything around fork()
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (cpus != nullptr && sched_setaffinity(0, sizeof(*cpus), cpus) != 0) {
    int err = -errno;  // negative: the CPU, not exec, failed
    (void)!write(errno_pipe, &err, sizeof(err));
    _exit(127);
  }
  if ((cwd != nullptr && chdir(cwd) != 0) || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 ||
      dup2(out_fd, 2) < 0) {
    int err = errno;
    (void)!write(errno_pipe, &err, sizeof(err));
    _exit(127);
  }
  execve(path, argv, envp);
  int err = errno;
  (void)!write(errno_pipe, &err, sizeof(err));
  _exit(127);
}

// The lifeline: a pipe whose write end only this process holds (opened
// close-on-exec, never closed). Every group guardian reads the other end
// and sees end-of-file once this process is gone, however it ended.
// Returns the read end, or -1 when no pipe could be made.
int LifelineReadEnd() {
  static const int read_end = [] {
    int fds[2];
    return ::pipe2(fds, O_CLOEXEC) == 0 ? fds[0] : -1;
  }();
  return read_end;
}

// The guardian of process group `group`, in a forked (never exec'd) copy of
// this process: async-signal-safe calls only. It joins the group (so that
// killing the group ends it too), keeps nothing open but the lifeline and
// waits; when the lifeline ends, it kills the whole group. This is what
// ends a server that a wrapper script started without `exec`, whose own
// parent-death signal never comes, when xackly is killed with SIGKILL.
[[noreturn]] void GuardGroup(pid_t group, int lifeline) {
  if (::setpgid(0, group) != 0) _exit(0);  // the group is already gone
  if (::dup2(lifeline, 0) < 0) _exit(0);
  ::syscall(SYS_close_range, 1U, ~0U, 0U);
  char byte;
  while (true) {
    const ssize_t n = ::read(0, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::kill(-group, SIGKILL);
  _exit(0);
}

// Each live group's guardian: group id -> guardian pid.
std::mutex g_guardians_mu;
std::map<pid_t, pid_t> g_guardians;

// Starts GuardGroup for `group` as a child of this process (reaped by
// ReleaseGroup). Best effort: without it, the parent-death signal and the
// signal handlers still end a server that execs, and the group kill still
// ends a wrapper's server whenever xackly lives to send it.
void StartGroupGuardian(pid_t group) {
  const int lifeline = LifelineReadEnd();
  if (lifeline < 0) return;
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);  // the guardian keeps them blocked
  const pid_t guardian = ::fork();
  if (guardian == 0) GuardGroup(group, lifeline);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (guardian < 0) return;
  std::lock_guard<std::mutex> lock(g_guardians_mu);
  g_guardians[group] = guardian;
}

// After `pid` was reaped: kills what is left of its process group (a
// wrapper's server, its guardian) and reaps the guardian.
void ReleaseGroup(pid_t pid) {
  pid_t guardian = -1;
  {
    std::lock_guard<std::mutex> lock(g_guardians_mu);
    auto it = g_guardians.find(pid);
    if (it == g_guardians.end()) return;
    guardian = it->second;
    g_guardians.erase(it);
  }
  ::kill(-pid, SIGKILL);  // the guardian keeps the group id from being reused until here
  ::kill(guardian, SIGKILL);
  int status;
  while (::waitpid(guardian, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<pid_t> Spawn(const SpawnOptions& options) {
  std::vector<std::string> argv_strings;
  argv_strings.reserve(options.args.size() + 1);
  argv_strings.push_back(options.path);
  argv_strings.insert(argv_strings.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv = CStringArray(argv_strings);
  std::vector<char*> envp = CStringArray(options.env);
  cpu_set_t cpus;  // built here: the child may only make async-signal-safe calls
  CPU_ZERO(&cpus);
  if (options.cpu >= 0 && options.cpu < CPU_SETSIZE) CPU_SET(options.cpu, &cpus);

  int out_fd = ::open(options.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (out_fd < 0) {
    return Status::IoError(
        fmt::format("cannot open {}: {}", options.output_path, std::strerror(errno)));
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int errno_pipe[2];
  if (null_fd < 0 || ::pipe2(errno_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(out_fd);
    if (null_fd >= 0) ::close(null_fd);
    return Status::IoError(fmt::format("cannot prepare a child process: {}", std::strerror(err)));
  }

  // Signals stay blocked across fork so that no handler of this process
  // (such as the live-server killer) can run in the child before it has
  // reset every disposition; the child unblocks them itself.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(parent, null_fd, out_fd, errno_pipe[1], options.cpu >= 0 ? &cpus : nullptr,
              options.working_dir.empty() ? nullptr : options.working_dir.c_str(), options.path.c_str(),
              argv.data(), envp.data());
  }
  int fork_errno = errno;
  if (pid > 0) ::setpgid(pid, pid);  // as the child does: the group exists from here on
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(errno_pipe[1]);
  ::close(out_fd);
  ::close(null_fd);
  if (pid < 0) {
    ::close(errno_pipe[0]);
    return Status::IoError(fmt::format("fork failed: {}", std::strerror(fork_errno)));
  }
  // The pipe closes on a successful exec; otherwise the child sends errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(errno_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  ::close(errno_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    int status;
    ::waitpid(pid, &status, 0);
    if (child_errno < 0) {
      return Status::IoError(fmt::format("cannot bind {} to CPU {}: {}", options.path, options.cpu,
                                         std::strerror(-child_errno)));
    }
    return Status::IoError(
        fmt::format("cannot execute {}: {}", options.path, std::strerror(child_errno)));
  }
  StartGroupGuardian(pid);
  return pid;
}

bool ReapIfExited(pid_t pid, int* wait_status) {
  pid_t r;
  do {
    r = ::waitpid(pid, wait_status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return false;
  ReleaseGroup(pid);
  return true;
}

bool WaitForExit(pid_t pid, int timeout_ms, int* wait_status) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    if (ReapIfExited(pid, wait_status)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void KillAndReap(pid_t pid) {
  ::kill(-pid, SIGKILL);  // its group: whatever a wrapper started, and the guardian
  ::kill(pid, SIGKILL);
  int status;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  ReleaseGroup(pid);
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    return fmt::format("killed by signal {} ({})", sig, strsignal(sig));
  }
  return fmt::format("stopped (wait status {:#x})", wait_status);
}

bool ProcessRunning(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  // Format: "pid (comm) S ..."; comm may contain spaces and parentheses.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool overridden = false;
    for (const std::string& o : overrides) overridden |= name_of(o) == name_of(entry);
    if (!overridden) env.emplace_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

}  // namespace xackly
