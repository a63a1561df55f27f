// A downstream project's own protocol, checked from its own GoogleTest suite
// through xackly's embedding API (harness/embed.h). Copy it as a template.
//
// The protocol: dedupe row and side effect in one SQL transaction, XACK only
// after COMMIT. Its per-entry handler is a C++ coroutine; the worker loop
// (reads, claims, restarts) is xackly's.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <string>

#include "harness/embed.h"
#include "sim/protocol.h"
#include "sim/worker.h"

namespace {

using xackly::Dedupe;
using xackly::StreamEntry;
using xackly::Task;
using xackly::Worker;

// The handler. With kAckBeforeCommit, a broken variant of it, broken in the
// C++ only (its steps stay the same): it XACKs before COMMIT, so a crash
// between them rolls the effect back after the entry is gone.
//
// GCC 12 miscompiles a co_await inside an if/while/switch condition (the
// coroutine silently ends): bind each result to a local first, as here.
template <bool kAckBeforeCommit>
Task<bool> HandleOrder(Worker& w, const StreamEntry& e) {
  bool begun = co_await w.Begin();
  if (!begun) co_return false;
  Dedupe d = co_await w.MarkDone(e);  // INSERT OR IGNORE INTO processed
  if (d == Dedupe::kFailed) co_return false;
  if (d == Dedupe::kDone) co_return co_await w.OnDuplicate(e);
  bool ran = co_await w.Effect(e);
  if (!ran) co_return false;
  if constexpr (kAckBeforeCommit) co_await w.Ack(e.id);
  bool committed = co_await w.Commit();
  if (!committed) co_return false;
  if constexpr (!kAckBeforeCommit) co_await w.Ack(e.id);
  co_return true;
}

xackly::ProtocolDef OrderProtocol() {
  using H = xackly::HandlerOp;
  xackly::ProtocolDef p;
  p.name = "orders-txn";
  p.description = "dedupe row and effect in one SQL transaction; XACK after COMMIT";
  p.expected = {xackly::VerdictKind::kOk, ""};
  p.dedupe = xackly::DedupeStore::kSql;
  p.effect = xackly::EffectSink::kSql;
  // The same handler as a step list: it documents the protocol (a replay
  // file writes it), and xackly finds the fault sites by running the code.
  p.steps = {H::kBegin, H::kMarkDone, H::kEffect, H::kCommit, H::kAck};
  p.cpp_handler = &HandleOrder<false>;
  // No p.faults: the check uses xackly::DefaultFaultModel(p), what a
  // correct protocol must survive (crashes, stalls, lost requests and
  // replies, clock jumps, store outages).
  return p;
}

xackly::EmbedOptions Options() {
  xackly::EmbedOptions o;
  o.clock_library = XACKLY_CLOCK_LIB;  // set by CMakeLists.txt
  return o;
}

TEST(OrderProtocol, OneCaseWithACrashBetweenCommitAndAckHasNoViolation) {
  xackly::RunConfig config = xackly::RunConfig::For(OrderProtocol());
  config.workers = 2;
  config.events = 5;
  xackly::FaultSpec crash;
  crash.kind = xackly::FaultKind::kCrash;
  crash.actor = "w1";
  crash.site = "after-commit";
  crash.nth = 1;
  config.fault_schedule = std::vector<xackly::FaultSpec>{crash};
  config.keep_trace = true;
  xackly::Result<xackly::CaseRun> r = xackly::RunOneCase(config, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->result.fired.size(), 1u) << "the crash must fire for the case to mean anything";
  EXPECT_EQ(xackly::FailureReport(*r), "");
}

TEST(OrderProtocol, PropertyHoldsUnderTheDefaultFaultModel) {
  xackly::PropertyOptions options;
  options.cases = 20;
  xackly::Result<xackly::PropertyResult> r =
      xackly::CheckProperty(xackly::RunConfig::For(OrderProtocol()), options, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::cout << r->Summary();  // for the CI log: fault model, ranges, faults fired
  EXPECT_TRUE(r->default_fault_model);
  // The search's cases, then cases aimed at sites none of them fired.
  EXPECT_EQ(r->cases_run - r->cases_for_coverage, options.cases);
  EXPECT_TRUE(r->EvidenceComplete()) << "never fired at the coverage cap: " << r->coverage_gaps.size() << " sites";
  EXPECT_FALSE(r->faults_fired.empty());
  EXPECT_TRUE(r->matched) << xackly::FailureReport(*r);
}

// The negative control: the same check must catch the broken variant, and
// its replay file must reproduce the case with the handler put back.
TEST(OrderProtocol, TheCheckCatchesAckBeforeCommitAndItsReplayFileReproducesIt) {
  xackly::ProtocolDef p = OrderProtocol();
  p.name = "orders-ack-before-commit";
  p.cpp_handler = &HandleOrder<true>;
  xackly::PropertyOptions options;
  options.cases = 40;
  xackly::Result<xackly::PropertyResult> r =
      xackly::CheckProperty(xackly::RunConfig::For(p), options, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->matched) << r->Summary();
  ASSERT_TRUE(r->counterexample.has_value());
  EXPECT_NE(r->counterexample->result.observed, "ok");
  // What a failing test prints: how to replay it, and the replay file.
  const std::string report = xackly::FailureReport(*r);
  EXPECT_NE(report.find("xackly::ReplayCaseFile"), std::string::npos) << report;

  // What you do with it: save the file (here, to a temporary directory; in
  // a project, next to the test) and replay it with the handler.
  const std::string path = ::testing::TempDir() + "orders-ack-before-commit.replay.toml";
  std::ofstream(path) << xackly::ReplayFile(*r->counterexample);
  xackly::Result<xackly::ReplayOutcome> again = xackly::ReplayCaseFile(path, p, Options());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->hash_matched) << again->mismatch;
  EXPECT_EQ(again->run.result.observed, r->counterexample->result.observed);
}

}  // namespace
