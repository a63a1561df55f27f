#include "harness/hiredis_connection.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <csignal>
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

timeval ToTimeval(int timeout_ms) {
  timeval tv;
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  return tv;
}

Reply ToReply(const redisReply& r) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
      return Reply::String(std::string(r.str, r.len));
    case REDIS_REPLY_INTEGER:
      return Reply::Integer(r.integer);
    case REDIS_REPLY_STATUS:
      return Reply::StatusText(std::string(r.str, r.len));
    case REDIS_REPLY_ERROR:
      return Reply::Error(std::string(r.str, r.len));
    case REDIS_REPLY_ARRAY: {
      std::vector<Reply> elements;
      elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) elements.push_back(ToReply(*r.element[i]));
      return Reply::Array(std::move(elements));
    }
    case REDIS_REPLY_NIL:
    default:  // hiredis 0.14 produces no other type
      return Reply::Nil();
  }
}

class HiredisConnection final : public Connection {
 public:
  HiredisConnection(redisContext* context, std::string socket_path)
      : context_(context), socket_path_(std::move(socket_path)) {}
  ~HiredisConnection() override {
    if (context_ != nullptr) redisFree(context_);
  }
  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  Result<Reply> Call(std::span<const std::string_view> argv) override {
    XACKLY_CHECK(!argv.empty());
    if (context_ == nullptr) {
      return Status::Closed(fmt::format("connection to {} is dead: {}", socket_path_, death_));
    }
    // The argument buffers are members so that a call allocates nothing here
    // once they have grown to the longest command seen.
    arg_ptrs_.clear();
    arg_lens_.clear();
    for (std::string_view arg : argv) {
      arg_ptrs_.push_back(arg.data());
      arg_lens_.push_back(arg.size());
    }
    void* raw = redisCommandArgv(context_, static_cast<int>(argv.size()), arg_ptrs_.data(),
                                 arg_lens_.data());
    if (raw == nullptr) return Die(errno);
    auto* reply = static_cast<redisReply*>(raw);
    Reply value = ToReply(*reply);
    freeReplyObject(reply);
    return value;
  }

  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    if (context_ == nullptr) {
      return Status::Closed(fmt::format("connection to {} is dead: {}", socket_path_, death_));
    }
    for (const auto& argv : commands) {
      XACKLY_CHECK(!argv.empty());
      arg_ptrs_.clear();
      arg_lens_.clear();
      for (std::string_view arg : argv) {
        arg_ptrs_.push_back(arg.data());
        arg_lens_.push_back(arg.size());
      }
      if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), arg_ptrs_.data(),
                                 arg_lens_.data()) != REDIS_OK) {
        return Die(errno);
      }
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) return Die(errno);
      auto* reply = static_cast<redisReply*>(raw);
      replies.push_back(ToReply(*reply));
      freeReplyObject(reply);
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
  std::vector<const char*> arg_ptrs_;
  std::vector<size_t> arg_lens_;
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
  return std::unique_ptr<Connection>(new HiredisConnection(context, socket_path));
}

}  // namespace xackly
