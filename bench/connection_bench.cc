// How much the Connection seam costs. Each command runs two ways against the
// same redis-server (started once, under the virtual clock, like every
// xackly server): through harness/hiredis_connection (Connection::Call,
// Reply conversion, Result) and as a bare hiredis loop (redisCommandArgv +
// freeReplyObject on a context without a timeout, as a plain client would
// have it). The goal is a Connection rate of at least 0.9x the bare rate.
//
// Two measurements:
//   1. Google Benchmark's table: absolute time per round trip each way.
//   2. A paired run printed last: alternating blocks of calls (which client
//      goes first alternates too) and the median over blocks of the
//      bare-time / connection-time ratio, by wall and by thread CPU time.
//      Pairing cancels the slow drift of a shared machine that makes two
//      separate benchmark runs disagree by +-30%.
//
// This file includes hiredis for the baseline only; bench/ is not the
// harness library, where harness/hiredis_connection.cc stays the only user.
//
//   ./build/xackly_bench     both measurements
//   ./build/xackly_bench --benchmark_min_time=0.01 --paired_rounds=4
//                            a quick smoke run (what ctest runs)
#include <hiredis/hiredis.h>

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/bench_util.h"
#include "harness/hiredis_connection.h"
#include "harness/live_servers.h"
#include "harness/redis_server.h"

namespace xackly {
namespace {

using bench::Median;
using bench::NowSeconds;

constexpr int kCallTimeoutMs = 10'000;
constexpr int kPairedBlockCalls = 200;

enum class Client { kConnection = 0, kBareHiredis = 1 };
constexpr Client kClients[] = {Client::kConnection, Client::kBareHiredis};
const char* ClientName(Client c) { return c == Client::kConnection ? "connection" : "bare_hiredis"; }

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
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(bench::ServerOptions());
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

// Arguments of one command, kept both as string_views (for Connection) and
// as pointer + length arrays (for hiredis).
class Argv {
 public:
  explicit Argv(std::vector<std::string> args) : args_(std::move(args)) {
    for (std::string& a : args_) a.reserve(32);  // ids are rewritten in place
    Refresh();
  }
  // Replaces argument `i`; no allocation for values up to 32 bytes.
  void Set(size_t i, std::string_view value) {
    args_[i].assign(value);
    Refresh();
  }
  std::span<const std::string_view> views() const { return views_; }
  int argc() const { return static_cast<int>(args_.size()); }
  const char** ptrs() { return ptrs_.data(); }
  const size_t* lens() const { return lens_.data(); }
  const std::string& name() const { return args_[0]; }

 private:
  void Refresh() {
    views_.assign(args_.begin(), args_.end());
    ptrs_.clear();
    lens_.clear();
    for (const std::string& a : args_) {
      ptrs_.push_back(a.data());
      lens_.push_back(a.size());
    }
  }
  std::vector<std::string> args_;
  std::vector<std::string_view> views_;
  std::vector<const char*> ptrs_;
  std::vector<size_t> lens_;
};

// "<n>-1", the stream id both XADD and XACK use for the n-th operation.
std::string_view IdFor(uint64_t n, char (&buf)[32]) {
  char* end = std::to_chars(buf, buf + sizeof(buf) - 2, n).ptr;
  *end++ = '-';
  *end++ = '1';
  return std::string_view(buf, static_cast<size_t>(end - buf));
}

// One round trip, with the least work a caller does with a reply: its kind
// and, for an integer, the value. Returns false when the exchange failed.
bool RoundTrip(Client client, Argv& argv, Reply::Type* type, int64_t* integer) {
  Fixture& f = *g_fixture;
  if (client == Client::kConnection) {
    Result<Reply> reply = f.conn->Call(argv.views());
    if (!reply.ok()) return false;
    *type = reply->type();
    *integer = reply->is_integer() ? reply->integer() : 0;
    return true;
  }
  auto* reply = static_cast<redisReply*>(redisCommandArgv(f.bare, argv.argc(), argv.ptrs(), argv.lens()));
  if (reply == nullptr) return false;
  *type = bench::ReplyTypeOf(reply->type);
  *integer = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
  freeReplyObject(reply);
  return true;
}

// One command to measure, with its own keys per client.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual const char* name() const = 0;
  // The reply type every call must get.
  virtual Reply::Type expected_type() const = 0;
  // What every integer reply must add up to over `n` calls.
  virtual int64_t expected_sum(int64_t n) const {
    (void)n;
    return 0;
  }
  // Makes the next `n` calls of `client` possible.
  virtual Status Prepare(Client client, int64_t n) {
    (void)client;
    (void)n;
    return Status::Ok();
  }
  // The arguments of `client`'s next call.
  virtual Argv& Next(Client client) = 0;
};

class PingWorkload : public Workload {
 public:
  const char* name() const override { return "PING"; }
  Reply::Type expected_type() const override { return Reply::Type::kStatus; }
  Argv& Next(Client) override { return argv_; }

