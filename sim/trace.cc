#include "sim/trace.h"

#include <charconv>
#include <cstdio>

#include "sim/stream.h"

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

const char* LineEventName(LineEvent e) {
  switch (e) {
    case LineEvent::kCommand: return "command";
    case LineEvent::kNotSent: return "not-sent";
    case LineEvent::kIoError: return "io-error";
    case LineEvent::kLostRequest: return "lost-request";
    case LineEvent::kLostReply: return "lost-reply";
    case LineEvent::kCrash: return "crash";
    case LineEvent::kStall: return "stall";
    case LineEvent::kScheduledFault: return "scheduled-fault";
    case LineEvent::kStart: return "start";
    case LineEvent::kReconnect: return "reconnect";
    case LineEvent::kPark: return "park";
    case LineEvent::kSleep: return "sleep";
    case LineEvent::kCheckpoint: return "checkpoint";
    case LineEvent::kNote: return "note";
  }
  return "?";
}

namespace {

// An entry id ("5-0") or an event id ("order:3").
bool IsId(std::string_view s) {
  return StreamId::Parse(s).has_value() || (s.starts_with("order:") && s.size() > 6);
}

void AddId(std::string_view s, std::vector<std::string>& out) {
  if (!IsId(s)) return;
  for (const std::string& have : out) {
    if (have == s) return;
  }
  out.emplace_back(s);
}

// Every id in the reply's strings, including the '|'-joined fields of a
// Redis ledger record ("order:1|1-0|w1|5").
void AddReplyIds(const Reply& r, std::vector<std::string>& out) {
  if (r.is_array()) {
    for (const Reply& e : r.elements()) AddReplyIds(e, out);
    return;
  }
  if (!r.is_string() && !r.is_status()) return;
  std::string_view s = r.str();
  for (size_t start = 0; start <= s.size();) {
    size_t bar = s.find('|', start);
    if (bar == std::string_view::npos) bar = s.size();
    AddId(s.substr(start, bar - start), out);
    start = bar + 1;
  }
}

}  // namespace

namespace {

// FNV-1a 64 fed like a std::string is appended to, so the canonical
// rendering is hashed without being built.
class Fnv1a {
 public:
  explicit Fnv1a(uint64_t* hash) : hash_(hash) {}
  void append(std::string_view s) {
    uint64_t h = *hash_;
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    *hash_ = h;
  }
  void append(const char* p, size_t n) { append(std::string_view(p, n)); }
  void append(size_t n, char c) {
    for (size_t i = 0; i < n; ++i) *this += c;
  }
  Fnv1a& operator+=(char c) {
    *hash_ = (*hash_ ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return *this;
  }
  Fnv1a& operator+=(std::string_view s) {
    append(s);
    return *this;
  }

 private:
  uint64_t* hash_;
};

// The canonical line: "%8lld %-8s request[ -> reply]".
template <typename Out>
void RenderLine(int64_t t_ms, std::string_view actor, std::string_view request, std::string_view reply,
                Out& out) {
  char t[24];
  const size_t n = static_cast<size_t>(std::to_chars(t, t + sizeof(t), t_ms).ptr - t);
  if (n < 8) out.append(8 - n, ' ');
  out.append(t, n);
  out += ' ';
  out.append(actor);
  if (actor.size() < 8) out.append(8 - actor.size(), ' ');
  out += ' ';
  out.append(request);
  if (!reply.empty()) {
    out += std::string_view(" -> ");
    out.append(reply);
  }
}

}  // namespace

void Trace::Render(int64_t t_ms, std::string_view actor, std::string_view request,
                   std::string_view reply, std::string& out) {
  RenderLine(t_ms, actor, request, reply, out);
}

std::string Trace::Render(const TraceLine& line) {
  std::string out;
  Render(line.t_ms, line.actor, line.request, line.reply, out);
  return out;
}

void Trace::Add(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
                std::string_view reply, const LineFacts& facts) {
  Fnv1a fnv(&hash_);
  RenderLine(t_ms, actor, request, reply, fnv);
  fnv += '\n';
  ++count_;
  if (!keep_) return;
  TraceLine& line = lines_.emplace_back();
  line.t_ms = t_ms;
  line.actor = actor;
  line.kind = kind;
  line.request = request;
  line.reply = reply;
  line.event = facts.event;
  if (facts.argv != nullptr) line.argv = *facts.argv;
  line.site = facts.site;
  line.fault = facts.fault;
  line.replaces = facts.replaces;
  line.duration_ms = facts.duration_ms;
  for (const std::string& arg : line.argv) AddId(arg, line.ids);
  if (facts.reply != nullptr) AddReplyIds(*facts.reply, line.ids);
  AddId(facts.event_id, line.ids);
  AddId(facts.stream_id, line.ids);
}

std::string Trace::HashHex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}


}  // namespace xackly
