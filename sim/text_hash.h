// A text sink that hashes what is appended to it instead of keeping it:
// FNV-1a 64, fed byte by byte exactly as a std::string would grow, so text
// rendered into it (Reply::RenderTo, RenderArgvTo, the trace's lines) gets
// the hash of its rendering without the rendering being built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xackly {

class Fnv1aText {
 public:
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  static constexpr uint64_t kPrime = 0x100000001b3ULL;

  // Continues the hash at `*hash` (start it at kOffsetBasis).
  explicit Fnv1aText(uint64_t* hash) : hash_(hash) {}

  void append(std::string_view s) {
    uint64_t h = *hash_;
    for (unsigned char c : s) h = (h ^ c) * kPrime;
    *hash_ = h;
  }
  void append(const char* p, size_t n) { append(std::string_view(p, n)); }
  void append(size_t n, char c) {
    for (size_t i = 0; i < n; ++i) *this += c;
  }
  Fnv1aText& operator+=(char c) {
    *hash_ = (*hash_ ^ static_cast<unsigned char>(c)) * kPrime;
    return *this;
  }
  Fnv1aText& operator+=(std::string_view s) {
    append(s);
    return *this;
  }

 private:
  uint64_t* hash_;
};

}  // namespace xackly
