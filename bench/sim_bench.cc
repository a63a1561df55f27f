// What a simulated case costs, measured against baselines taken in the same
// run on the same server (started through the harness, virtual clock
// preloaded, like every xackly server). The standard case is the one
// `xackly check` runs most: txn-dedupe, 3 workers, 20 events, crash faults
// only, seeds 1..kSeeds in turn.
//
//   Sim/HarnessVsBare   the whole simulator (CaseExecutor::Run, that is
//       RunSimulation) against a bare loop that does the same physical work
//       and nothing else: the very same Redis commands, recorded from the
//       same seeds, through hiredis to the same server on one connection,
//       and the very same SQL statements (prepared, same bound values, in
//       the same order between the commands) on the same kind of store (a
//       SqlDatabase, sim/store.h). The loop starts with the same
//       ServerControl::Reset and writes the same clock values, so the
//       server does the same work and sends byte-identical replies, and
//       every statement returns what it returned in the case (both checked
//       before measuring). Paired: every iteration runs one case both ways,
//       alternating which goes first. Counter `ratio` = median of bare time
//       / harness time, i.e. harness rate / bare rate (goal >= 0.9): what
//       xackly adds (scheduling, faults, oracle, trace) is 1/ratio - 1.
//   Sim/ResetVsRestart  ServerControl::Reset (what CaseExecutor does
//       between cases) against CrashAndRestart (SIGKILL + start), Stop +
//       Restart (SHUTDOWN NOSAVE + start) and a whole new RedisServer::Start, each
//       after the same writes; `reset_round_trips` is counted by the server
//       (INFO stats), not by xackly.
//   Sim/ConnectVsPing   opening (and closing) one fresh connection, what
//       every actor incarnation would pay without the server's connection
//       pool, against one PING round trip.
//   Sim/Case/events:E/workers:W  cases per second, and time per event and
//       per step, as events (workers 3) and workers (events 20) grow.
//       Round trips per case, from RunResult and counted by the server, are
//       counters of the same benchmarks.
//
// Round-trip counters (per case):
//   proto_rt    RunResult::protocol_round_trips, what the actors sent
//   harness_rt  RunResult::harness_round_trips (setup, faults, oracle reads)
//   server_cmds commands the server executed for the case (INFO stats
//               total_commands_processed), including Reset's
//   connects    connections the server accepted for the case
//   rt_per_proto_rt  server_cmds / proto_rt
//
//   ./build/xackly_bench_sim                                   everything
//   ./build/xackly_bench_sim --benchmark_filter=HarnessVsBare  one part
//   ./build/xackly_bench_sim --benchmark_min_time=0.01         smoke (ctest)
//   ./build/xackly_bench_sim --no-pin                          the kernel places the
//                            benchmark thread and its servers (default: both bound
//                            to the CPU the benchmark starts on; printed first)
//   ./build/xackly_bench_sim --profile_cases=16                16 standard cases, nothing
//                            else, for a profiler: valgrind --tool=callgrind
//                            --toggle-collect='xackly::RunSimulation*' before it
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/bench_util.h"
#include "harness/case_executor.h"
#include "harness/hiredis_connection.h"
#include "harness/live_servers.h"
#include "harness/redis_server.h"
#include "sim/simulation.h"
#include "sim/store.h"

