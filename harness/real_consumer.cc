#include "harness/real_consumer.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/server_dir.h"
#include "harness/subprocess.h"
#include "harness/virtual_clock.h"
#include "sim/limits.h"
#include "sim/text.h"

namespace xackly {

namespace {

constexpr char kFrontSocketName[] = "front.sock";
constexpr char kClockPageName[] = "clock";
constexpr char kOutputName[] = "consumer.log";
constexpr char kDatabaseName[] = "consumer.db";
// The largest request frame a process may send (a client's bulk strings are
// capped at 512 MiB by Redis; a consumer's requests are small).
constexpr size_t kMaxFrameBytes = size_t{16} << 20;
// How long a BLOCK 0 read parks before it looks again (it looks forever).
constexpr int64_t kForeverParkMs = 3'600'000;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

std::optional<int64_t> ParseMs(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > kMaxDurationMs) return std::nullopt;
  return v;
}

void AppendResp2(std::string* out, const Reply& r) {
  auto line = [out](char kind, std::string_view text) {
    *out += kind;
    for (char c : text) *out += (c == '\r' || c == '\n') ? ' ' : c;
    *out += "\r\n";
  };
  switch (r.type()) {
    case Reply::Type::kNil: *out += "$-1\r\n"; return;
    case Reply::Type::kInteger: line(':', std::to_string(r.integer())); return;
    case Reply::Type::kStatus: line('+', r.str()); return;
    case Reply::Type::kError: line('-', r.str()); return;
    case Reply::Type::kString:
      *out += fmt::format("${}\r\n", r.str().size());
      *out += r.str();
      *out += "\r\n";
      return;
    case Reply::Type::kArray:
      *out += fmt::format("*{}\r\n", r.size());
      for (const Reply& e : r.elements()) AppendResp2(out, e);
      return;
  }
}

// The last lines a process printed (for an error about it), at most ~1 KB.
std::string OutputTail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > 1000) text = "..." + text.substr(text.size() - 1000);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return "it printed nothing";
  for (char& c : text) {
    if (c == '\n') c = '|';
  }
  return "its last output: " + text;
}

// The last line of `text` (lines joined by '|'), at most 200 characters.
std::string LastLine(const std::string& text) {
  std::string line = text.substr(text.rfind('|') == std::string::npos ? 0 : text.rfind('|') + 1);
  return ClipText(line, 200);
}

// How long a thread asleep in a wait with a real-time timeout is taken as
// mid-work (waited for) before it is taken as asleep.
constexpr int64_t kTimedWaitGraceMs = 200;

// How many timed waits in a row may be answered "look again" before the
// run ends with an error: threads that never settle would otherwise keep
// the process looking for ever, with no step and no timeout.
constexpr int64_t kMaxLooksPerWait = 100000;

// One thread of a consumer's process tree.
struct ThreadOfTree {
  pid_t pid = 0;
  pid_t tid = 0;
};

// The threads of `root` and of every process it started, recursively
// (/proc/PID/task/TID/children); a process that has just exited is left out.
std::vector<ThreadOfTree> ThreadsOfTree(pid_t root) {
  std::vector<ThreadOfTree> out;
  std::vector<pid_t> processes = {root};
  for (size_t i = 0; i < processes.size() && processes.size() < 4096; ++i) {
    // increment(ec), never ++: a process that exits while its directory
    // is read ends the listing instead of throwing.
    std::error_code ec;
    std::filesystem::directory_iterator task(fmt::format("/proc/{}/task", processes[i]), ec);
    for (; !ec && task != std::filesystem::directory_iterator(); task.increment(ec)) {
      pid_t tid = 0;
      const std::string name = task->path().filename().string();
      if (std::from_chars(name.data(), name.data() + name.size(), tid).ec != std::errc()) continue;
      out.push_back({processes[i], tid});
      std::ifstream children(task->path() / "children");
      for (pid_t child = 0; children >> child;) processes.push_back(child);
    }
  }
  return out;
}

// Whether a sleeping thread is in a call that ends by itself in real time
// (InTimedWait), from its /proc/PID/task/TID/syscall.
bool InTimedWaitFile(const std::string& syscall_path) {
  std::ifstream in(syscall_path);
  std::string line;
  return std::getline(in, line) && InTimedWait(line);
}

// One request a process sent: which of its connections (an id that stays
// the connection's while it is open), and the command.
struct Frame {
  uint64_t connection = 0;
  std::vector<std::string> argv;
};

bool IsTimedWait(const Frame& f) { return EqualsIgnoreCase(f.argv[0], "XACKLY.WAIT"); }

// One running consumer process and the front's side of its connections.
// Destroying it SIGKILLs the process (with its process group) and removes
// its directory: a crash, or the end of the run.
class ConsumerProcess {
 public:
  ConsumerProcess() = default;
  ~ConsumerProcess() {
    for (Connection& c : connections_) Close(c);
    if (listener_ >= 0) ::close(listener_);
    if (pid_ > 0) KillAndReap(pid_);
  }
  ConsumerProcess(const ConsumerProcess&) = delete;
  ConsumerProcess& operator=(const ConsumerProcess&) = delete;

