// Every malformed scenario gives one line that says where (file:line), which
// field, what was expected and what the file had. Nothing else happens.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "sim/faults.h"
#include "sim/protocol.h"
#include "sim/simulation.h"
#include "sim/verdict.h"
#include "tests/rc_cases.h"

namespace xackly {
namespace {

struct ErrorCase {
  std::string name;
  std::string text;
  std::string want;     // the whole message, or its start when !exact
  bool exact = true;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

const char kLoopKeys[] =
    "read_count, read_own_pending_at_start, claim, claim_min_idle_ms, claim_count, "
    "claim_every_ms, block_ms, ack, on_deleted, dead_letter_after, dead_letter_order";

std::vector<ErrorCase> Cases() {
  const std::string kSteps = "ack, check-done, mark-done, effect, begin, commit";
  return {
      {"TomlSyntax", "protocol = \"no-dedupe\"\nseed = \n",
       "bad.toml:2: seed: invalid TOML: ", false},
      {"RedefinedProtocol", "protocol = \"no-dedupe\"\n[protocol]\nsteps = [\"ack\"]\n",
       "bad.toml:2: invalid TOML: ", false},
      {"UnknownStep",
       "# a typo in the third step\n[protocol]\nsteps = [\n  \"begin\",\n  \"mark-done\",\n"
       "  \"efect\",\n  \"commit\",\n]\ndedupe = \"sql\"\n",
       "bad.toml:6: protocol.steps[2]: unknown step 'efect' (valid: " + kSteps + ")"},
      {"StepNotAString", "[protocol]\nsteps = [\"effect\", 3]\n",
       "bad.toml:2: protocol.steps[1]: expected a step (" + kSteps + "), got 3"},
      {"UnknownCatalogProtocol", "seed = 2\nprotocol = \"txn-dedup\"\n",
       "bad.toml:2: protocol: unknown catalog protocol 'txn-dedup' (valid: " + CatalogNames() + ")"},
      {"UnknownBase", "[protocol]\nbase = \"txn\"\n",
       "bad.toml:2: protocol.base: unknown catalog protocol 'txn' (valid: " + CatalogNames() + ")"},
      {"MissingProtocol", "seed = 3\n[workload]\nworkers = 2\n",
       "bad.toml:1: protocol: expected a catalog protocol name (" + CatalogNames() +
           ") or an inline [protocol] table, got nothing"},
      {"ProtocolOfWrongType", "protocol = 7\n",
       "bad.toml:1: protocol: expected a catalog protocol name (", false},
      {"InlineWithoutSteps", "seed = 1\n\n[protocol]\nname = \"p\"\n",
       "bad.toml:3: protocol.steps: expected an array of steps (" + kSteps +
           ") when there is no base, got nothing"},
      {"NegativeEvents", "protocol = \"no-dedupe\"\n\n[workload]\nevents = -3\n",
       "bad.toml:4: workload.events: expected an integer >= 1, got -3"},
      {"TooManyWorkers", "protocol = \"no-dedupe\"\n[workload]\nworkers = 65\n",
       "bad.toml:3: workload.workers: expected an integer <= 64, got 65"},
      {"StringWhereIntExpected", "protocol = \"no-dedupe\"\n[workload]\nworkers = \"three\"\n",
       "bad.toml:3: workload.workers: expected an integer in 1..64, got 'three'"},
      {"FloatWhereIntExpected", "protocol = \"no-dedupe\"\n[timing]\nstep_ms = 1.5\n",
       "bad.toml:3: timing.step_ms: expected an integer in 1..31536000000, got 1.5"},
      {"RateAboveOne", "protocol = \"no-dedupe\"\n[faults]\ncrash_rate = 1.5\n",
       "bad.toml:3: faults.crash_rate: expected a number in 0..1, got 1.5"},
      {"NegativeRate", "protocol = \"no-dedupe\"\n[faults]\nlost_reply_rate = -0.01\n",
       "bad.toml:3: faults.lost_reply_rate: expected a number in 0..1, got -0.01"},
      {"RateAsString", "protocol = \"no-dedupe\"\n[faults]\nstall_rate = \"3%\"\n",
       "bad.toml:3: faults.stall_rate: expected a number in 0..1, got '3%'"},
      {"UnknownFaultKind", "protocol = \"no-dedupe\"\n[faults]\nkinds = [\"crash\", \"partition\"]\n",
       "bad.toml:3: faults.kinds[1]: unknown fault kind 'partition' (valid: crash, stall, "
       "lost-request, lost-reply, error-reply, replica-lag, xdel, xtrim, restart, save, delconsumer, clock-jump, "
       "store-outage, failover, poison)"},
      {"UnknownCrashPoint", "protocol = \"no-dedupe\"\n[faults]\ncrash_points = [\"after-efect\"]\n",
       "bad.toml:3: faults.crash_points[0]: unknown crash point 'after-efect' (valid: after-read, ",
       false},
      {"BadXtrimTarget", "protocol = \"no-dedupe\"\n[faults]\nxtrim_target = \"maxlen:x\"\n",
       "bad.toml:3: faults.xtrim_target: expected maxlen:N or minid:last-delivered, got 'maxlen:x'"},
      {"BadFaultSpecLine",
       "protocol = \"no-dedupe\"\n[schedule]\nfaults = [\n  \"crash w1 after-effect #1\",\n"
       "  \"crash w1 after-efect #1\",\n]\n",
       "bad.toml:5: schedule.faults[1]: " +
           ParseFaultSpec("crash w1 after-efect #1").status().message()},
      {"FaultsNotAnArray", "protocol = \"no-dedupe\"\n[schedule]\nfaults = \"crash w1 after-effect #1\"\n",
       "bad.toml:3: schedule.faults: expected an array of fault strings like \"crash w1 after-effect #1\", got "
       "'crash w1 after-effect #1'"},
      {"FaultForAWorkerTheRunLacks",
       "protocol = \"no-dedupe\"\n[schedule]\nfaults = [\"crash w9 after-effect #1\"]\n",
       "bad.toml:3: schedule.faults[0]: expected an actor of this run (p1, w1..w3), got 'w9' "
       "in 'crash w9 after-effect #1'"},
      {"PickOfAnActorTheRunLacks",
       "protocol = \"no-dedupe\"\n[workload]\nworkers = 2\n[schedule]\npicks = \"p1 w1 w3\"\n",
       "bad.toml:5: schedule.picks: expected an actor of this run (p1, w1..w2), got 'w3' as pick 3"},
      {"JanitorPickWithoutJanitor", "protocol = \"no-dedupe\"\n[schedule]\npicks = \"j1\"\n",
       "bad.toml:3: schedule.picks: expected an actor of this run (p1, w1..w3), got 'j1' as pick 1"},
      {"BadExpect", "protocol = \"no-dedupe\"\nexpect = \"dupe\"\n",
       "bad.toml:2: expect: 'dupe': 'dupe' is not a verdict kind (kinds: " + VerdictKindList() +
           "; combine with + and |, e.g. \"lost|stuck\", \"duplicate+pel-leak\")"},
      {"OkWithCause", "protocol = \"no-dedupe\"\nexpect = \"ok:crash\"\n",
       "bad.toml:2: expect: 'ok:crash': ok takes no cause"},
      {"UnknownCause", "protocol = \"no-dedupe\"\nexpect = \"lost:typo-cause\"\n",
       "bad.toml:2: expect: 'lost:typo-cause': 'typo-cause' is not a cause of lost (known: ", false},
      {"ShortTraceHash", "protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9ca6e72d\"\n",
       "bad.toml:3: schedule.trace_hash: expected 16 hex digits, got '9ca6e72d'"},
      {"NonHexTraceHash", "protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = \"9ca6e72d056edazz\"\n",
       "bad.toml:3: schedule.trace_hash: expected 16 hex digits, got '9ca6e72d056edazz'"},
      {"IntegerTraceHash", "protocol = \"no-dedupe\"\n[schedule]\ntrace_hash = 1234567890123456\n",
       "bad.toml:3: schedule.trace_hash: expected 16 hex digits, got 1234567890123456"},
      {"ServerHashesNotATable", "protocol = \"no-dedupe\"\n[schedule]\nserver_hashes = \"0c1f9e2a7d3b4c55\"\n",
       "bad.toml:3: schedule.server_hashes: expected a table of server = hash, like { \"valkey 8.0.1\" = "
       "\"0c1f9e2a7d3b4c55\" }"},
      {"ShortServerHash", "protocol = \"no-dedupe\"\n[schedule]\nserver_hashes = { \"valkey 8.0.1\" = \"0c1f\" }\n",
       "bad.toml:3: schedule.server_hashes.'valkey 8.0.1': expected 16 hex digits, got '0c1f'"},
      {"UnnamedServerHash", "protocol = \"no-dedupe\"\n[schedule]\nserver_hashes = { \"\" = \"0c1f9e2a7d3b4c55\" }\n",
       "bad.toml:3: schedule.server_hashes: a server name is empty: name it as a report does, like \"valkey 8.0.1\""},
      {"BeginWithoutCommit",
       "name = \"open\"\n[protocol]\nname = \"open-txn\"\ndedupe = \"sql\"\n"
       "steps = [\"begin\", \"mark-done\", \"effect\", \"ack\"]\n",
       "bad.toml:5: protocol.steps: begin without commit"},
      {"TtlWithoutRedisDedupe",
       "[protocol]\ndedupe = \"sql\"\ndedupe_ttl_ms = 1000\nsteps = [\"mark-done\", \"effect\", \"ack\"]\n",
       "bad.toml:3: protocol.dedupe_ttl_ms: dedupe_ttl_ms needs dedupe = \"redis\" (SQL rows do "
       "not expire)"},
      {"StepErrorAtItsStep",
       "[protocol]\ndedupe = \"none\"\nsteps = [\n  \"mark-done\",\n  \"effect\",\n]\n",
       "bad.toml:4: protocol.steps[0]: step 1 (mark-done): needs a dedupe store (dedupe = \"sql\" or \"redis\")"},
      {"LoopKeyUnderProtocol", "[protocol]\nsteps = [\"effect\", \"ack\"]\nclaim_min_idle_ms = 5\n",
       "bad.toml:3: protocol.claim_min_idle_ms: unknown key in [protocol]: it belongs under [protocol.loop]"},
      {"BadProtocolName", "[protocol]\nname = \"a b\"\nsteps = [\"effect\", \"ack\"]\n",
       "bad.toml:2: protocol.name: expected a name of 1..128 characters A-Z a-z 0-9 . _ - (not starting "
       "with . or -), got 'a b'"},
      {"SeedAsFloat", "protocol = \"no-dedupe\"\nseed = 1e3\n",
       "bad.toml:2: seed: expected an integer >= 0 (or a decimal string for seeds above 2^63-1), "
       "got 1000.0 (a floating-point number)"},
      {"IntegerOverflowNamesTheField", "protocol = \"no-dedupe\"\n[workload]\nevents = 99999999999999999999\n",
       "bad.toml:3: workload.events: invalid TOML: ", false},
      {"TypoInWorkloadKey", "protocol = \"no-dedupe\"\n[workload]\nworkers = 2\nevnets = 3\n",
       "bad.toml:4: workload.evnets: unknown key; did you mean events? (valid: producers, workers, handlers, events, restart_naming)"},
      {"UnknownTable", "protocol = \"no-dedupe\"\n\n[fautls]\nkinds = []\n",
       "bad.toml:3: fautls: unknown key; did you mean faults? (valid: protocol, name, description, origin, expect, seed, "
       "server, workload, timing, faults, schedule, embedded, groups)"},
      // [[groups]]: further consumer groups, each mistake at its own line.
      {"GroupsWithoutAScript", "protocol = \"no-dedupe\"\n[[groups]]\nname = \"indexer\"\n",
       "bad.toml:2: groups: further consumer groups need a protocol script ([protocol] script): each group's "
       "workers run a function of it"},
      {"GroupWithoutAName", "[protocol]\nscript = \"c.lua\"\n[[groups]]\nworkers = 2\n",
       "bad.toml:3: groups[0].name: expected the group's name (a string), got nothing"},
      {"NoHandlerLanes", "protocol = \"txn-dedupe\"\n[workload]\nhandlers = 0\n",
       "bad.toml:3: workload.handlers: expected an integer >= 1, got 0"},
      {"HandlerLanesOfACatalogProtocol", "protocol = \"txn-dedupe\"\n[workload]\nhandlers = 2\n",
       "bad.toml:3: workload.handlers: handler lanes need a Lua protocol script ([protocol] script): each lane "
       "runs its function (a real consumer's command runs its own pool)"},
      {"GroupNamedLikeTheRunsOwn", "[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"workers\"\n",
       "bad.toml:4: groups[0].name: 'workers' is taken (the run's own group is 'workers'; each group once)"},
      {"GroupDeclaredTwice",
       "[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"idx\"\n[[groups]]\nname = \"idx\"\n",
       "bad.toml:6: groups[1].name: 'idx' is taken (the run's own group is 'workers'; each group once)"},
      {"GroupNameWithASpace", "[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"search index\"\n",
       "bad.toml:4: groups[0].name: must be 1..64 printable characters without spaces (got 'search index')"},
      {"GroupWithNoWorkers", "[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"idx\"\nworkers = 0\n",
       "bad.toml:5: groups[0].workers: expected an integer >= 1, got 0"},
      {"GroupTypo", "[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"idx\"\nfunction = \"f\"\n",
       "bad.toml:5: groups[0].function: unknown key", false},
      {"GroupsAsATable", "[protocol]\nscript = \"c.lua\"\n[groups]\nname = \"idx\"\n",
       "bad.toml:3: groups: expected [[groups]] tables", false},
      {"TooManyWorkersInAll",
       "[protocol]\nscript = \"c.lua\"\n[workload]\nworkers = 60\n[[groups]]\nname = \"idx\"\nworkers = 5\n",
       "bad.toml:4: workload.workers: ", false},
      {"UnknownKeyInLoop",
       "[protocol]\nsteps = [\"effect\", \"ack\"]\n[protocol.loop]\nclaim_min_idle = 5\n",
       std::string("bad.toml:4: protocol.loop.claim_min_idle: unknown key (valid: ") + kLoopKeys + ")"},
      {"UnknownKeyInSchedule", "protocol = \"no-dedupe\"\n[schedule]\npick = \"w1\"\n",
       "bad.toml:3: schedule.pick: unknown key; did you mean picks? (valid: faults, picks, trace_hash, server, server_hashes)"},
      {"FiveReplicas", "protocol = \"no-dedupe\"\n[server]\nreplicas = 5\n", "bad.toml:3: server.replicas: ", false},
      {"FailoverWithoutAReplica", "protocol = \"no-dedupe\"\n[faults]\nkinds = [\"failover\"]\n",
       "bad.toml:3: faults.kinds: failover needs a replica to promote: set [server] replicas = 1"},
      {"ProducerWaitsWithoutAReplica", "protocol = \"no-dedupe\"\n[server]\nproducer_waits = false\n",
       "bad.toml:3: server.producer_waits: false changes nothing without a replica (the producer waits for one "
       "only when there is one): set [server] replicas = 1, or leave producer_waits out"},
      {"UnknownPersistence", "protocol = \"no-dedupe\"\n[server]\npersistence = \"aof\"\n",
       "bad.toml:3: server.persistence: unknown persistence mode 'aof' (valid: none, rdb, aof-always)"},
      {"StringWhereBoolExpected",
       "[protocol]\nsteps = [\"effect\", \"ack\"]\n[protocol.loop]\nclaim = \"yes\"\n",
       "bad.toml:4: protocol.loop.claim: expected true or false, got 'yes'"},
      {"ValueWhereTableExpected", "protocol = \"no-dedupe\"\nworkload = 3\n",
       "bad.toml:2: workload: expected a table [workload], got 3"},
      {"NegativeSeed", "protocol = \"no-dedupe\"\nseed = -1\n",
       "bad.toml:2: seed: expected an integer >= 0 (or a decimal string for seeds above 2^63-1), "
       "got -1"},
      {"EmptyName", "protocol = \"no-dedupe\"\nname = \"\"\n",
       "bad.toml:2: name: expected a name of 1..128 characters A-Z a-z 0-9 . _ - (not starting "
       "with . or -), got ''"},
      {"ZeroClaimCount", "[protocol]\nsteps = [\"effect\", \"ack\"]\nloop = { claim_count = 0 }\n",
       "bad.toml:3: protocol.loop.claim_count: expected an integer >= 1, got 0"},
      {"UnknownHandlerForm", "[protocol]\nsteps = [\"effect\", \"ack\"]\nhandler = \"java\"\n",
       "bad.toml:3: protocol.handler: unknown handler form 'java' (valid: steps, c++)"},
      {"CppHandlerWithAScript", "[protocol]\nscript = \"consumer.lua\"\nhandler = \"c++\"\n",
       "bad.toml:3: protocol.handler: expected \"steps\" or no handler key with a script (the script is "
       "the handler), got \"c++\""},
      {"CommandNotAnArray", "[protocol]\ncommand = \"python3 consumer.py\"\n",
       "bad.toml:2: protocol.command: expected an array of 1..64 strings: the program and its arguments",
       false},
      {"CommandWithAnEmptyProgram", "[protocol]\ncommand = [\"\", \"consumer.py\"]\n",
       "bad.toml:2: protocol.command: expected an array of 1..64 strings", false},
      {"CommandAndScript", "[protocol]\nscript = \"consumer.lua\"\ncommand = [\"python3\"]\n",
       "bad.toml:3: protocol.command: expected either a script or a command, got both"},
      // The item of a list named by its index: the second one here.
      {"ScriptSiteInLowerCaseAtItsIndex",
       "protocol = \"no-dedupe\"\n[faults]\ncrash_points = [\"after-read\", \"after-xack\"]\n",
       "bad.toml:3: faults.crash_points[1]: unknown crash point 'after-xack': did you mean 'after-XACK'?", false},
  };
}

class ScenarioErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ScenarioErrorTest, NamesLineFieldAndProblemOnOneLine) {
  const ErrorCase& c = GetParam();
  Result<Scenario> s = ParseScenario(c.text, "bad.toml");
  ASSERT_FALSE(s.ok()) << "parsed:\n" << c.text;
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  const std::string m = s.status().message();
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  if (c.exact) {
    EXPECT_EQ(m, c.want);
  } else {
    EXPECT_EQ(m.substr(0, c.want.size()), c.want) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, ScenarioErrorTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& p) { return p.param.name; });

TEST(ScenarioErrors, AGroupTooBigBesideTheRunsOwnWorkersSaysSoNotAGarbledField) {
  // 3 workers of the run's own group (the default) + 64: over the limit of
  // all groups together, said about the workers, not as a group field.
  Result<Scenario> s =
      ParseScenario("[protocol]\nscript = \"c.lua\"\n[[groups]]\nname = \"idx\"\nworkers = 64\n", "bad.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("workload.workers: with every group's workers they must add up to at most 64 "
                                      "(got 67)"),
            std::string::npos)
      << s.status().message();
}

TEST(ScenarioErrors, TheFirstProblemInTheFileIsReported) {
  // Two typos in one table: the earlier line wins, whatever the key order.
  Result<Scenario> s =
      ParseScenario("protocol = \"no-dedupe\"\n[workload]\nzz = 1\naa = 2\n", "two.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind("two.toml:3: workload.zz: unknown key", 0), 0u)
      << s.status().message();
}

TEST(ScenarioErrors, LongValuesAreCutAndControlCharactersEscaped) {
  std::string name(200, 'x');
  Result<Scenario> s = ParseScenario("protocol = \"" + name + "\\nmore\"\n", "long.toml");
  ASSERT_FALSE(s.ok());
  const std::string m = s.status().message();
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_NE(m.find("'" + std::string(60, 'x') + "...'"), std::string::npos) << m;
  EXPECT_LT(m.size(), 200u + CatalogNames().size());
}

// The number keys of one scenario table, read off its schema description
// (scenarios/schema.h), so that a key added there is tested here unedited.
struct NumberKeys {
  struct Integer {
    std::string key;
    int64_t min, max;
  };
  std::vector<Integer> durations;  // Int keys ending in _ms
  std::vector<Integer> counts;     // every other Int key
  std::vector<std::string> rates;  // Rate keys (0..1)

  template <typename T, typename S>
  void Int(const char* key, T S::*, int64_t min, int64_t max, const char*) {
    const std::string k = key;
    max = std::min<int64_t>(max, std::numeric_limits<T>::max());  // as TableReader::Int
    (k.size() > 3 && k.ends_with("_ms") ? durations : counts).push_back({k, min, max});
  }
  template <typename M>
  void Rate(const char* key, M, const char*) {
    rates.emplace_back(key);
  }
  template <typename... A>
  void Bool(A&&...) {}
  template <typename... A>
  void Enum(A&&...) {}
  template <typename... A>
  void EnumList(A&&...) {}
  template <typename... A>
  void EnumSet(A&&...) {}
  template <typename... A>
  void Names(A&&...) {}
  template <typename... A>
  void Text(A&&...) {}
};

// A table of a scenario, the text that opens it, and its number keys.
struct NumberTable {
  std::string path;  // "faults", "protocol.loop"
  std::string head;  // a valid scenario up to and including the table's header
  NumberKeys keys;
};

template <typename Describe>
NumberTable TableOf(std::string path, std::string head, Describe describe) {
  NumberTable t{std::move(path), std::move(head), {}};
  describe(t.keys);
  return t;
}

std::vector<NumberTable> NumberTables() {
  namespace s = scenario_schema;
  const std::string inline_protocol = "[protocol]\nsteps = [\"effect\", \"ack\"]\n";
  return {
      TableOf("workload", "protocol = \"no-dedupe\"\n[workload]\n", [](NumberKeys& k) { s::DescribeWorkload(k); }),
      TableOf("faults", "protocol = \"no-dedupe\"\n[faults]\n", [](NumberKeys& k) { s::DescribeFaults(k); }),
      TableOf("timing", "protocol = \"no-dedupe\"\n[timing]\n", [](NumberKeys& k) { s::DescribeTiming(k); }),
      TableOf("protocol", inline_protocol, [](NumberKeys& k) { s::DescribeProtocol(k); }),
      TableOf("protocol.loop", inline_protocol + "[protocol.loop]\n", [](NumberKeys& k) { s::DescribeLoop(k); }),
      TableOf("protocol.janitor", inline_protocol + "[protocol.janitor]\n",
              [](NumberKeys& k) { s::DescribeJanitor(k); }),
  };
}

// `key = value` as the last line of `t`: the message, "" when it parses.
std::string ParseLast(const NumberTable& t, const std::string& key, const std::string& value) {
  Result<Scenario> s = ParseScenario(t.head + key + " = " + value + "\n", "bad.toml");
  return s.ok() ? "" : s.status().message();
}

// The start of the message that names the file, line and field of `key`.
std::string Where(const NumberTable& t, const std::string& key) {
  const auto line = std::count(t.head.begin(), t.head.end(), '\n') + 1;
  return fmt::format("bad.toml:{}: {}.{}: ", line, t.path, key);
}

// A rate is a probability: NaN, an infinity or a number outside 0..1 would
// silently become another rate (NaN: 0, never firing), so each is refused
// at its file, line and field.
TEST(ScenarioNumberKeys, EveryRateRefusesNanInfinityAndNumbersOutside0To1) {
  int rates = 0;
  for (const NumberTable& t : NumberTables()) {
    for (const std::string& key : t.keys.rates) {
      ++rates;
      for (const char* ok : {"0", "1", "0.0", "1.0", "0.25", "1e-6"}) {
        EXPECT_EQ(ParseLast(t, key, ok), "") << t.path << "." << key << " = " << ok;
      }
      for (const char* bad : {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "-0.1", "1.5", "1.0000001", "-1", "2",
                              "\"0.5\"", "true"}) {
        const std::string m = ParseLast(t, key, bad);
        const std::string want = Where(t, key) + "expected a number in 0..1, got ";
        EXPECT_EQ(m.substr(0, want.size()), want) << t.path << "." << key << " = " << bad << ": " << m;
      }
    }
  }
  EXPECT_EQ(rates, 6)
      << "crash, stall, lost-request, lost-reply, error-reply and replica-lag rates: a schema change, update this count";
}

// A duration is an integer number of virtual milliseconds in its key's
// range, a count an integer in its: NaN, an infinity, a fraction or a
// number out of range is refused at its file, line and field, whatever the
// table, and both ends of the range are taken.
TEST(ScenarioNumberKeys, EveryIntegerKeyRefusesNanInfinityFractionsAndNumbersOutOfRangeAndTakesItsEnds) {
  int durations = 0, counts = 0;
  for (const NumberTable& t : NumberTables()) {
    std::vector<std::pair<const NumberKeys::Integer*, int*>> keys;
    for (const NumberKeys::Integer& d : t.keys.durations) keys.emplace_back(&d, &durations);
    for (const NumberKeys::Integer& c : t.keys.counts) keys.emplace_back(&c, &counts);
    for (const auto& [key, tally] : keys) {
      const NumberKeys::Integer& d = *key;
      ++*tally;
      SCOPED_TRACE(t.path + "." + d.key);
      // The range's ends are values of the key; a scenario may still refuse
      // them for another reason (dedupe_ttl_ms without a Redis dedupe store;
      // a step_ms whose run would outlast 100 years), never as the value.
      for (int64_t ok : {d.min, d.max}) {
        const std::string m = ParseLast(t, d.key, std::to_string(ok));
        EXPECT_EQ(m.find("expected"), std::string::npos) << ok << ": " << m;
      }
      for (const std::string& bad : {std::string("nan"), std::string("inf"), std::string("-inf"), std::string("1.5"),
                                     std::to_string(d.min - 1), std::to_string(d.max + 1), std::string("\"10\"")}) {
        const std::string m = ParseLast(t, d.key, bad);
        const std::string want = Where(t, d.key) + "expected an integer ";
        EXPECT_EQ(m.substr(0, want.size()), want) << bad << ": " << m;
      }
    }
  }
  EXPECT_GE(durations, 15) << "the schema's _ms keys were not found";
  EXPECT_GE(counts, 8) << "the schema's count keys were not found";
}

// The scenario schema and the run's validation (ForEachNumberField, which
// also serves a RunConfig built in C++) bound every number alike: a key
// whose range differs would be taken by one and refused by the other.
TEST(ScenarioNumberKeys, EveryBoundedNumberOfARunHasTheSameRangeInTheScenarioSchema) {
  std::map<std::string, NumberKeys::Integer> schema;
  for (const NumberTable& t : NumberTables()) {
    for (const auto* list : {&t.keys.durations, &t.keys.counts}) {
      for (const NumberKeys::Integer& i : *list) schema[t.path + "." + i.key] = i;
    }
  }
  int fields = 0;
  const RunConfig config;
  ForEachNumberField(config, [&](const char* path, const auto&, int64_t min, int64_t max) {
    ++fields;
    auto it = schema.find(path);
    ASSERT_NE(it, schema.end()) << path << " is no number key of a scenario file";
    EXPECT_EQ(it->second.min, min) << path;
    EXPECT_EQ(it->second.max, max) << path;
  });
  EXPECT_GE(fields, 25);
}

// A value no number key takes: NaN or an infinity in any spelling, and for
// an integer key a fraction, an exponent, a string, or an integer past
// either end of its range (as far as TOML's 64-bit integers reach); for a
// rate a number below 0 or above 1.
rc::Gen<std::string> AnyBadValue(const NumberKeys::Integer* integer) {
  const auto non_finite = rc::gen::elementOf(std::vector<std::string>{"nan", "+nan", "-nan", "inf", "+inf", "-inf"});
  const auto quoted = rc::gen::map(rc::gen::arbitrary<int>(), [](int n) { return fmt::format("\"{}\"", n); });
  if (integer == nullptr) {
    const auto below = rc::gen::map(rc::gen::inRange<int64_t>(1, 1'000'000'000'000),
                                    [](int64_t n) { return fmt::format("-{}e-6", n); });
    const auto above = rc::gen::map(rc::gen::inRange<int64_t>(1, 1'000'000'000'000),
                                    [](int64_t n) { return fmt::format("{}", 1.0 + static_cast<double>(n) * 1e-6); });
    return rc::gen::oneOf(non_finite, quoted, below, above, rc::gen::just(std::string("true")));
  }
  const int64_t min = integer->min, max = integer->max;
  const auto fraction = rc::gen::map(rc::gen::inRange<int64_t>(min, std::min<int64_t>(max, min + 1'000'000)),
                                     [](int64_t n) { return fmt::format("{}.5", n); });
  const auto exponent = rc::gen::map(rc::gen::inRange(1, 19), [](int e) { return fmt::format("1e{}", e); });
  const auto below = rc::gen::map(rc::gen::inRange<int64_t>(std::numeric_limits<int64_t>::min(), min),
                                  [](int64_t n) { return std::to_string(n); });
  const auto above = rc::gen::map(rc::gen::inRange<int64_t>(max, std::numeric_limits<int64_t>::max()),
                                  [](int64_t n) { return std::to_string(n + 1); });
  return rc::gen::oneOf(non_finite, quoted, fraction, exponent, below, above, rc::gen::just(std::to_string(min - 1)),
                        rc::gen::just(std::to_string(max + 1)));
}

// 2000 generated values (the count is the test's, RC_PARAMS gives only the
// seed), each for a key drawn from the schema's own tables (NumberTables:
// a key added to the schema is drawn unedited): a value out of the key's
// type or range is refused at its file, line and field, saying what the key
// takes; a value in range is never refused as the value.
TEST(ScenarioNumberKeys, EveryNumberKeyRefusesWhatItCannotHoldAndTakesItsRange) {
  struct Key {
    const NumberTable* table;
    std::string name;
    std::optional<NumberKeys::Integer> integer;  // none: a rate
  };
  const std::vector<NumberTable> tables = NumberTables();
  std::vector<Key> keys;
  for (const NumberTable& t : tables) {
    for (const auto* list : {&t.keys.durations, &t.keys.counts}) {
      for (const NumberKeys::Integer& i : *list) keys.push_back({&t, i.key, i});
    }
    for (const std::string& rate : t.keys.rates) keys.push_back({&t, rate, std::nullopt});
  }
  ASSERT_GE(keys.size(), 30u) << "the schema's number keys were not found";
  testing::CheckCases(2000, [&] {
    const Key& k = *rc::gen::elementOf(keys);
    const NumberKeys::Integer* integer = k.integer ? &*k.integer : nullptr;
    const std::string bad = *AnyBadValue(integer);
    const std::string refused = ParseLast(*k.table, k.name, bad);
    const std::string want =
        Where(*k.table, k.name) + (integer ? "expected an integer " : "expected a number in 0..1, got ");
    RC_LOG() << k.table->path << "." << k.name << " = " << bad << ": " << refused;
    RC_ASSERT(refused.substr(0, want.size()) == want);
    const std::string good = integer ? std::to_string(*rc::gen::inRange(integer->min, integer->max) + 1)
                                     : fmt::format("{}", *rc::gen::inRange(0, 1000001) * 1e-6);
    const std::string taken = ParseLast(*k.table, k.name, good);
    RC_LOG() << k.table->path << "." << k.name << " = " << good << ": " << taken;
    RC_ASSERT(taken.find("expected") == std::string::npos);
  });
}

}  // namespace
}  // namespace xackly
