#include "sim/trace.h"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "sim/stream.h"
#include "sim/text.h"
#include "sim/text_hash.h"

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
    case LineEvent::kErrorReply: return "error-reply";
    case LineEvent::kReplicaLag: return "replica-lag";
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

// The canonical line: "%8lld %-8s request[ -> reply]". `request` and
// `reply` write their text to `out` (and say whether they wrote any: a line
// without a reply has no " -> ").
template <typename Out, typename Request, typename Reply>
void RenderLineWith(int64_t t_ms, std::string_view actor, const Request& request, const Reply& reply,
                    Out& out) {
  char t[24];
  const size_t n = static_cast<size_t>(std::to_chars(t, t + sizeof(t), t_ms).ptr - t);
  if (n < 8) out.append(8 - n, ' ');
  out.append(t, n);
  out += ' ';
  out.append(actor);
  if (actor.size() < 8) out.append(8 - actor.size(), ' ');
  out += ' ';
  request(out);
  reply(out);
}

template <typename Out>
void RenderLine(int64_t t_ms, std::string_view actor, std::string_view request, std::string_view reply,
                Out& out) {
  RenderLineWith(
      t_ms, actor, [&](Out& o) { o.append(request); },
      [&](Out& o) {
        if (reply.empty()) return;
        o += std::string_view(" -> ");
        o.append(reply);
      },
      out);
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
  Fnv1aText fnv(&hash_);
  RenderLine(t_ms, actor, request, reply, fnv);
  fnv += '\n';
  ++count_;
  if (keep_) Keep(t_ms, actor, kind, request, reply, facts);
}

void Trace::AddCommand(int64_t t_ms, std::string_view actor, LineKind kind,
                       const std::vector<std::string>& argv, const Reply& reply,
                       const LineFacts& facts) {
  ++count_;
  if (keep_) {
    std::string request_text, reply_text;
    RenderArgvTo(argv, request_text);
    reply.RenderTo(reply_text);
    Fnv1aText fnv(&hash_);
    RenderLine(t_ms, actor, request_text, reply_text, fnv);
    fnv += '\n';
    Keep(t_ms, actor, kind, request_text, reply_text, facts);
    return;
  }
  // The same bytes as the kept line's, hashed as they are rendered.
  Fnv1aText fnv(&hash_);
  RenderLineWith(
      t_ms, actor, [&](Fnv1aText& o) { RenderArgvTo(argv, o); },
      [&](Fnv1aText& o) {
        o += std::string_view(" -> ");  // a reply's rendering is never empty
        reply.RenderTo(o);
      },
      fnv);
  fnv += '\n';
}

void Trace::Keep(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
                 std::string_view reply, const LineFacts& facts) {
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
  line.brought_by = facts.brought_by;
  line.duration_ms = facts.duration_ms;
  line.waited_for = facts.waited_for;
  for (const std::string& arg : line.argv) AddId(arg, line.ids);
  if (facts.reply != nullptr) AddReplyIds(*facts.reply, line.ids);
  AddId(facts.event_id, line.ids);
  AddId(facts.stream_id, line.ids);
}

bool HasIdToken(std::string_view text, std::string_view token) {
  if (token.empty()) return false;
  for (size_t at = text.find(token); at != std::string_view::npos; at = text.find(token, at + 1)) {
    const size_t end = at + token.size();
    const bool starts = at == 0 || std::isalnum(static_cast<unsigned char>(text[at - 1])) == 0;
    const bool ends = end == text.size() || std::isdigit(static_cast<unsigned char>(text[end])) == 0;
    if (starts && ends) return true;
  }
  return false;
}

std::string Trace::HashHex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}


std::string FirstTraceDifference(const std::vector<TraceLine>& a, const std::vector<TraceLine>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && Trace::Render(a[i]) == Trace::Render(b[i])) ++i;
  if (i == a.size() && i == b.size()) return "";
  auto shown = [](const std::vector<TraceLine>& lines, size_t at) {
    return at >= lines.size() ? std::string("(the trace ends)") : ClipText(Trace::Render(lines[at]), 240);
  };
  return fmt::format("first differ at trace line {}: `{}` then `{}`", i + 1, shown(a, i), shown(b, i));
}

}  // namespace xackly
