// When a run's drain ends, and how long a quiet script's idle waits last.
//
// After the fault phase a run drains until it settles, or until nothing
// has progressed for a quiet window longer than any timer of the protocol
// could take to fire (then the oracle judges liveness: stuck, pel-leak). A
// protocol script's own timers may be invisible (kept in a variable), so
// its window is at least kScriptQuietFloorMs; and so that a script polling
// every millisecond still reaches the end of that floor inside the step
// guard, its idle waits lengthen with the silence (kIdleStretchDivisor).
//
// These rules are pure functions of the run's config and of a small
// progress tracker (Silence); the scheduler (sim/simulation.cc) feeds them
// and acts on their answers. Tested without a server:
// tests/sim/quiet_window_test.cc.
#pragma once

#include <cstdint>

#include "sim/simulation.h"

namespace xackly {

// What the drain's silence is measured from: the latest of the drain's
// start, the last progress (an event produced, delivered, acked or its
// effect run, as the oracle saw it) and the end of the longest piece of
// work still under way (an effect longer than the run's effect_ms, a
// script's duration_ms: a worker ten minutes into its effect is not stuck).
struct Silence {
  int64_t drain_start_ms = 0;
  int64_t last_progress_ms = 0;
  int64_t long_work_ends_ms = 0;

  int64_t SinceMs() const;
};

class QuietWindow {
 public:
  // The windows are fixed by the config alone (never by what fired), so
  // that a run and its replay from the fired plan stop at the same step.
  explicit QuietWindow(const RunConfig& config);

  // The window the config's timers give (the protocol's declared timers,
  // restarts, reconnects, stalls, outages, effects), before a script's
  // floor; timing.quiet_window_ms when it is set.
  int64_t timers_window_ms() const { return timers_window_ms_; }
  // timers_window_ms(), and for a protocol script at least
  // kScriptQuietFloorMs (unless timing.quiet_window_ms is set).
  int64_t window_ms() const { return window_ms_; }
  // The longest of the timers the protocol declares.
  int64_t declared_timer_ms() const { return declared_timer_ms_; }

  // The window now: window_ms() plus twice what the longest timer a
  // protocol script has used so far exceeds the declared ones by (a claim
  // waits that long, then the claimer's next round). A script that keeps to
  // its declared timers ends exactly where its C++ form does.
  int64_t CurrentMs(int64_t script_longest_timer_ms) const;
  // How long after the fault phase a run that keeps progressing without
  // settling may go on: a virtual day, or ten current windows.
  int64_t UnsettledHorizonMs(int64_t script_longest_timer_ms) const;
  // How long an idle wait (a sleep, a park) asked for `requested_ms` lasts
  // `quiet_for_ms` into the silence: as asked, except in a protocol
  // script's run after its fault phase that has been quiet for longer than
  // timers_window_ms(); there, at least 1/kIdleStretchDivisor of the
  // silence so far. Oversleeping is a schedule a real process can meet; a
  // timer read from w:now() still fires, late by at most that fraction.
  int64_t IdleWaitMs(int64_t requested_ms, int64_t quiet_for_ms, bool fault_phase) const;
  // Whether a worker's step that keeps it busy `busy_ms` is long work
  // (Silence::long_work_ends_ms): work up to effect_ms is in the window
  // already, so the catalog's traces keep their length.
  bool IsLongWork(int64_t busy_ms) const { return busy_ms > effect_ms_; }

 private:
  bool script_;
  int64_t effect_ms_;
  int64_t timers_window_ms_;
  int64_t window_ms_;
  int64_t declared_timer_ms_;
};

}  // namespace xackly