  Status Start(const RealConsumerOptions& options, const std::string& program, const ScriptActorInfo& info,
               const std::string& clock_library, const std::string& database_path, int64_t epoch_ms) {
    Result<std::unique_ptr<ServerDir>> dir = ServerDir::Create(DefaultTempRoot());
    if (!dir.ok()) return dir.status();
    dir_ = std::move(dir).value();
    Result<std::unique_ptr<VirtualClock>> clock = VirtualClock::Create(dir_->File(kClockPageName), epoch_ms);
    if (!clock.ok()) return clock.status();
    clock_ = std::move(clock).value();
    const std::string socket_path = dir_->File(kFrontSocketName);
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);  // ServerDir checked the length
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listener_, SOMAXCONN) != 0) {  // each timed wait connects: none may block in connect()
      return Status::IoError(fmt::format("cannot listen on {}: {}", socket_path, std::strerror(errno)));
    }
    const char* preload = std::getenv("LD_PRELOAD");
    SpawnOptions spawn;
    spawn.path = program;
    spawn.args.assign(options.command.begin() + 1, options.command.end());
    spawn.working_dir = options.working_dir;
    spawn.output_path = output_path_ = dir_->File(kOutputName);
    spawn.env = EnvironmentWith({
        "REDIS_URL=unix://" + socket_path,
        "XACKLY_FRONT_SOCKET=" + socket_path,  // the preload sends its sleeps here
        "XACKLY_WORKER=" + info.name,
        "XACKLY_SLOT=" + info.slot,
        fmt::format("XACKLY_INCARNATION={}", info.incarnation),
        "XACKLY_STREAM=" + info.stream,
        "XACKLY_GROUP=" + info.group,
        fmt::format("XACKLY_EVENTS={}", info.events),
        "XACKLY_SQLITE=" + database_path,
        fmt::format("XACKLY_RANDOM_SEED={}", info.seed),  // the preload's getrandom
        fmt::format("LD_PRELOAD={}{}{}", clock_library, preload != nullptr && *preload ? ":" : "",
                    preload != nullptr ? preload : ""),
        fmt::format("{}={}", kClockPageEnv, clock_->page_path()),
        "PYTHONHASHSEED=0",
        "PYTHONUNBUFFERED=1",
    });
    Result<pid_t> pid = Spawn(spawn);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    return Status::Ok();
  }

  // What the process reads as the wall clock from now on.
  void SetClock(int64_t epoch_ms) { clock_->SetMs(std::max(epoch_ms, clock_->NowMs())); }

  // The next request, in the order the process sent them (a pipeline's
  // frames one by one), or nullopt once the process has exited (*exit_status
  // set). Fails when it sends no request within `timeout_ms` of wall time,
  // or bytes that are not a RESP request.
  Result<std::optional<Frame>> Next(int64_t timeout_ms, int* exit_status) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      if (!drained_.empty()) {
        Frame f = std::move(drained_.front());
        drained_.pop_front();
        return std::optional<Frame>(std::move(f));
      }
      std::erase_if(connections_, [](const Connection& c) { return c.fd == -1; });
      for (size_t i = 0; i < connections_.size(); ++i) {
        Result<std::optional<Frame>> f = Parsed(i);
        if (!f.ok() || f->has_value()) return f;
      }
      if (ReapIfExited(pid_, exit_status)) {
        pid_ = -1;
        return std::optional<Frame>();
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Timeout(fmt::format(
            "sent no request for {} ms of wall time after its last reply: a busy loop, or a wait the front "
            "cannot see (select/poll/epoll timeouts, a condition variable, a thread, a Go sleep); sleeps "
            "and XREADGROUP BLOCK run on the virtual clock ({} sets this limit); {}",
            timeout_ms, kRequestTimeoutEnv, OutputTail(output_path_)));
      }
      if (Result<bool> got = ReceiveReady(20); !got.ok()) return got.status();
    }
  }

  // Reads every frame the process has sent by now into the queue Next
  // takes from first, in the order Next would have returned them. Called
  // once every thread of the process is asleep: each has written what it
  // sent before it slept (another thread's timed wait, or a request sent
  // before the wait being answered), and this reads all of it.
  Status Drain() {
    for (int round = 0; round < kMaxDrainRounds; ++round) {
      Result<bool> got = ReceiveReady(0);
      if (!got.ok()) return got.status();
      if (!*got) break;  // a new connection's bytes are read the round after its accept
    }
    for (size_t i = 0; i < connections_.size(); ++i) {
      for (;;) {
        Result<std::optional<Frame>> f = Parsed(i);
        if (!f.ok()) return f.status();
        if (!f->has_value()) break;
        drained_.push_back(std::move(**f));
      }
    }
    return Status::Ok();
  }

  // Removes the drained timed waits (XACKLY.WAIT) from the queue and
  // returns them, in order.
  std::vector<Frame> TakeDrainedWaits() {
    std::vector<Frame> waits;
    std::deque<Frame> rest;
    for (Frame& f : drained_) {
      if (IsTimedWait(f)) {
        waits.push_back(std::move(f));
      } else {
        rest.push_back(std::move(f));
      }
    }
    drained_ = std::move(rest);
    return waits;
  }

  // Whether a drained frame is still queued for Next.
  bool HasDrainedFrames() const { return !drained_.empty(); }

  // Sends `reply` on the connection a frame came from. A connection the
  // process has closed takes nothing (it will not read it). Fails when the
  // process reads none of it for `timeout_ms` of wall time (it is writing a
  // pipeline larger than the socket buffers before it reads any reply).
  Status Send(uint64_t connection, const Reply& reply, int64_t timeout_ms) {
    const Connection* c = Find(connection);
    if (c == nullptr || c->fd < 0) return Status::Ok();
    std::string bytes;
    AppendResp2(&bytes, reply);
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(c->fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{c->fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(timeout_ms, INT32_MAX))) == 0) {
          return Status::Timeout(fmt::format("read none of a reply for {} ms of wall time", timeout_ms));
        }
        continue;
      }
      if (n <= 0) return Status::Ok();  // it closed the connection
      sent += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  // Closes a connection as a reset would: the process sees it close, and
  // frames it had sent on it and not yet read are dropped with it.
  void Cut(uint64_t connection) {
    if (Connection* c = Find(connection); c != nullptr) Close(*c);
    std::erase_if(drained_, [connection](const Frame& f) { return f.connection == connection; });
  }

  std::string OutputTailText() const { return OutputTail(output_path_); }

  // Each thread of the process tree (the process and every process it
  // started: a wrapper's child, `sh -c node ...`), by thread id: its state
  // and how many times it has been switched out. Unchanged between two
  // snapshots: it did not run in between.
  using ThreadSnapshot = std::map<pid_t, std::string>;

  // Waits until every thread of the process tree sleeps with nothing it
  // will end by itself (a thread pool done with its work: what it produced,
  // an eventfd written, is ready before it sleeps again; a thread that
  // waits, blocked on the front's answer), then returns their snapshot.
  // A thread asleep in a wait with a real-time
  // timeout (a raw nanosleep, a timed futex or poll) is mid-work that ends
  // on its own, so it is waited for, up to kTimedWaitGraceMs of wall time;
  // longer, it is taken as asleep (a real-time timer is outside the
  // scheduler, docs/real-consumers.md). Fails when one keeps running for
  // `timeout_ms` of wall time.
  Result<ThreadSnapshot> QuietThreads(int64_t timeout_ms) const {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(timeout_ms);
    std::optional<ThreadSnapshot> previous;
    for (;;) {
      ThreadSnapshot snapshot;
      std::string busy;
      const bool grace = std::chrono::steady_clock::now() < start + std::chrono::milliseconds(kTimedWaitGraceMs);
      for (const ThreadOfTree& t : ThreadsOfTree(pid_)) {
        const std::string dir = fmt::format("/proc/{}/task/{}", t.pid, t.tid);
        std::ifstream in(dir + "/status");
        std::string line, state, switches;
        while (std::getline(in, line)) {
          if (line.starts_with("State:")) state = line.substr(line.find_first_not_of(" \t", 6));
          if (line.find("ctxt_switches:") != std::string::npos) switches += line + ";";
        }
        if (in.bad() || state.empty()) continue;  // it has just exited
        const char s = state[0];
        if (s != 'S' && s != 'T' && s != 't' && s != 'Z' && s != 'X') {
          busy = fmt::format("thread {} is {}", t.tid, state);
        } else if (s == 'S' && grace && InTimedWaitFile(dir + "/syscall")) {
          busy = fmt::format("thread {} is in a timed wait", t.tid);
        }
        snapshot[t.tid] = state.substr(0, 1) + switches;
      }
      // One pass reads the threads one after another, so a thread read
      // asleep may have woken before the pass ended: only two passes in a
      // row that read the same are a snapshot.
      const bool quiet = busy.empty();
      if (quiet && previous == snapshot) return snapshot;
      const bool first_quiet_pass = quiet && !previous;
      previous = quiet ? std::optional<ThreadSnapshot>(std::move(snapshot)) : std::nullopt;
      if (first_quiet_pass) continue;  // read again at once
      if (quiet) busy = "they were asleep at each look but kept waking in between";
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Timeout(fmt::format(
            "a thread kept running for {} ms of wall time while the process waited ({}): a busy thread is not "
            "under the scheduler ({} sets this limit); {}",
            timeout_ms, busy, kRequestTimeoutEnv, OutputTail(output_path_)));
      }
      ::usleep(100);
    }
  }

 private:
  struct Connection {
    uint64_t id = 0;
    int fd = -1;
    redisReader* reader = nullptr;
  };

  // How many rounds of reading a drain takes at most (each reads what is
  // ready; a round reads nothing once the process has sent all it will).
  static constexpr int kMaxDrainRounds = 1000;

  Connection* Find(uint64_t id) {
    auto it = std::find_if(connections_.begin(), connections_.end(), [id](const Connection& c) { return c.id == id; });
    return it == connections_.end() ? nullptr : &*it;
  }

  // Waits up to `timeout_ms` for the listener or a connection to be ready,
  // then accepts and reads what is; false when nothing was.
  Result<bool> ReceiveReady(int timeout_ms) {
    std::vector<pollfd> fds;
    fds.push_back({listener_, POLLIN, 0});
    for (const Connection& c : connections_) fds.push_back({c.fd, static_cast<short>(c.fd >= 0 ? POLLIN : 0), 0});
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) return Status::IoError(fmt::format("poll: {}", std::strerror(errno)));
    if (n < 0) return true;  // interrupted: look again
    if (n == 0) return false;
    if (fds[0].revents & POLLIN) Accept();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].fd >= 0 && fds[i].revents != 0) Receive(connections_[i - 1]);
    }
    return true;
  }

  // Closes the front's end of a connection; the process sees it close at
  // once. shutdown(2) first: close(2) alone ends the socket only with its
  // last descriptor, and a process another thread is forking (a case of
  // `check -j 2` starting its server or consumer) holds a copy of every
  // descriptor until it execs: the process would see the close that much
  // later, after a timed wait the front took as seeing nothing.
  static void Close(Connection& c) {
    if (c.reader != nullptr) redisReaderFree(c.reader);
    if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
    if (c.fd >= 0) ::close(c.fd);  // -2: closed already; -1: dropped
    c.reader = nullptr;
    c.fd = -1;
  }

  void Accept() {
    for (;;) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      Connection c;
      c.id = next_connection_id_++;
      c.fd = fd;
      c.reader = redisReaderCreate();
      connections_.push_back(c);
    }
  }

  void Receive(Connection& c) {
    char buf[65536];
    ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // the process closed it (or it broke): frames it sent before still count
      ::close(c.fd);
      c.fd = -2;  // closed; frames may remain in its reader
      return;
    }
    redisReaderFeed(c.reader, buf, static_cast<size_t>(n));
  }

  Result<std::optional<Frame>> Parsed(size_t i) {
    Connection& c = connections_[i];
    if (c.reader == nullptr) return std::optional<Frame>();
    void* raw = nullptr;
    if (redisReaderGetReply(c.reader, &raw) != REDIS_OK) {
      return Status::ProtocolError(fmt::format("sent bytes that are not a RESP request: {}", c.reader->errstr));
    }
    if (raw == nullptr) {
      if (c.reader->len - c.reader->pos > kMaxFrameBytes) {
        return Status::ProtocolError(fmt::format("sent a request of more than {} MiB", kMaxFrameBytes >> 20));
      }
      if (c.fd == -2) {  // closed, nothing left to read: dropped by the next Next
        redisReaderFree(c.reader);
        c.reader = nullptr;
        c.fd = -1;
      }
      return std::optional<Frame>();
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw), freeReplyObject);
    Frame f;
    f.connection = c.id;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
      return Status::ProtocolError("sent a request that is not an array of bulk strings (inline commands are not supported)");
    }
    for (size_t k = 0; k < reply->elements; ++k) {
      const redisReply* e = reply->element[k];
      if (e->type != REDIS_REPLY_STRING) {
        return Status::ProtocolError("sent a request whose arguments are not bulk strings");
      }
      f.argv.emplace_back(e->str, e->len);
    }
    return std::optional<Frame>(std::move(f));
  }

  std::unique_ptr<ServerDir> dir_;
  std::unique_ptr<VirtualClock> clock_;
  std::string output_path_;
  int listener_ = -1;
  pid_t pid_ = -1;
  std::vector<Connection> connections_;
  uint64_t next_connection_id_ = 1;
  // Frames a drain read, which Next returns before any other.
  std::deque<Frame> drained_;
};

