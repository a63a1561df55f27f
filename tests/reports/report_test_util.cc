#include "tests/reports/report_test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "harness/redis_server.h"
#include "harness/results.h"
#include "harness/subprocess.h"
#include "sim/protocol.h"

namespace xackly::report {
namespace {

RedisServer* SharedServer() {
  // Started from the test's main thread on first use; stopped at exit.
  static std::unique_ptr<RedisServer> server = [] {
    RedisServerOptions options;
    options.clock_library = XACKLY_TEST_CLOCK_LIB;
    Result<std::unique_ptr<RedisServer>> started = RedisServer::Start(options);
    if (!started.ok()) {
      ADD_FAILURE() << "cannot start a server: " << started.status().ToString();
      return std::unique_ptr<RedisServer>();
    }
    return std::move(*started);
  }();
  return server.get();
}

}  // namespace

CaseReport CaseFromRun(const RunConfig& config, const RunResult& result) {
  CaseReport c = ToCaseReport(config, result, "");  // the harness's own conversion
  c.replay_file = fmt::format("/tmp/xackly-out/replay-{}-{}.toml", c.protocol, c.seed);
  c.replay_command = "xackly replay " + c.replay_file;
  return c;
}

CheckReport CheckFromCase(const RunConfig& config, const CaseReport& c) {
  CheckReport k;
  k.name = c.protocol;
  k.description = config.protocol.description;
  k.fault_model = config.faults.ToString();
  k.expected = c.expected;
  k.observed = c.observed;
  k.matched = c.matched;
  k.cases_run = 1;
  k.cases_failed = c.violations.empty() ? 0 : 1;
  if (!c.violations.empty()) {
    k.counterexample = c;
    k.counterexample_size = fmt::format("{} event(s), {} worker(s), {} fault(s), {} steps", c.events,
                                        c.workers, c.fired.size(), c.steps);
  }
  for (const std::string& site : c.coverage.enabled) {
    auto it = c.coverage.fired.find(site);
    const int n = it == c.coverage.fired.end() ? 0 : it->second;
    k.fired_totals[site] = n;
    if (n == 0) k.never_fired.push_back(site);
  }
  k.seconds = 0.25;
  return k;
}

Report ReportOf(std::vector<CheckReport> checks) {
  Report r;
  r.tool_version = "0.1.0";
  r.command = "check";
  r.command_line = "xackly check --seed 1 --format text,html";
  r.seed = 1;
  r.server_version = "redis 7.0.15";
  r.options = "workers=1 events=1 cases=1";
  r.all_matched = std::all_of(checks.begin(), checks.end(), &Passed);
  r.checks = std::move(checks);
  return r;
}

CaseReport RunCase(const std::string& protocol, int workers, int events, const std::string& fault) {
  return RunCase(protocol, workers, events, std::vector<std::string>{fault});
}

CaseReport RunCase(const std::string& protocol, int workers, int events, const std::vector<std::string>& faults) {
  RedisServer* server = SharedServer();
  if (server == nullptr) return {};
  const ProtocolDef* def = FindProtocol(protocol);
  if (def == nullptr) {
    ADD_FAILURE() << "no protocol " << protocol;
    return {};
  }
  RunConfig config = RunConfig::For(*def);
  config.workers = workers;
  config.events = events;
  config.keep_trace = true;
  config.fault_schedule.emplace();
  for (const std::string& fault : faults) {
    Result<FaultSpec> spec = ParseFaultSpec(fault);
    if (!spec.ok()) {
      ADD_FAILURE() << spec.status().ToString();
      return {};
    }
    config.fault_schedule->push_back(*spec);
  }
  Result<RunResult> result = RunSimulation(config, server);
  if (!result.ok()) {
    ADD_FAILURE() << "run failed: " << result.status().ToString();
    return {};
  }
  return CaseFromRun(config, *result);
}

const CaseReport& NoDedupeCase() {
  static const CaseReport c = RunCase("no-dedupe", 1, 1, "crash w1 after-effect #1");
  return c;
}

const CaseReport& AckFirstCase() {
  static const CaseReport c = RunCase("ack-first", 1, 1, "crash w1 after-ack #1");
  return c;
}

Report EverythingReport() {
  const std::string hostile =
      "q\"uote 'single' <tag> & amp | pipe `tick` \x1b[31mred\t tab\nnewline é ✓ c1:\xc2\x9b";
  CaseReport c;
  c.protocol = "hostile " + hostile;
  c.scenario_file = "scenarios/x.toml";
  c.seed = 18'446'744'073'709'551'615ULL;  // the largest seed there is
  c.producers = 2;
  c.workers = 3;
  c.events = 4;
  c.persistence = "aof-always";
  c.restart_naming = "fresh";
  c.expected = {VerdictKind::kLost, "payload-deleted"};
  c.observed = "duplicate+lost+pel-leak+stuck";
  c.matched = false;
  c.violations = {
      {VerdictKind::kStuck, "", "step-bound", "no quiescence", 0},
      {VerdictKind::kDuplicate, "order:1", "crash:after-effect", hostile, 2},
      {VerdictKind::kLost, "order:2", "payload-deleted", "gone", 0},
      {VerdictKind::kPelLeak, "order:3", "done-but-pending", "stays", 1, "search-indexer"},
      {VerdictKind::kOk, "order:4", "", "", 1},
  };
  c.trace_hash = "0123456789abcdef";
  c.steps = 1'234'567'890'123;
  c.virtual_ms = -5;
  for (int k = 0; k <= static_cast<int>(FaultKind::kPoison); ++k) {
    FaultSpec f;
    f.kind = static_cast<FaultKind>(k);
    f.actor = "w" + std::to_string(k);
    f.site = "after-effect";
    f.nth = k + 1;
    f.at_ms = 100 * k;
    f.duration_ms = 7 * k;
    f.target = "maxlen:2";
    f.event = k;
    c.fired.push_back(f);
  }
  c.coverage.fired = {{"crash@after-effect", 3}, {"xdel", 0}};
  c.coverage.enabled = {"crash@after-effect", "xdel", "lost-reply@XACK"};
  for (int k = 0; k <= static_cast<int>(kLastLineKind); ++k) {
    c.trace.push_back({k * 1000LL, "w" + std::to_string(k), static_cast<LineKind>(k),
                       "EVAL \"return '<x>'\" 0 " + hostile, k % 2 ? "" : "\"reply\" " + hostile});
  }
  for (int k = 0; k <= static_cast<int>(kLastLineEvent); ++k) {
    TraceLine& t = c.trace.emplace_back();
    t.t_ms = 5000 + k;
    t.actor = "w1";
    t.kind = LineKind::kFault;
    t.request = hostile;
    t.event = static_cast<LineEvent>(k);
    t.argv = {"EVAL", hostile, "0"};
    t.site = hostile;
    t.fault = "xdel";
    t.replaces = hostile;
    t.brought_by = hostile;
    t.duration_ms = k;
    t.waited_for = hostile + "w" + std::to_string(k);
    t.ids = {"1-0", "order:1"};
  }
  std::vector<HistoryItem> items;
  for (int k = 0; k <= static_cast<int>(kLastHistoryKind); ++k) {
    items.push_back({static_cast<HistoryKind>(k), k * 10LL, k % 7 - 1, "w1", "1-0", hostile, -k, hostile,
                     hostile, hostile, hostile, hostile, hostile, hostile, k % 2 == 0});
  }
  c.histories["order:1"] = items;
  c.histories["order:2"] = {};
  c.worker_groups["w3"] = "search-indexer";
  c.replay_file = "/tmp/replay \"x\".toml";
  c.replay_command = "xackly replay '/tmp/replay \"x\".toml' # " + hostile;

  CheckReport k;
  k.name = "check <one> & " + hostile;
  k.description = hostile;
  k.fault_model = "crash(after-effect) lost-reply(XACK)";
  k.expected = {VerdictKind::kDuplicate, "crash"};
  k.observed = "lost";
  k.matched = false;
  k.cases_run = 200;
  k.cases_failed = 17;
  k.other_violations = {{"lost", 3}, {"pel-leak+stuck", 1}};
  k.counterexample = c;
  k.counterexample_size = "1 event, 1 worker, 1 fault, 9 steps";
  k.shrink_steps = 11;
  k.first_hit_case = 37;
  k.fired_totals = {{"crash@after-effect", 40}, {"lost-reply@XACK", 0}};
  k.never_fired = {"lost-reply@XACK"};
  k.cases_unjudged = 5;
  k.cases_for_coverage = 9;
  k.coverage_gaps = {"lost-reply@XACK"};
  k.gaps_allowed = true;
  k.unfired_planned = {{"crash w1 after-effect #5", "w1 reached after-effect only 1 time while faults could fire; " + hostile}};
  k.seconds = 1.0 / 3.0;

  CheckReport plain;
  plain.name = "txn-dedupe";
  plain.expected = {VerdictKind::kOk, ""};
  plain.observed = "ok";
  plain.undecided = true;  // ok so far, but two cases of this shard were not judged
  plain.cases_run = 50;
  plain.cases_unjudged = 2;
  plain.fired_totals = {{"crash@after-commit", 4}};
  plain.seconds = 2.5;

  Report r;
  r.tool_version = "0.1.0-dev";
  r.command = "check";
  r.command_line = "xackly check --format json " + hostile;
  r.seed = 9'007'199'254'740'993ULL;  // not exact as a double
  r.server_version = "redis 7.0.15";
  r.options = "workers=3 events=4";
  r.checks = {k, plain};
  r.all_matched = false;
  r.shard = "2/3";
  r.search = {123, 5, 17, 2, true, false};  // every field off its default
  return r;
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

ToolOutput RunTool(const std::string& path, const std::vector<std::string>& args, int timeout_ms,
                   bool merge_stderr) {
  TempDir dir;
  SpawnOptions spawn;
  // Through sh only to drop stderr; the arguments are passed as "$@".
  spawn.path = "/bin/sh";
  spawn.args = {"-c", merge_stderr ? "exec \"$0\" \"$@\"" : "exec \"$0\" \"$@\" 2>/dev/null", path};
  spawn.args.insert(spawn.args.end(), args.begin(), args.end());
  spawn.env = EnvironmentWith({});
  spawn.output_path = dir.path() + "/output";
  ToolOutput result;
  Result<pid_t> pid = Spawn(spawn);
  if (!pid.ok()) {
    result.out = pid.status().ToString();
    return result;
  }
  int wait_status = 0;
  if (!WaitForExit(*pid, timeout_ms, &wait_status)) {
    ::kill(-*pid, SIGKILL);  // the tool's own process group (browsers fork helpers)
    KillAndReap(*pid);
    result.out = "timed out";
    return result;
  }
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  std::ifstream in(spawn.output_path);
  std::stringstream text;
  text << in.rdbuf();
  result.out = text.str();
  return result;
}

TempDir::TempDir() {
  char templ[] = "/tmp/xrep-XXXXXX";
  XACKLY_CHECK(::mkdtemp(templ) != nullptr);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(const std::string& name, const std::string& text) const {
  const std::string file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary);
  out << text;
  return file;
}

std::vector<size_t> Find(const std::vector<std::string>& story, const std::string& needle) {
  std::vector<size_t> out;
  for (size_t i = 0; i < story.size(); ++i) {
    if (story[i].find(needle) != std::string::npos) out.push_back(i);
  }
  return out;
}

void AppendIdenticalPolls(CaseReport* c, int n, int64_t step_ms) {
  const int64_t t = c->trace.back().t_ms;
  for (int i = 0; i < n; ++i) {
    TraceLine poll;
    poll.t_ms = t + 10 + step_ms * i;
    poll.actor = "j1";
    poll.kind = LineKind::kRedis;
    poll.request = "XPENDING events workers";
    poll.reply = "[1, \"0-1\", \"0-1\", [[\"w1\", \"1\"]]]";
    poll.argv = {"XPENDING", "events", "workers"};
    poll.ids = {"0-1"};
    c->trace.push_back(poll);
  }
}

}  // namespace xackly::report
