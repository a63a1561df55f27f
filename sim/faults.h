// The fault catalog and the fault plan.
//
// Every fault kind has one descriptor (FaultKindInfo, the table at the top
// of sim/faults.cc): its name, class (point / scheduled / event), what a
// point fault does where it fires, its spec grammar, its parameter (the
// FaultModel field that holds it and how the search draws it), history
// kind, what it injects, what a correct protocol must tolerate, and how
// reports tell and draw it. The spec parser and printer, the scenario
// schema, the check generator, coverage, the story and the HTML timeline
// read that table; only the injector itself is written per kind (one
// function in sim/injectors.cc for a scheduled kind; sim/lossy_connection.h
// and sim/lossy_store.h for lost requests and replies; the crash points of
// sim/step_executor.cc for crash and stall, chosen by PointEffect). A new
// scheduled kind is an enum value here (and its FaultModel field when it has
// a parameter), a row in sim/faults.cc and an injector in sim/injectors.cc.
//
// Point faults (crash, stall, lost-*) fire at the nth visit of (actor,
// site) (sim/sites.h names the sites); scheduled faults at a virtual time;
// poison marks an event. A plan is either explicit (a list of FaultSpec, as
// in replay files and generated cases) or drawn from rates with the plan's
// own seeded stream; both record what fired as FaultSpecs, so any run can
// be replayed exactly. Faults fire only during the fault phase; the drain
// phase runs fault-free.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <string_view>
#include <vector>

#include "sim/rng.h"
#include "sim/sites.h"
#include "sim/status.h"

namespace xackly {

enum class FaultKind : uint8_t {
  kCrash,
  kStall,
  kLostRequest,
  kLostReply,
  kErrorReply,
  kReplicaLag,
  kXdel,
  kXtrim,
  kRestart,
  kSave,
  kDelConsumer,
  kClockJump,
  kStoreOutage,
  kFailover,
  kPoison,
};
// How many kinds there are (the descriptor table has one row per kind).
inline constexpr size_t kFaultKindCount = static_cast<size_t>(FaultKind::kPoison) + 1;

// How a kind fires, and so how its spec reads.
enum class FaultClass : uint8_t {
  kPoint,      // at the nth visit of (actor, site): "<kind> <actor> <site> #<n>"
  kScheduled,  // at a virtual time: "<kind> [<target>|<size>] @<time>ms"
  kEvent,      // marks an event: "poison event <n>"
};

// What a point fault does where it fires (sim/step_executor.cc injects it).
enum class PointEffect : uint8_t {
  kNone,         // not a point fault
  kCrash,        // the actor's process dies right after the crash point
  kStall,        // the actor pauses for the fault's duration after the crash point
  kLoseRequest,  // the request never reaches the server or store; the caller times out
  kLoseReply,    // the request runs; its reply is lost and the caller times out
  kErrorReply,   // the request never reaches the server; the caller gets an error reply
  kReplicaLag,   // a WAIT gets no replica's acknowledgement in time (see FaultKind::kReplicaLag)
};
// The sites a point fault of this effect fires at.
constexpr SiteFamily SitesOf(PointEffect e) {
  switch (e) {
    case PointEffect::kCrash:
    case PointEffect::kStall: return SiteFamily::kCrashPoint;
    case PointEffect::kLoseRequest:
    case PointEffect::kLoseReply:
    case PointEffect::kErrorReply:
    case PointEffect::kReplicaLag: return SiteFamily::kRequest;
    case PointEffect::kNone: return SiteFamily::kNone;
  }
  return SiteFamily::kNone;
}

// How the search (harness/check.h) draws a kind's duration parameter: the
// fault model's own value, or (in a swarm, half of the draws) a length from
// a range sized by the protocol's timers (SwarmRanges).
enum class SearchScale : uint8_t {
  kModelValue,  // always the model's value
  kStall,       // stall lengths: half the claim threshold to past a claim cycle
  kClockJump,   // past the claim threshold, the TTLs, the consumer-idle limit
  kOutage,      // store outages: 100 ms to a claim cycle
};

struct FaultModel;

// The one description of a fault kind (the table in sim/faults.cc).
struct FaultKindInfo {
  FaultKind kind;
  const char* name;         // in specs, scenario files and --faults
  FaultClass fault_class;
  PointEffect effect;       // point faults: what fires; kNone otherwise
  // The spec's grammar, as error messages show it.
  const char* grammar;
  // The spec's parameter, or "" for none: "duration" (stall, store-outage),
  // "size" (clock-jump, written +<n>ms), "target" (xdel, xtrim).
  const char* parameter;
  // The FaultModel field (scenario [faults] key) giving the parameter's
  // value when a plan is drawn from rates, or "", and the member itself.
  const char* model_field;
  int64_t FaultModel::*model_duration;     // a duration or size parameter, or nullptr
  std::string FaultModel::*model_target;   // a target parameter, or nullptr
  bool (*valid_target)(std::string_view);  // with a target: the values it takes
  const char* target_expected;             // ... as error messages say them
  uint32_t FaultModel::*rate_ppm;          // point faults: the chance per visit, or nullptr
  SearchScale search;                      // how the search draws a duration parameter
  // The oracle's history kind for what it does (HistoryKindName), or "".
  const char* history;
  const char* injects;      // what xackly injects
  const char* tolerate;     // what a correct protocol must tolerate
  // How reports show it (reports/ has no per-kind code):
  // The history item is about the whole run, not about the events it
  // touched (a restart, a clock jump, an outage): told before same-time
  // steps, with no event as subject.
  bool run_wide;
  // The HTML timeline's glyph class for its trace line: "crash", "stall",
  // "lost", "delete", "server-restart" or "fault" (a generic hexagon).
  const char* lane;
  // The story's sentence for its history item (reports/story.cc), "" when
  // the story tells the history kind itself (poison's effect-failed). The
  // subject is the actor (an injected fault for run-wide kinds); holes:
  //   {who} the actor          {site} the fault site    {ids} the entries
  //   {standing} ", before XACK" and friends (where the holder stood)
  //   {for} " for 5 s" / {by} " by 5 s" (the item's duration, if any)
  //   {with} " with <detail>"  {detail} the item's detail  {consumer} " <consumer>"
  //   {persistence} " (persistence aof)"   (each "" when it has no value)
  const char* story;

