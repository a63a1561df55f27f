// The deterministic core against a real redis-server: determinism, the exact
// commands in the trace, the crash points the oracle names, and that both
// forms of every catalog protocol (C++ coroutine and declarative steps)
// behave identically.
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/limits.h"
#include "sim/lua/script_actor.h"
#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

class SimulationTest : public ServerTest {
 protected:
  RunResult Run(const RunConfig& config) {
    Status valid = ValidateRunConfig(config);
    EXPECT_TRUE(valid.ok()) << valid.ToString();
    RedisServer*& server = servers_[static_cast<int>(config.persistence)];
    if (server == nullptr) server = StartServer(config.persistence);
    Result<RunResult> r = RunSimulation(config, server);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : RunResult{};
  }

  static RunConfig Config(const std::string& protocol) {
    const ProtocolDef* p = FindProtocol(protocol);
    EXPECT_NE(p, nullptr) << protocol;
    return RunConfig::For(*p);
  }

  // One worker, one event, exactly these faults.
  static RunConfig Minimal(const std::string& protocol, std::vector<std::string> faults) {
    RunConfig c = Config(protocol);
    c.workers = 1;
    c.events = 1;
    c.keep_trace = true;
    std::vector<FaultSpec> specs;
    for (const std::string& f : faults) specs.push_back(*ParseFaultSpec(f));
    c.fault_schedule = specs;
    return c;
  }

  static std::string TraceText(const RunResult& r) {
    std::string out;
    for (const TraceLine& l : r.trace) out += Trace::Render(l) + "\n";
    return out;
  }

  RedisServer* servers_[3] = {nullptr, nullptr, nullptr};
};

TEST_F(SimulationTest, SameSeedGivesTheSameTraceOnAFreshServer) {
  RunConfig c = Config("txn-dedupe");
  c.seed = 42;
  RunResult first = Run(c);
  RunResult again = Run(c);  // same server, after Reset()
  RedisServer* other = StartServer();
  Result<RunResult> fresh = RunSimulation(c, other);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(first.trace_hash, again.trace_hash);
  EXPECT_EQ(first.trace_hash, fresh->trace_hash);
  EXPECT_GT(first.steps, 20);
  c.seed = 43;
  EXPECT_NE(Run(c).trace_hash, first.trace_hash);
}

TEST_F(SimulationTest, TheTraceHoldsTheExactCommandsSent) {
  RunResult r = Run(Minimal("no-dedupe", {}));
  std::string t = TraceText(r);
  EXPECT_TRUE(Contains(t, "setup    XGROUP CREATE events workers 0 MKSTREAM -> +OK")) << t;
  EXPECT_TRUE(Contains(t, "p1       XADD events 0-1 event_id order:1 -> \"0-1\"")) << t;
  EXPECT_TRUE(Contains(t, "w1       XREADGROUP GROUP workers w1 COUNT 10 STREAMS events > -> "
                          "[[\"events\", [[\"0-1\", [\"event_id\", \"order:1\"]]]]]"))
      << t;
  EXPECT_TRUE(Contains(t, "w1       ext apply order:1 -> ok")) << t;
  EXPECT_TRUE(Contains(t, "w1       XACK events workers 0-1 -> 1")) << t;
  EXPECT_EQ(r.observed, "ok");
  EXPECT_EQ(static_cast<int64_t>(r.trace.size()), r.trace_lines);
}

TEST_F(SimulationTest, NoDedupeDuplicateNamesTheCrashBetweenEffectAndAck) {
  RunResult r = Run(Minimal("no-dedupe", {"crash w1 after-effect #1"}));
  ASSERT_EQ(r.violations.size(), 1u) << TraceText(r);
  const Violation& v = r.violations[0];
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.event_id, "order:1");
  EXPECT_EQ(v.cause, "crash:after-effect");
  EXPECT_EQ(v.effect_count, 2);
  EXPECT_TRUE(Contains(v.detail, "before XACK")) << v.detail;
  EXPECT_TRUE(r.matched);
  // The crash is in the trace where it happened: after the effect, before any XACK.
  std::string t = TraceText(r);
  size_t effect = t.find("ext apply order:1");
  size_t crash = t.find("!crash at after-effect");
  size_t ack = t.find("XACK events");
  ASSERT_NE(effect, std::string::npos) << t;
  ASSERT_NE(crash, std::string::npos) << t;
  ASSERT_NE(ack, std::string::npos) << t;  // the replacement acks it
  EXPECT_LT(effect, crash);
  EXPECT_LT(crash, ack);
}

