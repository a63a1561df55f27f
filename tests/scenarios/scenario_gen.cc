#include "tests/scenarios/scenario_gen.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scenarios/schema.h"
#include "sim/limits.h"
#include "sim/protocol.h"
#include "sim/verdict.h"
#include "tests/rc_cases.h"

namespace xackly::testing {
namespace {

namespace schema = scenario_schema;

// An integer in min..max, with its ends and small values often: the ends
// are where ranges break, and small values keep a run's time budget.
rc::Gen<int64_t> Bounded(int64_t min, int64_t max) {
  return rc::gen::weightedOneOf<int64_t>({
      {2, rc::gen::just(min)},
      {1, rc::gen::just(max)},
      {4, rc::gen::inRange(min, std::min(max, min + 1000) + 1)},
      {1, rc::gen::inRange(min, max == std::numeric_limits<int64_t>::max() ? max : max + 1)},
  });
}

// The elements of `pool` each kept or not, in pool order.
template <typename T>
std::vector<T> SubsetOf(const std::vector<T>& pool) {
  std::vector<T> out;
  for (const T& item : pool) {
    if (*rc::gen::arbitrary<bool>()) out.push_back(item);
  }
  return out;
}

// Values for text keys that have a check (names, fault targets): those the
// check accepts are drawn.
const std::vector<std::string>& TextCandidates() {
  static const std::vector<std::string> kCandidates = {
      "unread", "pending", "acked", "maxlen:0", "maxlen:2", "maxlen:100000", "minid:last-delivered",
      "lag:0", "lag:3", "LOADING", "READONLY", "BUSY",
      "p", "my-protocol", "A.b_c-9", std::string(kMaxScenarioNameChars, 'x')};
  return kCandidates;
}

// A schema visitor (scenarios/schema.h) that draws the value of each key of
// one struct over its valid range, or leaves it (half of the keys, so that
// defaults stay common). Keys in `fixed` are left; a Names key draws from
// `sites` when it names the key there, else from the schema's valid list.
template <typename S>
class Drawer {
 public:
  Drawer(S* s, std::set<std::string> fixed, std::map<std::string, std::vector<std::string>> sites = {})
      : s_(s), fixed_(std::move(fixed)), sites_(std::move(sites)) {}

  template <typename T>
  void Int(const char* key, T S::*m, int64_t min, int64_t max, const char*) {
    if (Leave(key)) return;
    max = std::min<int64_t>(max, std::numeric_limits<T>::max());
    s_->*m = static_cast<T>(*Bounded(min, max));
  }
  void Bool(const char* key, bool S::*m, const char*) {
    if (!Leave(key)) s_->*m = *rc::gen::arbitrary<bool>();
  }
  template <typename E>
  void Enum(const char* key, E S::*m, const schema::EnumTable<E>& table, const char*) {
    if (!Leave(key)) s_->*m = (*rc::gen::elementOf(table.names)).first;
  }
  template <typename E>
  void EnumList(const char* key, std::vector<E> S::*m, const schema::EnumTable<E>& table, const char*) {
    if (!Leave(key)) s_->*m = *Few(rc::gen::map(rc::gen::elementOf(table.names), [](const auto& n) { return n.first; }));
  }
  template <typename E>
  void EnumSet(const char* key, std::set<E> S::*m, const schema::EnumTable<E>& table, const char*) {
    if (Leave(key)) return;
    std::set<E> drawn;
    for (const auto& [value, name] : table.names) {
      if (*rc::gen::arbitrary<bool>()) drawn.insert(value);
    }
    s_->*m = drawn;
  }
  void Names(const char* key, std::vector<std::string> S::*m, const std::vector<std::string>& valid, const char*,
             bool (*)(std::string_view), const char*) {
    if (Leave(key)) return;
    auto it = sites_.find(key);
    s_->*m = SubsetOf(it != sites_.end() ? it->second : valid);
  }
  void Text(const char* key, std::string S::*m, bool (*check)(std::string_view), const char*, const char*) {
    if (Leave(key)) return;
    if (check == nullptr) {
      s_->*m = *AnyText();
      return;
    }
    std::vector<std::string> valid;
    std::copy_if(TextCandidates().begin(), TextCandidates().end(), std::back_inserter(valid),
                 [check](const std::string& c) { return check(c); });
    s_->*m = *rc::gen::elementOf(valid);
  }
  void Rate(const char* key, uint32_t S::*m, const char*) {
    if (!Leave(key)) s_->*m = static_cast<uint32_t>(*Bounded(0, 1000000));
  }

