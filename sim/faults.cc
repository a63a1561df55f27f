#include "sim/faults.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "sim/actor_name.h"
#include "sim/limits.h"
#include "sim/stream.h"
#include "sim/text.h"

namespace xackly {

namespace {

bool IsXdelTarget(std::string_view s) { return s == "unread" || s == "pending" || s == "acked"; }

bool IsXtrimTarget(std::string_view s) {
  int64_t n = 0;
  return s == "minid:last-delivered" || (s.starts_with("maxlen:") && ParseDecimal(s.substr(7), &n) && n >= 0);
}

// The writes a failover's promoted replica misses: lag:0 .. lag:1000, or
// the lagging replica's (every write no WAIT brought it).
bool IsFailoverTarget(std::string_view s) {
  int64_t n = 0;
  return s == kLaggingReplica ||
         (s.starts_with("lag:") && ParseDecimal(s.substr(4), &n) && n >= 0 && n <= kMaxFailoverLag);
}

bool IsErrorReplyTarget(std::string_view s) { return s == "LOADING" || s == "READONLY" || s == "BUSY"; }

using M = FaultModel;

// The fault model: one row per kind, in enum order (checked below). What
// each kind injects and what a correct protocol must tolerate is written
// here, once.
constexpr std::array<FaultKindInfo, kFaultKindCount> kKinds = {{
    {FaultKind::kCrash, "crash", FaultClass::kPoint, PointEffect::kCrash, "crash <actor> <site> #<n> [@<time>ms]",
     "", "", nullptr, nullptr, nullptr, "", &M::crash_ppm, SearchScale::kModelValue, "crash",
     "a worker process dies right after a named crash point; its open SQL transaction rolls back; a "
     "replacement starts after restart_delay_ms (same or fresh consumer name)",
     "any step may be the last: work done but not acknowledged is redelivered and must be deduplicated; "
     "work acknowledged must already be done",
     false, "crash", "crashes at {site}{standing}"},
    {FaultKind::kStall, "stall", FaultClass::kPoint, PointEffect::kStall,
     "stall <actor> <point> #<n> <duration>ms [@<time>ms]", "duration", "stall_ms", &M::stall_ms, nullptr, nullptr,
     "", &M::stall_ppm, SearchScale::kStall, "stall",
     "a worker pauses for duration_ms after a crash point, then resumes and finishes what it was doing "
     "(a zombie)",
     "a slow worker's entries may be claimed meanwhile: both may process; the effect must still run once",
     false, "stall", "stalls at {site}{for}{standing}"},
    {FaultKind::kLostRequest, "lost-request", FaultClass::kPoint, PointEffect::kLoseRequest,
     "lost-request <actor> <site> #<n> [@<time>ms]", "", "", nullptr, nullptr, nullptr, "", &M::lost_request_ppm,
     SearchScale::kModelValue, "lost-request",
     "a request never reaches the server or store: not executed; the caller times out and reconnects",
     "a timeout says nothing about the outcome: retries must be safe",
     false, "lost", "sends {site} about {ids}, but the request is lost and never runs"},
    {FaultKind::kLostReply, "lost-reply", FaultClass::kPoint, PointEffect::kLoseReply,
     "lost-reply <actor> <site> #<n> [@<time>ms]", "", "", nullptr, nullptr, nullptr, "", &M::lost_reply_ppm,
     SearchScale::kModelValue, "lost-reply",
     "the request executes but its reply is lost: the caller times out and reconnects",
     "the request may have run: a retry must not repeat its effect (an XADD retried is a second entry)",
     false, "lost", "sends {site} about {ids}; it runs, but the reply is lost and {who} times out"},
    {FaultKind::kErrorReply, "error-reply", FaultClass::kPoint, PointEffect::kErrorReply,
     "error-reply <actor> <site> #<n> <error> [@<time>ms]", "target", "error_reply_target", nullptr,
     &M::error_reply_target, &IsErrorReplyTarget, "LOADING, READONLY or BUSY", &M::error_reply_ppm,
     SearchScale::kModelValue, "error-reply",
     "a Redis request is answered with an error (-LOADING, -READONLY or -BUSY) and never runs, as a server "
     "still loading its data, a demoted primary or a busy script would answer; inside MULTI the transaction "
     "is aborted (EXECABORT)",
     "an error reply says the request did not run: the work must be retried or left pending to be claimed, "
     "never treated as done",
     false, "lost", "sends {site} about {ids}, but it is answered -{detail} and never runs"},
    {FaultKind::kReplicaLag, "replica-lag", FaultClass::kPoint, PointEffect::kReplicaLag,
     "replica-lag <actor> WAIT #<n> <duration>ms [failover] [@<time>ms]", "duration", "replica_lag_ms",
     &M::replica_lag_ms,
     nullptr, nullptr, "", &M::replica_lag_ppm, SearchScale::kModelValue, "replica-lag",
     "a replica falls behind while a WAIT waits for it: WAIT n <timeout> answers 0 when its timeout "
     "passes, with the writes before it still unreplicated (a later failover may drop them); WAIT n 0 "
     "answers once the replica caught up, duration_ms later (a run with replicas; WAIT only). With several "
     "replicas one lags and the others acknowledge: WAIT n answers at once when fewer than all are asked "
     "for, else one less than all after its timeout. With `failover`, the primary then fails over to the "
     "lagging replica when the WAIT answers, and every write no WAIT brought it is gone",
     "WAIT's answer is the only confirmation: a reply below the replicas asked for means the writes are "
     "unconfirmed, and a failover may drop them",
     false, "stall", "asks WAIT about {ids}, but the replica lags{for} and does not confirm them"},
    {FaultKind::kXdel, "xdel", FaultClass::kScheduled, PointEffect::kNone, "xdel <target> @<time>ms", "target",
     "xdel_target", nullptr, &M::xdel_target, &IsXdelTarget, "unread, pending or acked", nullptr,
     SearchScale::kModelValue, "payload-deleted",
     "an operator deletes one unread, pending or acked entry's payload (XDEL)",
     "nothing: a deleted unread or pending entry is lost, and the report must say it was not the protocol",
     false, "delete", "deletes the payload of {ids}{with}"},
    {FaultKind::kXtrim, "xtrim", FaultClass::kScheduled, PointEffect::kNone, "xtrim <target> @<time>ms", "target",
     "xtrim_target", nullptr, &M::xtrim_target, &IsXtrimTarget, "maxlen:N or minid:last-delivered", nullptr,
     SearchScale::kModelValue, "payload-deleted",
     "retention trims the stream (MAXLEN n, or MINID at the group's last-delivered-id)",
     "a trim below what is pending or unread loses entries; a trim of delivered, acked entries is safe",
     false, "delete", "deletes the payload of {ids}{with}"},
    {FaultKind::kRestart, "restart", FaultClass::kScheduled, PointEffect::kNone, "restart @<time>ms", "", "",
     nullptr, nullptr, nullptr, "", nullptr, SearchScale::kModelValue, "server-restart",
     "redis-server is SIGKILLed and restarted; what survives follows the persistence mode; every connection "
     "dies",
     "reconnecting, recreating the group (NOGROUP) and reprocessing what the restart forgot, once",
     true, "server-restart", "kills redis-server and restarts it{persistence}"},
    {FaultKind::kSave, "save", FaultClass::kScheduled, PointEffect::kNone, "save @<time>ms", "", "", nullptr,
     nullptr, nullptr, "", nullptr, SearchScale::kModelValue, "",
     "an explicit SAVE (what an rdb restart restores to)", "nothing by itself", true, "fault", ""},
    {FaultKind::kDelConsumer, "delconsumer", FaultClass::kScheduled, PointEffect::kNone, "delconsumer @<time>ms",
     "", "", nullptr, nullptr, nullptr, "", nullptr, SearchScale::kModelValue, "consumer-deleted",
     "XGROUP DELCONSUMER of the consumer holding most pending entries: its PEL is dropped",
     "nothing: the dropped entries are lost, and the report must blame the deletion",
     false, "delete", "deletes consumer{consumer} (XGROUP DELCONSUMER), dropping {ids} from the PEL"},
    {FaultKind::kClockJump, "clock-jump", FaultClass::kScheduled, PointEffect::kNone,
     "clock-jump +<size>ms @<time>ms", "size", "clock_jump_ms", &M::clock_jump_ms, nullptr, nullptr, "", nullptr,
     SearchScale::kClockJump, "clock-jump", "virtual time leaps forward: idle thresholds and TTLs pass at once",
     "claims of busy entries and expired dedupe keys must not run an effect twice",
     true, "fault", "moves virtual time forward{by}"},
    {FaultKind::kStoreOutage, "store-outage", FaultClass::kScheduled, PointEffect::kNone,
     "store-outage <length>ms @<time>ms", "duration", "store_outage_ms", &M::store_outage_ms, nullptr, nullptr,
     "", nullptr, SearchScale::kOutage, "store-outage", "the business store is unavailable for duration_ms",
     "failed statements and effects are retried later; nothing is acknowledged that did not commit",
     true, "fault", "takes the business store down{for}"},
    {FaultKind::kFailover, "failover", FaultClass::kScheduled, PointEffect::kNone, "failover lag:<n> @<time>ms",
     "target", "failover_target", nullptr, &M::failover_target, &IsFailoverTarget, "lag:N (0..1000) or lagging",
     nullptr, SearchScale::kModelValue, "failover",
     "the primary fails over to an asynchronous replica, which had not received the primary's last N writes "
     "(those no replica confirmed to a WAIT): they are gone; every connection dies and reconnects to the new "
     "primary. `lagging` promotes the replica furthest behind instead: it has no write a WAIT did not bring it, "
     "whatever the other replicas confirmed",
     "an acknowledged write may vanish (an XADD, an XACK, a claim, a dedupe key kept in Redis): what the "
     "protocol relies on must survive it, or be confirmed with WAIT first",
     true, "server-restart", "fails the primary over to {detail}"},
    {FaultKind::kPoison, "poison", FaultClass::kEvent, PointEffect::kNone, "poison event <n>", "", "", nullptr,
     nullptr, nullptr, "", nullptr, SearchScale::kModelValue, "effect-failed",
     "an event whose side effect always fails",
     "the event is retried, then dead-lettered (or stays pending): it never blocks the others", false, "fault",
     ""},
}};

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (static_cast<size_t>(kKinds[i].kind) != i) return false;
    // A kind's class and point effect agree; a parameter has its member.
    if ((kKinds[i].fault_class == FaultClass::kPoint) != (kKinds[i].effect != PointEffect::kNone)) return false;
    if ((kKinds[i].model_target != nullptr) != (kKinds[i].valid_target != nullptr)) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kKinds: one row per FaultKind, in enum order, each consistent");

const std::vector<std::string> kDefaultLostSites = {"XACK", "XADD", "COMMIT", "EVAL"};

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::span<const FaultKindInfo> AllFaultKinds() { return kKinds; }

const FaultKindInfo& InfoOf(FaultKind k) { return kKinds[static_cast<size_t>(k)]; }

const FaultKindInfo* FaultKindOfHistory(std::string_view history) {
  if (history.empty()) return nullptr;
  for (const FaultKindInfo& kn : kKinds) {
    if (history == kn.history) return &kn;
  }
  return nullptr;
}

const FaultKindInfo* FaultKindNamed(std::string_view name) {
  for (const FaultKindInfo& kn : kKinds) {
    if (name == kn.name) return &kn;
  }
  return nullptr;
}

const char* FaultKindName(FaultKind k) { return InfoOf(k).name; }

bool ParseFaultKind(std::string_view name, FaultKind* out) {
  const FaultKindInfo* kn = FaultKindNamed(name);
  if (kn != nullptr) *out = kn->kind;
  return kn != nullptr;
}

std::string FaultKindList() {
  std::string out;
  for (const FaultKindInfo& kn : kKinds) {
    if (!out.empty()) out += ",";
    out += kn.name;
  }
  return out;
}

bool IsPointFault(FaultKind k) { return InfoOf(k).fault_class == FaultClass::kPoint; }

int64_t FaultModel::ModelDurationMs(FaultKind k) const {
  const FaultKindInfo& info = InfoOf(k);
  return info.model_duration != nullptr ? this->*info.model_duration : 0;
}

std::string FaultModel::ModelTarget(FaultKind k) const {
  const FaultKindInfo& info = InfoOf(k);
  return info.model_target != nullptr ? this->*info.model_target : "";
}

std::string FaultSpec::ToString() const {
  // The grammar follows the kind's class and parameter (FaultKindInfo).
  const FaultKindInfo& info = InfoOf(kind);
  const std::string_view parameter = info.parameter;
  switch (info.fault_class) {
    case FaultClass::kPoint: {
      const std::string from = at_ms > 0 ? fmt::format(" @{}ms", at_ms) : "";
      if (parameter == "duration") {
        const std::string then = target.empty() ? "" : " " + target;  // replica-lag's failover
        return fmt::format("{} {} {} #{} {}ms{}{}", info.name, actor, site, nth, duration_ms, then, from);
      }
      if (parameter == "target") return fmt::format("{} {} {} #{} {}{}", info.name, actor, site, nth, target, from);
      return fmt::format("{} {} {} #{}{}", info.name, actor, site, nth, from);
    }
    case FaultClass::kScheduled:
      if (parameter == "target") return fmt::format("{} {} @{}ms", info.name, target, at_ms);
      if (parameter == "size") return fmt::format("{} +{}ms @{}ms", info.name, duration_ms, at_ms);
      if (parameter == "duration") return fmt::format("{} {}ms @{}ms", info.name, duration_ms, at_ms);
      return fmt::format("{} @{}ms", info.name, at_ms);
    case FaultClass::kEvent:
      return fmt::format("{} event {}", info.name, event);
  }
  return "";
}

const std::vector<std::string>& FaultModel::CrashSites() const {
  return crash_points.empty() ? AllCrashPoints() : crash_points;
}

const std::vector<std::string>& FaultModel::LostSites() const {
  return lost_sites.empty() ? kDefaultLostSites : lost_sites;
}

const std::vector<std::string>& FaultModel::Sites(SiteFamily family) const {
  return family == SiteFamily::kCrashPoint ? CrashSites() : LostSites();
}

const std::vector<std::string>& FaultModel::SitesOf(FaultKind k) const {
  static const std::vector<std::string> kWait = {"WAIT"};
  return k == FaultKind::kReplicaLag ? kWait : Sites(InfoOf(k).Sites());
}

std::string FaultModel::ToString() const {
  std::string out;
  for (const FaultKindInfo& kn : kKinds) {
    if (!Has(kn.kind)) continue;
    if (!out.empty()) out += " ";
    out += kn.name;
    // Crash points are listed only when the model names them (empty: all).
    const std::vector<std::string>* sites = kn.Sites() == SiteFamily::kCrashPoint ? &crash_points
                                            : kn.Sites() == SiteFamily::kRequest  ? &SitesOf(kn.kind)
                                                                                  : nullptr;
    if (sites != nullptr && !sites->empty()) {
      out += "(";
      for (size_t i = 0; i < sites->size(); ++i) out += (i ? "," : "") + (*sites)[i];
      out += ")";
    }
  }
  return out.empty() ? "none" : out;
}

std::string ErrorReplyText(std::string_view error) {
  // Redis 7.0's shared error objects (server.c createSharedObjects).
  if (error == "LOADING") return "LOADING Redis is loading the dataset in memory";
  if (error == "READONLY") return "READONLY You can't write against a read only replica.";
  XACKLY_CHECK(error == "BUSY");
  return "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
}

Status ValidateFaultSpec(const FaultSpec& s) {
  const FaultKindInfo& info = InfoOf(s.kind);
  auto invalid = [&](std::string_view why) {
    return Status::InvalidArgument(fmt::format("fault '{}': {}", s.ToString(), why));
  };
  switch (info.fault_class) {
    case FaultClass::kPoint: {
      if (s.actor.size() < 2 || (s.actor[0] != 'w' && s.actor[0] != 'p')) {
        return invalid("actor must be a worker slot like w1 or a producer like p1");
      }
      if (s.nth < 1) return invalid("nth must be >= 1");
      const SiteFamily family = info.Sites();
      if (s.kind == FaultKind::kReplicaLag && s.site != "WAIT") return invalid("replica-lag fires at WAIT only");
      if (s.kind == FaultKind::kReplicaLag && !s.target.empty() && s.target != kThenFailover) {
        return invalid(fmt::format("replica-lag takes nothing or `{}` after its duration", kThenFailover));
      }
      if (!IsSiteName(s.site, family)) {
        const bool crash_point = family == SiteFamily::kCrashPoint;
        const auto& valid = crash_point ? AllCrashPoints() : AllLostSites();
        std::string list;
        for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
        return invalid(fmt::format("unknown {} '{}' (valid: {})", crash_point ? "crash point" : "request", s.site,
                                   list));
      }
      break;
    }
    case FaultClass::kEvent:
      if (s.event < 1) return invalid("event must be >= 1");
      return Status::Ok();
    case FaultClass::kScheduled: break;
  }
  if (s.at_ms < 0) return invalid("time must be >= 0");
  if (info.valid_target != nullptr && !info.valid_target(s.target)) {
    return invalid(fmt::format("{} target must be {}", info.name, info.target_expected));
  }
  if (info.model_duration != nullptr && s.duration_ms <= 0) {
    return invalid(fmt::format("{} needs a positive duration", info.name));
  }
  return Status::Ok();
}

Result<FaultSpec> ParseFaultSpec(std::string_view text) {
  std::vector<std::string_view> w = SplitWords(text);
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(fmt::format("fault '{}': {}", text, why));
  };
  if (w.empty()) return bad("empty");
  FaultSpec s;
  if (!ParseFaultKind(w[0], &s.kind)) {
    return bad(fmt::format("unknown fault kind (valid: {})", FaultKindList()));
  }
  auto parse_ms = [](std::string_view word, std::string_view prefix, int64_t* out) {
    if (word.substr(0, prefix.size()) != prefix) return false;
    word.remove_prefix(prefix.size());
    if (word.size() < 3 || word.substr(word.size() - 2) != "ms") return false;
    return ParseDecimal(word.substr(0, word.size() - 2), out);
  };
  auto parse_nth = [](std::string_view word, int* out) {
    int64_t n = 0;
    // Checked before the narrowing: #4294967297 must not become #1.
    if (word.empty() || word[0] != '#' || !ParseDecimal(word.substr(1), &n) || n < 0 || n > kMaxSteps) {
      return false;
    }
    *out = static_cast<int>(n);
    return true;
  };
  // The grammar follows the kind's class and parameter (FaultKindInfo).
  const FaultKindInfo& info = InfoOf(s.kind);
  const std::string_view parameter = info.parameter;
  const std::string expected = fmt::format("expected '{}'", info.grammar);
  switch (info.fault_class) {
    case FaultClass::kPoint: {
      // An optional last word "@<time>ms": the nth visit at or after it.
      const bool timed = w.size() >= 2 && w.back().starts_with('@');
      if (timed && !parse_ms(w.back(), "@", &s.at_ms)) return bad(expected);
      // replica-lag's optional "failover" after its duration.
      const bool then_failover = s.kind == FaultKind::kReplicaLag && w.size() == 6u + (timed ? 1 : 0) &&
                                 w[5] == kThenFailover;
      if (then_failover) s.target = kThenFailover;
      const size_t words = (parameter.empty() ? 4 : 5) + (timed ? 1 : 0) + (then_failover ? 1 : 0);
      if (w.size() != words || !parse_nth(w[3], &s.nth) ||
          (parameter == "duration" && !parse_ms(w[4], "", &s.duration_ms))) {
        return bad(expected);
      }
      s.actor = w[1];
      s.site = w[2];
      if (parameter == "target") s.target = w[4];
      break;
    }
    case FaultClass::kScheduled: {
      const size_t words = parameter.empty() ? 2 : 3;
      if (w.size() != words || !parse_ms(w[words - 1], "@", &s.at_ms)) return bad(expected);
      if (parameter == "target") {
        s.target = w[1];
      } else if ((parameter == "size" && !parse_ms(w[1], "+", &s.duration_ms)) ||
                 (parameter == "duration" && !parse_ms(w[1], "", &s.duration_ms))) {
        return bad(expected);
      }
      break;
    }
    case FaultClass::kEvent: {
      int64_t n = 0;
      if (w.size() != 3 || w[1] != "event" || !ParseDecimal(w[2], &n)) return bad(expected);
      if (n < 1 || n > kMaxEvents) return bad(fmt::format("event must be in 1..{}", kMaxEvents));
      s.event = static_cast<int>(n);
      break;
    }
  }
  Status valid = ValidateFaultSpec(s);
  if (!valid.ok()) return valid;
  return s;
}

std::string FaultPlan::SiteKey(const FaultSpec& spec) { return xackly::SiteKey(spec.kind, spec.site); }

void FaultPlan::ScheduleLater(FaultSpec spec) {
  XACKLY_CHECK(InfoOf(spec.kind).fault_class == FaultClass::kScheduled);
  auto at = std::upper_bound(scheduled_.begin(), scheduled_.end(), spec.at_ms,
                             [](int64_t t, const FaultSpec& s) { return t < s.at_ms; });
  brought_about_.push_back(spec);
  scheduled_.insert(at, std::move(spec));
}

FaultPlan::FaultPlan(const FaultModel& model, Rng rng, int64_t fault_phase_ms, int events)
    : model_(model), rng_(rng), point_root_(rng.Split("point-faults")) {
  for (const FaultKindInfo& info : kKinds) {
    const FaultKind k = info.kind;
    if (info.fault_class != FaultClass::kScheduled || !model_.Has(k)) continue;
    for (int i = 0; i < model_.scheduled_count; ++i) {
      FaultSpec s;
      s.kind = k;
      s.at_ms = rng_.Between(0, std::max<int64_t>(0, fault_phase_ms - 1));
      s.target = model_.ModelTarget(k);
      s.duration_ms = model_.ModelDurationMs(k);
      scheduled_.push_back(s);
    }
  }
  std::stable_sort(scheduled_.begin(), scheduled_.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at_ms < b.at_ms; });
  if (model_.Has(FaultKind::kPoison) && events > 0) {
    for (int i = 0; i < model_.poison_count; ++i) {
      int event = static_cast<int>(rng_.Between(1, events));
      if (poison_.insert(event).second) {
        FaultSpec s;
        s.kind = FaultKind::kPoison;
        s.event = event;
        fired_.push_back(s);
      }
    }
  }
}

