// How much the Connection seam costs. Each command runs twice against the
// same redis-server (started once, under the virtual clock, like every
// xackly server): through harness/hiredis_connection (Connection::Call,
// Reply conversion, Result) and as a bare hiredis loop (redisCommandArgv +
// freeReplyObject). After the runs it prints, per command, the Connection's
// rate as a fraction of the bare rate; the goal is >= 0.9.
//
// This file includes hiredis for the baseline only; bench/ is not the
// harness library, where harness/hiredis_connection.cc stays the only user.
//
//   ./build/xackly_bench     medians of 9 randomly interleaved repetitions
//   ./build/xackly_bench --benchmark_repetitions=1 --benchmark_min_time=0.01
//                            a quick smoke run
#include <hiredis/hiredis.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "harness/hiredis_connection.h"
#include "harness/redis_server.h"

namespace xackly {
namespace {

constexpr int kCallTimeoutMs = 10'000;

// The server and both clients, shared by every benchmark in the process.
struct Fixture {
  std::unique_ptr<RedisServer> server;
  std::unique_ptr<Connection> conn;
  redisContext* bare = nullptr;
  ~Fixture() {
    if (bare != nullptr) redisFree(bare);
  }
};

std::unique_ptr<Fixture> g_fixture;

// Starts the server and connects both clients; exits with 3 on failure.
void SetUpFixture() {
  g_fixture = std::make_unique<Fixture>();
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(RedisServerOptions{});
  if (!server.ok()) {
    std::fprintf(stderr, "xackly_bench: %s\n", server.status().ToString().c_str());
    std::exit(3);
  }
  g_fixture->server = std::move(*server);
  const std::string& socket_path = g_fixture->server->socket_path();
  Result<std::unique_ptr<Connection>> conn = ConnectUnix(socket_path, kCallTimeoutMs);
  g_fixture->bare = redisConnectUnix(socket_path.c_str());
  if (!conn.ok() || g_fixture->bare == nullptr || g_fixture->bare->err != 0) {
    std::fprintf(stderr, "xackly_bench: cannot connect to %s\n", socket_path.c_str());
    g_fixture.reset();
    std::exit(3);
  }
  g_fixture->conn = std::move(*conn);
}

Fixture& Shared() { return *g_fixture; }

// Arguments of one command, given both ways.
class Argv {
 public:
  explicit Argv(std::vector<std::string> args) : args_(std::move(args)) { Refresh(); }
  std::string& operator[](size_t i) { return args_[i]; }
  const std::string& operator[](size_t i) const { return args_[i]; }
  // Call after changing an argument.
  void Refresh() {
    views_.assign(args_.begin(), args_.end());
    ptrs_.clear();
    lens_.clear();
    for (const std::string& a : args_) {
      ptrs_.push_back(a.data());
      lens_.push_back(a.size());
    }
  }
  std::span<const std::string_view> views() const { return views_; }
  int argc() const { return static_cast<int>(args_.size()); }
  const char** ptrs() { return ptrs_.data(); }
  const size_t* lens() const { return lens_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<std::string_view> views_;
  std::vector<const char*> ptrs_;
  std::vector<size_t> lens_;
};

// Writes "<n>-1" into `id`, which has room for it (capacity reserved once).
void FormatId(uint64_t n, std::string& id) {
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof(buf), n).ptr;
  *end++ = '-';
  *end++ = '1';
  id.assign(buf, end);
}

enum class Client { kConnection, kBareHiredis };

// One round trip, with the least work a caller does with a reply: its kind
// and, for an integer, the value. Returns false when the exchange failed.
bool RoundTrip(Client client, Argv& argv, Reply::Type* type, int64_t* integer) {
  Fixture& f = Shared();
  if (client == Client::kConnection) {
    Result<Reply> reply = f.conn->Call(argv.views());
    if (!reply.ok()) return false;
    *type = reply->type();
    *integer = reply->is_integer() ? reply->integer() : 0;
    return true;
  }
  auto* reply = static_cast<redisReply*>(redisCommandArgv(f.bare, argv.argc(), argv.ptrs(), argv.lens()));
  if (reply == nullptr) return false;
  switch (reply->type) {
    case REDIS_REPLY_INTEGER: *type = Reply::Type::kInteger; break;
    case REDIS_REPLY_STATUS: *type = Reply::Type::kStatus; break;
    case REDIS_REPLY_STRING: *type = Reply::Type::kString; break;
    case REDIS_REPLY_ERROR: *type = Reply::Type::kError; break;
    case REDIS_REPLY_ARRAY: *type = Reply::Type::kArray; break;
    default: *type = Reply::Type::kNil; break;
  }
  *integer = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
  freeReplyObject(reply);
  return true;
}

// Runs `argv` once per iteration (after `prepare(argv)`) and fails the
// benchmark unless every reply has `expected` type; returns the sum of the
// integer replies.
template <typename Prepare>
int64_t Loop(benchmark::State& state, Client client, Argv& argv, Reply::Type expected,
             Prepare prepare) {
  int64_t sum = 0;
  Reply::Type type = Reply::Type::kNil;
  int64_t integer = 0;
  for (auto _ : state) {
    prepare(argv);
    if (!RoundTrip(client, argv, &type, &integer) || type != expected) {
      state.SkipWithError(fmt::format("{} failed or replied type {}", argv[0], static_cast<int>(type)).c_str());
      break;
    }
    sum += integer;
  }
  return sum;
}

void BM_Ping(benchmark::State& state, Client client) {
  Argv argv({"PING"});
  Loop(state, client, argv, Reply::Type::kStatus, [](Argv&) {});
}

// XADD with explicit, increasing IDs to a stream of its own per client.
void BM_Xadd(benchmark::State& state, Client client) {
  static uint64_t next_id[2] = {1, 1};
  uint64_t& next = next_id[static_cast<int>(client)];
  Argv argv({"XADD", client == Client::kConnection ? "bench:xadd:conn" : "bench:xadd:bare",
             "0-1", "field", "value"});
  argv[2].reserve(32);
  Loop(state, client, argv, Reply::Type::kString, [&next](Argv& a) {
    FormatId(next++, a[2]);
    a.Refresh();
  });
}

// XACK of entries that really are pending: before the timed loop, a script
// adds max_iterations entries and delivers them all to one consumer.
void BM_Xack(benchmark::State& state, Client client) {
  Fixture& f = Shared();
  const std::string key = client == Client::kConnection ? "bench:xack:conn" : "bench:xack:bare";
  const std::string count = std::to_string(state.max_iterations);
  Result<Reply> setup = f.conn->Call(
      {"EVAL",
       "redis.call('DEL', KEYS[1]) "
       "for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], i .. '-1', 'f', 'v') end "
       "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0') "
       "local r = redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', ARGV[1], 'STREAMS', KEYS[1], '>') "
       "return #r[1][2]",
       "1", key, count});
  if (!setup.ok() || setup->Render() != count) {
    return state.SkipWithError(("setup failed: " + (setup.ok() ? setup->Render() : setup.status().ToString())).c_str());
  }
  Argv argv({"XACK", key, "g", "0-1"});
  argv[3].reserve(32);
  uint64_t next = 1;
  int64_t acked = Loop(state, client, argv, Reply::Type::kInteger, [&next](Argv& a) {
    FormatId(next++, a[3]);
    a.Refresh();
  });
  if (acked != static_cast<int64_t>(state.max_iterations) && !state.error_occurred()) {
    state.SkipWithError(fmt::format("acked {} of {}", acked, state.max_iterations).c_str());
  }
}

// Prints the usual table, then the Connection / bare rate per command.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) failed_ = true;
      // With repetitions, use the median; without, the only run.
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      times_[run.run_name.function_name] = {run.GetAdjustedRealTime(), run.GetAdjustedCPUTime()};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf(
        "\nConnection rate / bare hiredis rate (goal >= 0.90). By wall time, and by the\n"
        "client's CPU time per call, which a busy machine disturbs less:\n");
    for (const char* command : {"PING", "XADD", "XACK"}) {
      auto conn = times_.find(fmt::format("{}/connection", command));
      auto bare = times_.find(fmt::format("{}/bare_hiredis", command));
      if (conn == times_.end() || bare == times_.end()) continue;
      std::printf("  %-5s wall %.3f   cpu %.3f\n", command, bare->second.wall / conn->second.wall,
                  bare->second.cpu / conn->second.cpu);
    }
  }
  bool failed() const { return failed_; }

