// Exit codes of every xackly command. Scripts and CI branch on them, so they
// never change meaning.
#pragma once

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

}  // namespace xackly