FaultPlan::FaultPlan(const FaultModel& model, std::vector<FaultSpec> specs)
    : model_(model), explicit_(true), rng_(0), point_root_(0) {
  for (FaultSpec& s : specs) {
    if (IsPointFault(s.kind)) {
      point_specs_.push_back(std::move(s));
      visits_since_.push_back(0);
      point_fate_.push_back(PointFate::kWaiting);
    } else if (s.kind == FaultKind::kPoison) {
      if (poison_.insert(s.event).second) fired_.push_back(s);
    } else {
      scheduled_.push_back(std::move(s));
    }
  }
  std::stable_sort(scheduled_.begin(), scheduled_.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at_ms < b.at_ms; });
  planned_scheduled_ = scheduled_;
}

bool FaultPlan::Eligible(FaultKind kind, std::string_view site) const {
  if (!model_.Has(kind)) return false;
  // Crash points: every point when the model names none.
  if (InfoOf(kind).Sites() == SiteFamily::kCrashPoint && model_.crash_points.empty()) return true;
  return Contains(model_.SitesOf(kind), site);
}

int FaultPlan::ConditionalIndex(FaultKind kind) {
  switch (kind) {
    case FaultKind::kErrorReply: return 0;
    case FaultKind::kReplicaLag: return 1;
    default: return -1;
  }
}