  constexpr SiteFamily Sites() const { return SitesOf(effect); }
};
// Every kind, in enum order.
std::span<const FaultKindInfo> AllFaultKinds();
const FaultKindInfo& InfoOf(FaultKind k);
// The first kind whose `history` is `history` (HistoryKindName), or nullptr:
// how reports find what a history item or trace line of a fault looks like.
const FaultKindInfo* FaultKindOfHistory(std::string_view history);
// The kind named `name`, or nullptr.
const FaultKindInfo* FaultKindNamed(std::string_view name);

const char* FaultKindName(FaultKind k);
bool ParseFaultKind(std::string_view name, FaultKind* out);
// Every kind's name, comma-separated: the valid values for --faults.
std::string FaultKindList();
bool IsPointFault(FaultKind k);      // crash, stall, lost-request, lost-reply

// A replica-lag's target that has the primary fail over to the lagging
// replica when the WAIT answers (the replica promoted had none of the
// writes no WAIT confirmed: failover lag:kMaxFailoverLag).
inline constexpr std::string_view kThenFailover = "failover";
// A failover's target that promotes the replica furthest behind: with
// several replicas the lagging one, with one the only one; either way it
// misses every write no WAIT brought it (lag:N misses at most N).
inline constexpr std::string_view kLaggingReplica = "lagging";
inline constexpr int kMaxFailoverLag = 1000;

struct FaultSpec {
  FaultKind kind = FaultKind::kCrash;
  std::string actor;       // point faults: "w2" (worker slot 2, any incarnation) or "p1"
  std::string site;        // crash/stall: crash point; lost-*: request name (XACK, XADD, COMMIT, EVAL...)
  int nth = 1;             // point faults: fires at the nth visit of (actor, site), 1-based
  // Scheduled faults: virtual time of injection. Point faults: when > 0,
  // `nth` counts the visits at or after this time instead ("crash w1
  // after-ack #1 @60000ms": w1's first after-ack from 60 s on), so a fault
  // can reach a recovery path that runs late without knowing how many
  // ordinary visits came first.
  int64_t at_ms = 0;
  int64_t duration_ms = 0; // stall length, clock-jump size, store-outage length
  // xdel: unread|pending|acked; xtrim: maxlen:N|minid:last-delivered;
  // failover: lag:N|lagging; error-reply: the error (LOADING|READONLY|BUSY);
  // replica-lag: "" or kThenFailover (replica-lag's duration_ms: how long
  // a WAIT without timeout waits)
  std::string target;
  int event = 0;           // poison: event number, 1-based
  // A scheduled fault another fault brought about: the actor that met that
  // fault ("p1" for the failover its replica lag schedules); empty when the
  // plan or the scenario's schedule drew it. ToString leaves it out, so it
  // is in no trace text and no replay file.
  std::string brought_by;