TEST_F(SimulationTest, AckFirstLossNamesTheCrashAfterAck) {
  RunResult r = Run(Minimal("ack-first", {"crash w1 after-ack #1"}));
  ASSERT_EQ(r.violations.size(), 1u) << TraceText(r);
  const Violation& v = r.violations[0];
  EXPECT_EQ(v.kind, VerdictKind::kLost);
  EXPECT_EQ(v.cause, "acked-without-effect");
  EXPECT_TRUE(Contains(v.detail, "crashed at after-ack")) << v.detail;
  EXPECT_EQ(r.effect_counts["order:1"], 0);
}

// A run drawn from rates, replayed from the faults that fired, is the same
// run: this is what makes every replay file exact.
TEST_F(SimulationTest, AFiredPlanReplaysTheRunExactly) {
  for (const ProtocolDef& p : Catalog()) {
    RunConfig c = RunConfig::For(p);
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      c.seed = seed;
      c.fault_schedule.reset();
      RunResult rated = Run(c);
      c.fault_schedule = rated.fired;
      RunResult replay = Run(c);
      EXPECT_EQ(replay.trace_hash, rated.trace_hash) << p.name << " seed " << seed;
      EXPECT_EQ(replay.observed, rated.observed) << p.name << " seed " << seed;
    }
  }
}

TEST_F(SimulationTest, AFaultKindWithNoReachableSiteIsDropped) {
  ProtocolDef p = *FindProtocol("no-dedupe");
  ASSERT_TRUE(RunConfig::For(p).faults.Has(FaultKind::kCrash));  // as the catalog has it
  p.faults.crash_points = {"after-eval"};  // no-dedupe has no EVAL
  RunConfig c = RunConfig::For(p);
  EXPECT_FALSE(c.faults.Has(FaultKind::kCrash));
}

// timing.max_steps = 1 is the smallest guard a scenario can set, and it is
// kept: only 0 means "derived from the workload".
TEST_F(SimulationTest, AStepGuardOfOneStepStopsTheRunAfterItsFirstStep) {
  RunConfig c = Minimal("txn-dedupe", {});
  c.timing.max_steps = 1;
  ASSERT_TRUE(ValidateRunConfig(c).ok());
  Result<RunResult> r = RunSimulation(c, StartServer());
  ASSERT_FALSE(r.ok()) << "the run settled under the derived guard instead";
  EXPECT_EQ(r.status().code(), Status::Code::kHarnessLimit) << r.status().ToString();
  EXPECT_NE(r.status().message().find("timing.max_steps = 1, at virtual"), std::string::npos)
      << r.status().ToString();
}

// A failover promotes the replica: a schedule that names one needs
// [server] replicas = 1, and with it is fine.
TEST_F(SimulationTest, AScheduledFailoverNeedsAReplicaToPromote) {
  RunConfig c = Minimal("txn-dedupe", {"failover lag:1 @10ms"});
  Status alone = ValidateRunConfig(c);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.message().find("schedule.faults: a failover needs a replica to promote"), std::string::npos)
      << alone.ToString();
  c.replicas = 1;
  Status replicated = ValidateRunConfig(c);
  EXPECT_TRUE(replicated.ok()) << replicated.ToString();
}

TEST_F(SimulationTest, ProducersAreAcceptedUpToTheirLimitAndNoMore) {
  RunConfig c = Config("txn-dedupe");
  c.producers = kMaxProducers;
  Status most = ValidateRunConfig(c);
  EXPECT_TRUE(most.ok()) << most.ToString();
  c.producers = kMaxProducers + 1;
  Status over = ValidateRunConfig(c);
  EXPECT_NE(over.message().find(fmt::format("producers must be in 1..{} (got {})", kMaxProducers, kMaxProducers + 1)),
            std::string::npos)
      << over.ToString();
}

