#include "sim/verdict.h"

#include <algorithm>

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

std::string Expectation::ToString() const {
  std::string out = VerdictKindName(kind);
  if (!cause.empty()) out += ":" + cause;
  return out;
}

bool Expectation::Parse(std::string_view text, Expectation* out) {
  size_t colon = text.find(':');
  Expectation e;
  if (!ParseVerdictKind(text.substr(0, colon), &e.kind)) return false;
  if (colon != std::string_view::npos) {
    e.cause = std::string(text.substr(colon + 1));
    if (e.cause.empty() || e.kind == VerdictKind::kOk) return false;
  }
  *out = e;
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

bool Matches(const Expectation& expected, const std::vector<Violation>& violations) {
  std::vector<VerdictKind> kinds = ObservedKinds(violations);
  if (expected.kind == VerdictKind::kOk) return kinds.empty();
  if (kinds.size() != 1 || kinds[0] != expected.kind) return false;
  if (expected.cause.empty()) return true;
  return std::any_of(violations.begin(), violations.end(), [&](const Violation& v) {
    return v.cause.compare(0, expected.cause.size(), expected.cause) == 0;
  });
}

}  // namespace xackly
