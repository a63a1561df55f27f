// WriteScenario → ParseScenario gives back the same scenario: a replay file
// reproduces exactly the run that wrote it.
#include <algorithm>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "sim/worker.h"
#include "tests/rc_cases.h"
#include "tests/scenarios/scenario_gen.h"
#include "tests/scenarios/scenario_test_util.h"

namespace xackly {
namespace {

using testing::CatalogAsInline;
using testing::ExpectSameScenario;

// Writes `s`, parses the text back, and expects the same scenario.
// Returns the written text for further checks.
std::string ExpectRoundTrip(const Scenario& s) {
  std::string text = WriteScenario(s);
  Result<Scenario> back = ParseScenario(text, "written.toml");
  EXPECT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  if (back.ok()) {
    SCOPED_TRACE(text);
    ExpectSameScenario(*back, s);
  }
  return text;
}

// 1000 generated scenarios (AnyScenario: every catalog protocol by
// reference, inline, and inline with drawn options; every run setting,
// fault model, expectation, schedule and picks drawn; the count is the
// test's, RC_PARAMS gives only the seed): each written file parses back to
// the same scenario, and what comes back writes the same file.
TEST(ScenarioRoundTrip, EveryGeneratedScenarioSurvivesWriteAndParse) {
  testing::CheckCases(1000, [] {
    const Scenario s = *testing::AnyScenario();
    const std::string text = WriteScenario(s);
    Result<Scenario> back = ParseScenario(text, "written.toml");
    RC_LOG() << text;
    if (!back.ok()) RC_FAIL(back.status().ToString());
    testing::RcAssertExpectations([&] { ExpectSameScenario(*back, s); });
    RC_ASSERT(WriteScenario(*back) == text);
  });
}

Scenario CatalogRef(const std::string& name) {
  Scenario s;
  s.name = "case-" + name;
  s.protocol_ref = name;
  s.config = RunConfig::For(*FindProtocol(name));
  return s;
}

TEST(ScenarioRoundTrip, EveryCatalogReferenceWithDefaultsIsShort) {
  for (const ProtocolDef& p : Catalog()) {
    SCOPED_TRACE(p.name);
    std::string text = ExpectRoundTrip(CatalogRef(p.name));
    // Only what differs from the protocol's defaults: no protocol table, no
    // fault model, no timing; seed, expect and the workload always.
    EXPECT_NE(text.find("protocol = \"" + p.name + "\""), std::string::npos);
    EXPECT_EQ(text.find("\n[protocol"), std::string::npos);
    EXPECT_EQ(text.find("\n[faults]"), std::string::npos);
    EXPECT_EQ(text.find("\n[timing]"), std::string::npos);
    EXPECT_EQ(text.find("\n[server]"), std::string::npos);
    EXPECT_NE(text.find("seed = 1"), std::string::npos);
    EXPECT_NE(text.find("expect = "), std::string::npos);
    EXPECT_NE(text.find("\n[workload]"), std::string::npos);
    EXPECT_NE(text.find("\n[schedule]"), std::string::npos);
  }
}

TEST(ScenarioRoundTrip, EveryCatalogProtocolInInlineForm) {
  for (const ProtocolDef& p : Catalog()) {
    SCOPED_TRACE(p.name);
    std::string text = ExpectRoundTrip(CatalogAsInline(p));
    EXPECT_NE(text.find("\n[protocol.loop]"), std::string::npos);
    EXPECT_NE(text.find("\n[protocol.janitor]"), std::string::npos);
  }
}

TEST(ScenarioRoundTrip, ReplayFileWithScheduleOverridesAndHash) {
  Scenario s = CatalogRef("txn-dedupe");
  s.description = "a \"quoted\" description\nwith a second line, a tab\tand ünïcödé";
  s.origin = "xackly explore txn-dedupe --seeds 1..100 --faults crash,restart";
  RunConfig& c = s.config;
  c.expected = Expectation{VerdictKind::kDuplicate, "crash:after-effect"};
  c.seed = 987654321;
  c.producers = 2;
  c.workers = 5;
  c.events = 250;
  c.naming = RestartNaming::kFresh;
  c.persistence = Persistence::kAofAlways;
  c.timing.effect_ms = 25;
  c.timing.max_steps = 500000;
  c.timing.fault_phase_ms = 9000;
  c.faults.kinds = {FaultKind::kCrash, FaultKind::kXtrim, FaultKind::kPoison};
  c.faults.crash_points = {"after-effect", "after-commit"};
  c.faults.crash_ppm = 123457;
  c.faults.xtrim_target = "minid:last-delivered";
  c.faults.poison_count = 2;
  std::vector<std::string> lines = {
      "crash w1 after-effect #1",   "stall w2 after-read #3 60000ms", "lost-reply w5 XACK #2",
      "lost-request p2 XADD #1",    "xdel pending @1200ms",           "xtrim maxlen:0 @50ms",
      "restart @3000ms",            "save @10ms",                     "delconsumer @77ms",
      "clock-jump +60000ms @3000ms", "store-outage 3000ms @400ms",   "poison event 3",
  };
  c.fault_schedule.emplace();
  for (const std::string& line : lines) c.fault_schedule->push_back(*ParseFaultSpec(line));
  for (int i = 0; i < 100; ++i) c.picks.push_back(i % 7 == 0 ? "p2" : "w" + std::to_string(1 + i % 5));
  s.trace_hash = "9ca6e72d056eda97";
  std::string text = ExpectRoundTrip(s);
  // Every fault line is readable as written.
  for (const std::string& line : lines) EXPECT_NE(text.find("\"" + line + "\""), std::string::npos);
}

TEST(ScenarioRoundTrip, AnEmptyExplicitScheduleMeansNoFaults) {
  Scenario s = CatalogRef("no-dedupe");
  s.config.fault_schedule.emplace();  // present and empty: not "draw from rates"
  std::string text = ExpectRoundTrip(s);
  EXPECT_NE(text.find("faults = []"), std::string::npos);
}

TEST(ScenarioRoundTrip, InlineProtocolWithJanitorAndDeadLetters) {
  Scenario s;
  s.name = "dlq-janitor";
  s.description = "made up for the test";
  ProtocolDef p;
  p.name = "custom";
  p.description = "lua group, dead letters, safe trim, careful consumer clean-up";
  p.expected = Expectation{VerdictKind::kLost, "payload-deleted"};
  p.steps = {HandlerOp::kBegin, HandlerOp::kCheckDone, HandlerOp::kEffect, HandlerOp::kMarkDone,
             HandlerOp::kCommit, HandlerOp::kAck};
  p.dedupe = DedupeStore::kRedis;
  p.dedupe_ttl_ms = 600000;
  p.effect = EffectSink::kRedis;
  p.on_duplicate = DuplicatePolicy::kSkip;
  p.fault_phase_ms = 150000;
  p.naming = RestartNaming::kFresh;
  p.persistence = Persistence::kRdb;
  p.loop.read_count = 3;
  p.loop.read_own_pending_at_start = false;
  p.loop.claim_min_idle_ms = 45000;
  p.loop.claim_count = 7;
  p.loop.claim_every_ms = 2500;
  p.loop.block_ms = 100;
  p.loop.on_deleted = DeletedEntryPolicy::kSkip;
  p.loop.dead_letter_after = 4;
  p.loop.dead_letter_order = DeadLetterOrder::kAckThenSave;
  p.janitor.trim = TrimPolicy::kMaxLen;
  p.janitor.trim_maxlen = 100;
  p.janitor.delete_idle_consumers = true;
  p.janitor.consumer_idle_ms = 20000;
  p.janitor.check_pending_before_delete = false;
  p.janitor.every_ms = 750;
  p.faults.kinds = {FaultKind::kStall, FaultKind::kLostReply, FaultKind::kClockJump,
                    FaultKind::kStoreOutage};
  p.faults.lost_sites = {"EVAL"};
  p.faults.stall_ppm = 1;
  p.faults.stall_ms = 1234;
  p.faults.lost_reply_ppm = 999999;
  p.faults.clock_jump_ms = 5;
  p.faults.store_outage_ms = 6;
  p.faults.scheduled_count = 3;
  s.config = RunConfig::For(p);
  s.config.timing.quiet_window_ms = 4000;
  s.config.picks = {"p1", "j1", "w3"};  // j1 exists: the janitor is enabled
  std::string text = ExpectRoundTrip(s);
  EXPECT_EQ(text.find("\nprotocol = "), std::string::npos) << "inline, not a reference";
}

TEST(ScenarioRoundTrip, InlineExternalEffectWithIdempotencyKeyAndBatchAck) {
  Scenario s;
  s.name = "batch";
  ProtocolDef p;
  p.name = "batch-idem";
  p.steps = {HandlerOp::kEffect};
  p.idempotency_key = true;
  p.loop.ack = AckMode::kBatch;
  p.loop.claim = false;
  s.config = RunConfig::For(p);
  ExpectRoundTrip(s);
}

TEST(ScenarioRoundTrip, AnInlineRunWithItsOwnFaultModelReplaysThatModel) {
  // The run's model is not the protocol's: the file keeps what ran.
  Scenario s = CatalogAsInline(*FindProtocol("no-dedupe"));
  s.config.faults.kinds = {FaultKind::kLostReply};
  s.config.faults.lost_sites = {"XACK"};
  std::string text = WriteScenario(s);
  Result<Scenario> back = ParseScenario(text, "own-model.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  testing::ExpectSameRunSettings(back->config, s.config);
}

// Found by the fuzzer (tests/fuzz/corpus/scenario/base-with-amended-effect.toml):
// a base whose steps or effect the file amends keeps only the base's fault
// sites the amended protocol still visits. Before, txn-dedupe's COMMIT site
// stayed in a protocol that no longer sends COMMIT, and the written file
// was refused as naming a site no fault could fire at.
TEST(ScenarioRoundTrip, AnAmendedBaseKeepsOnlyTheSitesItsStepsStillVisit) {
  const char* text = R"(name = "amended"
[protocol]
base = "txn-dedupe"
steps = ["begin", "mark-done", "effect", "commit", "ack"]
dedupe = "redis"
effect = "redis"
)";
  Result<Scenario> s = ParseScenario(text, "amended.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::vector<std::string>& lost = s->config.faults.lost_sites;
  EXPECT_EQ(std::find(lost.begin(), lost.end(), "COMMIT"), lost.end());
  EXPECT_NE(std::find(lost.begin(), lost.end(), "XACK"), lost.end());
  std::string written = ExpectRoundTrip(*s);
  Result<Scenario> back = ParseScenario(written, "written.toml");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(WriteScenario(*back), written);
}

TEST(ScenarioRoundTrip, ARealConsumerCommandSurvivesWriteAndParse) {
  Result<Scenario> s = ParseScenario(
      "name = \"real\"\n[protocol]\ncommand = [\"/usr/bin/python3\", \"my consumer.py\", \"--group=\\\"a\\\"\"]\n",
      "real.toml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::vector<std::string> want = {"/usr/bin/python3", "my consumer.py", "--group=\"a\""};
  EXPECT_EQ(s->config.protocol.consumer_command, want);
  std::string written = WriteScenario(*s);
  Result<Scenario> back = ParseScenario(written, "written.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << written;
  EXPECT_EQ(back->config.protocol.consumer_command, want);
  EXPECT_EQ(WriteScenario(*back), written);
}

TEST(ScenarioRoundTrip, RatesKeepTheirExactPartsPerMillion) {
  for (uint32_t ppm : {0u, 1u, 7u, 10u, 30000u, 123457u, 333333u, 500000u, 999999u, 1000000u}) {
    SCOPED_TRACE(ppm);
    Scenario s = CatalogRef("txn-dedupe");
    s.config.faults.crash_ppm = ppm;
    s.config.faults.stall_ppm = ppm;
    s.config.faults.lost_request_ppm = ppm;
    s.config.faults.lost_reply_ppm = ppm;
    ExpectRoundTrip(s);
  }
}

TEST(ScenarioRoundTrip, SeedsAboveTheTomlIntegerRange) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{9223372036854775807ULL}, uint64_t{9223372036854775808ULL},
                        uint64_t{18446744073709551615ULL}}) {
    SCOPED_TRACE(seed);
    Scenario s = CatalogRef("ack-first");
    s.config.seed = seed;
    ExpectRoundTrip(s);
  }
}

TEST(ScenarioRoundTrip, AChangedCatalogProtocolIsWrittenInline) {
  // A reference would silently drop the change; the inline form keeps it.
  Scenario s = CatalogRef("txn-dedupe");
  s.config.protocol.loop.claim_min_idle_ms = 10;
  std::string text = WriteScenario(s);
  EXPECT_EQ(text.find("protocol = \"txn-dedupe\""), std::string::npos);
  Result<Scenario> back = ParseScenario(text, "changed.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->protocol_ref, "");
  EXPECT_EQ(back->config.protocol.loop.claim_min_idle_ms, 10);
  EXPECT_EQ(back->config.protocol.cpp_handler, nullptr);
  testing::ExpectSameRunSettings(back->config, s.config);
}

// A handler that is C++ code of its own (no catalog protocol's).
Task<bool> AckOnly(Worker& w, const StreamEntry& e) {
  co_await w.Ack(e.id);
  co_return true;
}

TEST(ScenarioRoundTrip, AnInlineProtocolWithItsOwnCppHandlerSaysSo) {
  Scenario s = CatalogAsInline(*FindProtocol("no-dedupe"));
  s.name = "mine";
  s.config.protocol.name = "mine";
  s.config.protocol.cpp_handler = &AckOnly;
  // As an embedding test builds it: its run config from the protocol with
  // its handler (whose fault sites are found by running it).
  s.config = RunConfig::For(s.config.protocol);
  EXPECT_EQ(HandlerFormOf(s.config.protocol), HandlerForm::kCpp);
  const std::string text = WriteScenario(s);
  EXPECT_NE(text.find("\nhandler = \"c++\""), std::string::npos) << text;
  EXPECT_NE(text.find("\nsteps = "), std::string::npos) << text;
  Result<Scenario> back = ParseScenario(text, "mine.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  EXPECT_EQ(back->handler, HandlerForm::kCpp);
  EXPECT_EQ(back->config.protocol.cpp_handler, nullptr);
  testing::ExpectSameProtocol(back->config.protocol, s.config.protocol);
  testing::ExpectSameRunSettings(back->config, s.config);
  // What comes back writes the same file.
  EXPECT_EQ(WriteScenario(*back), text);
  EXPECT_EQ(ProtocolText(back->config.protocol), ProtocolText(s.config.protocol));
}

TEST(ScenarioRoundTrip, ACatalogHandlerIsItsStepsAndNeedsNoMark) {
  // A changed catalog protocol keeps the catalog's code, whose steps send
  // the same commands: written inline, it is a declarative file.
  Scenario s = CatalogRef("txn-dedupe");
  s.config.protocol.loop.claim_min_idle_ms = 10;
  EXPECT_EQ(HandlerFormOf(s.config.protocol), HandlerForm::kSteps);
  const std::string text = WriteScenario(s);
  EXPECT_EQ(text.find("handler ="), std::string::npos) << text;
  Result<Scenario> back = ParseScenario(text, "changed.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->handler, HandlerForm::kSteps);
  // Said explicitly, "steps" is the default.
  Result<Scenario> spelled = ParseScenario("[protocol]\nsteps = [\"effect\", \"ack\"]\nhandler = \"steps\"\n",
                                           "steps.toml");
  ASSERT_TRUE(spelled.ok()) << spelled.status().ToString();
  EXPECT_EQ(spelled->handler, HandlerForm::kSteps);
}

}  // namespace
}  // namespace xackly
