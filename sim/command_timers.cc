#include "sim/command_timers.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "sim/limits.h"
#include "sim/commands.h"

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

// The longest timer option (EX seconds, PX or IDLE milliseconds) anywhere
// from argv[first] on.
int64_t TimerOptionMs(const std::vector<std::string>& argv, size_t first) {
  int64_t longest = 0;
  for (size_t i = first; i + 1 < argv.size(); ++i) {
    const std::string option = Upper(argv[i]);
    if (option == "EX") longest = std::max(longest, DurationMs(argv[i + 1], 1000));
    if (option == "PX" || option == "IDLE") longest = std::max(longest, DurationMs(argv[i + 1], 1));
  }
  return longest;
}

// The timer `command` names in `argv` (0: none), from its row's columns.
int64_t TimerMs(const CommandInfo& command, const std::vector<std::string>& argv) {
  int64_t ms = 0;
  if (command.timer_at > 0 && command.timer_at < argv.size()) {
    ms = DurationMs(argv[command.timer_at], command.timer_unit_ms);
  }
  if (command.timer_options_from > 0) ms = std::max(ms, TimerOptionMs(argv, command.timer_options_from));
  return ms;
}

}  // namespace

int64_t KeyExpiryMs(const std::vector<std::string>& argv) {
  const CommandInfo& command = CommandOf(argv);
  return command.timer == TimerKind::kKeyExpiry ? TimerMs(command, argv) : 0;
}

int64_t ScriptTimers::Longest() const { return std::max({claim_threshold_ms, key_expiry_ms, wait_ms}); }

void ScriptTimers::AddCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return;
  const CommandInfo& command = CommandOf(argv);
  switch (command.timer) {
    case TimerKind::kClaimThreshold: claim_threshold_ms = std::max(claim_threshold_ms, TimerMs(command, argv)); break;
    case TimerKind::kKeyExpiry: key_expiry_ms = std::max(key_expiry_ms, KeyExpiryMs(argv)); break;
    case TimerKind::kNone: break;
  }
}

void ScriptTimers::AddWait(int64_t ms) { wait_ms = std::max(wait_ms, ms); }

}  // namespace xackly