uint8_t FaultPlan::Bits(VisitCan can) {
  return static_cast<uint8_t>((can.error_reply ? 1 << ConditionalIndex(FaultKind::kErrorReply) : 0) |
                              (can.replica_lag ? 1 << ConditionalIndex(FaultKind::kReplicaLag) : 0));
}

Rng& FaultPlan::PointStream(std::string_view actor_slot) {
  auto it = point_rng_.find(actor_slot);
  if (it == point_rng_.end()) {
    it = point_rng_.emplace(std::string(actor_slot), point_root_.Split(actor_slot)).first;
  }
  return it->second;
}

void FaultPlan::AssignVisitKey(SiteFamily family, std::string_view actor_slot, std::string_view site,
                               std::string* key) {
  key->assign(1, family == SiteFamily::kCrashPoint ? 'c' : 'l').append(actor_slot).append(1, '|').append(site);
}

std::optional<FaultSpec> FaultPlan::AtPoint(std::string_view actor_slot, std::string_view site,
                                            SiteFamily family, int64_t now_ms, VisitCan can) {
  // One hash lookup per visit: this runs before every command and step of
  // every worker. The key ("c" or "l", slot, '|', site) is built in a
  // reused buffer and copied only when new; a new key is also a site's
  // first visit by this actor, the only time the visited sets can grow.
  const bool crash_point = family == SiteFamily::kCrashPoint;
  thread_local std::string key;
  AssignVisitKey(family, actor_slot, site, &key);
  auto [visit, first] = visits_.try_emplace(key);
  if (first) {
    (crash_point ? visited_crash_ : visited_lost_).emplace(site);
    if (!crash_point) {
      RequestSenders& senders = request_senders_[std::string(site)];
      const ActorRole role = DescribeActor(actor_slot).role;
      senders.producer = senders.producer || role == ActorRole::kProducer;
      senders.worker = senders.worker || role == ActorRole::kWorker;
    }
  }
  const uint8_t could = crash_point ? 0 : Bits(can);
  // Records the sites a visit could take each conditional kind at, the
  // first time each (bit) is new for this actor and site.
  Visits& visits = visit->second;  // named: clang before 16 cannot capture a structured binding
  auto note = [&](uint8_t Visits::*seen, std::set<std::string, std::less<>>(&sites)[2]) {
    const uint8_t fresh = static_cast<uint8_t>(could & ~(visits.*seen));
    if (fresh == 0) return;
    visits.*seen |= fresh;
    for (int b = 0; b < 2; ++b) {
      if (fresh & (1 << b)) sites[b].emplace(site);
    }
  };
  note(&Visits::could, visited_conditional_);
  if (!enabled_) return std::nullopt;
  if (!visit->second.in_fault_phase) {
    visit->second.in_fault_phase = true;
    (crash_point ? fireable_crash_ : fireable_lost_).emplace(site);
  }
  note(&Visits::could_in_fault_phase, fireable_conditional_);
  int nth = ++visit->second.n;
  std::optional<FaultSpec> hit;
  if (explicit_) {
    for (size_t i = 0; i < point_specs_.size(); ++i) {
      const FaultSpec& s = point_specs_[i];
      if (InfoOf(s.kind).Sites() != family || s.actor != actor_slot || s.site != site) continue;
      if (!Allows(could, s.kind)) {
        if (s.at_ms == 0 && s.nth == nth) point_fate_[i] = PointFate::kVisitCannotTakeIt;
        continue;
      }
      // A timed spec counts its own visits from at_ms on (every matching
      // one, also when another spec fires at it).
      const bool due = s.at_ms > 0 ? now_ms >= s.at_ms && ++visits_since_[i] == s.nth : s.nth == nth;
      if (due && hit) point_fate_[i] = PointFate::kAnotherFiredThere;
      if (due && !hit) {
        point_fate_[i] = PointFate::kFired;
        hit = s;
        // Recorded as the visit it was: the fired list replays exactly
        // without the time.
        hit->nth = nth;
        hit->at_ms = 0;
      }
    }
  } else {
    Rng& rng = PointStream(actor_slot);
    // Every point kind of the family, in table order, draws its chance;
    // always draw, so that enabling one kind never shifts another's stream.
    // error-reply and replica-lag, added later, draw only when enabled:
    // models without them keep the streams they had.
    for (const FaultKindInfo& info : kKinds) {
      if (info.Sites() != family) continue;
      const bool added_later = info.kind == FaultKind::kErrorReply || info.kind == FaultKind::kReplicaLag;
      if (added_later && !model_.Has(info.kind)) continue;
      bool chance = rng.ChancePpm(model_.*info.rate_ppm);
      if (hit || !chance || !Eligible(info.kind, site) || !Allows(could, info.kind)) continue;
      FaultSpec s;
      s.kind = info.kind;
      s.actor = std::string(actor_slot);
      s.site = std::string(site);
      s.nth = nth;
      s.duration_ms = model_.ModelDurationMs(info.kind);
      s.target = model_.ModelTarget(info.kind);
      // A lag in a model with failover has the primary fail over to the
      // lagging replica when its WAIT answers, half of the time (as a swarm
      // draws it): a failover at a random time comes right after a lag too
      // rarely to show a protocol that ignores WAIT's answer. The coin is
      // its own stream (per actor and visit), so the actor's stream, and
      // every later fault of it, is the one a model without failover draws.
      if (info.kind == FaultKind::kReplicaLag && model_.Has(FaultKind::kFailover) &&
          point_root_.Split(fmt::format("{}|lag-failover|{}", actor_slot, nth)).ChancePpm(500000)) {
        s.target = std::string(kThenFailover);
      }
      hit = s;
    }
  }
  if (hit) fired_.push_back(*hit);
  return hit;
}