namespace xackly {
namespace {

using bench::Median;
using bench::NowSeconds;

constexpr uint64_t kSeeds = 8;  // the standard case cycles through seeds 1..kSeeds
constexpr int kStandardWorkers = 3;
constexpr int kStandardEvents = 20;

RunConfig StandardConfig(int workers, int events, uint64_t seed) {
  const ProtocolDef* protocol = FindProtocol("txn-dedupe");
  XACKLY_CHECK(protocol != nullptr);
  RunConfig config = RunConfig::For(*protocol);
  config.workers = workers;
  config.events = events;
  config.seed = seed;
  config.faults.kinds = {FaultKind::kCrash};
  // The fault phase the workload implies (about 2 s), not txn-dedupe's own
  // 45 s claim window, which adds idle claim rounds: the standard case stays
  // the one the README's figures were measured with.
  config.timing.fault_phase_ms = 0;
  return config;
}

// The executor every case benchmark shares (one server, reset between
// cases, as `xackly check` runs them), and a probe connection that reads
// the server's own counters.
struct Fixture {
  CaseExecutor executor{bench::ServerOptions()};
  RedisServer* server = nullptr;
  std::unique_ptr<Connection> probe;
};
std::unique_ptr<Fixture> g_fixture;

Result<Fixture*> SharedFixture() {
  if (g_fixture) return g_fixture.get();
  auto f = std::make_unique<Fixture>();
  Result<RedisServer*> server = f->executor.Server(Persistence::kNone);
  if (!server.ok()) return server.status();
  f->server = *server;
  Result<std::unique_ptr<Connection>> probe = f->server->Connect();
  if (!probe.ok()) return probe.status();
  f->probe = std::move(*probe);
  g_fixture = std::move(f);
  return g_fixture.get();
}

// What the server has counted since it started.
struct ServerCounts {
  int64_t commands = 0;     // total_commands_processed
  int64_t connections = 0;  // total_connections_received
};

// Reads the counts over `probe`. The INFO call itself counts as one command
// (it is counted after its reply is built), so a reading taken after n
// commands of others, since a previous reading, shows n + 1 more.
Result<ServerCounts> ReadCounts(Connection& probe) {
  Result<Reply> info = probe.Call({"INFO", "stats"});
  if (!info.ok()) return info.status();
  if (!info->is_string()) return Status::Internal("INFO stats replied " + info->Render());
  auto field = [&](std::string_view key) -> int64_t {
    const std::string& text = info->str();
    size_t at = text.find(fmt::format("\n{}:", key));
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 2));
  };
  ServerCounts c{field("total_commands_processed"), field("total_connections_received")};
  if (c.commands < 0 || c.connections < 0) return Status::Internal("INFO stats lacks a counter");
  return c;
}

// ---------------------------------------------------------------------------
// Recording the commands of a case.

// A business-store statement the case executed, with its bound values and
// what it returned.
struct RecordedSql {
  SqlStatement statement = SqlStatement::kBegin;
  std::string event_id, stream_id, consumer;
  int64_t t_ms = 0;
  SqlCallResult result;

  SqlCall call() const { return {statement, event_id, stream_id, consumer, t_ms}; }
  bool Returned(const SqlCallResult& r) const {
    return r.ok == result.ok && r.row == result.row && r.changes == result.changes;
  }
};

// One Redis command, or (when `sql` is set, argv empty) one SQL statement.
struct RecordedCall {
  std::vector<std::string> argv;
  int64_t clock_ms = 0;  // the server clock when the command was sent
  std::string reply;     // canonical rendering
  Reply::Type type = Reply::Type::kNil;
  bool pipelined_with_next = false;  // sent in one CallAll with the next call
  std::optional<RecordedSql> sql;
};

// A connection that logs every command it forwards, with the server clock
// at that moment and the reply.
class RecordingConnection final : public ConnectionWrapper {
 public:
  RecordingConnection(std::unique_ptr<Connection> target, const ServerControl* server,
                      std::vector<RecordedCall>* log)
      : ConnectionWrapper(std::move(target)), server_(server), log_(log) {}
  using Connection::Call;
  Result<Reply> Call(std::span<const std::string_view> argv) override {
    RecordedCall call{{argv.begin(), argv.end()}, server_->ClockMs(), "", Reply::Type::kNil};
    Result<Reply> reply = target().Call(argv);
    if (reply.ok()) {
      call.reply = reply->Render();
      call.type = reply->type();
    }
    log_->push_back(std::move(call));
    return reply;
  }
  // A pipelined batch is logged as its calls, chained by
  // pipelined_with_next, so the bare loop pipelines them too.
  Result<std::vector<Reply>> CallAll(std::span<const std::vector<std::string_view>> commands) override {
    const int64_t clock_ms = server_->ClockMs();
    Result<std::vector<Reply>> replies = target().CallAll(commands);
    for (size_t i = 0; i < commands.size(); ++i) {
      RecordedCall call{{commands[i].begin(), commands[i].end()}, clock_ms, "", Reply::Type::kNil,
                        i + 1 < commands.size()};
      if (replies.ok()) {
        call.reply = (*replies)[i].Render();
        call.type = (*replies)[i].type();
      }
      log_->push_back(std::move(call));
    }
    return replies;
  }

