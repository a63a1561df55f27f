// What the benchmark executables share: the server options every benchmark
// server is started with, the hiredis reply-type mapping their bare loops
// use, clocks and medians for paired measurements, and a reporter that
// remembers whether any benchmark failed (the exit code says so, which is
// what the ctest smoke runs check).
#pragma once

#include <time.h>

#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/redis_server.h"
#include "sim/reply.h"

namespace xackly::bench {

// Google Benchmark's Initialize over `args` (argv[0] first), with user
// counters shown as table columns unless the command line says otherwise.
// Returns false, after naming it, when an argument is not a benchmark flag.
bool InitializeBenchmark(std::vector<char*> args);

// Places the benchmark the way xackly places a case (harness/cpu_placement.h):
// binds the calling (main) thread to the CPU it runs on, and every server
// ServerOptions() describes to the same CPU; with `--no-pin` among `*args`
// (removed from them) nothing is bound. Prints the placement to stderr
// under `program`'s name. Call once, before anything starts a server.
void ApplyPlacement(const char* program, std::vector<char*>* args);

// Options for a benchmark's own server: the clock library of this build
// tree (so the executable runs from anywhere), the placement
// ApplyPlacement chose, defaults for everything else.
RedisServerOptions ServerOptions();

// Reply::Type of a hiredis reply type (REDIS_REPLY_*); kNil for anything
// Reply has no type for.
Reply::Type ReplyTypeOf(int hiredis_type);

// Seconds on `clock` (CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID
// for this thread's CPU time).
double NowSeconds(clockid_t clock);

// The median (upper median for an even count); 0 for none.
double Median(std::vector<double> v);

// The display reporter --benchmark_format asks for (console, json, csv),
// plus whether any run reported an error.
class FailureAwareReporter : public benchmark::BenchmarkReporter {
 public:
  FailureAwareReporter();
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;
  bool failed() const { return failed_; }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  bool failed_ = false;
};

}  // namespace xackly::bench