std::vector<FaultPlan::Unfired> FaultPlan::UnfiredPlanned() const {
  std::vector<Unfired> out;
  for (size_t i = 0; i < point_specs_.size(); ++i) {
    const FaultSpec& s = point_specs_[i];
    const PointFate fate = point_fate_[i];
    if (fate == PointFate::kFired) continue;
    std::string key;
    AssignVisitKey(InfoOf(s.kind).Sites(), s.actor, s.site, &key);
    auto it = visits_.find(key);
    const Visits seen = it != visits_.end() ? it->second : Visits{};
    const char* where = "(error replies go to a protocol's own commands, replica lag to a WAIT the harness answers)";
    std::string why;
    if (fate == PointFate::kAnotherFiredThere) {
      why = "another fault of the plan fired at that visit";
    } else if (fate == PointFate::kVisitCannotTakeIt) {
      why = fmt::format("{}'s visit #{} of {} could not take {} {}", s.actor, s.nth, s.site, FaultKindName(s.kind),
                        where);
    } else if (seen.n == 0) {
      why = fmt::format("{} never reached {} while faults could fire", s.actor, s.site);
    } else if (!Allows(seen.could_in_fault_phase, s.kind)) {
      why = fmt::format("{} reached {}, but no visit of it could take {} {}", s.actor, s.site, FaultKindName(s.kind),
                        where);
    } else if (s.at_ms > 0) {
      why = fmt::format("{} reached {} {} while faults could fire, {} of them at or after {} ms", s.actor, s.site,
                        Plural(seen.n, "time"), visits_since_[i], s.at_ms);
    } else {
      why = fmt::format("{} reached {} only {} while faults could fire", s.actor, s.site, Plural(seen.n, "time"));
    }
    out.push_back({s, std::move(why)});
  }
  std::vector<FaultSpec> fired = fired_;
  for (const FaultSpec& s : planned_scheduled_) {
    auto it = std::find(fired.begin(), fired.end(), s);
    if (it != fired.end()) {
      fired.erase(it);
      continue;
    }
    out.push_back({s, fmt::format("the fault phase ended before {} ms", s.at_ms)});
  }
  return out;
}