// The front's side of a consumer's timed waits (XACKLY.WAIT <ms> <tid>: a
// thread's poll, epoll_wait or select found nothing ready, and <ms> of its
// timeout are left). A thread that sends one blocks until it is answered,
// then looks again. The process sleeps on the virtual clock (a sleep step)
// only when nothing can change before a timeout ends:
//   - every thread of it sleeps: each that waits is blocked on its answer,
//     every other asleep with nothing it ends by itself (QuietThreads);
//   - no request of it is waiting to be read (it was sent before a wait);
//   - each thread that waits has looked since the last request or commit
//     (a reply it was sent is read), and no other thread has run since the
//     last "look again" answer (a thread pool's work ends in a descriptor;
//     a thread that waited before and now does something else counts as
//     any other: only the threads waiting in this decision are left out).
// Then it sleeps until the earliest timeout of all its waiting threads, as
// a kernel would, and every one of them is answered and looks again (those
// whose timeout has not come send what is left). Otherwise every waiting
// thread is answered at once, and looks again.
class TimedWaits {
 public:
  struct Held {
    uint64_t connection = 0;
    pid_t tid = 0;
    int64_t ms = 0;
  };
  struct Decision {
    std::vector<Held> held;          // the waits to answer, `first` and every other one sent by now
    std::optional<int64_t> sleep_ms;  // nullopt: answer at once
  };

