#include "sim/quiet_window.h"

#include <algorithm>

#include "sim/limits.h"

namespace xackly {

namespace {

int64_t TimersWindowMs(const RunConfig& config) {
  const Timing& t = config.timing;
  if (t.quiet_window_ms > 0) return t.quiet_window_ms;
  const ProtocolDef& p = config.protocol;
  int64_t w = p.loop.block_ms + t.restart_delay_ms + t.reconnect_ms + 1000;
  // [search] Issue 15 item 1: a worker may legitimately make no progress for
  // as long as one batch of failing effects takes (a claimed batch of poison
  // events, each effect effect_ms long), once per claim round: without this
  // a slow environment was called stuck while the worker was still busy.
  const int64_t batch_ms = std::max(p.loop.read_count, p.loop.claim_count) * (t.effect_ms + 10 * t.step_ms);
  w += batch_ms;
  if (p.loop.claim) w += 2 * (p.loop.claim_min_idle_ms + p.loop.claim_every_ms + batch_ms);
  if (p.loop.dead_letter_after > 0) {
    w += p.loop.dead_letter_after * (p.loop.claim_min_idle_ms + p.loop.claim_every_ms + batch_ms);
  }
  if (p.janitor.enabled()) w += p.janitor.every_ms + p.janitor.consumer_idle_ms;
  // A stalled worker may still act after a long silence, and nothing
  // progresses while the business store is down. Both start before the
  // drain does, so the longest of them bounds the extra silence.
  int64_t stall_ms = config.faults.Has(FaultKind::kStall) ? config.faults.stall_ms : 0;
  int64_t outage_ms = config.faults.Has(FaultKind::kStoreOutage) ? config.faults.store_outage_ms : 0;
  if (config.fault_schedule) {
    for (const FaultSpec& f : *config.fault_schedule) {
      if (f.kind == FaultKind::kStall) stall_ms = std::max(stall_ms, f.duration_ms);
      if (f.kind == FaultKind::kStoreOutage) outage_ms = std::max(outage_ms, f.duration_ms);
    }
  }
  return w + std::max(stall_ms, outage_ms);
}

int64_t DeclaredLongestTimerMs(const ProtocolDef& p) {
  return std::max({p.loop.block_ms, p.loop.claim_min_idle_ms + p.loop.claim_every_ms, p.dedupe_ttl_ms,
                   p.janitor.every_ms + p.janitor.consumer_idle_ms});
}

}  // namespace

int64_t Silence::SinceMs() const { return std::max({drain_start_ms, last_progress_ms, long_work_ends_ms}); }

QuietWindow::QuietWindow(const RunConfig& config)
    : script_(config.protocol.script != nullptr),
      effect_ms_(config.timing.effect_ms),
      timers_window_ms_(TimersWindowMs(config)),
      window_ms_(script_ && config.timing.quiet_window_ms <= 0 ? std::max(timers_window_ms_, kScriptQuietFloorMs)
                                                                : timers_window_ms_),
      declared_timer_ms_(DeclaredLongestTimerMs(config.protocol)) {}

int64_t QuietWindow::CurrentMs(int64_t script_longest_timer_ms) const {
  const int64_t beyond_ms = std::max<int64_t>(0, script_longest_timer_ms - declared_timer_ms_);
  return SaturatingAdd(window_ms_, SaturatingMul(2, beyond_ms));
}

int64_t QuietWindow::UnsettledHorizonMs(int64_t script_longest_timer_ms) const {
  return std::max(kUnsettledHorizonMs, SaturatingMul(10, CurrentMs(script_longest_timer_ms)));
}

int64_t QuietWindow::IdleWaitMs(int64_t requested_ms, int64_t quiet_for_ms, bool fault_phase) const {
  if (!script_ || fault_phase || quiet_for_ms <= timers_window_ms_) return requested_ms;
  return std::max(requested_ms, quiet_for_ms / kIdleStretchDivisor);
}

}  // namespace xackly
