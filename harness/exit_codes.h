// Exit codes of every xackly command. Scripts and CI branch on them, so they
// never change meaning.
#pragma once

#include "sim/status.h"

namespace xackly {

// The observed verdict equals the expected one (doctor: every check passed).
inline constexpr int kExitOk = 0;
// The run worked, but the observed verdict differs from the expected one.
inline constexpr int kExitVerdictMismatch = 1;
// Usage or input error: unknown flag, bad value, malformed input file.
inline constexpr int kExitUsage = 2;
// The harness or the server failed: no server binary, a server that will not
// start or dies, a failed doctor check.
inline constexpr int kExitHarnessFailure = 3;
// check: every verdict matched, but a check ended with coverage gaps (fault
// sites its model enables and its cases reached that never fired, up to the
// coverage cap) and --allow-gaps was not given: a green without evidence.
inline constexpr int kExitCoverageGaps = 4;

// The exit code of a run that failed with `s`: bad input found while running
// (a protocol script's runtime error, docs/scripts.md) is a usage error;
// anything else is the harness's or the server's failure.
inline int ExitCodeOf(const Status& s) {
  return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitHarnessFailure;
}

}  // namespace xackly