  // A request or a commit: what a waiting thread saw may have changed.
  void Progressed() {
    looked_again_.reset();
    answered_.clear();
    looks_ = 0;
  }

  // Decides what `first`, a timed wait Next returned, and every other one
  // the process has sent by now, are answered. Fails on a malformed wait,
  // on a thread that keeps running for `timeout_ms` of wall time, or when
  // the process's threads never settle.
  Result<Decision> Decide(ConsumerProcess& process, Frame first, int64_t timeout_ms) {
    Decision d;
    if (Status held = Hold(std::move(first), &d); !held.ok()) return held;
    Result<ConsumerProcess::ThreadSnapshot> threads = process.QuietThreads(timeout_ms);
    if (!threads.ok()) return threads.status();
    // Every thread sleeps, so each has written what it sent before it slept.
    if (Status drained = process.Drain(); !drained.ok()) return drained;
    for (Frame& other : process.TakeDrainedWaits()) {
      if (Status held = Hold(std::move(other), &d); !held.ok()) return held;
    }
    // The waiting threads look, and so run, between two of their waits:
    // only the others' snapshot says whether anything else ran.
    for (const Held& h : d.held) threads->erase(h.tid);
    const bool all_looked = std::all_of(d.held.begin(), d.held.end(), [&](const Held& h) {
      return answered_.contains(h.tid);
    });
    if (all_looked && !process.HasDrainedFrames() && looked_again_ == *threads) {
      d.sleep_ms = std::min_element(d.held.begin(), d.held.end(), [](const Held& a, const Held& b) {
                     return a.ms < b.ms;
                   })->ms;
      return d;
    }
    if (++looks_ > kMaxLooksPerWait) {
      return Status::Timeout(fmt::format(
          "its timed waits were answered \"look again\" {} times in a row without a request: its threads never "
          "settle (one that runs in real time, or one waiting in another pid namespace, is not under the "
          "scheduler); {}",
          kMaxLooksPerWait, process.OutputTailText()));
    }
    looked_again_ = std::move(threads).value();
    return d;
  }

