// Seeded, splittable pseudo-random numbers for every decision that must
// replay. Each actor and the fault plan draw from their own split stream, so
// adding a worker or a fault does not shift another actor's choices
// (RapidCheck's Random and FoundationDB's deterministic random work the same
// way). Never seeded from the wall clock or std::random_device.
#pragma once

#include <cstdint>
#include <string_view>

namespace xackly {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(Mix(seed ^ 0x9e3779b97f4a7c15ULL)) {}

  // A new, independent stream derived from this one's seed and `tag`; does
  // not advance this stream.
  Rng Split(std::string_view tag) const {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the tag
    for (unsigned char c : tag) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    return Rng(Mix(state_ ^ h), /*raw=*/true);
  }

  uint64_t Next() {  // SplitMix64
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix(state_);
  }
  // Uniform in [0, n). REQUIRES: n > 0
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi]. REQUIRES: lo <= hi
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  // True with probability ppm / 1'000'000 (integer maths: no floating point
  // in any replayed decision).
  bool ChancePpm(uint32_t ppm) { return ppm > 0 && Below(1'000'000) < ppm; }

 private:
  Rng(uint64_t state, bool /*raw*/) : state_(state) {}
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace xackly