 private:
  bool Leave(const char* key) { return fixed_.count(key) > 0 || *rc::gen::arbitrary<bool>(); }

  S* s_;
  std::set<std::string> fixed_;
  std::map<std::string, std::vector<std::string>> sites_;
};

template <typename S, typename Describe>
void Draw(S* s, Describe describe, std::set<std::string> fixed = {},
          std::map<std::string, std::vector<std::string>> sites = {}) {
  Drawer<S> drawer(s, std::move(fixed), std::move(sites));
  describe(drawer);
}

// A scenario (and [protocol]) name: what IsScenarioName accepts.
rc::Gen<std::string> AnyScenarioName() {
  static const std::string kFirst = "abcXYZ019_";
  static const std::string kRest = "abcXYZ019_.-";
  return rc::gen::exec([] {
    std::string name(1, *rc::gen::elementOf(kFirst));
    const size_t more = *rc::gen::inRange<size_t>(0, kMaxScenarioNameChars);
    const size_t drawn = std::min<size_t>(more, 12);
    for (size_t i = 0; i < drawn; ++i) name += *rc::gen::elementOf(kRest);
    if (more >= 12 && *rc::gen::arbitrary<bool>()) name.resize(kMaxScenarioNameChars, '-');
    return name;
  });
}

// An expectation as a file writes it: 1..2 alternatives of 1..2 terms, each
// a kind with one of its known causes or none ("ok" alone).
rc::Gen<Expectation> AnyExpectation() {
  return rc::gen::exec([] {
    static const std::vector<VerdictKind> kKinds = {VerdictKind::kOk, VerdictKind::kDuplicate, VerdictKind::kLost,
                                                   VerdictKind::kPelLeak, VerdictKind::kStuck};
    std::string text;
    const int alternatives = *rc::gen::inRange(1, 3);
    for (int a = 0; a < alternatives; ++a) {
      std::vector<VerdictKind> kinds = *rc::gen::nonEmpty(rc::gen::container<std::vector<VerdictKind>>(
          *rc::gen::inRange<size_t>(1, 3), rc::gen::elementOf(kKinds)));
      std::sort(kinds.begin(), kinds.end());
      kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
      if (kinds.size() > 1) kinds.erase(std::remove(kinds.begin(), kinds.end(), VerdictKind::kOk), kinds.end());
      text += a > 0 ? "|" : "";
      for (size_t t = 0; t < kinds.size(); ++t) {
        text += std::string(t > 0 ? "+" : "") + VerdictKindName(kinds[t]);
        std::vector<std::string> causes;
        for (const std::string& c : KnownCauses(kinds[t])) {
          if (c.find('<') == std::string::npos) causes.push_back(c);
        }
        if (!causes.empty() && *rc::gen::arbitrary<bool>()) text += ":" + *rc::gen::elementOf(causes);
      }
    }
    Expectation e;
    std::string why;
    RC_ASSERT(Expectation::Parse(text, &e, &why));  // a generator bug otherwise
    return e;
  });
}

// "w1".."w<n>" or "p1".."p<n>".
rc::Gen<std::string> AnySlot(char kind, int n) {
  return rc::gen::map(rc::gen::inRange(1, n + 1), [kind](int i) { return kind + std::to_string(i); });
}

rc::Gen<std::string> AnyActor(const RunConfig& c) {
  return rc::gen::oneOf(AnySlot('w', c.workers), AnySlot('p', c.producers));
}

rc::Gen<FaultSpec> AnyFaultSpec(const RunConfig& c) {
  return rc::gen::exec([c] {
    FaultSpec f;
    // A failover needs a replica to promote (a schedule naming one without is refused).
    const FaultKindInfo& info = InfoOf(*rc::gen::suchThat(AnyOf(FaultKind::kPoison), [&c](FaultKind k) {
      return k != FaultKind::kFailover || c.replicas > 0;
    }));
    f.kind = info.kind;
    switch (info.fault_class) {
      case FaultClass::kPoint:
        f.actor = *AnyActor(c);
        f.site = info.kind == FaultKind::kReplicaLag
                     ? "WAIT"  // its only site
                     : *rc::gen::elementOf(info.Sites() == SiteFamily::kCrashPoint ? AllCrashPoints() : AllLostSites());
        f.nth = static_cast<int>(*Bounded(1, 1000));
        if (*rc::gen::arbitrary<bool>()) f.at_ms = *Bounded(1, 100000);
        break;
      case FaultClass::kScheduled:
        f.at_ms = *Bounded(0, 100000);
        break;
      case FaultClass::kEvent:
        f.event = static_cast<int>(*Bounded(1, c.events));
        break;
    }
    if (info.model_duration != nullptr) f.duration_ms = *Bounded(1, 100000);
    if (info.valid_target != nullptr) {  // a scheduled kind's or a point kind's (error-reply's error)
      std::vector<std::string> valid;
      std::copy_if(TextCandidates().begin(), TextCandidates().end(), std::back_inserter(valid),
                   [&info](const std::string& t) { return info.valid_target(t); });
      f.target = *rc::gen::elementOf(valid);
    }
    return f;
  });
}

rc::Gen<Scenario> AnyScenarioUnchecked() {
  return rc::gen::exec([] {
    const ProtocolDef& catalog = *rc::gen::elementOf(Catalog());
    enum class Form { kReference, kInline, kInlineChanged };
    const Form form = *rc::gen::elementOf(std::vector<Form>{Form::kReference, Form::kInline, Form::kInlineChanged});
    ProtocolDef p = catalog;
    if (form != Form::kReference) p.cpp_handler = nullptr;
    if (form == Form::kInlineChanged) {
      // Options only: the steps and stores stay the catalog's, so that the
      // protocol stays a valid one.
      Draw(&p, [](auto& v) { schema::DescribeProtocol(v); }, {"steps", "dedupe", "effect", "idempotency_key"});
      Draw(&p.loop, [](auto& v) { schema::DescribeLoop(v); }, {"ack"});
      Draw(&p.janitor, [](auto& v) { schema::DescribeJanitor(v); });
    }
    Scenario s;
    s.name = *AnyScenarioName();
    if (*rc::gen::arbitrary<bool>()) s.description = *AnyText();
    if (*rc::gen::arbitrary<bool>()) s.origin = *AnyText();
    if (form == Form::kReference) s.protocol_ref = catalog.name;
    RunConfig& c = s.config;
    c = RunConfig::For(p);
    c.seed = *rc::gen::arbitrary<uint64_t>();
    Draw(&c, [](auto& v) { schema::DescribeWorkload(v); });
    Draw(&c, [](auto& v) { schema::DescribeServer(v); });
    Draw(&c.timing, [](auto& v) { schema::DescribeTiming(v); });
    Draw(&c.faults, [](auto& v) { schema::DescribeFaults(v); }, {},
         {{"crash_points", CrashPointsOf(p)}, {"lost_sites", LostSitesOf(p)}});
    if (*rc::gen::arbitrary<bool>()) c.expected = *AnyExpectation();
    if (*rc::gen::arbitrary<bool>()) c.fault_schedule = *AnyFaultSchedule(c);
    c.picks = *Few(AnyActor(c), 12);
    if (form != Form::kReference) {
      // The run's settings are the inline protocol's own defaults, its
      // fault model as RunConfig::For resolves it (empty site lists: every
      // site it visits).
      c.protocol.expected = c.expected;
      c.protocol.naming = c.naming;
      c.protocol.persistence = c.persistence;
      c.protocol.faults = c.faults;
      c.faults = ReachableFaultModel(c.protocol);
      c.protocol.faults = c.faults;
    }
    if (*rc::gen::arbitrary<bool>()) {
      static const std::string kHex = "0123456789abcdef";
      std::string hash;
      for (int i = 0; i < 16; ++i) hash += *rc::gen::elementOf(kHex);
      s.trace_hash = hash;
    }
    if (*rc::gen::arbitrary<bool>()) s.server = *AnyText();
    if (*rc::gen::arbitrary<bool>()) {
      static const std::string kHex = "0123456789abcdef";
      const int servers = *rc::gen::inRange(1, 4);
      for (int k = 0; k < servers; ++k) {
        std::string hash;
        for (int i = 0; i < 16; ++i) hash += *rc::gen::elementOf(kHex);
        std::string name = *AnyText();
        if (name.empty()) name = "redis 7.0.15";
        s.server_hashes[name] = hash;
      }
    }
    return s;
  });
}

}  // namespace

rc::Gen<std::vector<FaultSpec>> AnyFaultSchedule(const RunConfig& config) {
  return Few(AnyFaultSpec(config), 5);
}

rc::Gen<Scenario> AnyScenario() {
  return rc::gen::suchThat(AnyScenarioUnchecked(), [](const Scenario& s) {
    return ValidateRunConfig(s.config).ok() && CheckScheduleFitsRun(s.config).ok();
  });
}

}  // namespace xackly::testing