  // One line a person can read and a parser can read back, e.g.
  //   crash w1 after-effect #1
  //   crash w1 after-ack #1 @60000ms
  //   stall w2 after-read #1 60000ms
  //   lost-reply w1 XACK #2
  //   error-reply w1 XACK #1 LOADING
  //   replica-lag w1 WAIT #1 2000ms
  //   replica-lag p1 WAIT #3 2000ms failover
  //   xdel pending @1200ms
  //   clock-jump +60000ms @3000ms
  //   failover lag:1 @2500ms
  //   poison event 3
  std::string ToString() const;
  bool operator==(const FaultSpec&) const = default;
};

// Which kinds of actor sent a request (a request site's visitors).
struct RequestSenders {
  bool producer = false;
  bool worker = false;  // a worker process or one of its handler lanes
  bool operator==(const RequestSenders&) const = default;
};

// Rates and counts a plan is drawn from when no explicit list is given.
struct FaultModel {
  std::set<FaultKind> kinds;                 // enabled kinds
  std::vector<std::string> crash_points;     // eligible crash/stall points; empty: all
  std::vector<std::string> lost_sites;       // eligible lost-* sites; empty: XACK, XADD, COMMIT, EVAL
  uint32_t crash_ppm = 30000;                // per visit of an eligible crash point
  uint32_t stall_ppm = 30000;
  int64_t stall_ms = 60000;
  uint32_t lost_request_ppm = 20000;         // per visit of an eligible site
  uint32_t lost_reply_ppm = 20000;
  uint32_t error_reply_ppm = 20000;          // per visit of an eligible site (Redis requests only)
  std::string error_reply_target = "LOADING";  // LOADING | READONLY | BUSY
  // replica-lag: per visit of a WAIT (a run with replicas only), and how
  // long a WAIT with no timeout (WAIT n 0) waits for the lagging replica.
  uint32_t replica_lag_ppm = 100000;
  int64_t replica_lag_ms = 2000;
  int scheduled_count = 1;                   // of each enabled scheduled kind
  std::string xdel_target = "pending";       // unread | pending | acked
  std::string xtrim_target = "maxlen:2";
  int64_t clock_jump_ms = 120000;
  int64_t store_outage_ms = 3000;
  std::string failover_target = "lag:1";     // lag:N, the writes the promoted replica misses
  int poison_count = 1;
  // The kinds are DefaultFaultModel's, not a file's `kinds`: `check` may
  // add what the protocol's own behaviour calls for (poison for a script
  // that dead-letters or retries).
  bool kinds_are_default = false;
  // Who sent each request in `check`'s probe runs (WithVisitedSites; empty
  // for a protocol that is not probed): a swarm draws a request site's
  // faults only for the kinds of actor that send it. Never read from or
  // written to a file.
  std::map<std::string, RequestSenders, std::less<>> request_senders;