 private:
  Argv argv_{{"PING"}};
};

// A command whose argument `id_index` is the id "<n>-1" of the client's
// n-th call (n = 1, 2, ...), on a stream of its own per client.
class IdSequenceWorkload : public Workload {
 public:
  Argv& Next(Client client) override {
    const int c = static_cast<int>(client);
    char buf[32];
    argv_[c].Set(id_index_, IdFor(next_[c]++, buf));
    return argv_[c];
  }

 protected:
  IdSequenceWorkload(Argv for_connection, Argv for_bare, size_t id_index)
      : argv_{std::move(for_connection), std::move(for_bare)}, id_index_(id_index) {}
  void Restart(Client client) { next_[static_cast<int>(client)] = 1; }

 private:
  Argv argv_[2];
  const size_t id_index_;
  uint64_t next_[2] = {1, 1};
};

// XADD with explicit, increasing IDs.
class XaddWorkload : public IdSequenceWorkload {
 public:
  XaddWorkload()
      : IdSequenceWorkload(Argv({"XADD", "bench:xadd:connection", "0-1", "field", "value"}),
                           Argv({"XADD", "bench:xadd:bare", "0-1", "field", "value"}), 2) {}
  const char* name() const override { return "XADD"; }
  Reply::Type expected_type() const override { return Reply::Type::kString; }
};

// XACK of entries that really are pending: Prepare adds n entries with a
// script and delivers them all to one consumer; each call acks one.
class XackWorkload : public IdSequenceWorkload {
 public:
  XackWorkload()
      : IdSequenceWorkload(Argv({"XACK", kKeys[0], "g", "0-1"}), Argv({"XACK", kKeys[1], "g", "0-1"}),
                           3) {}
  const char* name() const override { return "XACK"; }
  Reply::Type expected_type() const override { return Reply::Type::kInteger; }
  int64_t expected_sum(int64_t n) const override { return n; }
  Status Prepare(Client client, int64_t n) override {
    Restart(client);
    const std::string count = std::to_string(n);
    Result<Reply> setup = g_fixture->conn->Call(
        {"EVAL",
         "redis.call('DEL', KEYS[1]) "
         "for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], i .. '-1', 'f', 'v') end "
         "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0') "
         "local r = redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', ARGV[1], 'STREAMS', "
         "KEYS[1], '>') "
         "return #r[1][2]",
         "1", kKeys[static_cast<int>(client)], count});
    if (!setup.ok()) return setup.status();
    if (setup->Render() != count) return Status::Internal("XACK setup replied " + setup->Render());
    return Status::Ok();
  }

