#include "harness/case_pool.h"

#include <memory>

#include "harness/cpu_placement.h"

namespace xackly {

CasePool::CasePool(int threads, RedisServerOptions options, int first_index, int first_cpu) {
  if (threads < 1) threads = 1;
  const std::vector<int> allowed = AllowedCpus();
  const int first = first_cpu >= 0 ? first_cpu : CurrentCpu();
  for (int i = 0; i < threads; ++i) {
    RedisServerOptions worker_options = options;
    if (options.pin) worker_options.cpu = CpuForThread(allowed, first, first_index + i);
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
      ++running_;
    }
    job(executor);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
    work_done_.notify_all();
  }
}

std::vector<Result<RunResult>> CasePool::RunAll(const std::vector<RunConfig>& configs) {
  std::vector<std::unique_ptr<Result<RunResult>>> slots(configs.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < configs.size(); ++i) {
      queue_.push_back([&, i](CaseExecutor& executor) {
        slots[i] = std::make_unique<Result<RunResult>>(executor.Run(configs[i]));
      });
    }
  }
  work_ready_.notify_all();
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
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
      version = std::make_unique<Result<std::string>>(
          server.ok() ? Result<std::string>(executor.server_version()) : Result<std::string>(server.status()));
    });
  }
  work_ready_.notify_one();
  {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
  }
  return std::move(*version);
}

}  // namespace xackly
