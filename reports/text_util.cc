#include "reports/text_util.h"

#include <cstdint>

#include <fmt/format.h>

#include "sim/text.h"

namespace xackly::report {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

// `s` with every ASCII byte mapped through ascii(byte, out), valid
// multi-byte sequences copied and invalid bytes replaced by U+FFFD.
// With `escape_c1`, the C1 controls U+0080..U+009F (some terminals obey
// U+009B as CSI) are written as "\u009b" too.
template <typename Ascii>
std::string MapUtf8(std::string_view s, Ascii ascii, bool escape_c1 = false) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else if (escape_c1 && n == 2 && static_cast<unsigned char>(s[i]) == 0xc2 &&
               static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else if (n == 1) {
      ascii(s[i], out);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// An ASCII byte, with control bytes written as "\xNN".
void AppendVisible(char c, std::string& out) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7f) {
    out += fmt::format("\\x{:02x}", u);
  } else {
    out += c;
  }
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  return MapUtf8(s, [](char c, std::string& out) { out += c; });
}

std::string Printable(std::string_view s) {
  return MapUtf8(s, [](char c, std::string& out) {
    switch (c) {
      case '\n': out += "\\n"; return;
      case '\r': out += "\\r"; return;
      case '\t': out += "\\t"; return;
      default: break;
    }
    AppendVisible(c, out);
  }, /*escape_c1=*/true);
}

std::string EscapeXml(std::string_view s) {
  return MapUtf8(s, [](char c, std::string& out) {
    switch (c) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&#39;"; return;
      case '\n':
      case '\r':
      case '\t': out += c; return;
      default: break;
    }
    AppendVisible(c, out);
  });
}

std::string Capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view w : SplitWords(s, " \t\n\r\"'[](),|=;")) out.emplace_back(w);
  return out;
}

}  // namespace xackly::report