 private:
  static constexpr const char* kKeys[2] = {"bench:xack:connection", "bench:xack:bare"};
};

// Runs `n` calls of `client`; returns "" or what went wrong.
std::string RunCalls(Workload& w, Client client, int64_t n, int64_t* sum) {
  Reply::Type type = Reply::Type::kNil;
  int64_t integer = 0;
  for (int64_t i = 0; i < n; ++i) {
    Argv& argv = w.Next(client);
    if (!RoundTrip(client, argv, &type, &integer) || type != w.expected_type()) {
      return fmt::format("{} failed or replied type {}", argv.name(), static_cast<int>(type));
    }
    *sum += integer;
  }
  return "";
}

void BM_Workload(benchmark::State& state, Workload* w, Client client) {
  const auto n = static_cast<int64_t>(state.max_iterations);
  if (Status s = w->Prepare(client, n); !s.ok()) return state.SkipWithError(s.ToString().c_str());
  int64_t sum = 0;
  std::string error;
  for (auto _ : state) {
    error = RunCalls(*w, client, 1, &sum);
    if (!error.empty()) break;
  }
  if (error.empty() && sum != w->expected_sum(n)) {
    error = fmt::format("integer replies add up to {}, expected {}", sum, w->expected_sum(n));
  }
  if (!error.empty()) state.SkipWithError(error.c_str());
}

// The paired measurement (see the top of the file). Returns false on an
// error, after printing it.
bool RunPaired(const std::vector<Workload*>& workloads, int rounds) {
  std::printf(
      "\nPaired: Connection rate / bare hiredis rate, median of %d alternating blocks of %d "
      "calls (goal >= 0.90)\n",
      rounds, kPairedBlockCalls);
  const int64_t calls = static_cast<int64_t>(rounds) * kPairedBlockCalls;
  for (Workload* w : workloads) {
    for (Client c : kClients) {
      if (Status s = w->Prepare(c, calls); !s.ok()) {
        std::printf("  %-5s error: %s\n", w->name(), s.ToString().c_str());
        return false;
      }
    }
    std::vector<double> wall_ratios, cpu_ratios;
    int64_t sums[2] = {0, 0};
    for (int round = 0; round < rounds; ++round) {
      double wall[2], cpu[2];
      for (int k = 0; k < 2; ++k) {
        const Client c = kClients[(round + k) % 2];
        const double wall_start = NowSeconds(CLOCK_MONOTONIC);
        const double cpu_start = NowSeconds(CLOCK_THREAD_CPUTIME_ID);
        std::string error = RunCalls(*w, c, kPairedBlockCalls, &sums[static_cast<int>(c)]);
        if (!error.empty()) {
          std::printf("  %-5s error (%s): %s\n", w->name(), ClientName(c), error.c_str());
          return false;
        }
        wall[static_cast<int>(c)] = NowSeconds(CLOCK_MONOTONIC) - wall_start;
        cpu[static_cast<int>(c)] = NowSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
      }
      wall_ratios.push_back(wall[1] / wall[0]);
      cpu_ratios.push_back(cpu[1] / cpu[0]);
    }
    for (Client c : kClients) {
      if (sums[static_cast<int>(c)] != w->expected_sum(calls)) {
        std::printf("  %-5s error (%s): integer replies add up to %lld, expected %lld\n", w->name(),
                    ClientName(c), static_cast<long long>(sums[static_cast<int>(c)]),
                    static_cast<long long>(w->expected_sum(calls)));
        return false;
      }
    }
    std::printf("  %-5s wall %.3f   client cpu %.3f\n", w->name(), Median(wall_ratios),
                Median(cpu_ratios));
  }
  return true;
}

}  // namespace
}  // namespace xackly

int main(int argc, char** argv) {
  using namespace xackly;
  InstallLiveServerSignalHandlers();  // Ctrl-C kills the server too
  // Our own flag, taken out before Google Benchmark sees the rest.
  int rounds = 200;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--paired_rounds=", 16) == 0) {
      rounds = std::max(1, std::atoi(argv[i] + 16));
    } else {
      args.push_back(argv[i]);
    }
  }
  bench::ApplyPlacement("xackly_bench", &args);
  if (!bench::InitializeBenchmark(args)) return 2;

  SetUpFixture();
  PingWorkload ping;
  XaddWorkload xadd;
  XackWorkload xack;
  const std::vector<Workload*> workloads = {&ping, &xadd, &xack};
  for (Workload* w : workloads) {
    for (Client c : kClients) {
      benchmark::RegisterBenchmark(fmt::format("{}/{}", w->name(), ClientName(c)).c_str(),
                                   BM_Workload, w, c);
    }
  }
  bench::FailureAwareReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const bool paired_ok = RunPaired(workloads, rounds);
  benchmark::Shutdown();
  g_fixture.reset();  // stops the server, removes its temp dir
  return reporter.failed() || !paired_ok ? 1 : 0;
}