  // The held waits were answered: each of their threads looks after this.
  void Answered(const Decision& d) {
    for (const Held& h : d.held) answered_.insert(h.tid);
  }

 private:
  Status Hold(Frame f, Decision* d) {
    std::optional<int64_t> ms = f.argv.size() == 3 ? ParseMs(f.argv[1]) : std::nullopt;
    std::optional<int64_t> tid = f.argv.size() == 3 ? ParseMs(f.argv[2]) : std::nullopt;
    if (!ms || !tid || *tid > INT32_MAX) {
      return Status::InvalidArgument(
          fmt::format("sent XACKLY.WAIT without milliseconds 0..{} and a thread id", kMaxDurationMs));
    }
    d->held.push_back({f.connection, static_cast<pid_t>(*tid), *ms});
    return Status::Ok();
  }

  // The snapshot of the threads that did not wait when the waiting ones
  // were last answered "look again"; none since the last request.
  std::optional<ConsumerProcess::ThreadSnapshot> looked_again_;
  // The threads answered since the last request: their next wait was sent
  // after a look that saw every reply sent before it.
  std::set<pid_t> answered_;
  // How many times in a row the waits were answered at once.
  int64_t looks_ = 0;
};

// The run's SQLite database, shared by every consumer process of the run
// (XACKLY_SQLITE): created with the effect table the oracle reads,
//   xackly_effects(id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, entry TEXT)
// and removed when the run ends. A row a process committed is a side effect
// that happened; a row rolled back (or never committed before a crash) never
// appears, so it is not counted.
class RunDatabase {
 public:
  struct Row {
    int64_t id = 0;
    std::string event;
    std::string entry;
  };

  static Result<std::shared_ptr<RunDatabase>> Create() {
    Result<std::unique_ptr<ServerDir>> dir = ServerDir::Create(DefaultTempRoot());
    if (!dir.ok()) return dir.status();
    std::shared_ptr<RunDatabase> db(new RunDatabase(std::move(dir).value()));
    const std::string path = db->path();
    if (sqlite3_open_v2(path.c_str(), &db->handle_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK ||
        sqlite3_exec(db->handle_,
                     "CREATE TABLE xackly_effects (id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, "
                     "entry TEXT)",
                     nullptr, nullptr, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db->handle_, "SELECT id, event, entry FROM xackly_effects WHERE id > ? ORDER BY id", -1,
                           &db->select_, nullptr) != SQLITE_OK) {
      return Status::IoError(fmt::format("cannot create the run's database {}: {}", path,
                                         db->handle_ != nullptr ? sqlite3_errmsg(db->handle_) : "out of memory"));
    }
    return db;
  }
  ~RunDatabase() {
    sqlite3_finalize(select_);
    sqlite3_close_v2(handle_);
  }
  RunDatabase(const RunDatabase&) = delete;
  RunDatabase& operator=(const RunDatabase&) = delete;

  std::string path() const { return dir_->File(kDatabaseName); }

  // The rows committed since the last call, in order. A database a process
  // holds locked (mid-commit) is read at the next call instead. Fails when
  // the table is gone or changed (the process dropped it).
  Result<std::vector<Row>> NewRows() {
    std::vector<Row> rows;
    sqlite3_bind_int64(select_, 1, last_id_);
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(select_)) == SQLITE_ROW) {
      Row r;
      r.id = sqlite3_column_int64(select_, 0);
      const unsigned char* event = sqlite3_column_text(select_, 1);
      const unsigned char* entry = sqlite3_column_text(select_, 2);
      r.event = event != nullptr ? reinterpret_cast<const char*>(event) : "";
      r.entry = entry != nullptr ? reinterpret_cast<const char*>(entry) : "";
      rows.push_back(std::move(r));
    }
    sqlite3_reset(select_);  // releases its read lock
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return std::vector<Row>();
    if (rc != SQLITE_DONE) {
      return Status::InvalidArgument(fmt::format(
          "the run's effect table xackly_effects in $XACKLY_SQLITE cannot be read ({}): a consumer must not drop or "
          "change it",
          sqlite3_errmsg(handle_)));
    }
    if (!rows.empty()) last_id_ = rows.back().id;
    return rows;
  }

 private:
  explicit RunDatabase(std::unique_ptr<ServerDir> dir) : dir_(std::move(dir)) {}
  std::unique_ptr<ServerDir> dir_;
  sqlite3* handle_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  int64_t last_id_ = 0;
};