  bool Has(FaultKind k) const { return kinds.count(k) > 0; }
  // The model's value of `k`'s duration parameter (FaultKindInfo::
  // model_duration): stall_ms, clock_jump_ms, store_outage_ms; 0 for kinds
  // without one.
  int64_t ModelDurationMs(FaultKind k) const;
  // The model's target for xdel / xtrim; "" for other kinds.
  std::string ModelTarget(FaultKind k) const;
  // The eligible sites, empty lists resolved to their defaults.
  const std::vector<std::string>& CrashSites() const;
  const std::vector<std::string>& LostSites() const;
  // CrashSites() or LostSites(). REQUIRES: family != SiteFamily::kNone
  const std::vector<std::string>& Sites(SiteFamily family) const;
  // The sites a point fault of `k` may fire at: Sites(k's family), except
  // for a kind bound to one request (replica-lag: WAIT).
  // REQUIRES: IsPointFault(k)
  const std::vector<std::string>& SitesOf(FaultKind k) const;
  // "crash(after-effect,after-commit) lost-reply(XACK) restart"
  std::string ToString() const;
};

// The error an error-reply fault answers with, as the server words it
// ("LOADING Redis is loading the dataset in memory"). REQUIRES: `error` is
// LOADING, READONLY or BUSY.
std::string ErrorReplyText(std::string_view error);

// Validates one spec (known site names or script site names, positive nth, ...).
Status ValidateFaultSpec(const FaultSpec& spec);

// Counts of every fault site visited and fired, for coverage reports.
struct FaultCoverage {
  // site key ("crash@after-effect", "lost-reply@XACK", "xdel") → count
  std::map<std::string, int> fired;
  // site keys that the fault model enabled (whether or not they fired).
  // A crash/stall model without a list of points enables every point the
  // run visits (a protocol script's before-XACK, after-INSERT, point:...).
  std::set<std::string> enabled;
  // site keys of the model's point-fault kinds at every site the run
  // visited (in either phase), enabled or not: what a search could target.
  std::set<std::string> reachable;
  // The reachable site keys the run visited while faults could fire (in
  // its fault phase): a site visited only in the drain can never fire.
  std::set<std::string> fireable;

  // Adds `other`'s counts, enabled and reachable sites (coverage over several runs).
  void Add(const FaultCoverage& other);
  // Enabled sites that never fired, in order.
  std::vector<std::string> NeverFired() const;
  // What the model enables and the runs could reach, yet never fired: the
  // enabled point-fault sites some run visited in its fault phase, and the
  // enabled scheduled and event kinds, that no run fired. A green check
  // with gaps is evidence only for the sites that did fire.
  std::vector<std::string> Gaps() const;
};

// What a visit of a request site can take beyond what its site allows
// (FaultPlan::AtPoint). An error reply: only a protocol's own Redis command
// (a script's, a real consumer's); a built-in loop's step, whose error
// handling is not modelled, and a business-store request cannot. A replica
// lag: only a WAIT the harness answers (a run with replicas, outside
// MULTI: a WAIT queued in a transaction is answered at EXEC and holds
// nobody, so a lag there would change nothing).
struct VisitCan {
  bool error_reply = false;
  bool replica_lag = false;
};

class FaultPlan {
 public:
  // Rate mode: scheduled faults and poison events are drawn now from `rng`
  // over [0, fault_phase_ms); point faults are decided at each visit, from
  // the visiting actor's own stream (rng split by its slot), so adding a
  // worker or changing one actor's path never shifts another actor's faults.
  FaultPlan(const FaultModel& model, Rng rng, int64_t fault_phase_ms, int events);
  // Explicit mode: exactly `specs`, nothing random.
  FaultPlan(const FaultModel& model, std::vector<FaultSpec> specs);

  // A point fault to inject at this visit of (actor_slot, site) of
  // `family` at virtual time now_ms, or nullopt. Counts the visit. Never
  // fires once Disable() was called. A fault that fires is recorded
  // (fired()) as the visit it was (`nth` counted from the run's start, no
  // time). error-reply and replica-lag fire only where `can` allows them.
  std::optional<FaultSpec> AtPoint(std::string_view actor_slot, std::string_view site,
                                   SiteFamily family, int64_t now_ms = 0, VisitCan can = {});
  // Scheduled faults, in time order. REQUIRES: not modified by the caller.
  const std::vector<FaultSpec>& scheduled() const { return scheduled_; }
  // Adds a scheduled fault a fired one brought about (a replica-lag's
  // failover), after every one due at or before its time. When it fires,
  // Coverage() counts it but fired() does not list it: the fault that
  // brought it about brings it about again in a replay.
  // REQUIRES: spec is scheduled, and its time is not before any fault the
  // caller has injected.
  void ScheduleLater(FaultSpec spec);
  bool IsPoison(int event) const { return poison_.count(event) > 0; }

  // Ends the fault phase.
  void Disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }

