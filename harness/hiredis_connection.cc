#include "harness/hiredis_connection.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <csignal>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace xackly {

namespace {

void IgnoreSigpipeOnce() {
  static const bool kIgnored = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)kIgnored;
}

// hiredis's parser builds xackly Replies directly (its reply-object hooks),
// so a reply is allocated once, as the Reply the simulator reads, instead
// of as a redisReply tree that is then copied into a Reply and freed. The
// root is a heap Reply the caller takes over (TakeReply); every element is
// filled in place in its parent, which owns it.
Reply* Slot(const redisReadTask* task) {
  if (task->parent == nullptr) return new Reply();
  return &static_cast<Reply*>(task->parent->obj)->mutable_element(static_cast<size_t>(task->idx));
}

void* CreateString(const redisReadTask* task, char* str, size_t len) {
  Reply* slot = Slot(task);
  std::string text(str, len);
  switch (task->type) {
    case REDIS_REPLY_STATUS: *slot = Reply::StatusText(std::move(text)); break;
    case REDIS_REPLY_ERROR: *slot = Reply::Error(std::move(text)); break;
    default: *slot = Reply::String(std::move(text)); break;
  }
  return slot;
}

void* CreateArray(const redisReadTask* task, int elements) {
  Reply* slot = Slot(task);
  *slot = Reply::Array(std::vector<Reply>(static_cast<size_t>(std::max(elements, 0))));
  return slot;
}

void* CreateInteger(const redisReadTask* task, long long value) {
  Reply* slot = Slot(task);
  *slot = Reply::Integer(value);
  return slot;
}

void* CreateNil(const redisReadTask* task) { return Slot(task); }  // a Reply starts nil

void FreeRoot(void* root) { delete static_cast<Reply*>(root); }

redisReplyObjectFunctions g_reply_functions = {CreateString, CreateArray, CreateInteger, CreateNil,
                                               FreeRoot};

// Appends `argv` as one RESP request ("*2\r\n$4\r\nPING\r\n..."). hiredis's own
// formatter (redisAppendCommandArgv) builds the same bytes through
// sdscatfmt, at several times the cost.
void AppendRequest(std::string& out, std::span<const std::string_view> argv) {
  // Sized once, then written in place: appending piece by piece checked the
  // capacity for every "\r\n" and cost more than hiredis's own copy.
  char digits[24];
  auto count_size = [&](size_t n) {
    return static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), n).ptr - digits);
  };
  size_t size = 1 + count_size(argv.size()) + 2;
  for (std::string_view arg : argv) size += 1 + count_size(arg.size()) + 2 + arg.size() + 2;
  size_t at = out.size();
  out.resize(at + size);
  char* p = out.data() + at;
  auto put_count = [&](char kind, size_t n) {
    *p++ = kind;
    p = std::to_chars(p, out.data() + out.size(), n).ptr;
    *p++ = '\r';
    *p++ = '\n';
  };
  put_count('*', argv.size());
  for (std::string_view arg : argv) {
    put_count('$', arg.size());
    if (!arg.empty()) std::memcpy(p, arg.data(), arg.size());
    p += arg.size();
    *p++ = '\r';
    *p++ = '\n';
  }
  XACKLY_CHECK(p == out.data() + out.size());
}

// Takes over a root object the parser returned.
Reply TakeReply(void* root) {
  std::unique_ptr<Reply> owned(static_cast<Reply*>(root));
  return std::move(*owned);
}