 private:
  const ServerControl* server_;
  std::vector<RecordedCall>* log_;
};

// The ServerControl a recorded case runs against: the real server, with
// every connection it hands out recording into one log, in send order.
class RecordingServer final : public ServerControl {
 public:
  explicit RecordingServer(RedisServer* target) : target_(target) {}
  Result<std::unique_ptr<Connection>> Connect() override {
    Result<std::unique_ptr<Connection>> conn = target_->Connect();
    if (!conn.ok()) return conn.status();
    return std::unique_ptr<Connection>(new RecordingConnection(std::move(*conn), target_, &log_));
  }
  void SetClockMs(int64_t epoch_ms) override { target_->SetClockMs(epoch_ms); }
  int64_t ClockMs() const override { return target_->ClockMs(); }
  Status Reset(int64_t start_epoch_ms) override { return target_->Reset(start_epoch_ms); }
  Status CrashAndRestart() override {
    return Status::FailedPrecondition("the benchmark's standard case has no server restarts");
  }
  Persistence persistence() const override { return target_->persistence(); }
  const ServerVersion& version() const override { return target_->version(); }

  std::vector<RecordedCall>& log() { return log_; }

 private:
  RedisServer* target_;
  std::vector<RecordedCall> log_;
};

// One recorded case, laid out for a bare hiredis loop: every command
// already formatted as its RESP request (by hiredis, before the clock
// starts), so the bare loop only hands bytes to hiredis and reads replies.
struct BareCase {
  std::vector<RecordedCall> calls;
  int64_t round_trips = 0;     // Redis calls among `calls`
  int64_t sql_statements = 0;  // the others
  std::vector<std::string> requests;  // RESP, by call; "" for SQL
  int64_t steps = 0;
  uint64_t trace_hash = 0;
};

BareCase Prepare(std::vector<RecordedCall> calls) {
  BareCase c;
  c.calls = std::move(calls);
  for (const RecordedCall& call : c.calls) {
    ++(call.sql ? c.sql_statements : c.round_trips);
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const std::string& arg : call.argv) {
      ptrs.push_back(arg.data());
      lens.push_back(arg.size());
    }
    char* request = nullptr;
    const int n = call.sql ? 0
                           : redisFormatCommandArgv(&request, static_cast<int>(ptrs.size()),
                                                    ptrs.data(), lens.data());
    c.requests.emplace_back(request != nullptr ? request : "", n > 0 ? n : 0);
    redisFreeCommand(request);
  }
  return c;
}

// Executes a recorded statement on `db`. Returns "" or how its result
// differs from the case's.
std::string ReplaySql(SqlDatabase& db, const RecordedSql& sql, size_t index) {
  const SqlCallResult r = db.Execute(sql.call());
  if (sql.Returned(r)) [[likely]] return "";
  return fmt::format("replayed SQL statement {} ({}) returned ok={} row={} changes={}, the case got "
                     "ok={} row={} changes={}",
                     index, static_cast<int>(sql.statement), r.ok, r.row, r.changes, sql.result.ok,
                     sql.result.row, sql.result.changes);
}