// A further group's name is refused when a RunConfig built in code (the
// embedding API, which no scenario parser guards) has an empty, long or
// unprintable one: a space or a control character would be one of the
// trace's and the reports' words.
TEST_F(SimulationTest, AFurtherGroupsNameMustBePrintableWithoutSpaces) {
  auto script = LuaScript::Load({"groups.lua", "function consumer(w) end\nfunction indexer(w) end\n"});
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  RunConfig c = Config("txn-dedupe");
  c.protocol.script = *script;
  c.protocol.script_path = "groups.lua";
  c.groups = {ConsumerGroupSpec{.name = "search-index", .function = "indexer"}};
  EXPECT_TRUE(ValidateGroups(c).ok()) << ValidateGroups(c).ToString();
  for (const std::string& bad :
       std::vector<std::string>{"", "search index", "tab\tbed", "del\x7f", std::string(65, 'g')}) {
    c.groups[0].name = bad;
    const Status refused = ValidateGroups(c);
    EXPECT_NE(refused.message().find("groups.name must be 1..64 printable characters without spaces"),
              std::string::npos)
        << "'" << bad << "': " << refused.ToString();
  }
}

// A RunConfig built in code is held to the scenario file's bounds: with
// no producer nothing is produced, and an empty run is trivially "ok".
TEST_F(SimulationTest, ARunNeedsAtLeastOneProducer) {
  RunConfig c = Config("txn-dedupe");
  for (const int producers : {0, -1}) {
    c.producers = producers;
    const Status refused = ValidateRunConfig(c);
    EXPECT_NE(refused.message().find(fmt::format("producers must be in 1..{} (got {})", kMaxProducers, producers)),
              std::string::npos)
        << producers << " producers: " << refused.ToString();
  }
}

// Every bounded number (ForEachNumberField) is taken at both ends of its
// range and refused one past either, by a message that starts with its
// path and says the range: a bound moved by one, or a field the check
// skips, is a config a C++ caller gets wrong without being told.
TEST_F(SimulationTest, EveryBoundedNumberIsTakenAtItsEndsAndRefusedJustPastThemNamingIt) {
  const RunConfig base = Config("txn-dedupe");
  ASSERT_TRUE(ValidateRunConfig(base).ok()) << ValidateRunConfig(base).ToString();
  struct Bound {
    std::string path;
    int64_t min, max;
  };
  std::vector<Bound> bounds;
  ForEachNumberField(base, [&](const char* path, const auto&, int64_t min, int64_t max) {
    bounds.push_back({path, min, max});
  });
  ASSERT_GE(bounds.size(), 25u);
  for (size_t k = 0; k < bounds.size(); ++k) {
    const Bound& b = bounds[k];
    SCOPED_TRACE(b.path);
    for (const int64_t value : {b.min - 1, b.min, b.max, b.max + 1}) {
      RunConfig c = base;
      size_t at = 0;
      ForEachNumberField(c, [&](const char*, auto& field, int64_t, int64_t) {
        if (at++ == k) field = static_cast<std::remove_reference_t<decltype(field)>>(value);
      });
      const Status s = ValidateRunConfig(c);
      if (value < b.min || value > b.max) {
        EXPECT_EQ(s.message(), fmt::format("{}: expected an integer in {}..{}, got {}", b.path, b.min, b.max, value));
      } else {
        // Another check may still refuse an end (a TTL without a Redis
        // store, a run that would outlast 100 years), never as the value.
        EXPECT_EQ(s.message().find(b.path + ": expected"), std::string::npos) << value << ": " << s.ToString();
      }
    }
  }
}

// Workers, handler lanes, events, producers and replicas each have a range
// of their own, checked before anything they could break: the message
// names the field and says the range. At the most producers and replicas
// the whole config is valid.
TEST_F(SimulationTest, WorkersHandlersEventsProducersAndReplicasAreTakenUpToTheirLimitsAndRefusedPastThem) {
  const RunConfig base = Config("txn-dedupe");
  struct Field {
    const char* name;
    int RunConfig::*member;
    int min, max;
  };
  for (const Field& f : {Field{"workers", &RunConfig::workers, 1, kMaxWorkers},
                         Field{"handlers", &RunConfig::handlers, 1, kMaxWorkers},
                         Field{"events", &RunConfig::events, 1, kMaxEvents},
                         Field{"producers", &RunConfig::producers, 1, kMaxProducers},
                         Field{"server.replicas", &RunConfig::replicas, 0, kMaxReplicas}}) {
    SCOPED_TRACE(f.name);
    for (const int value : {f.min - 1, f.min - 2, f.max + 1}) {
      RunConfig c = base;
      c.*f.member = value;
      EXPECT_EQ(ValidateRunConfig(c).message(),
                fmt::format("{} must be in {}..{} (got {})", f.name, f.min, f.max, value));
    }
    for (const int value : {f.min, f.max}) {
      RunConfig c = base;
      c.*f.member = value;
      const std::string m = ValidateRunConfig(c).message();
      EXPECT_EQ(m.find(std::string(f.name) + " must be in"), std::string::npos) << value << ": " << m;
    }
  }
  RunConfig most = base;
  most.producers = kMaxProducers;
  most.replicas = kMaxReplicas;
  EXPECT_TRUE(ValidateRunConfig(most).ok()) << ValidateRunConfig(most).ToString();
  most.replicas = 0;
  EXPECT_TRUE(ValidateRunConfig(most).ok()) << ValidateRunConfig(most).ToString();
}

