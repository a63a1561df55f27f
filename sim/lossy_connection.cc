#include "sim/lossy_connection.h"

namespace xackly {

Result<Reply> LossyConnection::Call(std::span<const std::string_view> argv) {
  if (timed_out_) return Status::Closed("the connection timed out earlier");
  Loss loss = armed_;
  armed_ = Loss::kNone;
  if (loss == Loss::kNone) return ConnectionWrapper::Call(argv);
  timed_out_ = true;
  if (loss == Loss::kRequest) return Status::Timeout("lost request: it never reached the server");
  Result<Reply> r = ConnectionWrapper::Call(argv);
  if (!r.ok()) return r;
  hidden_ = std::move(r).value();
  return Status::Timeout("lost reply: the request executed, its reply never came back");
}

}  // namespace xackly