// Replays `c` on `bare` and `db` exactly as the case ran: the server's
// Reset, then every command and statement in order, writing the recorded
// clock value first when it changed. Each reply must have the recorded
// type, each statement the recorded result. Returns "" or what went wrong.
std::string ReplayBare(RedisServer& server, redisContext* bare, SqlDatabase& db, const BareCase& c) {
  if (Status s = server.Reset(kEpochMs); !s.ok()) return s.ToString();
  int64_t clock_ms = kEpochMs;
  for (size_t first = 0; first < c.calls.size();) {
    const RecordedCall& call = c.calls[first];
    if (call.sql) {
      if (std::string diff = ReplaySql(db, *call.sql, first); !diff.empty()) return diff;
      ++first;
      continue;
    }
    if (call.clock_ms != clock_ms) {
      server.SetClockMs(call.clock_ms);
      clock_ms = call.clock_ms;
    }
    // One round trip: the call, or the whole pipelined batch it starts.
    size_t end = first + 1;
    while (c.calls[end - 1].pipelined_with_next) ++end;
    for (size_t i = first; i < end; ++i) {
      redisAppendFormattedCommand(bare, c.requests[i].data(), c.requests[i].size());
    }
    for (size_t i = first; i < end; ++i) {
      void* raw = nullptr;
      if (redisGetReply(bare, &raw) != REDIS_OK || raw == nullptr) {
        return fmt::format("bare call {} failed: {}", i, bare->errstr);
      }
      auto* reply = static_cast<redisReply*>(raw);
      const Reply::Type type = bench::ReplyTypeOf(reply->type);
      freeReplyObject(reply);
      if (type != c.calls[i].type) {
        return fmt::format("bare call {} ({}) replied type {}, the case got {}", i,
                           c.calls[i].argv[0], static_cast<int>(type),
                           static_cast<int>(c.calls[i].type));
      }
    }
    first = end;
  }
  return "";
}

// Replays `c` through a Connection and a fresh SqlDatabase and compares
// every reply with the recorded one, byte for byte, and every statement's
// result: proof that the bare loop does the same work as the case. Returns
// "" or the first difference.
std::string VerifyReplay(RedisServer& server, const BareCase& c) {
  if (Status s = server.Reset(kEpochMs); !s.ok()) return s.ToString();
  Result<std::unique_ptr<Connection>> conn = server.Connect();
  if (!conn.ok()) return conn.status().ToString();
  SqlDatabase db;
  for (size_t i = 0; i < c.calls.size(); ++i) {
    const RecordedCall& call = c.calls[i];
    if (call.sql) {
      if (std::string diff = ReplaySql(db, *call.sql, i); !diff.empty()) return diff;
      continue;
    }
    if (call.clock_ms > server.ClockMs()) server.SetClockMs(call.clock_ms);
    std::vector<std::string_view> views(call.argv.begin(), call.argv.end());
    Result<Reply> reply = (*conn)->Call(views);
    if (!reply.ok()) return reply.status().ToString();
    if (reply->Render() != call.reply) {
      return fmt::format("replayed call {} ({}) replied {}, the case got {}", i, call.argv[0],
                         reply->Render(), call.reply);
    }
  }
  return "";
}