class HiredisConnection final : public Connection {
 public:
  HiredisConnection(redisContext* context, std::string socket_path)
      : context_(context), socket_path_(std::move(socket_path)) {}
  // The server sees the connection close at once (a crashed worker's is
  // gone from CLIENT LIST, its MULTI discarded): shutdown(2) first, since
  // close(2) ends the socket only with its last descriptor, and a process
  // another thread is forking holds a copy of each until it execs.
  ~HiredisConnection() override {
    if (context_ == nullptr) return;
    if (context_->fd >= 0) ::shutdown(context_->fd, SHUT_RDWR);
    redisFree(context_);
  }
  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  Result<Reply> Call(std::span<const std::string_view> argv) override {
    XACKLY_CHECK(!argv.empty());
    if (context_ == nullptr) {
      return Status::Closed(fmt::format("connection to {} is dead: {}", socket_path_, death_));
    }
    // The request buffer is a member so that a call allocates nothing here
    // once it has grown to the longest command seen.
    request_.clear();
    AppendRequest(request_, argv);
    void* raw = nullptr;
    if (redisAppendFormattedCommand(context_, request_.data(), request_.size()) != REDIS_OK ||
        redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      return Die(errno);
    }
    return TakeReply(raw);
  }

  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    if (context_ == nullptr) {
      return Status::Closed(fmt::format("connection to {} is dead: {}", socket_path_, death_));
    }
    request_.clear();
    for (const auto& argv : commands) {
      XACKLY_CHECK(!argv.empty());
      AppendRequest(request_, argv);
    }
    if (redisAppendFormattedCommand(context_, request_.data(), request_.size()) != REDIS_OK) {
      return Die(errno);
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) return Die(errno);
      replies.push_back(TakeReply(raw));
    }
    return replies;
  }

  bool alive() const override { return context_ != nullptr; }

 private:
  // Turns the context's error into a Status and kills the connection.
  Status Die(int saved_errno) {
    Status status;
    const std::string what = context_->errstr;
    switch (context_->err) {
      case REDIS_ERR_IO:
        if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) {
          status = Status::Timeout(fmt::format("no reply from {} in time", socket_path_));
        } else {
          status = Status::IoError(fmt::format("{}: {}", socket_path_, what));
        }
        break;
      case REDIS_ERR_EOF:
        status = Status::IoError(fmt::format("{}: server closed the connection", socket_path_));
        break;
      case REDIS_ERR_PROTOCOL:
        status = Status::ProtocolError(fmt::format("{}: {}", socket_path_, what));
        break;
      default:
        status = Status::IoError(fmt::format("{}: {}", socket_path_, what));
        break;
    }
    death_ = status.ToString();
    redisFree(context_);
    context_ = nullptr;
    return status;
  }

  redisContext* context_;  // nullptr once dead
  const std::string socket_path_;
  std::string death_;  // why the connection died
  std::string request_;  // RESP of the request being sent
};

}  // namespace

Result<std::unique_ptr<Connection>> ConnectUnix(const std::string& socket_path, int timeout_ms) {
  XACKLY_CHECK(timeout_ms > 0);
  IgnoreSigpipeOnce();
  redisContext* context = redisConnectUnixWithTimeout(socket_path.c_str(), ToTimeval(timeout_ms));
  if (context == nullptr) {
    return Status::IoError(fmt::format("cannot connect to {}: out of memory", socket_path));
  }
  if (context->err != 0 || redisSetTimeout(context, ToTimeval(timeout_ms)) != REDIS_OK) {
    Status status = Status::IoError(fmt::format("cannot connect to {}: {}", socket_path, context->errstr));
    redisFree(context);
    return status;
  }
  // No child (a server started later) may inherit the socket: a server
  // that held another server's connection open would keep it alive.
  if (::fcntl(context->fd, F_SETFD, FD_CLOEXEC) != 0) {
    Status status = Status::IoError(fmt::format("cannot set close-on-exec on the connection to {}: {}",
                                                socket_path, std::strerror(errno)));
    redisFree(context);
    return status;
  }
  context->reader->fn = &g_reply_functions;
  return std::unique_ptr<Connection>(new HiredisConnection(context, socket_path));
}

timeval ToTimeval(int timeout_ms) {
  timeval tv;
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  return tv;
}

}  // namespace xackly
