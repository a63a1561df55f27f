// The embedding API (harness/embed.h) as another project's test suite uses
// it: a protocol whose handler is C++ code in the test, checked, its failure
// reported, its replay file replayed with the handler put back.
#include "harness/embed.h"

#include <string>

#include <gtest/gtest.h>

#include "harness/exit_codes.h"
#include "harness/files.h"
#include "scenarios/scenario.h"
#include "sim/protocol.h"
#include "sim/worker.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// txn-dedupe's steps, but the code XACKs before COMMIT (a crash in between
// rolls the effect back after the entry is gone) and ignores a duplicate:
// bugs in the C++ only.
Task<bool> AckBeforeCommit(Worker& w, const StreamEntry& e) {
  bool begun = co_await w.Begin();
  if (!begun) co_return false;
  Dedupe d = co_await w.MarkDone(e);
  if (d == Dedupe::kFailed) co_return false;
  co_await w.Effect(e);
  co_await w.Ack(e.id);
  co_return co_await w.Commit();
}

// The catalog's txn-dedupe handler: those steps, in that order.
CppHandler TxnThenAck() { return FindProtocol("txn-dedupe")->cpp_handler; }

// XACK, then the effect: ack-first, with no step list that says otherwise.
Task<bool> AckThenEffect(Worker& w, const StreamEntry& e) {
  co_await w.Ack(e.id);
  co_return co_await w.Effect(e);
}

ProtocolDef OrdersProtocol(CppHandler handler) {
  using H = HandlerOp;
  ProtocolDef p;
  p.name = "orders";
  p.description = "dedupe row and effect in one SQL transaction; XACK after COMMIT";
  p.expected = {VerdictKind::kOk, ""};
  p.dedupe = DedupeStore::kSql;
  p.effect = EffectSink::kSql;
  p.steps = {H::kBegin, H::kMarkDone, H::kEffect, H::kCommit, H::kAck};
  p.cpp_handler = handler;
  p.faults.kinds = {FaultKind::kCrash};
  return p;
}

EmbedOptions Options() {
  EmbedOptions o;
  o.clock_library = XACKLY_TEST_CLOCK_LIB;
  return o;
}

// One case of AckBeforeCommit that crashes w1 between its XACK and COMMIT.
CaseRun CrashBetweenAckAndCommit() {
  RunConfig config = RunConfig::For(OrdersProtocol(&AckBeforeCommit));
  config.workers = 1;
  config.events = 1;
  config.fault_schedule = std::vector<FaultSpec>{{.kind = FaultKind::kCrash, .actor = "w1", .site = "after-ack"}};
  config.keep_trace = true;
  Result<CaseRun> run = RunOneCase(config, Options());
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return run.ok() ? *run : CaseRun{};
}

