// Errors as values. Every expected failure in xackly (an I/O error, a timeout,
// a server that will not start, a malformed scenario) travels as a Status or
// a Result<T>; harness bugs abort through XACKLY_CHECK instead. Modelled on
// LevelDB's Status and absl::StatusOr.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace xackly {

// Always-on assertion for broken invariants (bugs in xackly itself).
#define XACKLY_CHECK(cond)                                                   \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "xackly: internal error: %s:%d: check failed: %s\n", \
                   __FILE__, __LINE__, #cond);                               \
      std::abort();                                                          \
    }                                                                        \
  } while (0)

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kIoError,          // socket or process I/O failed; a connection is now dead
    kTimeout,          // no answer within the deadline; outcome unknown
    kProtocolError,    // the peer sent something that is not RESP
    kClosed,           // the connection was already dead before this call
    kInvalidArgument,  // bad user input (flags, scenario files)
    kNotFound,         // a file or binary does not exist
    kFailedPrecondition,  // the world is not in a state where this can run
    kInternal,         // a harness failure that is not a bug (server died...)
    kHarnessLimit,     // a run stopped by a harness guard (the step guard): not a verdict
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status Timeout(std::string m) { return Status(Code::kTimeout, std::move(m)); }
  static Status ProtocolError(std::string m) { return Status(Code::kProtocolError, std::move(m)); }
  static Status Closed(std::string m) { return Status(Code::kClosed, std::move(m)); }
  static Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status FailedPrecondition(std::string m) { return Status(Code::kFailedPrecondition, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }
  static Status HarnessLimit(std::string m) { return Status(Code::kHarnessLimit, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or "<code name>: <message>".
  std::string ToString() const;
  // The same failure with "<context>: " before its message (ok stays ok).
  Status WithContext(std::string_view context) const {
    return ok() ? *this : Status(code_, std::string(context) + ": " + message_);
  }
  static const char* CodeName(Code code);

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains its absence.
// REQUIRES: a Result is never built from Status::Ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : state_(std::move(status)) {  // NOLINT
    XACKLY_CHECK(!std::get<Status>(state_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  // REQUIRES: ok()
  const T& value() const& { XACKLY_CHECK(ok()); return std::get<T>(state_); }
  T& value() & { XACKLY_CHECK(ok()); return std::get<T>(state_); }
  T&& value() && { XACKLY_CHECK(ok()); return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // Status::Ok() when ok().
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace xackly