  // Records that `spec` fired (point faults record themselves).
  void RecordFired(const FaultSpec& spec);
  // Everything that fired, in order: the explicit plan that replays this
  // run. What a fired fault brought about (ScheduleLater) is left out, so
  // that a replay of this list does not inject it twice.
  const std::vector<FaultSpec>& fired() const { return fired_; }
  // Explicit mode: the plan's own faults that have not fired, point faults
  // first (in the plan's order), then scheduled ones (by time), each with
  // why as far as the plan can tell ("w1 reached after-effect only 1 time
  // while faults could fire"). A run that matched its expectation without
  // them says nothing about them. Empty in rate mode.
  struct Unfired {
    FaultSpec spec;
    std::string why;
  };
  std::vector<Unfired> UnfiredPlanned() const;
  FaultCoverage Coverage() const;
  // Every site of `family` visited so far, in either phase, sorted: the
  // sites this run's protocol reaches.
  const std::set<std::string, std::less<>>& VisitedSites(SiteFamily family) const {
    return family == SiteFamily::kCrashPoint ? visited_crash_ : visited_lost_;
  }
  // Every request site visited so far, with who sent it.
  const std::map<std::string, RequestSenders, std::less<>>& request_senders() const { return request_senders_; }

  // "crash@after-effect" (sim/sites.h SiteKey).
  static std::string SiteKey(const FaultSpec& spec);

 private:
  bool Eligible(FaultKind kind, std::string_view site) const;
  // The kinds a visit can take only where it allows them (VisitCan): 0 for
  // error-reply, 1 for replica-lag, -1 for every other kind. Bit 1 << index
  // of Bits(can) says whether a visit allows it.
  static int ConditionalIndex(FaultKind kind);
  static uint8_t Bits(VisitCan can);
  static bool Allows(uint8_t bits, FaultKind kind) {
    const int index = ConditionalIndex(kind);
    return index < 0 || (bits & (1 << index)) != 0;
  }
  Rng& PointStream(std::string_view actor_slot);
  // visits_'s key of an actor's site: "cw1|after-effect" (a crash point),
  // "lw1|XACK" (a request site); assigned into a reused buffer.
  static void AssignVisitKey(SiteFamily family, std::string_view actor_slot, std::string_view site,
                             std::string* key);

  FaultModel model_;
  bool explicit_ = false;
  bool enabled_ = true;
  Rng rng_;                                           // scheduled faults, poison
  Rng point_root_;                                    // rate mode: split per actor slot
  std::map<std::string, Rng, std::less<>> point_rng_;  // actor slot -> its stream
  std::vector<FaultSpec> point_specs_;  // explicit mode
  std::vector<int> visits_since_;       // point_specs_[i]'s visits at or after its at_ms
  // What became of point_specs_[i] at the visit it names.
  enum class PointFate : uint8_t { kWaiting, kFired, kVisitCannotTakeIt, kAnotherFiredThere };
  std::vector<PointFate> point_fate_;
  std::vector<FaultSpec> planned_scheduled_;  // explicit mode: the plan's scheduled faults, by time
  std::vector<FaultSpec> scheduled_;
  std::set<int> poison_;
  struct Visits {
    int n = 0;                  // visits so far
    bool in_fault_phase = false;  // one of them while faults could fire
    uint8_t could = 0;                 // conditional kinds one of them could take (Bits)
    uint8_t could_in_fault_phase = 0;  // ... while faults could fire
  };
  std::unordered_map<std::string, Visits> visits_;  // AssignVisitKey -> its visits
  std::set<std::string, std::less<>> visited_crash_;
  std::set<std::string, std::less<>> visited_lost_;
  std::map<std::string, RequestSenders, std::less<>> request_senders_;
  std::set<std::string, std::less<>> fireable_crash_;  // visited while enabled_
  std::set<std::string, std::less<>> fireable_lost_;
  // Request sites visited where an error reply could be injected (a
  // protocol's own commands): error-reply's reachable and fireable sites.
  // Per conditional kind (ConditionalIndex), the sites a visit
  // could take it at, and those visited so while faults could fire.
  std::set<std::string, std::less<>> visited_conditional_[2];
  std::set<std::string, std::less<>> fireable_conditional_[2];
  std::vector<FaultSpec> fired_;
  std::vector<FaultSpec> brought_about_;        // ScheduleLater's, not fired yet
  std::vector<FaultSpec> brought_about_fired_;  // ... and fired: in Coverage() only
};

// Parses FaultSpec::ToString() output back. Errors name what was expected.
Result<FaultSpec> ParseFaultSpec(std::string_view text);

}  // namespace xackly
