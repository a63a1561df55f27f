// xackly from another project's test suite: the small API an installed
// xackly offers (find_package(xackly), target xackly::harness).
//
//   xackly::ProtocolDef p = ...;                  // your protocol; its handler
//   p.cpp_handler = &MyHandler;                   // a C++ coroutine (sim/worker.h)
//   xackly::EmbedOptions o;                       // where redis-server and the
//   o.clock_library = "/prefix/lib/libxackly_clock.so";  // clock library are
//   auto one = xackly::RunOneCase(xackly::RunConfig::For(p), o);
//   EXPECT_EQ(xackly::FailureReport(config, *one), "");   // prints the replay file
//   auto prop = xackly::CheckProperty(xackly::RunConfig::For(p), {}, o);
//
// Every call starts its own private redis-server(s) on Unix sockets and
// stops them before returning. Nothing here exposes RapidCheck: the property
// check uses it inside the library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/simulation.h"

namespace xackly {

struct EmbedOptions {
  // The redis-server binary. Empty: $XACKLY_REDIS_SERVER, else PATH.
  std::string server_path;
  // libxackly_clock.so. Empty: $XACKLY_CLOCK_LIB, else next to the executable.
  std::string clock_library;
  // Threads (each with its own servers) a property check runs cases on.
  int threads = 1;
};

// Runs one case of `config` (see RunSimulation) on a fresh private server.
// Fails only on harness errors (no server binary, a server that dies).
Result<RunResult> RunOneCase(const RunConfig& config, const EmbedOptions& options);

struct PropertyOptions {
  int cases = 50;
  uint64_t seed = 1;
  int max_workers = 3;
  int max_events = 8;
  int max_faults = 4;
};

struct PropertyResult {
  int cases_run = 0;
  // The observed verdict class equals the expectation (`config.expected`):
  // for a protocol expected `ok`, no case showed a violation.
  bool matched = false;
  std::string observed;  // "ok", "duplicate", "duplicate+lost"...
  // The first case that showed a violation (or the expected one), shrunk to
  // a minimal case, with its trace kept.
  std::optional<RunConfig> counterexample;
  RunResult counterexample_result;
};

// Generates `options.cases` cases from `base` (worker and event counts, a
// schedule seed, faults drawn from base.faults), runs them, and shrinks the
// first hit. REQUIRES: ValidateRunConfig(base).ok()
Result<PropertyResult> CheckProperty(const RunConfig& base, const PropertyOptions& options,
                                     const EmbedOptions& embed);

// The scenario file (TOML) that replays `config` exactly with
// `xackly replay`, with the trace hash it must reproduce. A protocol that is
// not in the catalog is written inline as its declarative step list.
std::string ReplayFile(const RunConfig& config, const RunResult& result);

// "" when `result` matches `config.expected`; otherwise what a failing test
// should print: the violations with their causes, the story of the first
// one, and the replay file.
std::string FailureReport(const RunConfig& config, const RunResult& result);

}  // namespace xackly