TEST(EmbedTest, AReplayFileOfACppHandlerSaysSoAndNamesItsServer) {
  CaseRun run = CrashBetweenAckAndCommit();
  EXPECT_EQ(run.result.observed, "lost");
  EXPECT_TRUE(Contains(run.server_version, "redis ")) << run.server_version;
  const std::string file = ReplayFile(run);
  EXPECT_TRUE(Contains(file, "handler = \"c++\"")) << file;
  EXPECT_TRUE(Contains(file, "server = \"" + run.server_version + "\"")) << file;
  Result<Scenario> parsed = ParseScenario(file, "orders.replay.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->handler, HandlerForm::kCpp);
  EXPECT_EQ(parsed->server, run.server_version);
  // The catalog's handlers are their steps: a catalog protocol is written
  // as itself, for `xackly replay`.
  RunConfig catalog = RunConfig::For(*FindProtocol("no-dedupe"));
  Result<CaseRun> reference = RunOneCase(catalog, Options());
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  EXPECT_FALSE(Contains(ReplayFile(*reference), "handler ="));
}

TEST(EmbedTest, FailureReportSaysHowToReplayEachKindOfProtocol) {
  const std::string cpp = FailureReport(CrashBetweenAckAndCommit());
  EXPECT_TRUE(Contains(cpp, "xackly::ReplayCaseFile(\"orders.replay.toml\", protocol, options)")) << cpp;
  EXPECT_FALSE(Contains(cpp, "run `xackly replay")) << cpp;

  // The same case, declarative: the steps are the handler.
  RunConfig steps = CrashBetweenAckAndCommit().config;
  steps.protocol.cpp_handler = nullptr;
  steps.protocol.steps = {HandlerOp::kAck, HandlerOp::kEffect};
  steps.protocol.dedupe = DedupeStore::kNone;
  Result<CaseRun> declarative = RunOneCase(steps, Options());
  ASSERT_TRUE(declarative.ok()) << declarative.status().ToString();
  const std::string text = FailureReport(*declarative);
  EXPECT_TRUE(Contains(text, "run `xackly replay orders.replay.toml`")) << text;
  EXPECT_FALSE(Contains(text, "ReplayCaseFile")) << text;
}

TEST(EmbedTest, ReplayCaseReproducesABugThatExistsOnlyInCpp) {
  const ProtocolDef protocol = OrdersProtocol(&AckBeforeCommit);
  PropertyOptions options;
  options.cases = 40;
  Result<PropertyResult> check = CheckProperty(RunConfig::For(protocol), options, Options());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_FALSE(check->matched) << check->Summary();
  ASSERT_TRUE(check->counterexample.has_value());
  const CaseRun& found = *check->counterexample;
  EXPECT_EQ(found.server_version, check->server_version);
  const std::string file = ReplayFile(found);
  // What a failed property's test prints: the summary, then the minimal
  // case's report with its replay file.
  const std::string report = FailureReport(*check);
  EXPECT_TRUE(report.starts_with(check->Summary())) << report;
  EXPECT_TRUE(Contains(report, FailureReport(found))) << report;
  EXPECT_TRUE(Contains(report, file)) << report;

  Result<ReplayOutcome> again = ReplayCase(file, protocol, Options());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->hash_matched) << again->mismatch;
  EXPECT_EQ(again->mismatch, "");
  EXPECT_TRUE(again->protocol_as_recorded);
  EXPECT_EQ(again->recorded_server, found.server_version);
  EXPECT_EQ(again->run.result.observed, found.result.observed);
  EXPECT_EQ(again->run.result.TraceHashHex(), found.result.TraceHashHex());

  // From a saved file, as FailureReport says.
  ScopedTempRoot dir;
  const std::string path = dir.path() + "/orders.replay.toml";
  ASSERT_TRUE(WriteFileAtomically(path, file).ok());
  Result<ReplayOutcome> from_file = ReplayCaseFile(path, protocol, Options());
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_TRUE(from_file->hash_matched) << from_file->mismatch;

  // The steps alone (what the CLI would have run) are another protocol.
  Result<Scenario> parsed = ParseScenario(file, path);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Result<CaseRun> steps_only = RunOneCase(parsed->config, Options());
  ASSERT_TRUE(steps_only.ok()) << steps_only.status().ToString();
  EXPECT_NE(steps_only->result.TraceHashHex(), found.result.TraceHashHex());
}

TEST(EmbedTest, ReplayCaseWithAFixedHandlerSaysTheCodeChanged) {
  CaseRun broken = CrashBetweenAckAndCommit();
  Result<ReplayOutcome> fixed = ReplayCase(ReplayFile(broken), OrdersProtocol(TxnThenAck()), Options());
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_FALSE(fixed->hash_matched);
  EXPECT_TRUE(fixed->protocol_as_recorded);
  EXPECT_EQ(fixed->run.result.observed, "ok");
  EXPECT_TRUE(Contains(fixed->mismatch, "your handler's code changed")) << fixed->mismatch;
  EXPECT_TRUE(Contains(fixed->mismatch, broken.result.TraceHashHex())) << fixed->mismatch;

  // A new description is no new setting: the code is still what changed.
  ProtocolDef reworded = OrdersProtocol(TxnThenAck());
  reworded.description = "orders, fixed: commit before the ack";
  Result<ReplayOutcome> same = ReplayCase(ReplayFile(broken), reworded, Options());
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_TRUE(same->protocol_as_recorded);
  EXPECT_TRUE(Contains(same->mismatch, "your handler's code changed")) << same->mismatch;

  ProtocolDef other_settings = OrdersProtocol(&AckBeforeCommit);
  other_settings.loop.read_count = 5;  // XREADGROUP ... COUNT 5
  Result<ReplayOutcome> changed = ReplayCase(ReplayFile(broken), other_settings, Options());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_FALSE(changed->protocol_as_recorded);
  EXPECT_TRUE(Contains(changed->mismatch, "settings differ")) << changed->mismatch;
}

