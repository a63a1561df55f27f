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
  kStuck,      // no quiescence within the step bound, or an event never settles
};
const char* VerdictKindName(VerdictKind k);  // "ok", "duplicate", "lost", "pel-leak", "stuck"
bool ParseVerdictKind(std::string_view name, VerdictKind* out);
// "ok, duplicate, lost, pel-leak, stuck"
std::string VerdictKindList();

// One violation. `cause` is a short stable token (e.g. "crash:after-effect",
// "payload-deleted", "dedupe-expired"); `detail` is one human sentence.
struct Violation {
  VerdictKind kind = VerdictKind::kOk;
  std::string event_id;  // empty for run-wide violations (stuck by step bound)
  std::string cause;
  std::string detail;
  int effect_count = 0;
};

// What a scenario expects: a verdict kind and, optionally, a cause that at
// least one violation of that kind must carry (prefix match, so "crash"
// matches "crash:after-effect"). Written "kind" or "kind:cause".
struct Expectation {
  VerdictKind kind = VerdictKind::kOk;
  std::string cause;

  std::string ToString() const;
  // REQUIRES: out != nullptr
  static bool Parse(std::string_view text, Expectation* out);
};

// The verdict class of a set of violations: the distinct kinds present, in
// enum order; empty means ok.
std::vector<VerdictKind> ObservedKinds(const std::vector<Violation>& violations);
// "ok", "duplicate", or "duplicate+lost".
std::string ObservedClass(const std::vector<Violation>& violations);
// True when the observed class is exactly the expected kind (ok: no
// violations), and the expected cause, if any, is carried by a violation.
bool Matches(const Expectation& expected, const std::vector<Violation>& violations);

}  // namespace xackly
