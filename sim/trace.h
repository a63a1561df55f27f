// The trace: one line per step (virtual ms, actor, exact request, canonical
// reply) plus lines for faults, restarts and phase changes. Its hash is the
// run's fingerprint: same seed + scenario + server version => same hash.
// When lines are not kept, a line is rendered into a reused buffer only to
// be hashed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xackly {

enum class LineKind : uint8_t {
  kRedis,      // a Redis request and its reply
  kSql,        // a business-store statement and its result
  kExternal,   // an external-service call
  kLocal,      // park, sleep, checkpoint
  kFault,      // an injected fault
  kLifecycle,  // a worker (re)start, reconnect, phase change
  kHarness,    // setup, fault-injection and oracle reads
};
const char* LineKindName(LineKind k);

struct TraceLine {
  int64_t t_ms = 0;
  std::string actor;
  LineKind kind = LineKind::kRedis;
  std::string request;
  std::string reply;  // empty when the line has none
};

class Trace {
 public:
  explicit Trace(bool keep_lines) : keep_(keep_lines) {}

  void Add(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
           std::string_view reply);
  int64_t size() const { return count_; }
  uint64_t hash() const { return hash_; }
  bool keeps_lines() const { return keep_; }
  std::vector<TraceLine>& lines() { return lines_; }

  // "     123 w1       XACK events workers 5-0 -> 1"
  static void Render(int64_t t_ms, std::string_view actor, std::string_view request,
                     std::string_view reply, std::string& out);
  static std::string Render(const TraceLine& line);
  static std::string HashHex(uint64_t hash);

 private:
  bool keep_;
  int64_t count_ = 0;
  uint64_t hash_ = 0xcbf29ce484222325ULL;  // FNV-1a 64 over rendered lines + '\n'
  std::string scratch_;
  std::vector<TraceLine> lines_;
};

}  // namespace xackly
