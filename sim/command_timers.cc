#include "sim/command_timers.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "sim/limits.h"
#include "sim/step.h"

namespace xackly {
namespace {

// `text` as a non-negative duration in `unit_ms` units, in ms; 0 if it is
// not a plain non-negative integer.
int64_t DurationMs(std::string_view text, int64_t unit_ms) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n <= 0) return 0;
  return n > kMaxDurationMs / unit_ms ? kMaxDurationMs : n * unit_ms;
}

// The EX/PX options of SET and GETEX, anywhere after the key.
int64_t ExpiryOptionMs(const std::vector<std::string>& argv, size_t first) {
  int64_t longest = 0;
  for (size_t i = first; i + 1 < argv.size(); ++i) {
    const std::string option = VerbOf(argv[i]);
    if (option == "EX") longest = std::max(longest, DurationMs(argv[i + 1], 1000));
    if (option == "PX") longest = std::max(longest, DurationMs(argv[i + 1], 1));
  }
  return longest;
}

// The argument at `i`, as a duration; 0 when absent.
int64_t ArgMs(const std::vector<std::string>& argv, size_t i, int64_t unit_ms) {
  return i < argv.size() ? DurationMs(argv[i], unit_ms) : 0;
}

// A claim threshold `argv` names (0: none).
int64_t ClaimThresholdMs(const std::vector<std::string>& argv, const std::string& verb) {
  // XCLAIM / XAUTOCLAIM key group consumer min-idle-time ...
  if (verb == "XCLAIM" || verb == "XAUTOCLAIM") return ArgMs(argv, 4, 1);
  // XPENDING key group IDLE min-idle-time start end count [consumer]
  if (verb == "XPENDING") return argv.size() > 3 && VerbOf(argv[3]) == "IDLE" ? ArgMs(argv, 4, 1) : 0;
  return 0;
}

// A key expiry `argv` names (0: none).
int64_t KeyExpiryMs(const std::vector<std::string>& argv, const std::string& verb) {
  if (verb == "SET") return ExpiryOptionMs(argv, 3);
  if (verb == "GETEX") return ExpiryOptionMs(argv, 2);
  if (verb == "SETEX" || verb == "EXPIRE") return ArgMs(argv, 2, 1000);
  if (verb == "PSETEX" || verb == "PEXPIRE") return ArgMs(argv, 2, 1);
  return 0;
}

}  // namespace

int64_t ScriptTimers::Longest() const { return std::max({claim_threshold_ms, key_expiry_ms, wait_ms}); }

void ScriptTimers::AddCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return;
  const std::string verb = VerbOf(argv[0]);
  claim_threshold_ms = std::max(claim_threshold_ms, ClaimThresholdMs(argv, verb));
  key_expiry_ms = std::max(key_expiry_ms, KeyExpiryMs(argv, verb));
}

void ScriptTimers::AddWait(int64_t ms) { wait_ms = std::max(wait_ms, ms); }

}  // namespace xackly