TEST_F(SimulationTest, ExplicitPicksReplayTheScheduleWithoutTheSeed) {
  for (const ProtocolDef& p : Catalog()) {
    for (uint64_t seed : {2, 9}) {
      RunConfig c = RunConfig::For(p);
      c.seed = seed;
      c.keep_trace = true;
      RunResult original = Run(c);
      ASSERT_FALSE(original.picks.empty());
      c.seed = 12345;  // a different seed: every choice now comes from the picks
      c.picks = original.picks;
      c.fault_schedule = original.fired;
      RunResult replay = Run(c);
      EXPECT_EQ(replay.trace_hash, original.trace_hash) << p.name << " seed " << seed;
    }
  }
}

TEST_F(SimulationTest, APickThatCannotRunIsReportedAsDivergence) {
  RunConfig c = Config("txn-dedupe");
  c.picks = {"w1", "w1", "w1", "p1", "w9"};
  RedisServer* server = StartServer();
  Result<RunResult> r = RunSimulation(c, server);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "replay diverged")) << r.status().message();
}

// Every catalog protocol, run by its C++ handler and by the declarative
// interpreter from the same step list, sends the same commands.
TEST_F(SimulationTest, CppAndDeclarativeFormsGiveTheSameTraces) {
  for (const ProtocolDef& p : Catalog()) {
    RunConfig cpp = RunConfig::For(p);
    RunConfig declarative = cpp;
    declarative.protocol.cpp_handler = nullptr;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      cpp.seed = declarative.seed = seed;
      RunResult a = Run(cpp);
      RunResult b = Run(declarative);
      EXPECT_EQ(a.trace_hash, b.trace_hash) << p.name << " seed " << seed;
      EXPECT_EQ(a.observed, b.observed) << p.name << " seed " << seed;
    }
  }
}

// Issue #3/#4 acceptance: every broken catalog protocol reaches its expected
// verdict within 100 seeds at default settings; correct ones stay clean.
class CatalogVerdictTest : public SimulationTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(CatalogVerdictTest, ReachesItsExpectedVerdict) {
  // racy-trim's race needs the PEL to drain between two events, which one
  // run at the default timing (an event every 5 ms) does not give; check's
  // swarm timing finds it within a few cases (search_test.cc).
  if (GetParam() == "racy-trim") GTEST_SKIP() << "found by check's swarm timing, see search_test.cc";
  RunConfig c = Config(GetParam());
  bool expect_ok = c.expected.kind == VerdictKind::kOk;
  int seeds = expect_ok ? 300 : 100;  // issues #3 and #4: ok ones stay clean for 300 seeds
  int matched = 0;
  uint64_t first_match = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
    c.seed = seed;
    RunResult r = Run(c);
    EXPECT_TRUE(r.notes.empty()) << GetParam() << " seed " << seed << ": " << r.notes[0];
    if (expect_ok) {
      EXPECT_TRUE(r.matched) << GetParam() << " seed " << seed << " observed " << r.observed << ": "
                             << (r.violations.empty() ? "" : r.violations[0].detail);
      if (!r.matched) return;
    } else if (r.matched) {
      ++matched;
      first_match = seed;
      break;
    }
  }
  if (!expect_ok) {
    EXPECT_GT(matched, 0) << GetParam() << " never showed " << c.expected.ToString() << " in "
                          << seeds << " seeds";
    RecordProperty("first_matching_seed", static_cast<int>(first_match));
  }
}

std::vector<std::string> CatalogNamesList() {
  std::vector<std::string> names;
  for (const ProtocolDef& p : Catalog()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Catalog, CatalogVerdictTest, ::testing::ValuesIn(CatalogNamesList()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace xackly
