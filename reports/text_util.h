// Helpers the renderers share for putting untrusted text (commands, replies,
// Lua scripts, scenario names) into each output format safely. Internal to
// reports/; not part of the public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xackly::report {

// `s` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// One line of plain terminal text: valid UTF-8, with every control byte
// (< 0x20 and 0x7f) written as an escape ("\n", "\t", "\x1b") and the C1
// controls U+0080..U+009F as "\u009b", so the result contains no control
// character at all.
std::string Printable(std::string_view s);

// Text or attribute content for HTML and XML: valid UTF-8; & < > " ' escaped;
// control characters XML 1.0 forbids (all below 0x20 except \t \n \r, and
// 0x7f) written as visible "\xNN" instead.
std::string EscapeXml(std::string_view s);

// `s`, or `fallback` when `s` is empty (a field the producer left unset).
inline std::string Or(const std::string& s, const char* fallback) { return s.empty() ? fallback : s; }

// `s` with its first letter upper case, for the start of a heading or a
// sentence ("run" -> "Run"). Only an ASCII first byte changes.
std::string Capitalized(std::string_view s);

// The words of a request or reply: split at spaces and at the punctuation of
// the canonical reply rendering and SQL/Lua arguments (quotes, brackets,
// parentheses, commas, '|', '='). "order:1" and "0-1" stay whole.
std::vector<std::string> Words(std::string_view s);

}  // namespace xackly::report
