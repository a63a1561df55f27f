#include "sim/faults.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "sim/limits.h"
#include "sim/stream.h"
#include "sim/text.h"

namespace xackly {

namespace {

// The fault model: one row per kind, in enum order. What each kind injects
// and what a correct protocol must tolerate is written here, once.
const std::vector<FaultKindInfo> kKinds = {
    {FaultKind::kCrash, "crash", FaultClass::kPoint, true, "crash <actor> <site> #<n> [@<time>ms]", "", "", "crash",
     "a worker process dies right after a named crash point; its open SQL transaction rolls back; a "
     "replacement starts after restart_delay_ms (same or fresh consumer name)",
     "any step may be the last: work done but not acknowledged is redelivered and must be deduplicated; "
     "work acknowledged must already be done",
     false, "crash", "crashes at {site}{standing}"},
    {FaultKind::kStall, "stall", FaultClass::kPoint, true, "stall <actor> <point> #<n> <duration>ms [@<time>ms]", "duration",
     "stall_ms", "stall",
     "a worker pauses for duration_ms after a crash point, then resumes and finishes what it was doing "
     "(a zombie)",
     "a slow worker's entries may be claimed meanwhile: both may process; the effect must still run once",
     false, "stall", "stalls at {site}{for}{standing}"},
    {FaultKind::kLostRequest, "lost-request", FaultClass::kPoint, false, "lost-request <actor> <site> #<n> [@<time>ms]", "", "",
     "lost-request",
     "a request never reaches the server or store: not executed; the caller times out and reconnects",
     "a timeout says nothing about the outcome: retries must be safe",
     false, "lost", "sends {site} about {ids}, but the request is lost and never runs"},
    {FaultKind::kLostReply, "lost-reply", FaultClass::kPoint, false, "lost-reply <actor> <site> #<n> [@<time>ms]", "", "",
     "lost-reply", "the request executes but its reply is lost: the caller times out and reconnects",
     "the request may have run: a retry must not repeat its effect (an XADD retried is a second entry)",
     false, "lost", "sends {site} about {ids}; it runs, but the reply is lost and {who} times out"},
    {FaultKind::kXdel, "xdel", FaultClass::kScheduled, false, "xdel <target> @<time>ms", "target", "xdel_target",
     "payload-deleted", "an operator deletes one unread, pending or acked entry's payload (XDEL)",
     "nothing: a deleted unread or pending entry is lost, and the report must say it was not the protocol",
     false, "delete", "deletes the payload of {ids}{with}"},
    {FaultKind::kXtrim, "xtrim", FaultClass::kScheduled, false, "xtrim <target> @<time>ms", "target", "xtrim_target",
     "payload-deleted", "retention trims the stream (MAXLEN n, or MINID at the group's last-delivered-id)",
     "a trim below what is pending or unread loses entries; a trim of delivered, acked entries is safe",
     false, "delete", "deletes the payload of {ids}{with}"},
    {FaultKind::kRestart, "restart", FaultClass::kScheduled, false, "restart @<time>ms", "", "", "server-restart",
     "redis-server is SIGKILLed and restarted; what survives follows the persistence mode; every connection "
     "dies",
     "reconnecting, recreating the group (NOGROUP) and reprocessing what the restart forgot, once",
     true, "server-restart", "kills redis-server and restarts it{persistence}"},
    {FaultKind::kSave, "save", FaultClass::kScheduled, false, "save @<time>ms", "", "", "",
     "an explicit SAVE (what an rdb restart restores to)", "nothing by itself", true},
    {FaultKind::kDelConsumer, "delconsumer", FaultClass::kScheduled, false, "delconsumer @<time>ms", "", "",
     "consumer-deleted",
     "XGROUP DELCONSUMER of the consumer holding most pending entries: its PEL is dropped",
     "nothing: the dropped entries are lost, and the report must blame the deletion",
     false, "delete", "deletes consumer{consumer} (XGROUP DELCONSUMER), dropping {ids} from the PEL"},
    {FaultKind::kClockJump, "clock-jump", FaultClass::kScheduled, false, "clock-jump +<size>ms @<time>ms", "size",
     "clock_jump_ms", "clock-jump", "virtual time leaps forward: idle thresholds and TTLs pass at once",
     "claims of busy entries and expired dedupe keys must not run an effect twice",
     true, "fault", "moves virtual time forward{by}"},
    {FaultKind::kStoreOutage, "store-outage", FaultClass::kScheduled, false, "store-outage <length>ms @<time>ms",
     "duration", "store_outage_ms", "store-outage", "the business store is unavailable for duration_ms",
     "failed statements and effects are retried later; nothing is acknowledged that did not commit",
     true, "fault", "takes the business store down{for}"},
    {FaultKind::kPoison, "poison", FaultClass::kEvent, false, "poison event <n>", "", "", "effect-failed",
     "an event whose side effect always fails",
     "the event is retried, then dead-lettered (or stays pending): it never blocks the others"},
};

const std::vector<std::string> kDefaultLostSites = {"XACK", "XADD", "COMMIT", "EVAL"};

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

const std::vector<FaultKindInfo>& AllFaultKinds() { return kKinds; }

const FaultKindInfo& InfoOf(FaultKind k) {
  const FaultKindInfo& info = kKinds[static_cast<size_t>(k)];
  XACKLY_CHECK(info.kind == k);  // the table is in enum order
  return info;
}

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
  std::string_view field = InfoOf(k).model_field;
  if (field == "stall_ms") return stall_ms;
  if (field == "clock_jump_ms") return clock_jump_ms;
  if (field == "store_outage_ms") return store_outage_ms;
  return 0;
}

std::string FaultModel::ModelTarget(FaultKind k) const {
  std::string_view field = InfoOf(k).model_field;
  if (field == "xdel_target") return xdel_target;
  if (field == "xtrim_target") return xtrim_target;
  return "";
}


const std::vector<std::string>& AllCrashPoints() {
  static const std::vector<std::string> kPoints = {
      "after-read",   "after-pending-read", "after-claim",  "after-dedupe-check",
      "after-mark",   "after-effect",       "after-commit", "after-eval",
      "after-ack",    "after-dead-letter",  "mid-batch",
  };
  return kPoints;
}

const std::vector<std::string>& AllLostSites() {
  static const std::vector<std::string> kSites = {"XREADGROUP", "XAUTOCLAIM", "XACK", "XADD",
                                                  "SET",        "EVAL",       "COMMIT"};
  return kSites;
}

std::string FaultSpec::ToString() const {
  // The grammar follows the kind's class and parameter (FaultKindInfo).
  const FaultKindInfo& info = InfoOf(kind);
  const std::string_view parameter = info.parameter;
  switch (info.fault_class) {
    case FaultClass::kPoint: {
      const std::string from = at_ms > 0 ? fmt::format(" @{}ms", at_ms) : "";
      return parameter == "duration"
                 ? fmt::format("{} {} {} #{} {}ms{}", info.name, actor, site, nth, duration_ms, from)
                 : fmt::format("{} {} {} #{}{}", info.name, actor, site, nth, from);
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

std::string FaultModel::ToString() const {
  std::string out;
  for (const FaultKindInfo& kn : kKinds) {
    if (!Has(kn.kind)) continue;
    if (!out.empty()) out += " ";
    out += kn.name;
    const std::vector<std::string>* sites = nullptr;
    if (kn.kind == FaultKind::kCrash || kn.kind == FaultKind::kStall) sites = &crash_points;
    if (kn.kind == FaultKind::kLostReply || kn.kind == FaultKind::kLostRequest) {
      sites = &LostSites();
    }
    if (sites != nullptr && !sites->empty()) {
      out += "(";
      for (size_t i = 0; i < sites->size(); ++i) out += (i ? "," : "") + (*sites)[i];
      out += ")";
    }
  }
  return out.empty() ? "none" : out;
}

bool IsScriptSiteName(std::string_view site, bool crash_site) {
  auto verb = [](std::string_view v) {
    return !v.empty() && v[0] >= 'A' && v[0] <= 'Z' &&
           std::all_of(v.begin(), v.end(), [](char c) {
             return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '|';
           });
  };
  if (!crash_site) return verb(site);
  for (std::string_view prefix : {"before-", "after-"}) {
    if (site.substr(0, prefix.size()) == prefix && verb(site.substr(prefix.size()))) return true;
  }
  // A w:point name of the script's own: "point:" and a lowercase name (the
  // prefix keeps typos of built-in names such as "after-efect" refused).
  constexpr std::string_view kPoint = "point:";
  std::string_view name = site.substr(0, kPoint.size()) == kPoint ? site.substr(kPoint.size()) : "";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

Status ValidateFaultSpec(const FaultSpec& s) {
  if (IsPointFault(s.kind)) {
    if (s.actor.size() < 2 || (s.actor[0] != 'w' && s.actor[0] != 'p')) {
      return Status::InvalidArgument(fmt::format(
          "fault '{}': actor must be a worker slot like w1 or a producer like p1", s.ToString()));
    }
    if (s.nth < 1) {
      return Status::InvalidArgument(fmt::format("fault '{}': nth must be >= 1", s.ToString()));
    }
    bool crash_site = s.kind == FaultKind::kCrash || s.kind == FaultKind::kStall;
    const auto& valid = crash_site ? AllCrashPoints() : AllLostSites();
    if (!Contains(valid, s.site) && !IsScriptSiteName(s.site, crash_site)) {
      std::string list;
      for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
      return Status::InvalidArgument(
          fmt::format("fault '{}': unknown {} '{}' (valid: {})", s.ToString(),
                      crash_site ? "crash point" : "request", s.site, list));
    }
    if (s.at_ms < 0) {
      return Status::InvalidArgument(fmt::format("fault '{}': time must be >= 0", s.ToString()));
    }
    if (s.kind == FaultKind::kStall && s.duration_ms <= 0) {
      return Status::InvalidArgument(
          fmt::format("fault '{}': stall needs a positive duration", s.ToString()));
    }
  } else if (s.kind == FaultKind::kPoison) {
    if (s.event < 1) {
      return Status::InvalidArgument(fmt::format("fault '{}': event must be >= 1", s.ToString()));
    }
  } else {
    if (s.at_ms < 0) {
      return Status::InvalidArgument(fmt::format("fault '{}': time must be >= 0", s.ToString()));
    }
    if (s.kind == FaultKind::kXdel && s.target != "unread" && s.target != "pending" &&
        s.target != "acked") {
      return Status::InvalidArgument(fmt::format(
          "fault '{}': xdel target must be unread, pending or acked", s.ToString()));
    }
    if (s.kind == FaultKind::kXtrim) {
      int64_t n = 0;
      bool ok = s.target == "minid:last-delivered" ||
                (s.target.rfind("maxlen:", 0) == 0 && ParseDecimal(s.target.substr(7), &n) && n >= 0);
      if (!ok) {
        return Status::InvalidArgument(fmt::format(
            "fault '{}': xtrim target must be maxlen:N or minid:last-delivered", s.ToString()));
      }
    }
    if ((s.kind == FaultKind::kClockJump || s.kind == FaultKind::kStoreOutage) &&
        s.duration_ms <= 0) {
      return Status::InvalidArgument(
          fmt::format("fault '{}': needs a positive duration", s.ToString()));
    }
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
      const size_t words = (parameter == "duration" ? 5 : 4) + (timed ? 1 : 0);
      if (w.size() != words || !parse_nth(w[3], &s.nth) ||
          (parameter == "duration" && !parse_ms(w[4], "", &s.duration_ms))) {
        return bad(expected);
      }
      s.actor = w[1];
      s.site = w[2];
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

std::string FaultPlan::SiteKey(const FaultSpec& spec) {
  if (IsPointFault(spec.kind)) return std::string(FaultKindName(spec.kind)) + "@" + spec.site;
  return FaultKindName(spec.kind);
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
    } else if (s.kind == FaultKind::kPoison) {
      if (poison_.insert(s.event).second) fired_.push_back(s);
    } else {
      scheduled_.push_back(std::move(s));
    }
  }
  std::stable_sort(scheduled_.begin(), scheduled_.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at_ms < b.at_ms; });
}

bool FaultPlan::Eligible(FaultKind kind, std::string_view site) const {
  if (!model_.Has(kind)) return false;
  if (kind == FaultKind::kCrash || kind == FaultKind::kStall) {
    return model_.crash_points.empty() || Contains(model_.crash_points, site);
  }
  return Contains(model_.LostSites(), site);
}

Rng& FaultPlan::PointStream(std::string_view actor_slot) {
  auto it = point_rng_.find(actor_slot);
  if (it == point_rng_.end()) {
    it = point_rng_.emplace(std::string(actor_slot), point_root_.Split(actor_slot)).first;
  }
  return it->second;
}

std::optional<FaultSpec> FaultPlan::AtPoint(std::string_view actor_slot, std::string_view site,
                                            bool crash_site, int64_t now_ms) {
  // One hash lookup per visit: this runs before every command and step of
  // every worker. The key ("c" or "l", slot, '|', site) is built in a
  // reused buffer and copied only when new; a new key is also a site's
  // first visit by this actor, the only time the visited sets can grow.
  thread_local std::string key;
  key.assign(1, crash_site ? 'c' : 'l').append(actor_slot).append(1, '|').append(site);
  auto [visit, first] = visits_.try_emplace(key, 0);
  if (first) (crash_site ? visited_crash_ : visited_lost_).emplace(site);
  if (!enabled_) return std::nullopt;
  int nth = ++visit->second;
  std::optional<FaultSpec> hit;
  if (explicit_) {
    for (size_t i = 0; i < point_specs_.size(); ++i) {
      const FaultSpec& s = point_specs_[i];
      bool kind_matches = crash_site == (s.kind == FaultKind::kCrash || s.kind == FaultKind::kStall);
      if (!kind_matches || s.actor != actor_slot || s.site != site) continue;
      // A timed spec counts its own visits from at_ms on (every matching
      // one, also when another spec fires at it).
      const bool due = s.at_ms > 0 ? now_ms >= s.at_ms && ++visits_since_[i] == s.nth : s.nth == nth;
      if (due && !hit) {
        hit = s;
        // Recorded as the visit it was: the fired list replays exactly
        // without the time.
        hit->nth = nth;
        hit->at_ms = 0;
      }
    }
  } else {
    Rng& rng = PointStream(actor_slot);
    auto draw = [&](FaultKind kind, uint32_t ppm) {
      // Always draw, so that enabling one kind never shifts another's stream.
      bool chance = rng.ChancePpm(ppm);
      if (hit || !chance || !Eligible(kind, site)) return;
      FaultSpec s;
      s.kind = kind;
      s.actor = std::string(actor_slot);
      s.site = std::string(site);
      s.nth = nth;
      if (kind == FaultKind::kStall) s.duration_ms = model_.stall_ms;
      hit = s;
    };
    if (crash_site) {
      draw(FaultKind::kCrash, model_.crash_ppm);
      draw(FaultKind::kStall, model_.stall_ppm);
    } else {
      draw(FaultKind::kLostRequest, model_.lost_request_ppm);
      draw(FaultKind::kLostReply, model_.lost_reply_ppm);
    }
  }
  if (hit) fired_.push_back(*hit);
  return hit;
}

void FaultPlan::RecordFired(const FaultSpec& spec) { fired_.push_back(spec); }

void FaultCoverage::Add(const FaultCoverage& other) {
  for (const auto& [site, n] : other.fired) fired[site] += n;
  enabled.insert(other.enabled.begin(), other.enabled.end());
  reachable.insert(other.reachable.begin(), other.reachable.end());
}

std::vector<std::string> FaultCoverage::NeverFired() const {
  std::vector<std::string> out;
  for (const std::string& site : enabled) {
    auto it = fired.find(site);
    if (it == fired.end() || it->second == 0) out.push_back(site);
  }
  return out;
}

FaultCoverage FaultPlan::Coverage() const {
  FaultCoverage c;
  for (const FaultSpec& s : fired_) c.fired[SiteKey(s)]++;
  for (FaultKind k : model_.kinds) {
    const std::string prefix = std::string(FaultKindName(k)) + "@";
    if (k == FaultKind::kCrash || k == FaultKind::kStall) {
      // No list: every point is eligible (Eligible), so every visited one is enabled.
      const auto& points = model_.crash_points.empty()
                               ? std::vector<std::string>(visited_crash_.begin(), visited_crash_.end())
                               : model_.CrashSites();
      for (const auto& p : points) c.enabled.insert(prefix + p);
      for (const auto& p : visited_crash_) c.reachable.insert(prefix + p);
    } else if (k == FaultKind::kLostReply || k == FaultKind::kLostRequest) {
      for (const auto& p : model_.LostSites()) c.enabled.insert(prefix + p);
      for (const auto& p : visited_lost_) c.reachable.insert(prefix + p);
    } else {
      c.enabled.insert(FaultKindName(k));
    }
  }
  return c;
}

}  // namespace xackly