void FaultPlan::RecordFired(const FaultSpec& spec) {
  auto caused = std::find(brought_about_.begin(), brought_about_.end(), spec);
  if (caused == brought_about_.end()) {
    fired_.push_back(spec);
    return;
  }
  brought_about_.erase(caused);
  brought_about_fired_.push_back(spec);
}

void FaultCoverage::Add(const FaultCoverage& other) {
  for (const auto& [site, n] : other.fired) fired[site] += n;
  enabled.insert(other.enabled.begin(), other.enabled.end());
  reachable.insert(other.reachable.begin(), other.reachable.end());
  fireable.insert(other.fireable.begin(), other.fireable.end());
}

std::vector<std::string> FaultCoverage::NeverFired() const {
  std::vector<std::string> out;
  for (const std::string& site : enabled) {
    auto it = fired.find(site);
    if (it == fired.end() || it->second == 0) out.push_back(site);
  }
  return out;
}

std::vector<std::string> FaultCoverage::Gaps() const {
  std::vector<std::string> out;
  for (const std::string& site : NeverFired()) {
    const std::optional<ParsedSiteKey> key = ParseSiteKey(site);
    const bool point = key && InfoOf(key->kind).Sites() != SiteFamily::kNone;
    if (!point || fireable.count(site) > 0) out.push_back(site);
  }
  return out;
}