// Records seeds 1..kSeeds of the standard case, once per process.
Result<const std::vector<BareCase>*> StandardRecordings() {
  static std::optional<std::vector<BareCase>> recorded;
  if (recorded) return &*recorded;
  Result<Fixture*> f = SharedFixture();
  if (!f.ok()) return f.status();
  std::vector<BareCase> cases;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RecordingServer recorder((*f)->server);
    const SqlObserver record_sql = [&](const SqlCall& sql, const SqlCallResult& result) {
      RecordedCall call;
      call.sql = RecordedSql{sql.statement, std::string(sql.event_id), std::string(sql.stream_id),
                             std::string(sql.consumer), sql.t_ms, result};
      recorder.log().push_back(std::move(call));
    };
    ObserveSqlOnThisThread(&record_sql);
    Result<RunResult> run =
        RunSimulation(StandardConfig(kStandardWorkers, kStandardEvents, seed), &recorder);
    ObserveSqlOnThisThread(nullptr);
    if (!run.ok()) return run.status();
    BareCase c = Prepare(std::move(recorder.log()));
    const int64_t rt = run->protocol_round_trips + run->harness_round_trips;
    if (rt != c.round_trips || c.sql_statements == 0) {
      return Status::Internal(fmt::format(
          "seed {}: the case counts {} round trips, {} were recorded (and {} SQL statements)", seed,
          rt, c.round_trips, c.sql_statements));
    }
    c.steps = run->steps;
    c.trace_hash = run->trace_hash;
    if (std::string diff = VerifyReplay(*(*f)->server, c); !diff.empty()) {
      return Status::Internal(fmt::format("seed {}: {}", seed, diff));
    }
    cases.push_back(std::move(c));
  }
  recorded = std::move(cases);
  return &*recorded;
}

// ---------------------------------------------------------------------------
// Sim/HarnessVsBare

void BM_HarnessVsBare(benchmark::State& state) {
  Result<Fixture*> fixture = SharedFixture();
  if (!fixture.ok()) return state.SkipWithError(fixture.status().ToString().c_str());
  Result<const std::vector<BareCase>*> recorded = StandardRecordings();
  if (!recorded.ok()) return state.SkipWithError(recorded.status().ToString().c_str());
  Fixture& f = **fixture;
  redisContext* bare = redisConnectUnix(f.server->socket_path().c_str());
  if (bare == nullptr || bare->err != 0) {
    if (bare != nullptr) redisFree(bare);
    return state.SkipWithError("cannot connect the bare hiredis client");
  }
  SqlDatabase bare_db;  // the store's kind; a store reuses its database too

  std::vector<double> ratios;
  double wall[2] = {0, 0}, cpu[2] = {0, 0};  // [0] harness, [1] bare
  int64_t round_trips = 0, sql_statements = 0, steps = 0;
  std::string error;
  int64_t n = 0;
  for (auto _ : state) {
    const BareCase& c = (**recorded)[static_cast<size_t>(n % kSeeds)];
    const RunConfig config =
        StandardConfig(kStandardWorkers, kStandardEvents, static_cast<uint64_t>(n % kSeeds) + 1);
    double w[2], u[2];
    for (int k = 0; k < 2 && error.empty(); ++k) {
      const int side = static_cast<int>((n + k) % 2);
      const double wall_start = NowSeconds(CLOCK_MONOTONIC);
      const double cpu_start = NowSeconds(CLOCK_THREAD_CPUTIME_ID);
      if (side == 0) {
        Result<RunResult> run = f.executor.Run(config);
        if (!run.ok()) {
          error = run.status().ToString();
        } else if (run->trace_hash != c.trace_hash) {
          error = "the case is not the recorded one (trace hash differs)";
        }
      } else {
        error = ReplayBare(*f.server, bare, bare_db, c);
      }
      w[side] = NowSeconds(CLOCK_MONOTONIC) - wall_start;
      u[side] = NowSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    }
    if (!error.empty()) break;
    for (int side = 0; side < 2; ++side) {
      wall[side] += w[side];
      cpu[side] += u[side];
    }
    ratios.push_back(w[1] / w[0]);
    round_trips += c.round_trips;
    sql_statements += c.sql_statements;
    steps += c.steps;
    ++n;
  }
  redisFree(bare);
  if (!error.empty()) return state.SkipWithError(error.c_str());
  // Reset's own commands (sent by both sides) are not in the recording.
  const double rt = static_cast<double>(round_trips);
  state.counters["ratio"] = Median(ratios);
  state.counters["harness_rt/s"] = rt / wall[0];
  state.counters["bare_rt/s"] = rt / wall[1];
  state.counters["harness_steps/s"] = static_cast<double>(steps) / wall[0];
  state.counters["harness_cpu_us/rt"] = cpu[0] / rt * 1e6;
  state.counters["bare_cpu_us/rt"] = cpu[1] / rt * 1e6;
  state.counters["rt/case"] = rt / static_cast<double>(n);
  state.counters["sql/case"] = static_cast<double>(sql_statements) / static_cast<double>(n);
}

