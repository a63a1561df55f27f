// The harness side of the virtual clock. redis-server runs with
// libxackly_clock.so preloaded (harness/clock_preload.c); that library reads
// the wall clock from a small file, the clock page, which this class owns
// and maps MAP_SHARED. Every value written here is what the server's next
// gettimeofday / clock_gettime(CLOCK_REALTIME) / time() returns: the server's
// wall clock stands still unless the harness moves it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/status.h"

namespace xackly {

// Where every run's clock starts unless told otherwise (2023-11-14T22:13:20Z),
// a fixed constant so that runs are reproducible.
inline constexpr int64_t kDefaultStartEpochMs = 1'700'000'000'000;
// The latest time the clock page can hold (int64 nanoseconds since the epoch).
inline constexpr int64_t kMaxClockEpochMs = INT64_MAX / 1'000'000;

// Environment variable through which the preload library finds the page.
inline constexpr char kClockPageEnv[] = "XACKLY_CLOCK_PAGE";
// Environment variable that overrides where the preload library is found.
inline constexpr char kClockLibEnv[] = "XACKLY_CLOCK_LIB";
// File name of the preload library, looked for next to the running executable.
inline constexpr char kClockLibName[] = "libxackly_clock.so";

class VirtualClock {
 public:
  // Creates (or truncates) the page file at `page_path`, maps it and sets the
  // clock to `start_epoch_ms`. Fails with kIoError when the file cannot be
  // created or mapped. The file stays after the clock is destroyed; removing
  // it is the owner's job (it lives in the server's temp dir).
  static Result<std::unique_ptr<VirtualClock>> Create(const std::string& page_path,
                                                      int64_t start_epoch_ms);
  ~VirtualClock();
  VirtualClock(const VirtualClock&) = delete;
  VirtualClock& operator=(const VirtualClock&) = delete;

  // Moves the clock to `epoch_ms`. REQUIRES: epoch_ms >= NowMs()
  void SetMs(int64_t epoch_ms);
  // Moves the clock forward by `delta_ms`. REQUIRES: delta_ms >= 0
  // Moves past kMaxClockEpochMs stop there (see out_of_range).
  void AdvanceMs(int64_t delta_ms);
  // Moves the clock to `epoch_ms`, backwards if need be, and counts a new
  // case (the server's random generators start over: harness/clock_page.h).
  // Only a server Reset between cases may do this: nothing may be left that
  // depends on time.
  void ResetMs(int64_t epoch_ms);
  int64_t NowMs() const;
  // True when a move asked for a time the page cannot hold (after
  // kMaxClockEpochMs, in the year 2262: the page holds int64 nanoseconds);
  // the clock then stays at kMaxClockEpochMs instead of wrapping around.
  // ResetMs clears it.
  bool out_of_range() const { return out_of_range_; }

  const std::string& page_path() const { return page_path_; }

 private:
  VirtualClock(std::string page_path, int64_t* page);
  void StoreMs(int64_t epoch_ms);

  const std::string page_path_;
  int64_t* const page_;  // mmap'd; [0] magic, [1] nanoseconds since the epoch
  bool out_of_range_ = false;
};

// Finds the preload library: `explicit_path` if non-empty, else
// $XACKLY_CLOCK_LIB, else libxackly_clock.so next to the running executable
// (/proc/self/exe). Fails with kNotFound naming every place it looked.
Result<std::string> FindClockLibrary(const std::string& explicit_path);

}  // namespace xackly