// The run's database (ScriptActorInfo::run_memory), created by the first
// process of the run to start; a world without run memory (a test's) gets
// one of its own.
Result<std::shared_ptr<RunDatabase>> DatabaseOfRun(const ScriptActorInfo& info) {
  if (info.run_memory != nullptr && *info.run_memory != nullptr) {
    return std::static_pointer_cast<RunDatabase>(*info.run_memory);
  }
  Result<std::shared_ptr<RunDatabase>> db = RunDatabase::Create();
  if (db.ok() && info.run_memory != nullptr) *info.run_memory = *db;
  return db;
}

// Records the effects committed since the last look as the world's effect
// steps: by the process that is running, since the others wait for replies.
Task<Status> RecordCommitted(RunDatabase& db, ScriptWorld& world) {
  Result<std::vector<RunDatabase::Row>> rows = db.NewRows();
  if (!rows.ok()) co_return rows.status();
  for (RunDatabase::Row& row : *rows) {
    EffectCall call;
    call.event_id = std::move(row.event);
    call.stream_id = std::move(row.entry);
    call.sink = ScriptSink::kCommitted;
    call.origin = fmt::format("xackly_effects row {}", row.id);
    co_await world.Effect(std::move(call));
  }
  co_return Status::Ok();
}

Reply EffectReply(EffectOutcome o) {
  switch (o) {
    case EffectOutcome::kOk: return Reply::StatusText("OK");
    case EffectOutcome::kDuplicate: return Reply::StatusText("DUPLICATE");
    case EffectOutcome::kUnavailable: return Reply::Error("UNAVAILABLE the effect's service is unavailable: nothing ran");
    case EffectOutcome::kFailed: return Reply::Error("FAILED the effect failed for good (a poison event)");
    case EffectOutcome::kTimeout: return Reply::Error("TIMEOUT gave up waiting: the effect may or may not have run");
  }
  return Reply::Error("ERR xackly: unknown effect outcome");
}

}  // namespace

Result<EffectCall> ParseEffect(const std::vector<std::string>& argv) {
  const char* usage = "XACKLY.EFFECT <event> [KEY k] [KEY_TTL ms] [ENTRY stream-id] [DURATION ms] [TIMEOUT ms]";
  if (argv.size() < 2 || argv[1].empty() || argv.size() % 2 != 0) {
    return Status::InvalidArgument(fmt::format("ERR xackly: usage: {}", usage));
  }
  EffectCall call;
  call.event_id = argv[1];
  call.origin = "XACKLY.EFFECT";
  for (size_t i = 2; i + 1 < argv.size(); i += 2) {
    const std::string& option = argv[i];
    const std::string& value = argv[i + 1];
    if (EqualsIgnoreCase(option, "KEY")) {
      call.key = value;
      continue;
    }
    if (EqualsIgnoreCase(option, "ENTRY")) {
      call.stream_id = value;
      continue;
    }
    std::optional<int64_t> ms = ParseMs(value);
    int64_t* field = EqualsIgnoreCase(option, "KEY_TTL")    ? &call.key_ttl_ms
                     : EqualsIgnoreCase(option, "DURATION") ? &call.duration_ms
                     : EqualsIgnoreCase(option, "TIMEOUT")  ? &call.timeout_ms
                                                            : nullptr;
    if (field == nullptr) {
      return Status::InvalidArgument(fmt::format("ERR xackly: unknown option {} (usage: {})", option, usage));
    }
    if (!ms) {
      return Status::InvalidArgument(
          fmt::format("ERR xackly: {} takes milliseconds 0..{}, got {}", option, kMaxDurationMs, value));
    }
    *field = *ms;
  }
  return call;
}

bool InTimedWait(std::string_view syscall_line) {
  std::istringstream in{std::string(syscall_line)};
  long nr = -1;
  uint64_t a[6] = {};
  in >> nr >> std::hex >> a[0] >> a[1] >> a[2] >> a[3] >> a[4] >> a[5];
  if (!in) return false;  // "running", or not in a call
  const auto timeout_int = [](uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  switch (nr) {
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
      return true;
    case SYS_futex: {
      const uint64_t command = a[1] & 0x7f;  // without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME
      return (command == 0 /* FUTEX_WAIT */ || command == 9 /* FUTEX_WAIT_BITSET */) && a[3] != 0;
    }
#ifdef SYS_poll
    case SYS_poll:
      return timeout_int(a[2]) >= 0;
#endif
    case SYS_ppoll:
      return a[2] != 0;
#ifdef SYS_select
    case SYS_select:
      return a[4] != 0;
#endif
    case SYS_pselect6:
      return a[4] != 0;
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_epoll_pwait:
      return timeout_int(a[3]) >= 0;
    default:
      return false;
  }
}

size_t BlockOption(const std::vector<std::string>& argv) {
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "STREAMS")) return 0;
    if (EqualsIgnoreCase(argv[i], "BLOCK")) return i;
    // An option's arguments are no options (a consumer may be named BLOCK).
    if (EqualsIgnoreCase(argv[i], "GROUP")) i += 2;
    else if (EqualsIgnoreCase(argv[i], "COUNT")) i += 1;
  }
  return 0;
}