// ---------------------------------------------------------------------------
// Sim/ResetVsRestart

// Leaves the server holding what a case leaves: a stream with a group and
// pending entries, keys, and a cached script.
Status Dirty(Connection& conn) {
  Result<Reply> r = conn.Call(
      {"EVAL",
       "for i = 1, 20 do redis.call('XADD', KEYS[1], i .. '-1', 'event', 'order:' .. i) end "
       "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0') "
       "redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', KEYS[1], '>') "
       "for i = 1, 10 do redis.call('SET', 'done:' .. i, 1, 'PX', 60000) end "
       "return 1",
       "1", "events"});
  if (!r.ok()) return r.status();
  if (!r->is_integer()) return Status::Internal("setup replied " + r->Render());
  return Status::Ok();
}

void BM_ResetVsRestart(benchmark::State& state) {
  Result<std::unique_ptr<RedisServer>> started = RedisServer::Start(bench::ServerOptions());
  if (!started.ok()) return state.SkipWithError(started.status().ToString().c_str());
  std::unique_ptr<RedisServer> server = std::move(*started);
  enum { kReset, kCrashRestart, kStopRestart, kNewServer, kWays };
  std::vector<double> seconds[kWays];
  int64_t reset_commands = -1;
  std::string error;
  for (auto _ : state) {
    for (int way = 0; way < kWays && error.empty(); ++way) {
      Result<std::unique_ptr<Connection>> conn = server->Connect();
      if (!conn.ok()) {
        error = conn.status().ToString();
        break;
      }
      if (Status s = Dirty(**conn); !s.ok()) {
        error = s.ToString();
        break;
      }
      Result<ServerCounts> before = ReadCounts(**conn);
      if (!before.ok()) {
        error = before.status().ToString();
        break;
      }
      Status s;
      const double start = NowSeconds(CLOCK_MONOTONIC);
      switch (way) {
        case kReset: s = server->Reset(kEpochMs); break;
        case kCrashRestart: s = server->CrashAndRestart(); break;
        case kStopRestart:
          server->Stop();
          s = server->Restart();
          break;
        case kNewServer: {
          server.reset();
          Result<std::unique_ptr<RedisServer>> again = RedisServer::Start(bench::ServerOptions());
          if (again.ok()) server = std::move(*again);
          s = again.status();
          break;
        }
      }
      seconds[way].push_back(NowSeconds(CLOCK_MONOTONIC) - start);
      if (!s.ok()) {
        error = s.ToString();
        break;
      }
      if (way == kReset) {
        Result<ServerCounts> after = ReadCounts(**conn);
        if (!after.ok()) {
          error = after.status().ToString();
          break;
        }
        reset_commands = after->commands - before->commands - 1;
      }
    }
    if (!error.empty()) break;
  }
  if (!error.empty()) return state.SkipWithError(error.c_str());
  const double reset_s = Median(seconds[kReset]);
  state.counters["reset_us"] = reset_s * 1e6;
  state.counters["reset_round_trips"] = static_cast<double>(reset_commands);
  state.counters["crash_restart_ms"] = Median(seconds[kCrashRestart]) * 1e3;
  state.counters["stop_restart_ms"] = Median(seconds[kStopRestart]) * 1e3;
  state.counters["new_server_ms"] = Median(seconds[kNewServer]) * 1e3;
  state.counters["crash_restart/reset"] = Median(seconds[kCrashRestart]) / reset_s;
  state.counters["stop_restart/reset"] = Median(seconds[kStopRestart]) / reset_s;
}

// ---------------------------------------------------------------------------
// Sim/ConnectVsPing

