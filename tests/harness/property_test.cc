// RapidCheck properties over generated cases (harness/check.h generators),
// run against one real redis-server. Each case is tagged with the fault
// sites that fired, so a run shows its coverage; ctest pins RC_PARAMS (seed
// and case count) so CI is reproducible, and a developer can widen it:
//   RC_PARAMS="max_success=500 seed=7" ./build/tests/harness/xackly_property_tests
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/check.h"
#include "harness/check_rc.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

CaseExecutor& Executor() {
  static CaseExecutor* executor = new CaseExecutor(TestServerOptions());
  return *executor;
}

RunResult RunCase(const RunConfig& config) {
  Result<RunResult> r = Executor().Run(config);
  RC_ASSERT(r.ok());
  return std::move(r).value();
}

void TagFired(const RunResult& r) {
  for (const auto& [site, n] : r.coverage.fired) RC_TAG(site);
  RC_CLASSIFY(r.coverage.fired.empty(), "no fault fired");
}

rc::Gen<const ProtocolDef*> AnyProtocol() {
  std::vector<const ProtocolDef*> all;
  for (const ProtocolDef& p : Catalog()) all.push_back(&p);
  return rc::gen::elementOf(all);
}

// The correct protocols survive everything their fault models throw at them.
RC_GTEST_PROP(PropertyTest, TxnDedupeNeitherLosesNorDuplicates, ()) {
  RunConfig base = RunConfig::For(*FindProtocol("txn-dedupe"));
  GeneratedCase c = *GenCase(base, CaseBounds{});
  RunResult r = RunCase(ApplyCase(base, c));
  TagFired(r);
  RC_ASSERT(r.violations.empty());
}

RC_GTEST_PROP(PropertyTest, LuaDedupeNeitherLosesNorDuplicates, ()) {
  RunConfig base = RunConfig::For(*FindProtocol("lua-dedupe"));
  GeneratedCase c = *GenCase(base, CaseBounds{});
  RunResult r = RunCase(ApplyCase(base, c));
  TagFired(r);
  RC_ASSERT(r.violations.empty());
}

// A case is a pure function of its inputs: run twice, same trace.
RC_GTEST_PROP(PropertyTest, EveryCaseIsDeterministic, ()) {
  const ProtocolDef* p = *AnyProtocol();
  RunConfig base = RunConfig::For(*p);
  GeneratedCase c = *GenCase(base, CaseBounds{});
  RunResult a = RunCase(ApplyCase(base, c));
  RunResult b = RunCase(ApplyCase(base, c));
  RC_TAG(p->name);
  RC_ASSERT(a.trace_hash == b.trace_hash);
  RC_ASSERT(a.observed == b.observed);
}

// The C++ handler and the declarative step list are the same protocol.
RC_GTEST_PROP(PropertyTest, CppAndDeclarativeHandlersAgreeOnEveryCase, ()) {
  const ProtocolDef* p = *AnyProtocol();
  RunConfig base = RunConfig::For(*p);
  GeneratedCase c = *GenCase(base, CaseBounds{});
  RunConfig cpp = ApplyCase(base, c);
  RunConfig declarative = cpp;
  declarative.protocol.cpp_handler = nullptr;
  RC_TAG(p->name);
  RC_ASSERT(RunCase(cpp).trace_hash == RunCase(declarative).trace_hash);
}

// The oracle raises no false alarm: without faults, at the configs' own
// timing, every protocol is clean, except naive-trim, whose retention trims
// unread entries whenever the workers fall more than 3 entries behind (a
// real loss without any fault). (Swarm timing is left out on purpose: an
// effect that outlasts the claim window duplicates in every protocol
// without dedupe, a real bug, not an alarm.)
RC_GTEST_PROP(PropertyTest, WithoutFaultsNothingIsLostOrDuplicated, ()) {
  const ProtocolDef* p = *AnyProtocol();
  RC_PRE(p->name != "naive-trim");
  RunConfig base = RunConfig::For(*p);
  CaseBounds own_timing;
  own_timing.swarm = false;
  GeneratedCase c = *GenCase(base, own_timing);
  c.faults.clear();
  RunResult r = RunCase(ApplyCase(base, c));
  RC_TAG(p->name);
  RC_ASSERT(r.violations.empty());
}

}  // namespace
}  // namespace xackly
