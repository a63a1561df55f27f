// What the oracle can conclude about a run, and what a scenario expects.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xackly {

enum class VerdictKind {
  kOk,         // every event's side effect ran exactly once (or it was dead-lettered with its payload)
  kDuplicate,  // an event's side effect ran more than once
  kLost,       // an event's side effect never ran and nothing accounts for it
  kPelLeak,    // every effect done, but entries stay pending forever
  kStuck,      // the run provably cannot progress, or an event never settles
};
const char* VerdictKindName(VerdictKind k);  // "ok", "duplicate", "lost", "pel-leak", "stuck"
bool ParseVerdictKind(std::string_view name, VerdictKind* out);
// "ok, duplicate, lost, pel-leak, stuck"
std::string VerdictKindList();

// One violation. `cause` is a short stable token (e.g. "crash:after-effect",
// "payload-deleted", "dedupe-expired"); `detail` is one human sentence.
struct Violation {
  VerdictKind kind = VerdictKind::kOk;
  std::string event_id;  // empty for run-wide violations
  std::string cause;
  std::string detail;
  int effect_count = 0;
  // The consumer group it is about when the run has several
  // (RunConfig::groups), the run's own ("workers") included; empty in a
  // run of one group.
  std::string group;
};

// The key of a violation's event history in a run's histories: the event
// id, with "@<group>" in a run of several groups (each has its own).
std::string HistoryKey(const Violation& v);
// What a violation is about, as reports name it: "order:3", "order:3 in
// group search-indexer" in a run of several groups, or `run_wide` when it
// names no event.
std::string ViolationSubject(const Violation& v, std::string_view run_wide = "(run-wide)");

// One term of an expectation: a verdict kind and, optionally, a cause that
// at least one violation of that kind must carry (prefix match, so "crash"
// matches "crash:after-effect").
struct ExpectTerm {
  VerdictKind kind = VerdictKind::kOk;
  std::string cause;
  bool operator==(const ExpectTerm&) const = default;
};

// What a scenario expects. Grammar (the `expect` field, the --expect flag):
//   expectation := combination ( "|" combination )*     alternatives
//   combination := term ( "+" term )*                   every kind present, no other
//   term        := kind [ ":" cause ]
// e.g. "duplicate:crash:after-effect", "lost|stuck", "duplicate+pel-leak".
// `ok` takes no cause and combines with nothing. A cause must be one the
// oracle can give for that kind (KnownCauses), or a prefix family such as
// "crash" or "lost-reply:XACK".
//
// `kind` and `cause` are the first term of the first alternative (all most
// expectations have); `alternatives` holds every term when the text had
// more than one, and is empty otherwise.
struct Expectation {
  VerdictKind kind = VerdictKind::kOk;
  std::string cause;
  std::vector<std::vector<ExpectTerm>> alternatives;

  // Every alternative, each a list of terms (at least one alternative).
  std::vector<std::vector<ExpectTerm>> Alternatives() const;
  // True when the only acceptable verdict is ok.
  bool IsOk() const;
  std::string ToString() const;
  // REQUIRES: out != nullptr. On failure sets *why (when given) to one
  // sentence naming the bad part and the valid kinds or causes.
  static bool Parse(std::string_view text, Expectation* out, std::string* why = nullptr);
};

// The causes the oracle gives for `kind`, as written in an expectation
// ("crash:<crash point>" stands for every crash point).
std::vector<std::string> KnownCauses(VerdictKind kind);
// True when `cause` is one `kind` can carry: a known cause, a family prefix
// ("crash"), or a family with a known site ("crash:after-effect").
bool IsKnownCause(VerdictKind kind, std::string_view cause);

// The verdict class of a set of violations: the distinct kinds present, in
// enum order; empty means ok.
std::vector<VerdictKind> ObservedKinds(const std::vector<Violation>& violations);
// "ok", "duplicate", or "duplicate+lost".
std::string ObservedClass(const std::vector<Violation>& violations);
// True when, for some alternative, the observed kinds are exactly the
// alternative's kinds (ok: no violations) and every term's cause, if any, is
// carried by a violation of that term's kind.
bool Matches(const Expectation& expected, const std::vector<Violation>& violations);
// True when, for some alternative, every term is shown by some violation
// (its kind, and its cause when it names one), whatever else was observed:
// what a search for a broken protocol's violation looks for. For an ok
// expectation: any violation at all.
bool Shows(const Expectation& expected, const std::vector<Violation>& violations);

}  // namespace xackly
