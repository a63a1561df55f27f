#include "sim/trace.h"

#include <charconv>
#include <cstdio>

namespace xackly {

const char* LineKindName(LineKind k) {
  switch (k) {
    case LineKind::kRedis: return "redis";
    case LineKind::kSql: return "sql";
    case LineKind::kExternal: return "external";
    case LineKind::kLocal: return "local";
    case LineKind::kFault: return "fault";
    case LineKind::kLifecycle: return "lifecycle";
    case LineKind::kHarness: return "harness";
  }
  return "?";
}

void Trace::Render(int64_t t_ms, std::string_view actor, std::string_view request,
                   std::string_view reply, std::string& out) {
  char t[24];
  const size_t n = static_cast<size_t>(std::to_chars(t, t + sizeof(t), t_ms).ptr - t);
  if (n < 8) out.append(8 - n, ' ');  // "%8lld "
  out.append(t, n);
  out += ' ';
  out.append(actor);
  for (size_t pad = actor.size(); pad < 8; ++pad) out += ' ';
  out += ' ';
  out.append(request);
  if (!reply.empty()) {
    out += " -> ";
    out.append(reply);
  }
}

std::string Trace::Render(const TraceLine& line) {
  std::string out;
  Render(line.t_ms, line.actor, line.request, line.reply, out);
  return out;
}

void Trace::Add(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
                std::string_view reply) {
  scratch_.clear();
  Render(t_ms, actor, request, reply, scratch_);
  for (unsigned char c : scratch_) {
    hash_ ^= c;
    hash_ *= 0x100000001b3ULL;
  }
  hash_ ^= '\n';
  hash_ *= 0x100000001b3ULL;
  ++count_;
  if (keep_) {
    lines_.push_back(TraceLine{t_ms, std::string(actor), kind, std::string(request), std::string(reply)});
  }
}

std::string Trace::HashHex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}


}  // namespace xackly