bool IsConnectionSetUp(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  if (EqualsIgnoreCase(argv[0], "CLIENT") && argv.size() >= 2) {
    return (EqualsIgnoreCase(argv[1], "SETNAME") && argv.size() == 3) ||
           (EqualsIgnoreCase(argv[1], "SETINFO") && argv.size() == 4);
  }
  return EqualsIgnoreCase(argv[0], "SELECT") && argv.size() == 2 && argv[1] == "0";
}

namespace {

bool ReadsOnlyNew(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (!EqualsIgnoreCase(argv[i], "STREAMS")) continue;
    const size_t keys = (argv.size() - i - 1) / 2;
    if (keys == 0) return false;
    for (size_t k = i + 1 + keys; k < argv.size(); ++k) {
      if (argv[k] != ">") return false;
    }
    return true;
  }
  return false;
}

// Performs one request as the world's step(s) and returns its reply.
Task<Reply> Perform(ScriptWorld& world, std::vector<std::string> argv) {
  const std::string& verb = argv[0];
  if (EqualsIgnoreCase(verb, "XACKLY.EFFECT")) {
    Result<EffectCall> call = ParseEffect(argv);
    if (!call.ok()) co_return Reply::Error(call.status().message());
    EffectOutcome o = co_await world.Effect(std::move(call).value());
    co_return EffectReply(o);
  }
  if (EqualsIgnoreCase(verb, "XACKLY.POINT") || EqualsIgnoreCase(verb, "XACKLY.SLEEP")) {
    const bool point = EqualsIgnoreCase(verb, "XACKLY.POINT");
    std::optional<int64_t> ms = argv.size() == 2 && !point ? ParseMs(argv[1]) : std::nullopt;
    if (argv.size() != 2 || argv[1].empty() || (!point && !ms)) {
      co_return Reply::Error(point ? "ERR xackly: usage: XACKLY.POINT <name>"
                                   : fmt::format("ERR xackly: usage: XACKLY.SLEEP <ms 0..{}>", kMaxDurationMs));
    }
    if (point) {
      co_await world.Point(argv[1]);
    } else {
      co_await world.Sleep(*ms);
    }
    co_return Reply::StatusText("OK");
  }
  // Connection set-up a client library may send: the front is the server.
  if (IsConnectionSetUp(argv)) co_return Reply::StatusText("OK");
  // INFO as a client library's ready check reads it (ioredis: loading:0).
  // The server's own INFO differs between two runs of one seed (pid, memory,
  // CPU time, paths), so it is never forwarded.
  if (EqualsIgnoreCase(verb, "INFO")) {
    co_return Reply::String(
        "# Server\r\nredis_version:7.0.0\r\nredis_mode:standalone\r\nxackly_front:1\r\n\r\n"
        "# Persistence\r\nloading:0\r\n\r\n# Replication\r\nrole:master\r\n");
  }
  if (EqualsIgnoreCase(verb, "XREADGROUP")) {
    if (size_t block = BlockOption(argv); block != 0) {
      std::optional<int64_t> ms = ParseMs(argv[block + 1]);
      if (!ms) co_return Reply::Error("ERR timeout is not an integer or out of range");
      argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(block),
                 argv.begin() + static_cast<std::ptrdiff_t>(block) + 2);
      const bool parks = ReadsOnlyNew(argv);
      for (;;) {
        Reply r = co_await world.Redis(argv);
        if (!r.is_nil() || !parks || world.ConnectionWasCut()) co_return r;
        bool woken = co_await world.Park(*ms == 0 ? kForeverParkMs : *ms);
        if (!woken && *ms != 0) co_return r;
      }
    }
  }
  Reply r = co_await world.Redis(std::move(argv));
  co_return r;
}

// argv[0] as a path: with a '/', relative to `dir`; else the first PATH
// entry that has it as an executable file.
Result<std::string> ResolveProgram(const std::string& name, const std::string& dir) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos) {
    fs::path p(name);
    if (p.is_relative()) p = fs::path(dir) / p;
    if (::access(p.c_str(), X_OK) != 0) {
      return Status::InvalidArgument(fmt::format("{} is not an executable file", p.lexically_normal().string()));
    }
    return p.lexically_normal().string();
  }
  const char* path = std::getenv("PATH");
  std::string_view entries = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!entries.empty()) {
    size_t colon = entries.find(':');
    std::string_view entry = entries.substr(0, colon);
    entries = colon == std::string_view::npos ? std::string_view() : entries.substr(colon + 1);
    if (entry.empty()) continue;
    fs::path p = fs::path(entry) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return Status::InvalidArgument(fmt::format("{} is not in PATH ({})", name, path != nullptr ? path : ""));
}

}  // namespace

std::string NondeterministicConsumerHint() {
  return "a real consumer must be a function of the replies it gets: no randomness xackly does not seed "
         "(getrandom and getentropy are seeded; reads of /dev/urandom, raw syscalls and OpenSSL's own source are "
         "not), no pid or real-time counter, no reply it reads from a server command that differs per run, and no "
         "two threads that each send requests (a heartbeat that sends a command beside the main loop: the front "
         "serves their requests in the order it reads them; a thread that only sleeps or waits is fine) "
         "(docs/real-consumers.md)";
}