// What a fresh connection costs: the price every actor incarnation would
// pay without the server's connection pool (cases take pooled connections;
// Sim/Case's `connects` counter shows how many they still open). Paired
// blocks: kConnectBlock times (connect, PING, close) against kConnectBlock
// PINGs on an open connection; the difference per cycle is the connection's
// cost, the server's accept and free included (they delay the next request).
constexpr int kConnectBlock = 50;

void BM_ConnectVsPing(benchmark::State& state) {
  Result<Fixture*> fixture = SharedFixture();
  if (!fixture.ok()) return state.SkipWithError(fixture.status().ToString().c_str());
  RedisServer& server = *(*fixture)->server;
  Connection& open = *(*fixture)->probe;
  auto ping = [](Connection& conn) {
    Result<Reply> pong = conn.Call({"PING"});
    return pong.ok() && pong->is_status();
  };
  std::vector<double> extra_s, ping_s;
  bool ok = true;
  int64_t n = 0;
  for (auto _ : state) {
    double block_s[2];  // [0] connect + PING + close, [1] PING
    for (int k = 0; k < 2 && ok; ++k) {
      const int side = static_cast<int>((n + k) % 2);
      const double start = NowSeconds(CLOCK_MONOTONIC);
      for (int i = 0; i < kConnectBlock && ok; ++i) {
        if (side == 1) {
          ok = ping(open);
          continue;
        }
        Result<std::unique_ptr<Connection>> conn = ConnectUnix(server.socket_path(), 10'000);
        ok = conn.ok() && ping(**conn);
      }
      block_s[side] = NowSeconds(CLOCK_MONOTONIC) - start;
    }
    if (!ok) break;
    extra_s.push_back((block_s[0] - block_s[1]) / kConnectBlock);
    ping_s.push_back(block_s[1] / kConnectBlock);
    ++n;
  }
  if (!ok) return state.SkipWithError("connect or PING failed");
  state.counters["connect_us"] = Median(extra_s) * 1e6;
  state.counters["ping_us"] = Median(ping_s) * 1e6;
  state.counters["connect/ping"] = Median(extra_s) / Median(ping_s);
}

// ---------------------------------------------------------------------------
// Sim/Case/events:E/workers:W

void BM_Case(benchmark::State& state) {
  const int events = static_cast<int>(state.range(0));
  const int workers = static_cast<int>(state.range(1));
  Result<Fixture*> fixture = SharedFixture();
  if (!fixture.ok()) return state.SkipWithError(fixture.status().ToString().c_str());
  Fixture& f = **fixture;
  int64_t steps = 0, proto_rt = 0, harness_rt = 0, commands = 0, connections = 0, fired = 0;
  int64_t n = 0;
  std::string error;
  for (auto _ : state) {
    state.PauseTiming();
    Result<ServerCounts> before = ReadCounts(*f.probe);
    state.ResumeTiming();
    Result<RunResult> run =
        f.executor.Run(StandardConfig(workers, events, static_cast<uint64_t>(n % kSeeds) + 1));
    state.PauseTiming();
    Result<ServerCounts> after = ReadCounts(*f.probe);
    if (!run.ok() || !before.ok() || !after.ok()) {
      error = !run.ok() ? run.status().ToString()
                        : (!before.ok() ? before.status() : after.status()).ToString();
      state.ResumeTiming();
      break;
    }
    if (!run->matched) {
      error = fmt::format("seed {}: txn-dedupe observed {}", n % kSeeds + 1, run->observed);
      state.ResumeTiming();
      break;
    }
    steps += run->steps;
    proto_rt += run->protocol_round_trips;
    harness_rt += run->harness_round_trips;
    commands += after->commands - before->commands - 1;
    connections += after->connections - before->connections;
    fired += static_cast<int64_t>(run->fired.size());
    ++n;
    state.ResumeTiming();
  }
  if (!error.empty()) return state.SkipWithError(error.c_str());
  using benchmark::Counter;
  const double per_case = 1.0 / static_cast<double>(n);
  state.SetItemsProcessed(n);  // items/s = cases/s
  state.counters["s/event"] = Counter(static_cast<double>(events), Counter::kIsIterationInvariantRate | Counter::kInvert);
  state.counters["s/step"] = Counter(static_cast<double>(steps), Counter::kIsRate | Counter::kInvert);
  state.counters["steps"] = static_cast<double>(steps) * per_case;
  state.counters["proto_rt"] = static_cast<double>(proto_rt) * per_case;
  state.counters["harness_rt"] = static_cast<double>(harness_rt) * per_case;
  state.counters["server_cmds"] = static_cast<double>(commands) * per_case;
  state.counters["connects"] = static_cast<double>(connections) * per_case;
  state.counters["rt_per_proto_rt"] = static_cast<double>(commands) / static_cast<double>(proto_rt);
  state.counters["faults"] = static_cast<double>(fired) * per_case;
}

void Register() {
  // Wall time throughout: a case waits on the server far more than it
  // computes, and rates (items/s, s/event) follow the time measured.
  benchmark::RegisterBenchmark("Sim/HarnessVsBare", BM_HarnessVsBare)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Sim/ResetVsRestart", BM_ResetVsRestart)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Sim/ConnectVsPing", BM_ConnectVsPing)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  auto* cases = benchmark::RegisterBenchmark("Sim/Case", BM_Case)
                    ->ArgNames({"events", "workers"})
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime();
  for (int events : {5, 10, 20, 40, 80}) cases->Args({events, kStandardWorkers});
  for (int workers : {1, 2, 4, 8}) cases->Args({kStandardEvents, workers});
}

