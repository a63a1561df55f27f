// The value of one Redis reply, independent of any client library, and its
// canonical one-line rendering. Traces, hashes and reports all use that
// rendering, so it must never depend on anything but the reply's content.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xackly {

class Reply {
 public:
  // RESP2 reply kinds. A nil bulk string and a nil array are both kNil.
  enum class Type : uint8_t { kNil, kInteger, kStatus, kString, kArray, kError };

  Reply() = default;  // nil
  static Reply Nil() { return Reply(); }
  static Reply Integer(int64_t v);
  static Reply StatusText(std::string s);   // +OK
  static Reply String(std::string s);       // bulk string, binary safe
  static Reply Error(std::string s);        // -ERR ...
  static Reply Array(std::vector<Reply> elements);

  Type type() const { return type_; }
  bool is_nil() const { return type_ == Type::kNil; }
  bool is_integer() const { return type_ == Type::kInteger; }
  bool is_status() const { return type_ == Type::kStatus; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_error() const { return type_ == Type::kError; }

  // REQUIRES: is_integer()
  int64_t integer() const;
  // The text of a status, bulk string or error reply.
  // REQUIRES: is_status() || is_string() || is_error()
  const std::string& str() const;
  // REQUIRES: is_array()
  const std::vector<Reply>& elements() const;
  size_t size() const { return elements_.size(); }
  // REQUIRES: is_array() && i < size()
  const Reply& operator[](size_t i) const;
  // The i-th element, for a parser that fills an array it created with
  // Array(std::vector<Reply>(n)) in place. REQUIRES: is_array() && i < size()
  Reply& mutable_element(size_t i);

  // Canonical rendering, one line, no trailing newline:
  //   nil              nil
  //   integer          42
  //   status           +OK
  //   bulk string      "text" (C-style escapes: \" \\ \n \r \t \xHH)
  //   error            -ERR message (newlines escaped)
  //   array            [elem, elem]   (empty: [])
  std::string Render() const;
  // Appends the rendering to `out` (no allocation beyond growing `out`):
  // a std::string, or an Fnv1aText that hashes it unbuilt (sim/text_hash.h).
  template <typename Out>
  void RenderTo(Out& out) const;

  bool operator==(const Reply& other) const;

 private:
  Type type_ = Type::kNil;
  int64_t integer_ = 0;
  std::string str_;
  std::vector<Reply> elements_;
};

// The functions below write to a std::string, or to an Fnv1aText (sim/
// text_hash.h) where only the rendering's hash is wanted.
// Appends `s` as a double-quoted, escaped string (the bulk-string rendering).
template <typename Out>
void AppendQuoted(Out& out, std::string_view s);
// Appends `s` bare when it is a non-empty run of printable characters without
// spaces, quotes or backslashes, else quoted. Used for command arguments.
template <typename Out>
void AppendArg(Out& out, std::string_view s);
// A request as the trace shows it: its arguments, each as AppendArg writes
// it, separated by spaces.
template <typename Out>
void RenderArgvTo(const std::vector<std::string>& argv, Out& out);
std::string RenderArgv(const std::vector<std::string>& argv);

}  // namespace xackly