 private:
  struct Times {
    double wall;
    double cpu;
  };
  std::map<std::string, Times> times_;  // per benchmark name, per operation
  bool failed_ = false;
};

}  // namespace
}  // namespace xackly

int main(int argc, char** argv) {
  using xackly::Client;
  // Defaults that make the ratio trustworthy on a small, busy machine:
  // repetitions in random order (so drift hits both sides alike), reported
  // as aggregates. Flags given on the command line come later and win.
  std::vector<char*> args = {argv[0]};
  char repetitions[] = "--benchmark_repetitions=9";
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  char aggregates[] = "--benchmark_report_aggregates_only=true";
  args.insert(args.end(), {repetitions, interleave, aggregates});
  args.insert(args.end(), argv + 1, argv + argc);
  int args_count = static_cast<int>(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 2;
  // Each pair back to back, so that both sides see the same machine state.
  const std::pair<const char*, void (*)(benchmark::State&, Client)> kCommands[] = {
      {"PING", xackly::BM_Ping}, {"XADD", xackly::BM_Xadd}, {"XACK", xackly::BM_Xack}};
  for (const auto& [name, fn] : kCommands) {
    benchmark::RegisterBenchmark(fmt::format("{}/connection", name).c_str(), fn, Client::kConnection);
    benchmark::RegisterBenchmark(fmt::format("{}/bare_hiredis", name).c_str(), fn, Client::kBareHiredis);
  }
  xackly::SetUpFixture();
  xackly::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  xackly::g_fixture.reset();  // stops the server, removes its temp dir
  return reporter.failed() ? 1 : 0;
}
