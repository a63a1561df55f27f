// What a scenario file means when it leaves keys out.
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "tests/scenarios/scenario_test_util.h"

namespace xackly {
namespace {

using testing::ExpectSameFaultModel;
using testing::ExpectSameProtocol;
using testing::ExpectSameRunConfig;

Scenario ParseOk(std::string_view text, std::string_view source = "case.toml") {
  Result<Scenario> s = ParseScenario(text, source);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scenario{};
}

TEST(ScenarioDefaults, ACatalogReferenceAloneIsTheProtocolsDefaultRun) {
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n", "runs/dup-after-crash.toml");
  const ProtocolDef& p = *FindProtocol("no-dedupe");
  EXPECT_EQ(s.name, "dup-after-crash") << "the file name's stem";
  EXPECT_EQ(s.protocol_ref, "no-dedupe");
  EXPECT_FALSE(s.trace_hash.has_value());
  ExpectSameRunConfig(s.config, RunConfig::For(p));
  EXPECT_EQ(s.config.protocol.cpp_handler, p.cpp_handler) << "runs the catalog's C++ handler";
  EXPECT_EQ(s.config.expected.ToString(), "duplicate:crash:after-effect");
  EXPECT_EQ(s.config.seed, 1u);
  EXPECT_FALSE(s.config.fault_schedule.has_value()) << "faults drawn from rates";
}

TEST(ScenarioDefaults, SectionsOverrideTheRunNotTheCatalogProtocol) {
  Scenario s = ParseOk(R"(
protocol = "txn-dedupe-restart-aof"
expect = "lost"
seed = 42
[server]
persistence = "none"
[workload]
workers = 2
[faults]
kinds = ["restart"]
)");
  const ProtocolDef& p = *FindProtocol("txn-dedupe-restart-aof");
  ExpectSameProtocol(s.config.protocol, p);
  EXPECT_EQ(s.config.persistence, Persistence::kNone);
  EXPECT_EQ(s.config.expected.ToString(), "lost");
  EXPECT_EQ(s.config.seed, 42u);
  EXPECT_EQ(s.config.workers, 2);
  EXPECT_EQ(s.config.producers, 1) << "untouched workload keys keep their defaults";
  EXPECT_EQ(s.config.events, 10);
}

TEST(ScenarioDefaults, FaultKeysOverrideOneByOne) {
  // Only the rate changes; the protocol's crash points stay.
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n[faults]\ncrash_rate = 0.5\n");
  FaultModel want = RunConfig::For(*FindProtocol("no-dedupe")).faults;
  want.crash_ppm = 500000;
  ExpectSameFaultModel(s.config.faults, want);
}

// An inline protocol that dead-letters (after however many deliveries,
// one included) is checked with poison events; one that never does, not.
TEST(ScenarioDefaults, AnInlineProtocolThatDeadLettersIsCheckedWithPoisonEvents) {
  for (int after : {0, 1, 3}) {
    Scenario s = ParseOk("[protocol]\nsteps = [\"effect\", \"ack\"]\n[protocol.loop]\ndead_letter_after = " +
                         std::to_string(after) + "\n", "dlq.toml");
    EXPECT_EQ(s.config.faults.Has(FaultKind::kPoison), after > 0) << "dead_letter_after = " << after;
  }
}

TEST(ScenarioDefaults, InlineProtocolWithoutBaseExpectsOkUnderTheDefaultFaultModel) {
  Scenario s = ParseOk(R"(
[protocol]
steps = ["effect", "ack"]
)", "effect-then-ack.toml");
  EXPECT_EQ(s.protocol_ref, "");
  EXPECT_EQ(s.config.protocol.cpp_handler, nullptr) << "declarative";
  EXPECT_EQ(s.config.protocol.name, "effect-then-ack") << "named after the scenario";
  EXPECT_EQ(s.config.expected.ToString(), "ok");
  EXPECT_EQ(s.config.protocol.expected.ToString(), "ok");
  // No [faults]: not silence, but the default model of its operations.
  EXPECT_EQ(s.config.faults.kinds, DefaultFaultModel(s.config.protocol).kinds);
  EXPECT_TRUE(s.config.faults.Has(FaultKind::kCrash));
  EXPECT_EQ(s.config.faults.crash_points, CrashPointsOf(s.config.protocol));
  EXPECT_TRUE(s.config.protocol.loop == LoopConfig{});
  EXPECT_TRUE(s.config.protocol.janitor == JanitorConfig{});
}

TEST(ScenarioDefaults, InlineSectionsAreAlsoTheProtocolsOwnDefaults) {
  Scenario s = ParseOk(R"(
expect = "lost:server-data-loss"
[server]
persistence = "rdb"
[workload]
restart_naming = "fresh"
[faults]
kinds = ["restart"]
[protocol]
steps = ["effect", "ack"]
)");
  const ProtocolDef& p = s.config.protocol;
  EXPECT_EQ(p.expected.ToString(), "lost:server-data-loss");
  EXPECT_EQ(p.persistence, Persistence::kRdb);
  EXPECT_EQ(p.naming, RestartNaming::kFresh);
  EXPECT_TRUE(p.faults.Has(FaultKind::kRestart));
  ExpectSameRunConfig(s.config, RunConfig::For(p));
}

TEST(ScenarioDefaults, InlineFaultsAreTheProtocolsModelResolvedForTheRun) {
  // crash_points = [] means every point: the protocol keeps the empty list,
  // the run gets the points this protocol really visits.
  Scenario s = ParseOk(R"(
[protocol]
steps = ["effect", "ack"]
[faults]
kinds = ["crash"]
crash_points = []
)");
  EXPECT_TRUE(s.config.protocol.faults.crash_points.empty());
  EXPECT_EQ(s.config.faults.crash_points, CrashPointsOf(s.config.protocol));
}

TEST(ScenarioDefaults, AScriptsFaultModelNamesItsOwnSites) {
  // A script's sites are named by its commands and its own points; the run
  // keeps them as written (the script is what visits them).
  Scenario s = ParseOk(R"(
[protocol]
script = "consumer.lua"
[faults]
kinds = ["crash", "lost-reply"]
crash_points = ["after-INSERT", "before-XACK", "point:after-outbox", "after-effect"]
lost_sites = ["XACK", "FCALL"]
)");
  EXPECT_EQ(s.config.faults.crash_points,
            (std::vector<std::string>{"after-INSERT", "before-XACK", "point:after-outbox", "after-effect"}));
  EXPECT_EQ(s.config.faults.lost_sites, (std::vector<std::string>{"XACK", "FCALL"}));
}

TEST(ScenarioDefaults, BaseSuppliesEverythingTheInlineTableLeavesOut) {
  Scenario s = ParseOk(R"(
[protocol]
base = "txn-dedupe"
name = "txn-dedupe-eager"
[protocol.loop]
claim_min_idle_ms = 50
)");
  ProtocolDef want = *FindProtocol("txn-dedupe");
  want.name = "txn-dedupe-eager";
  want.loop.claim_min_idle_ms = 50;
  ExpectSameProtocol(s.config.protocol, want);
  EXPECT_EQ(s.config.protocol.cpp_handler, nullptr) << "runs its steps, not the C++ handler";
  EXPECT_EQ(s.protocol_ref, "");
  EXPECT_EQ(s.config.expected.ToString(), "ok") << "the base's expectation";
}

TEST(ScenarioDefaults, TimingFaultPhaseComesFromTheProtocolUnlessOverridden) {
  Scenario s = ParseOk("protocol = \"dlq-after-3\"\n");
  EXPECT_EQ(s.config.timing.fault_phase_ms, 150000);
  s = ParseOk("protocol = \"dlq-after-3\"\n[timing]\nfault_phase_ms = 7000\n");
  EXPECT_EQ(s.config.timing.fault_phase_ms, 7000);
  EXPECT_EQ(s.config.protocol.fault_phase_ms, 150000);
}

TEST(ScenarioDefaults, TraceHashIsStoredLowercase) {
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9CA6E72D056EDA97\"\n");
  EXPECT_EQ(s.trace_hash, "9ca6e72d056eda97");
}

// Replay files record the server their trace hash was recorded on; files
// written before that field existed still load, without it.
TEST(ScenarioDefaults, TheRecordingServerRoundTripsAndIsOptional) {
  Scenario old = ParseOk("protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9ca6e72d056eda97\"\n");
  EXPECT_FALSE(old.server.has_value());
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9ca6e72d056eda97\"\n"
                       "server = \"valkey 8.0.1\"\n");
  EXPECT_EQ(s.server, "valkey 8.0.1");
  Scenario again = ParseOk(WriteScenario(s));
  EXPECT_EQ(again.server, "valkey 8.0.1");
  EXPECT_EQ(again.trace_hash, "9ca6e72d056eda97");
}