std::string EncodeResp2(const Reply& reply) {
  std::string out;
  AppendResp2(&out, reply);
  return out;
}

Result<std::shared_ptr<const RealConsumer>> RealConsumer::Create(RealConsumerOptions options) {
  XACKLY_CHECK(!options.command.empty());
  std::string shown;
  for (const std::string& arg : options.command) shown += (shown.empty() ? "" : " ") + arg;
  Result<std::string> program = ResolveProgram(options.command[0], options.working_dir);
  if (!program.ok()) return Status::InvalidArgument(fmt::format("command {}: {}", shown, program.status().message()));
  if (const char* limit = std::getenv(kRequestTimeoutEnv); limit != nullptr && *limit != '\0') {
    std::optional<int64_t> ms = ParseMs(limit);
    if (!ms || *ms == 0) {
      return Status::InvalidArgument(fmt::format("{}={}: expected milliseconds 1..{}", kRequestTimeoutEnv, limit,
                                                 kMaxDurationMs));
    }
    options.request_timeout_ms = *ms;
  }
  Result<std::string> clock = FindClockLibrary(options.clock_library);
  if (!clock.ok()) return Status::InvalidArgument(fmt::format("command {}: {}", shown, clock.status().message()));
  options.clock_library = *clock;
  return std::shared_ptr<const RealConsumer>(
      new RealConsumer(std::move(options), std::move(program).value(), std::move(shown)));
}

Task<Status> RealConsumer::Run(ScriptActorInfo info, ScriptWorld& world) const {
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format("{}: {} ({})", shown_, why, world.Where()));
  };
  Result<std::shared_ptr<RunDatabase>> database = DatabaseOfRun(info);
  if (!database.ok()) co_return fail(database.status().message());
  RunDatabase& db = **database;
  ConsumerProcess process;
  Status started =
      process.Start(options_, program_, info, options_.clock_library, db.path(), info.epoch_ms + world.NowMs());
  if (!started.ok()) co_return fail("cannot start: " + started.message());
  int64_t requests = 0;
  TimedWaits waits;
  for (;;) {
    int exit_status = 0;
    // A process starting (an interpreter loading its modules on a busy
    // machine) may take longer than one step of its loop.
    const int64_t limit_ms = requests == 0 ? 3 * options_.request_timeout_ms : options_.request_timeout_ms;
    Result<std::optional<Frame>> frame = process.Next(limit_ms, &exit_status);
    if (!frame.ok()) co_return fail(frame.status().message());
    // What it committed before this request (or before it exited) happened
    // before it.
    Status recorded = co_await RecordCommitted(db, world);
    if (!recorded.ok()) co_return fail(recorded.message());
    if (!frame->has_value()) {
      if (WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0) co_return Status::Ok();
      const std::string how = fmt::format("{}; {}", DescribeWaitStatus(exit_status), process.OutputTailText());
      // Before its first request it could not start (a syntax error, a
      // missing module): the user's to fix. After, it died on its own (an
      // exception it let escape): a crash, restarted as a supervisor would.
      if (requests == 0) co_return fail(how);
      co_await world.Exit(fmt::format("{} {}: {}", shown_, DescribeWaitStatus(exit_status), LastLine(how)));
      co_return fail(how);  // only a world that cannot take it down gets here
    }
    Frame f = std::move(**frame);
    // XACKLY.WAIT <ms> <tid>: a timed wait of one of its threads that found
    // nothing ready (the preload's poll/epoll_wait/select): TimedWaits.
    // XACKLY.COMMITTED: the process has just committed to its SQLite
    // database (the preload's sqlite3_step); what it added is recorded
    // above, as effect steps, before this answer lets it go on.
    if (IsTimedWait(f)) {
      Result<TimedWaits::Decision> decision = waits.Decide(process, std::move(f), options_.request_timeout_ms);
      if (!decision.ok()) co_return fail(decision.status().message());
      if (decision->sleep_ms) {
        co_await world.Sleep(*decision->sleep_ms);
        process.SetClock(info.epoch_ms + world.ReadyAtMs());
      }
      for (const TimedWaits::Held& h : decision->held) {
        if (Status sent = process.Send(h.connection, Reply::StatusText("OK"), options_.request_timeout_ms);
            !sent.ok()) {
          co_return fail(sent.message());
        }
      }
      waits.Answered(*decision);
      continue;
    }
    waits.Progressed();
    if (EqualsIgnoreCase(f.argv[0], "XACKLY.COMMITTED")) {
      if (Status sent = process.Send(f.connection, Reply::StatusText("OK"), options_.request_timeout_ms); !sent.ok()) {
        co_return fail(sent.message());
      }
      continue;
    }
    ++requests;
    Reply reply = co_await Perform(world, std::move(f.argv));
    // The process reads the clock as soon as it has the reply: set it first.
    process.SetClock(info.epoch_ms + world.ReadyAtMs());
    if (world.ConnectionWasCut()) {  // a lost request or reply: it sees the connection close
      process.Cut(f.connection);
      continue;
    }
    if (Status sent = process.Send(f.connection, reply, options_.request_timeout_ms); !sent.ok()) {
      co_return fail(sent.message());
    }
  }
}

}  // namespace xackly