// --profile_cases=N: runs N standard cases (seeds 1..N in turn) and nothing
// else, for a profiler (see the top of the file). Returns the exit code.
int ProfileCases(int cases) {
  Result<Fixture*> f = SharedFixture();
  if (!f.ok()) {
    std::fprintf(stderr, "xackly_bench_sim: %s\n", f.status().ToString().c_str());
    return 3;
  }
  int64_t steps = 0, round_trips = 0;
  uint64_t hashes = 0;  // every case's trace hash, folded: equal output, equal runs
  for (int i = 0; i < cases; ++i) {
    const uint64_t seed = static_cast<uint64_t>(i) % kSeeds + 1;
    Result<RunResult> run =
        (*f)->executor.Run(StandardConfig(kStandardWorkers, kStandardEvents, seed));
    if (!run.ok()) {
      std::fprintf(stderr, "xackly_bench_sim: seed %llu: %s\n", static_cast<unsigned long long>(seed),
                   run.status().ToString().c_str());
      return 3;
    }
    steps += run->steps;
    round_trips += run->protocol_round_trips + run->harness_round_trips;
    hashes = hashes * 0x100000001b3ULL ^ run->trace_hash;
  }
  std::printf("%d standard cases: %lld steps, %lld round trips, trace hashes %s\n", cases,
              static_cast<long long>(steps), static_cast<long long>(round_trips),
              Trace::HashHex(hashes).c_str());
  return 0;
}

}  // namespace
}  // namespace xackly

int main(int argc, char** argv) {
  using namespace xackly;
  InstallLiveServerSignalHandlers();  // Ctrl-C kills the servers too
  std::vector<char*> args(argv, argv + argc);
  bench::ApplyPlacement("xackly_bench_sim", &args);
  if (args.size() == 2 && std::strncmp(args[1], "--profile_cases=", 16) == 0) {
    const int code = ProfileCases(std::max(1, std::atoi(args[1] + 16)));
    g_fixture.reset();
    return code;
  }
  if (!bench::InitializeBenchmark(args)) return 2;
  Register();
  bench::FailureAwareReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  g_fixture.reset();  // stops the server, removes its temp dir
  return reporter.failed() ? 1 : 0;
}