FaultCoverage FaultPlan::Coverage() const {
  FaultCoverage c;
  for (const FaultSpec& s : fired_) c.fired[SiteKey(s)]++;
  for (const FaultSpec& s : brought_about_fired_) c.fired[SiteKey(s)]++;
  for (FaultKind k : model_.kinds) {
    const SiteFamily family = InfoOf(k).Sites();
    if (family == SiteFamily::kNone) {
      c.enabled.insert(FaultKindName(k));
      continue;
    }
    // An error reply and a replica lag reach only the sites a visit could
    // take them at (VisitCan): each is enabled only where a run visited so.
    const int index = ConditionalIndex(k);
    const bool conditional = index >= 0;
    const std::set<std::string, std::less<>>& visited =
        conditional ? visited_conditional_[index] : VisitedSites(family);
    const std::set<std::string, std::less<>>& fireable = conditional                         ? fireable_conditional_[index]
                                                         : family == SiteFamily::kCrashPoint ? fireable_crash_
                                                                                             : fireable_lost_;
    // No list of crash points: every point is eligible (Eligible), so every visited one is enabled.
    std::vector<std::string> enabled = family == SiteFamily::kCrashPoint && model_.crash_points.empty()
                                           ? std::vector<std::string>(visited.begin(), visited.end())
                                           : model_.SitesOf(k);
    if (conditional) std::erase_if(enabled, [&](const std::string& p) { return !visited.contains(p); });
    for (const auto& p : enabled) c.enabled.insert(xackly::SiteKey(k, p));
    for (const auto& p : visited) c.reachable.insert(xackly::SiteKey(k, p));
    for (const auto& p : fireable) c.fireable.insert(xackly::SiteKey(k, p));
  }
  return c;
}

}  // namespace xackly
