// The trace: one line per step (virtual ms, actor, exact request, canonical
// reply) plus lines for faults, restarts and phase changes. Its hash is the
// run's fingerprint: same seed + scenario + server version => same hash.
// A line's canonical rendering is fed straight into the hash (FNV-1a 64 over
// rendered lines + '\n', sim/text_hash.h); it is built as a string only when
// lines are kept.
//
// A kept line carries its structure too (LineFacts: what happened, the argv,
// the fault and its site, the ids it mentions). The rendered request/reply
// text is the canonical form that is hashed and shown to people; reports
// read the structure, never the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/reply.h"
#include "sim/text_hash.h"

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
inline constexpr LineKind kLastLineKind = LineKind::kHarness;

// What a line shows, finer than its LineKind.
enum class LineEvent : uint8_t {
  kCommand,         // a request and its reply (Redis, SQL, external, harness read)
  kNotSent,         // a request the simulator answered itself (a poison event's effect)
  kIoError,         // the connection had died with the server
  kLostRequest,     // the request never reached its server (`site`)
  kLostReply,       // the request ran; its caller never saw the reply (`site`)
  kCrash,           // a worker crashed at `site`
  kStall,           // a worker stalled at `site` for `duration_ms`
  kScheduledFault,  // a scheduled fault fired (`fault` is its kind name)
  kStart,           // an actor started again (`replaces`: its old name when renamed)
  kReconnect,       // an actor reconnects after a timeout or a lost connection
  kPark,            // a worker parked for up to `duration_ms`
  kSleep,           // an actor slept `duration_ms`
  kCheckpoint,      // a protocol checkpoint (`site` is its label)
  kNote,            // a run note by "sim" (`site` is its short label)
  kErrorReply,      // the request never reached its server; its caller got an error reply (`site`)
  kReplicaLag,      // a WAIT the lagging replica did not confirm in time (`duration_ms`: the wait)
};
const char* LineEventName(LineEvent e);

inline constexpr LineEvent kLastLineEvent = LineEvent::kReplicaLag;

// Whether `token` (an event id or entry ID) occurs in `text` with no letter
// or digit just before it and no digit just after it: "done:order:1" names
// order:1, "order:10" does not.
bool HasIdToken(std::string_view text, std::string_view token);

// The structure of a line, given by the simulator with the text.
struct LineFacts {
  LineEvent event = LineEvent::kCommand;
  const std::vector<std::string>* argv = nullptr;  // the exact request, when it has one
  const Reply* reply = nullptr;                    // its real reply, when it has one
  std::string_view site;       // fault site, checkpoint label, note label
  std::string_view fault;      // kScheduledFault: the fault kind's name
  std::string_view replaces;   // kStart: the name the actor had before, when renamed
  // kScheduledFault: the actor whose fault brought this one about (the
  // failover a `replica-lag ... failover` schedules); empty when the plan
  // or the scenario's schedule drew it.
  std::string_view brought_by;
  int64_t duration_ms = 0;     // stall, park, sleep, restart and reconnect delays; an SQL
                               // statement's wait for another's transaction
  std::string_view waited_for;  // SQL: whose open transaction the statement waited for
  // Ids a business step concerns (Redis lines take theirs from argv and reply).
  std::string_view event_id;
  std::string_view stream_id;
};

struct TraceLine {
  int64_t t_ms = 0;
  std::string actor;
  LineKind kind = LineKind::kRedis;
  std::string request;
  std::string reply;  // empty when the line has none
  // Structure (reports read these, never the text above).
  LineEvent event = LineEvent::kCommand;
  std::vector<std::string> argv;  // the exact request of Redis and harness lines
  std::string site;
  std::string fault;
  std::string replaces;
  std::string brought_by;  // as LineFacts::brought_by
  int64_t duration_ms = 0;
  std::string waited_for;  // as LineFacts::waited_for
  // Entry ids ("5-0") and event ids ("order:3") the line mentions, in its
  // request or reply, in order of appearance, without repeats.
  std::vector<std::string> ids;
};

class Trace {
 public:
  explicit Trace(bool keep_lines) : keep_(keep_lines) {}

  void Add(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
           std::string_view reply, const LineFacts& facts = {});
  // A request and its reply: Add(t_ms, actor, kind, RenderArgv(argv),
  // reply.Render(), facts), with the text rendered only when lines are
  // kept (else it is hashed as it is rendered, never built).
  void AddCommand(int64_t t_ms, std::string_view actor, LineKind kind,
                  const std::vector<std::string>& argv, const Reply& reply, const LineFacts& facts);
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
  void Keep(int64_t t_ms, std::string_view actor, LineKind kind, std::string_view request,
            std::string_view reply, const LineFacts& facts);

  bool keep_;
  int64_t count_ = 0;
  uint64_t hash_ = Fnv1aText::kOffsetBasis;  // over rendered lines + '\n'
  std::vector<TraceLine> lines_;
};

// Where two kept traces of one case first differ, for a nondeterminism
// message: "first differ at trace line N: `a's line` then `b's line`" (each
// line clipped to 240 characters; "(the trace ends)" past a trace's end), or
// "" when they agree line for line.
std::string FirstTraceDifference(const std::vector<TraceLine>& a, const std::vector<TraceLine>& b);

}  // namespace xackly
