// Lost requests and lost replies, as a wrapper around the one Redis seam
// (LevelDB's FaultInjectionTestEnv around its Env).
//
// Fault model:
//   lost-request  the request never reaches the server: nothing executes;
//                 the caller waits for a reply that never comes and gives
//                 up (a timeout), so it must reconnect and cannot know
//                 whether anything happened.
//   lost-reply    the request reaches the server and executes; its reply
//                 is lost on the way back: the caller times out exactly as
//                 above, although the command took effect.
// What a correct protocol must tolerate: both look the same to it (a
// timeout, unknown outcome), so a retry must be safe whether or not the
// first attempt ran (an XADD retried must not make a second event, an
// effect retried must be deduplicated), and work it held must be
// recoverable after it reconnects under the same or a new name.
//
// Which call loses what is decided outside (the fault plan draws it per
// visit of a named site, so that a plan replays exactly); the wrapper only
// injects it. The reply a fault hid is kept for the harness: the oracle
// judges from what really happened, not from what the caller saw.
#pragma once

#include <memory>
#include <optional>

#include "sim/connection.h"
#include "sim/faults.h"

namespace xackly {

class LossyConnection final : public ConnectionWrapper {
 public:
  // Takes ownership of `target`. REQUIRES: target != nullptr
  explicit LossyConnection(std::unique_ptr<Connection> target) : ConnectionWrapper(std::move(target)) {}

  // The next Call or CallAll loses its request (PointEffect::kLoseRequest)
  // or its reply (kLoseReply); kNone: it goes through.
  // REQUIRES: effect is kNone, kLoseRequest or kLoseReply
  void LoseNext(PointEffect effect) { armed_ = effect; }

  // With a loss armed: kLoseRequest sends nothing and returns kTimeout;
  // kLoseReply sends, keeps the reply (hidden_reply()) and returns kTimeout.
  // Either way the connection is dead afterwards (alive() is false), as a
  // client that timed out drops its connection. Without one: forwards.
  Result<Reply> Call(std::span<const std::string_view> argv) override;
  using Connection::Call;
  // The same for a pipeline, as one request: a lost request sends none of
  // the commands; a lost reply runs them all and hides every reply
  // (hidden_replies()).
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override;
  bool alive() const override { return !timed_out_ && ConnectionWrapper::alive(); }

  // The reply a lost-reply fault hid from the caller (the last Call's).
  const std::optional<Reply>& hidden_reply() const { return hidden_; }
  // The replies a lost-reply fault hid from a CallAll (the last one's).
  const std::vector<Reply>& hidden_replies() const { return hidden_all_; }

 private:
  // The armed loss (kNone or a loss), disarmed; the connection is dead
  // from here on when there was one.
  PointEffect TakeLoss();

  PointEffect armed_ = PointEffect::kNone;
  bool timed_out_ = false;
  std::optional<Reply> hidden_;
  std::vector<Reply> hidden_all_;
};

}  // namespace xackly
