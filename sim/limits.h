// Limits on every number a run takes, and overflow-free arithmetic on
// virtual time. The scenario schema (scenarios/schema.h) uses the same
// constants for its per-field ranges (errors with file:line), and
// ValidateRunConfig checks them again for configs built any other way (CLI
// overrides, property tests), together with the sum of all durations.
//
// Why these bound the arithmetic: every duration is <= kMaxDurationMs and
// max_steps <= kMaxSteps, so virtual time after any number of steps stays
// below kMaxSteps * (step_ms + the longest wait + the longest clock jump)
// < 10^7 * 10^11 = 10^18 ms, far from INT64_MAX (9.2 * 10^18): sim's int64
// millisecond arithmetic cannot overflow. The server's clock page holds
// nanoseconds and so ends in the year 2262; the harness refuses to move it
// past that (harness/virtual_clock.h) instead of wrapping.
#pragma once

#include <cstdint>
#include <limits>

namespace xackly {

// One year: the longest single duration (step, effect, timeout, TTL, stall,
// clock jump, outage, interval, ...).
inline constexpr int64_t kMaxDurationMs = 365LL * 24 * 60 * 60 * 1000;
// The longest a run's time budget (TimeBudgetMs in sim/simulation.cc: every
// duration added up, max_steps * step_ms, the fault phase and every
// scheduled fault) may be: 100 years.
inline constexpr int64_t kMaxRunSpanMs = 100 * kMaxDurationMs;
// timing.max_steps.
inline constexpr int64_t kMaxSteps = 10'000'000;
// events of a run (and so the highest event a fault can name).
inline constexpr int kMaxEvents = 100'000;
// workers and producers of a run.
inline constexpr int kMaxWorkers = 64;
inline constexpr int kMaxProducers = 16;
// replicas of a run's server ([server] replicas; harness/replicated_server.h
// says how several are modelled).
inline constexpr int kMaxReplicas = 4;
// Counts that are not actors or events: read/claim counts, trim length,
// deliveries before dead-lettering, scheduled and poison fault counts.
inline constexpr int kMaxCount = 100'000;

// a + b for a, b >= 0, INT64_MAX instead of overflowing.
constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

// a * b for a, b >= 0, INT64_MAX instead of overflowing.
constexpr int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max() : a * b;
}

}  // namespace xackly