// The hashes recorded on other servers round-trip, lower-cased, each under
// its server's name; a file without them has none.
TEST(ScenarioDefaults, TheHashesRecordedOnOtherServersRoundTrip) {
  EXPECT_TRUE(ParseOk("protocol = \"no-dedupe\"\n").server_hashes.empty());
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9ca6e72d056eda97\"\n"
                       "server = \"redis 7.0.15\"\nserver_hashes = { \"valkey 8.0.1\" = \"0C1F9E2A7D3B4C55\", "
                       "\"redis 8.0.6\" = \"1111222233334444\" }\n");
  const std::map<std::string, std::string> want = {{"valkey 8.0.1", "0c1f9e2a7d3b4c55"},
                                                   {"redis 8.0.6", "1111222233334444"}};
  EXPECT_EQ(s.server_hashes, want);
  EXPECT_EQ(ParseOk(WriteScenario(s)).server_hashes, want);
}

TEST(ScenarioDefaults, PicksMaySpanLines) {
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n[schedule]\npicks = \"\"\"\np1 w1 \\\n  w2\tw3\"\"\"\n");
  EXPECT_EQ(s.config.picks, (std::vector<std::string>{"p1", "w1", "w2", "w3"}));
}

// A replay file writes a long pick list 24 to a line, each line but the
// last ending in a joining backslash, and the last pick right before the
// closing quotes: no empty continuation when the count is a multiple of 24.
TEST(ScenarioDefaults, ALongPickListIsWrittenTwentyFourToALine) {
  Scenario s = ParseOk("protocol = \"no-dedupe\"\n");
  const std::string line = "p1 w1 w2 w3 p1 w1 w2 w3 p1 w1 w2 w3 p1 w1 w2 w3 p1 w1 w2 w3 p1 w1 w2 w3";
  std::vector<std::string> words;
  std::istringstream split(line);
  for (std::string w; split >> w;) words.push_back(w);
  ASSERT_EQ(words.size(), 24u);
  for (const size_t n : {24u, 25u, 48u, 49u}) {
    s.config.picks.clear();
    while (s.config.picks.size() < n) s.config.picks.push_back(words[s.config.picks.size() % 24]);
    std::string want;
    if (n == 24) want = "picks = \"" + line + "\"\n";
    if (n == 25) want = "picks = \"\"\"\n" + line + " \\\np1\"\"\"\n";
    if (n == 48) want = "picks = \"\"\"\n" + line + " \\\n" + line + "\"\"\"\n";
    if (n == 49) want = "picks = \"\"\"\n" + line + " \\\n" + line + " \\\np1\"\"\"\n";
    const std::string text = WriteScenario(s);
    EXPECT_NE(text.find(want), std::string::npos) << n << " picks:\n" << text;
    EXPECT_EQ(ParseOk(text).config.picks, s.config.picks) << n << " picks";
  }
}

TEST(ScenarioDefaults, ExampleFileParses) {
  std::string text = testing::ReadTestFile(XACKLY_SCENARIO_EXAMPLE);
  Result<Scenario> s = ParseScenario(text, XACKLY_SCENARIO_EXAMPLE);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "example");
  EXPECT_TRUE(ValidateRunConfig(s->config).ok());
}

}  // namespace
}  // namespace xackly
