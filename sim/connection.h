// The single seam for Redis traffic. The simulator, the doctor and the
// benchmarks talk to Redis only through Connection; exactly one
// implementation (harness/hiredis_connection.cc) includes hiredis, and fault
// injection (lost requests, lost replies) is a wrapper around it, in the
// spirit of LevelDB's EnvWrapper.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sim/reply.h"
#include "sim/status.h"

namespace xackly {

class Connection {
 public:
  virtual ~Connection() = default;

  // Sends one command, given as binary-safe arguments, and waits for its
  // reply. An error reply from the server (-ERR, -NOGROUP, ...) is a value:
  // the result is ok() and holds a Reply of type kError.
  // A non-ok Status means the exchange itself failed:
  //   kIoError        the socket failed (server gone, reset)
  //   kTimeout        no reply within the connection's deadline
  //   kProtocolError  the server sent something that is not RESP
  //   kClosed         the connection was already dead before this call
  // After any non-ok Status the connection is dead for good: alive() is
  // false and every later Call returns kClosed. Reconnecting is explicit
  // (make a new Connection); nothing here reconnects behind the caller.
  // REQUIRES: !argv.empty()
  virtual Result<Reply> Call(std::span<const std::string_view> argv) = 0;
  Result<Reply> Call(std::initializer_list<std::string_view> argv) {
    return Call(std::span<const std::string_view>(argv.begin(), argv.size()));
  }

  virtual bool alive() const = 0;

  // Sends every command, then reads every reply: one round trip for all of
  // them (pipelining). The replies are in command order; a non-ok Status
  // means one exchange failed and the connection is dead, as for Call.
  // REQUIRES: no command is empty
  virtual Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) {
    std::vector<Reply> replies;
    for (const auto& argv : commands) {
      Result<Reply> r = Call(argv);
      if (!r.ok()) return r.status();
      replies.push_back(std::move(r).value());
    }
    return replies;
  }
};

// Forwards every call to a wrapped connection; subclasses override only what
// they change (fault injection, counting, recording).
class ConnectionWrapper : public Connection {
 public:
  // Takes ownership of `target`. REQUIRES: target != nullptr
  explicit ConnectionWrapper(std::unique_ptr<Connection> target) : target_(std::move(target)) {}
  Result<Reply> Call(std::span<const std::string_view> argv) override { return target_->Call(argv); }
  using Connection::Call;
  bool alive() const override { return target_->alive(); }
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    return target_->CallAll(commands);
  }

 protected:
  Connection& target() { return *target_; }
  const Connection& target() const { return *target_; }
  // Hands the wrapped connection back; the wrapper must not be used after.
  std::unique_ptr<Connection> ReleaseTarget() { return std::move(target_); }

 private:
  std::unique_ptr<Connection> target_;
};

}  // namespace xackly
