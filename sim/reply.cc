#include "sim/reply.h"

#include <charconv>

#include "sim/status.h"
#include "sim/text_hash.h"

namespace xackly {

Reply Reply::Integer(int64_t v) {
  Reply r;
  r.type_ = Type::kInteger;
  r.integer_ = v;
  return r;
}

Reply Reply::StatusText(std::string s) {
  Reply r;
  r.type_ = Type::kStatus;
  r.str_ = std::move(s);
  return r;
}

Reply Reply::String(std::string s) {
  Reply r;
  r.type_ = Type::kString;
  r.str_ = std::move(s);
  return r;
}

Reply Reply::Error(std::string s) {
  Reply r;
  r.type_ = Type::kError;
  r.str_ = std::move(s);
  return r;
}

Reply Reply::Array(std::vector<Reply> elements) {
  Reply r;
  r.type_ = Type::kArray;
  r.elements_ = std::move(elements);
  return r;
}

int64_t Reply::integer() const {
  XACKLY_CHECK(is_integer());
  return integer_;
}

const std::string& Reply::str() const {
  XACKLY_CHECK(is_status() || is_string() || is_error());
  return str_;
}

const std::vector<Reply>& Reply::elements() const {
  XACKLY_CHECK(is_array());
  return elements_;
}

const Reply& Reply::operator[](size_t i) const {
  XACKLY_CHECK(is_array() && i < elements_.size());
  return elements_[i];
}

Reply& Reply::mutable_element(size_t i) {
  XACKLY_CHECK(is_array() && i < elements_.size());
  return elements_[i];
}

bool Reply::operator==(const Reply& other) const {
  return type_ == other.type_ && integer_ == other.integer_ && str_ == other.str_ &&
         elements_ == other.elements_;
}

namespace {

bool NeedsEscape(unsigned char c, bool escape_quote) {
  return c < 0x20 || c >= 0x7f || c == '\\' || (escape_quote && c == '"');
}

template <typename Out>
void AppendEscaped(Out& out, std::string_view s, bool escape_quote) {
  static const char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && !NeedsEscape(static_cast<unsigned char>(s[run]), escape_quote)) ++run;
    out.append(s.data() + i, run - i);  // printable characters go in one piece
    if (run == s.size()) return;
    const auto c = static_cast<unsigned char>(s[run]);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
    i = run + 1;
  }
}

}  // namespace

template <typename Out>
void AppendQuoted(Out& out, std::string_view s) {
  out += '"';
  AppendEscaped(out, s, /*escape_quote=*/true);
  out += '"';
}

template <typename Out>
void AppendArg(Out& out, std::string_view s) {
  bool bare = !s.empty();
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '\'') {
      bare = false;
      break;
    }
  }
  if (bare) {
    out += s;
  } else {
    AppendQuoted(out, s);
  }
}

template <typename Out>
void Reply::RenderTo(Out& out) const {
  switch (type_) {
    case Type::kNil:
      out += "nil";
      return;
    case Type::kInteger: {
      char buf[24];
      out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), integer_).ptr - buf));
      return;
    }
    case Type::kStatus:
      out += '+';
      AppendEscaped(out, str_, /*escape_quote=*/false);
      return;
    case Type::kString:
      AppendQuoted(out, str_);
      return;
    case Type::kError:
      out += '-';
      AppendEscaped(out, str_, /*escape_quote=*/false);
      return;
    case Type::kArray:
      out += '[';
      for (size_t i = 0; i < elements_.size(); ++i) {
        if (i > 0) out += ", ";
        elements_[i].RenderTo(out);
      }
      out += ']';
      return;
  }
}

std::string Reply::Render() const {
  std::string out;
  RenderTo(out);
  return out;
}

template <typename Out>
void RenderArgvTo(const std::vector<std::string>& argv, Out& out) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) out += ' ';
    AppendArg(out, argv[i]);
  }
}

// The sinks rendering is used with: text, and its hash (sim/text_hash.h).
template void AppendQuoted(std::string&, std::string_view);
template void AppendArg(std::string&, std::string_view);
template void Reply::RenderTo(std::string&) const;
template void Reply::RenderTo(Fnv1aText&) const;
template void RenderArgvTo(const std::vector<std::string>&, std::string&);
template void RenderArgvTo(const std::vector<std::string>&, Fnv1aText&);

std::string RenderArgv(const std::vector<std::string>& argv) {
  std::string out;
  RenderArgvTo(argv, out);
  return out;
}

}  // namespace xackly
