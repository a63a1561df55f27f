#include "sim/status.h"

namespace xackly {

const char* Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kIoError: return "io-error";
    case Code::kTimeout: return "timeout";
    case Code::kProtocolError: return "protocol-error";
    case Code::kClosed: return "closed";
    case Code::kInvalidArgument: return "invalid-argument";
    case Code::kNotFound: return "not-found";
    case Code::kFailedPrecondition: return "failed-precondition";
    case Code::kInternal: return "internal";
    case Code::kHarnessLimit: return "harness-limit";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace xackly
