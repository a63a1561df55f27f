#include "sim/verdict.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/faults.h"
#include "sim/sites.h"
#include "sim/text.h"

namespace xackly {

namespace {
constexpr VerdictKind kAllKinds[] = {VerdictKind::kOk, VerdictKind::kDuplicate, VerdictKind::kLost,
                                     VerdictKind::kPelLeak, VerdictKind::kStuck};
}

const char* VerdictKindName(VerdictKind k) {
  switch (k) {
    case VerdictKind::kOk: return "ok";
    case VerdictKind::kDuplicate: return "duplicate";
    case VerdictKind::kLost: return "lost";
    case VerdictKind::kPelLeak: return "pel-leak";
    case VerdictKind::kStuck: return "stuck";
  }
  return "ok";
}

bool ParseVerdictKind(std::string_view name, VerdictKind* out) {
  for (VerdictKind k : kAllKinds) {
    if (name == VerdictKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

std::string VerdictKindList() {
  std::string out;
  for (VerdictKind k : kAllKinds) {
    if (!out.empty()) out += ", ";
    out += VerdictKindName(k);
  }
  return out;
}

std::vector<std::vector<ExpectTerm>> Expectation::Alternatives() const {
  if (!alternatives.empty()) return alternatives;
  return {{ExpectTerm{kind, cause}}};
}

bool Expectation::IsOk() const {
  std::vector<std::vector<ExpectTerm>> alts = Alternatives();
  return alts.size() == 1 && alts[0].size() == 1 && alts[0][0].kind == VerdictKind::kOk;
}

std::string Expectation::ToString() const {
  std::string out;
  std::vector<std::vector<ExpectTerm>> alts = Alternatives();
  for (size_t a = 0; a < alts.size(); ++a) {
    if (a > 0) out += "|";
    for (size_t t = 0; t < alts[a].size(); ++t) {
      if (t > 0) out += "+";
      out += VerdictKindName(alts[a][t].kind);
      if (!alts[a][t].cause.empty()) out += ":" + alts[a][t].cause;
    }
  }
  return out;
}

namespace {

// Causes whose tail names a fault site: "crash:after-effect", "lost-reply:XACK",
// a script's "crash:after-COMMIT" (duplicates; and losses by a position-based
// reader, which the crash or lost reply after its XREAD lost).
struct CauseFamily {
  const char* prefix;
  SiteFamily sites;
};
constexpr CauseFamily kFamilies[] = {
    {"crash", SiteFamily::kCrashPoint}, {"lost-reply", SiteFamily::kRequest}, {"lost-request", SiteFamily::kRequest},
    {"error-reply", SiteFamily::kRequest}};

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<std::string> KnownCauses(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kOk: return {};
    case VerdictKind::kDuplicate:
      return {"crash:<crash point>", "stall", "lost-reply:<site>", "lost-request:<site>", "error-reply:<site>",
              "dedupe-expired", "server-restart", "failover", "producer-retry", "rewound", "position-reread",
              "redelivered"};
    case VerdictKind::kLost:
      return {"acked-without-effect", "stranded", "payload-deleted", "consumer-deleted",
              "server-data-loss", "failover", "never-produced", "never-delivered", "dropped", "read-noack",
              "crash:<crash point>", "lost-reply:<site>", "lost-request:<site>", "error-reply:<site>", "effect-failed",
              "read-not-processed"};
    case VerdictKind::kPelLeak: return {"done-but-pending"};
    case VerdictKind::kStuck: return {"never-settled"};
  }
  return {};
}

bool IsKnownCause(VerdictKind kind, std::string_view cause) {
  for (const std::string& known : KnownCauses(kind)) {
    if (cause == known) return true;
  }
  if (kind != VerdictKind::kDuplicate && kind != VerdictKind::kLost) return false;
  for (const CauseFamily& f : kFamilies) {
    std::string_view prefix = f.prefix;
    if (cause == prefix) return true;
    if (cause.size() > prefix.size() + 1 && cause.substr(0, prefix.size()) == prefix &&
        cause[prefix.size()] == ':' && IsSiteName(cause.substr(prefix.size() + 1), f.sites)) {
      return true;
    }
  }
  return false;
}

bool Expectation::Parse(std::string_view text, Expectation* out, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  Expectation e;
  for (std::string_view alt : SplitList(text, '|')) {
    std::vector<ExpectTerm> terms;
    for (std::string_view term_text : SplitList(alt, '+')) {
      size_t colon = term_text.find(':');
      ExpectTerm term;
      std::string_view kind = term_text.substr(0, colon);
      if (!ParseVerdictKind(kind, &term.kind)) {
        return fail(fmt::format("'{}' is not a verdict kind (kinds: {}; combine with + and |, "
                                "e.g. \"lost|stuck\", \"duplicate+pel-leak\")",
                                kind, VerdictKindList()));
      }
      if (colon != std::string_view::npos) {
        term.cause = std::string(term_text.substr(colon + 1));
        if (term.kind == VerdictKind::kOk) return fail("ok takes no cause");
        if (!IsKnownCause(term.kind, term.cause)) {
          return fail(fmt::format("'{}' is not a cause of {} (known: {})", term.cause,
                                  VerdictKindName(term.kind), Join(KnownCauses(term.kind))));
        }
      }
      for (const ExpectTerm& t : terms) {
        if (t.kind == term.kind) {
          return fail(fmt::format("'{}' names {} twice in one combination", alt, VerdictKindName(t.kind)));
        }
      }
      terms.push_back(std::move(term));
    }
    bool has_ok = std::any_of(terms.begin(), terms.end(),
                              [](const ExpectTerm& t) { return t.kind == VerdictKind::kOk; });
    if (has_ok && terms.size() > 1) return fail("ok combines with nothing (it means no violation)");
    e.alternatives.push_back(std::move(terms));
  }
  e.kind = e.alternatives[0][0].kind;
  e.cause = e.alternatives[0][0].cause;
  if (e.alternatives.size() == 1 && e.alternatives[0].size() == 1) e.alternatives.clear();
  *out = std::move(e);
  return true;
}

std::vector<VerdictKind> ObservedKinds(const std::vector<Violation>& violations) {
  std::vector<VerdictKind> kinds;
  for (VerdictKind k : kAllKinds) {
    if (std::any_of(violations.begin(), violations.end(),
                    [k](const Violation& v) { return v.kind == k; })) {
      kinds.push_back(k);
    }
  }
  return kinds;
}

std::string HistoryKey(const Violation& v) { return v.group.empty() ? v.event_id : v.event_id + "@" + v.group; }

std::string ViolationSubject(const Violation& v, std::string_view run_wide) {
  std::string subject = v.event_id.empty() ? std::string(run_wide) : v.event_id;
  if (!v.group.empty()) subject += " in group " + v.group;
  return subject;
}

std::string ObservedClass(const std::vector<Violation>& violations) {
  std::vector<VerdictKind> kinds = ObservedKinds(violations);
  if (kinds.empty()) return "ok";
  std::string out;
  for (VerdictKind k : kinds) {
    if (!out.empty()) out += "+";
    out += VerdictKindName(k);
  }
  return out;
}

namespace {

bool Carries(const std::vector<Violation>& violations, const ExpectTerm& term) {
  return std::any_of(violations.begin(), violations.end(), [&](const Violation& v) {
    return v.kind == term.kind && v.cause.compare(0, term.cause.size(), term.cause) == 0;
  });
}

}  // namespace

bool Matches(const Expectation& expected, const std::vector<Violation>& violations) {
  std::vector<VerdictKind> kinds = ObservedKinds(violations);
  for (const std::vector<ExpectTerm>& alt : expected.Alternatives()) {
    if (alt.size() == 1 && alt[0].kind == VerdictKind::kOk) {
      if (kinds.empty()) return true;
      continue;
    }
    std::vector<VerdictKind> want;
    for (const ExpectTerm& t : alt) want.push_back(t.kind);
    std::sort(want.begin(), want.end());
    if (want != kinds) continue;
    if (std::all_of(alt.begin(), alt.end(), [&](const ExpectTerm& t) { return Carries(violations, t); })) {
      return true;
    }
  }
  return false;
}

bool Shows(const Expectation& expected, const std::vector<Violation>& violations) {
  if (expected.IsOk()) return !violations.empty();
  for (const std::vector<ExpectTerm>& alt : expected.Alternatives()) {
    if (alt.size() == 1 && alt[0].kind == VerdictKind::kOk) continue;
    if (std::all_of(alt.begin(), alt.end(), [&](const ExpectTerm& t) { return Carries(violations, t); })) {
      return true;
    }
  }
  return false;
}

}  // namespace xackly
