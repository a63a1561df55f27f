// Small text helpers every floor shares (sim, scenarios, reports, harness
// may all include this header): one of each, so that wording and splitting
// rules do not drift apart between copies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace xackly {

// "1 case", "3 cases": `n` and `word`, plural with an "s" unless n == 1.
template <typename Int>
std::string Plural(Int n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}
// "1 delivery", "3 deliveries": the same, for a word whose plural is not
// word + "s".
template <typename Int>
std::string Plural(Int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// `text` whole when it has at most `max_chars` characters; else its first
// `max_chars` followed by "..." (messages quote user data and trace lines
// through this, so a long one cannot bury the message it is part of).
inline std::string ClipText(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "...";
}

// The maximal runs of `text` that contain none of `separators`, in order
// (views into `text`; empty runs are skipped).
inline std::vector<std::string_view> SplitWords(std::string_view text, std::string_view separators = " ") {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = text.find_first_not_of(separators, i);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(separators, start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    i = end;
  }
  return out;
}

// Every piece of `text` between `sep`s, empty ones included ("a,,b" has
// three; "" has one): the caller decides what an empty piece means.
inline std::vector<std::string_view> SplitList(std::string_view text, char sep = ',') {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

}  // namespace xackly
