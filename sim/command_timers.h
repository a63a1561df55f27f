// The timers a protocol script names in its Redis commands.
//
// A built-in protocol declares its timers (claim threshold, claim period,
// block time, TTLs) and the simulator sizes its quiet window from them: a run
// ends when nothing has progressed for longer than any timer could take to
// fire. A script's timers are constants inside the script, so the simulator
// reads them off the commands it sends instead: a claim threshold in XCLAIM
// or XAUTOCLAIM, XPENDING's IDLE filter, a key's expiry (SET EX/PX, SETEX,
// PSETEX, EXPIRE, PEXPIRE, GETEX EX/PX). Without this a correct script whose
// recovery waits two hours was judged `pel-leak` after the default window.
//
// Timers inside the user's own EVAL/FCALL cannot be read; docs/scripts.md
// says how to declare them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xackly {

// The timers a script used in one run, by what they time (ms; 0: none
// seen). The quiet window uses the longest; the search sizes its stalls
// and clock jumps by the claim threshold and the key expiry.
// The relative expiry `argv` gives its key (SET EX/PX, SETEX, PSETEX,
// EXPIRE, PEXPIRE, GETEX EX/PX), in ms; 0 when it names none (another
// command, an absolute expiry, a malformed number). Saturates at one year.
// REQUIRES: !argv.empty()
int64_t KeyExpiryMs(const std::vector<std::string>& argv);

struct ScriptTimers {
  int64_t claim_threshold_ms = 0;  // XCLAIM/XAUTOCLAIM min-idle, XPENDING IDLE
  int64_t key_expiry_ms = 0;       // SET EX/PX, SETEX, PSETEX, EXPIRE, PEXPIRE, GETEX
  int64_t wait_ms = 0;             // w:sleep, w:read block times

  int64_t Longest() const;
  // Adds the timer `argv` names, if any (malformed numbers name none).
  // Absolute expiries (EXAT, PXAT, EXPIREAT) are not durations and are
  // ignored. Each duration saturates at one year.
  void AddCommand(const std::vector<std::string>& argv);
  void AddWait(int64_t ms);
};

}  // namespace xackly
