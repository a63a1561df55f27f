// Runs n jobs on `drivers` threads at once and hands their results over in
// job order, as each becomes available: how `check` runs several checks at
// once on one case pool yet prints and records them in order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace xackly {

// Calls run(k) for k in [0, n) on `drivers` threads (in order of k as
// threads come free), and finish(k, result) on the calling thread for
// k = 0, 1, ... as soon as result k is there. `waiting(done)` is called on
// the calling thread whenever it waits, with how many jobs have finished.
// When finish returns false, no further job starts, the running ones end
// and RunInOrder returns false. REQUIRES: drivers >= 1
template <typename T>
bool RunInOrder(size_t n, int drivers, const std::function<T(size_t)>& run,
                const std::function<bool(size_t, T&)>& finish, const std::function<void(size_t done)>& waiting) {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::optional<T>> results(n);
  size_t next = 0, finished = 0;
  bool abandon = false;
  auto drive = [&] {
    for (;;) {
      size_t k;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (abandon || next == n) return;
        k = next++;
      }
      T result = run(k);
      {
        std::lock_guard<std::mutex> lock(mu);
        results[k] = std::move(result);
        ++finished;
      }
      changed.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < drivers; ++i) threads.emplace_back(drive);
  bool completed = true;
  for (size_t k = 0; k < n && completed; ++k) {
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] {
        waiting(finished);
        return results[k].has_value();
      });
    }
    completed = finish(k, *results[k]);
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    abandon = true;
  }
  for (std::thread& t : threads) t.join();
  return completed;
}

}  // namespace xackly
