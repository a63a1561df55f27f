#include "sim/lossy_connection.h"

namespace xackly {

namespace {

Status Lost(PointEffect loss) {
  return loss == PointEffect::kLoseRequest
             ? Status::Timeout("lost request: it never reached the server")
             : Status::Timeout("lost reply: the request executed, its reply never came back");
}

}  // namespace

PointEffect LossyConnection::TakeLoss() {
  const PointEffect loss = armed_;
  armed_ = PointEffect::kNone;
  switch (loss) {
    case PointEffect::kNone: return loss;
    case PointEffect::kLoseRequest:
    case PointEffect::kLoseReply: timed_out_ = true; return loss;
    case PointEffect::kCrash:
    case PointEffect::kStall:
    case PointEffect::kErrorReply:
    case PointEffect::kReplicaLag: break;
  }
  XACKLY_CHECK(false);  // not a loss (LoseNext's REQUIRES)
  return PointEffect::kNone;
}

Result<Reply> LossyConnection::Call(std::span<const std::string_view> argv) {
  if (timed_out_) return Status::Closed("the connection timed out earlier");
  const PointEffect loss = TakeLoss();
  if (loss == PointEffect::kNone) return ConnectionWrapper::Call(argv);
  if (loss == PointEffect::kLoseRequest) return Lost(loss);
  Result<Reply> r = ConnectionWrapper::Call(argv);
  if (!r.ok()) return r;
  hidden_ = std::move(r).value();
  return Lost(loss);
}

Result<std::vector<Reply>> LossyConnection::CallAll(std::span<const std::vector<std::string_view>> commands) {
  if (timed_out_) return Status::Closed("the connection timed out earlier");
  const PointEffect loss = TakeLoss();
  if (loss == PointEffect::kNone) return ConnectionWrapper::CallAll(commands);
  if (loss == PointEffect::kLoseRequest) return Lost(loss);
  Result<std::vector<Reply>> r = ConnectionWrapper::CallAll(commands);
  if (!r.ok()) return r.status();
  hidden_all_ = std::move(r).value();
  return Lost(loss);
}

}  // namespace xackly