TEST(EmbedTest, ReplayCaseRefusesWhatCannotReplayTheFile) {
  const std::string file = ReplayFile(CrashBetweenAckAndCommit());
  ProtocolDef no_handler = OrdersProtocol(nullptr);
  Result<ReplayOutcome> r = ReplayCase(file, no_handler, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "cpp_handler")) << r.status().ToString();

  ProtocolDef renamed = OrdersProtocol(&AckBeforeCommit);
  renamed.name = "payments";
  r = ReplayCase(file, renamed, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "replays protocol 'orders', not 'payments'")) << r.status().ToString();

  r = ReplayCase("protocol = \"no-dedupe\"\n", *FindProtocol("no-dedupe"), Options());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "no trace_hash")) << r.status().ToString();

  r = ReplayCase("protocol = 3\n", *FindProtocol("no-dedupe"), Options());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "replay.toml:1: protocol")) << r.status().ToString();
}

TEST(EmbedTest, TheCliRefusesAFileWhoseHandlerIsCppCode) {
  ScopedTempRoot dir;
  const std::string path = dir.path() + "/orders.replay.toml";
  ASSERT_TRUE(WriteFileAtomically(path, ReplayFile(CrashBetweenAckAndCommit())).ok());
  for (const char* command : {"replay", "explain", "run", "check"}) {
    SCOPED_TRACE(command);
    const bool by_flag = std::string(command) == "run" || std::string(command) == "check";
    CommandOutput out = by_flag ? RunXackly({command, "--scenario", path, "--out", dir.path() + "/out"})
                                : RunXackly({command, path});
    EXPECT_EQ(out.exit_code, kExitUsage) << out.output;
    EXPECT_TRUE(Contains(out.output, "C++ code in your own test")) << out.output;
    EXPECT_TRUE(Contains(out.output, "xackly::ReplayCaseFile(\"" + path + "\"")) << out.output;
    EXPECT_FALSE(Contains(out.output, "diverged")) << out.output;
  }
}

TEST(EmbedTest, AProtocolWithoutAFaultModelIsCheckedUnderTheDefaultOne) {
  ProtocolDef p = OrdersProtocol(&AckThenEffect);
  p.name = "orders-ack-first";
  p.dedupe = DedupeStore::kNone;
  p.steps = {HandlerOp::kAck, HandlerOp::kEffect};
  p.faults = {};
  PropertyOptions options;
  options.cases = 30;
  Result<PropertyResult> check = CheckProperty(RunConfig::For(p), options, Options());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->default_fault_model);
  // The default model's kinds, at the sites the handler's probe runs visited.
  for (FaultKind k : DefaultFaultModel(p).kinds) {
    EXPECT_TRUE(Contains(check->fault_model, FaultKindName(k))) << check->fault_model;
  }
  EXPECT_TRUE(Contains(check->fault_model, "crash(")) << check->fault_model;
  EXPECT_TRUE(Contains(check->fault_model, "after-ack")) << check->fault_model;
  EXPECT_TRUE(Contains(check->fault_model, "after-effect")) << check->fault_model;
  EXPECT_FALSE(check->matched) << check->Summary();
  EXPECT_NE(check->observed, "ok");
  EXPECT_TRUE(Contains(check->Summary(), "DefaultFaultModel")) << check->Summary();

  // Saying so explicitly: nothing is injected, and the summary says that.
  options.empty_fault_model_injects_nothing = true;
  options.cases = 5;
  Result<PropertyResult> quiet = CheckProperty(RunConfig::For(p), options, Options());
  ASSERT_TRUE(quiet.ok()) << quiet.status().ToString();
  EXPECT_FALSE(quiet->default_fault_model);
  EXPECT_EQ(quiet->fault_model, "none");
  EXPECT_TRUE(quiet->faults_fired.empty());
  EXPECT_TRUE(Contains(quiet->Summary(), "injects NO faults")) << quiet->Summary();
}

