#include "bench/bench_util.h"

#include <hiredis/hiredis.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "harness/cpu_placement.h"

namespace xackly::bench {

bool InitializeBenchmark(std::vector<char*> args) {
  static char tabular[] = "--benchmark_counters_tabular=true";
  args.insert(args.begin() + (args.empty() ? 0 : 1), tabular);  // a later flag wins
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  return !benchmark::ReportUnrecognizedArguments(count, args.data());
}

namespace {
std::unique_ptr<ThreadPin> g_pin;  // the main thread's, for the whole run
bool g_pinning = true;
}  // namespace

void ApplyPlacement(const char* program, std::vector<char*>* args) {
  auto no_pin = std::find_if(args->begin(), args->end(),
                             [](const char* a) { return std::strcmp(a, "--no-pin") == 0; });
  g_pinning = no_pin == args->end();
  if (!g_pinning) args->erase(no_pin);
  const std::string allowed = CpusAllowedList(gettid());
  if (g_pinning) {
    g_pin = std::make_unique<ThreadPin>(CurrentCpu());
    if (!g_pin->pinned()) g_pin.reset();
  }
  if (g_pin) {
    std::fprintf(stderr, "%s: placement: benchmark thread and its servers on CPU %d (allowed: %s; --no-pin to unbind)\n",
                 program, g_pin->cpu(), allowed.c_str());
  } else {
    std::fprintf(stderr, "%s: placement: unpinned%s, the kernel places the benchmark thread and its servers on CPUs %s\n",
                 program, g_pinning ? " (binding refused)" : " (--no-pin)", allowed.c_str());
  }
}

RedisServerOptions ServerOptions() {
  RedisServerOptions options;
  options.clock_library = XACKLY_BENCH_CLOCK_LIB;
  options.pin = g_pin != nullptr;
  options.cpu = g_pin ? g_pin->cpu() : -1;
  return options;
}

Reply::Type ReplyTypeOf(int hiredis_type) {
  switch (hiredis_type) {
    case REDIS_REPLY_INTEGER: return Reply::Type::kInteger;
    case REDIS_REPLY_STATUS: return Reply::Type::kStatus;
    case REDIS_REPLY_STRING: return Reply::Type::kString;
    case REDIS_REPLY_ERROR: return Reply::Type::kError;
    case REDIS_REPLY_ARRAY: return Reply::Type::kArray;
    default: return Reply::Type::kNil;
  }
}

double NowSeconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

FailureAwareReporter::FailureAwareReporter()
    : display_(benchmark::CreateDefaultDisplayReporter()) {}

bool FailureAwareReporter::ReportContext(const Context& context) {
  return display_->ReportContext(context);
}

void FailureAwareReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) failed_ |= run.error_occurred;
  display_->ReportRuns(runs);
}

void FailureAwareReporter::Finalize() { display_->Finalize(); }

}  // namespace xackly::bench
