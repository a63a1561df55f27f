#include "harness/case_pool.h"

#include <memory>
#include <optional>

#include "harness/cpu_placement.h"

namespace xackly {

CasePool::CasePool(int threads, RedisServerOptions options) {
  if (threads < 1) threads = 1;
  const std::vector<int> allowed = AllowedCpus();
  const int first = CurrentCpu();
  for (int i = 0; i < threads; ++i) {
    RedisServerOptions worker_options = options;
    if (options.pin) worker_options.cpu = CpuForThread(allowed, first, i);
    cpus_.push_back(options.pin ? worker_options.cpu : -1);
    workers_.emplace_back([this, worker_options] { WorkerLoop(worker_options); });
  }
}

CasePool::~CasePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void CasePool::WorkerLoop(RedisServerOptions options) {
  CaseExecutor executor(std::move(options));  // created, used and destroyed on this thread
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(executor);  // records its result under mu_
    work_done_.notify_all();
  }
}

std::vector<Result<RunResult>> CasePool::RunAll(const std::vector<RunConfig>& configs) {
  // This call's own results: other callers may have jobs in the queue too.
  std::vector<std::optional<Result<RunResult>>> slots(configs.size());
  size_t remaining = configs.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < configs.size(); ++i) {
      queue_.push_back([&, i](CaseExecutor& executor) {
        Result<RunResult> r = executor.Run(configs[i]);
        std::lock_guard<std::mutex> done(mu_);
        slots[i] = std::move(r);
        --remaining;
      });
    }
  }
  work_ready_.notify_all();
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [&] { return remaining == 0; });
  }
  std::vector<Result<RunResult>> out;
  out.reserve(configs.size());
  for (auto& slot : slots) out.push_back(std::move(*slot));
  return out;
}

Result<std::string> CasePool::ServerVersion() {
  std::unique_ptr<Result<std::string>> version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back([&](CaseExecutor& executor) {
      Result<RedisServer*> server = executor.Server(Persistence::kNone);
      auto v = std::make_unique<Result<std::string>>(
          server.ok() ? Result<std::string>(executor.server_version()) : Result<std::string>(server.status()));
      std::lock_guard<std::mutex> done(mu_);
      version = std::move(v);
    });
  }
  work_ready_.notify_one();
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [&] { return version != nullptr; });
  }
  return std::move(*version);
}

}  // namespace xackly