TEST(EmbedTest, APassingCheckShowsWhatItSearched) {
  ProtocolDef p = OrdersProtocol(TxnThenAck());
  p.faults.kinds = {FaultKind::kCrash, FaultKind::kLostReply};
  PropertyOptions options;
  options.cases = 10;
  Result<PropertyResult> check = CheckProperty(RunConfig::For(p), options, Options());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  // The 10 asked for, then the coverage rule's until every reachable site fired.
  EXPECT_EQ(check->cases_run, 10 + check->cases_for_coverage);
  EXPECT_TRUE(check->EvidenceComplete()) << check->Summary();
  EXPECT_EQ(FailureReport(*check), "") << "a passing property prints no failure";
  EXPECT_EQ(check->protocol, "orders");
  EXPECT_EQ(check->fault_model, RunConfig::For(p).faults.ToString());
  EXPECT_FALSE(check->default_fault_model);
  EXPECT_TRUE(Contains(check->swarm_ranges, "fault phase")) << check->swarm_ranges;
  EXPECT_FALSE(check->faults_fired.empty());
  for (const auto& [site, n] : check->faults_fired) EXPECT_GT(n, 0) << site;
  const std::string summary = check->Summary();
  EXPECT_TRUE(Contains(summary, "orders: expected ok, observed")) << summary;
  EXPECT_TRUE(Contains(summary, check->server_version)) << summary;
  EXPECT_TRUE(Contains(summary, "Fault model: " + check->fault_model)) << summary;
  EXPECT_TRUE(Contains(summary, "Swarm: " + check->swarm_ranges)) << summary;
  EXPECT_TRUE(Contains(summary, "Faults fired: " + check->faults_fired.begin()->first)) << summary;
  EXPECT_TRUE(Contains(summary, "never fired: ")) << summary;
  EXPECT_TRUE(Contains(summary, "Other violations: ")) << summary;
  EXPECT_EQ(summary.back(), '\n');
  EXPECT_EQ(summary.find('\n'), summary.size() - 1) << "one paragraph: " << summary;
}

TEST(EmbedTest, AMissingClockLibraryIsToldInTheTermsOfThisApi) {
  EmbedOptions o = Options();
  o.clock_library = "/nonexistent/libxackly_clock.so";
  Result<CaseRun> run = RunOneCase(RunConfig::For(*FindProtocol("no-dedupe")), o);
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(Contains(run.status().message(), "/nonexistent/libxackly_clock.so")) << run.status().ToString();
  EXPECT_TRUE(Contains(run.status().message(), "EmbedOptions::clock_library")) << run.status().ToString();

  // Nothing set: the lookup next to the running executable (this test's) fails too.
  ScopedEnv no_env("XACKLY_CLOCK_LIB", nullptr);
  o.clock_library.clear();
  Result<PropertyResult> check = CheckProperty(RunConfig::For(*FindProtocol("no-dedupe")), {}, o);
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(Contains(check.status().message(), "EmbedOptions::clock_library")) << check.status().ToString();
  EXPECT_TRUE(Contains(check.status().message(), "$<TARGET_FILE:xackly::xackly_clock>")) << check.status().ToString();
}

TEST(EmbedTest, AMissingServerIsToldInTheTermsOfThisApi) {
  EmbedOptions o = Options();
  o.server_path = "/nonexistent/redis-server";
  Result<CaseRun> run = RunOneCase(RunConfig::For(*FindProtocol("no-dedupe")), o);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(run.status().message(), "/nonexistent/redis-server")) << run.status().ToString();
  EXPECT_TRUE(Contains(run.status().message(), "apt-get install redis-server")) << run.status().ToString();
  EXPECT_TRUE(Contains(run.status().message(), "EmbedOptions::server_path")) << run.status().ToString();
}

// One case stopped by the harness limit is already news: the summary says
// how many were not judged, from the first.
TEST(EmbedTest, TheSummaryCountsASingleUnjudgedCase) {
  PropertyResult r;
  r.protocol = "txn-dedupe";
  r.cases_run = 10;
  r.cases_unjudged = 1;
  EXPECT_TRUE(Contains(r.Summary(), "1 case stopped by the harness limit, not judged")) << r.Summary();
  r.cases_unjudged = 0;
  EXPECT_FALSE(Contains(r.Summary(), "harness limit")) << r.Summary();
}

}  // namespace
}  // namespace xackly
