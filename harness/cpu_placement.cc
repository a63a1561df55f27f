#include "harness/cpu_placement.h"

#include <sched.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

namespace xackly {

std::vector<int> CpusIn(const cpu_set_t* set) {
  std::vector<int> cpus;
  if (set != nullptr) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return CpusIn(sched_getaffinity(0, sizeof(set), &set) == 0 ? &set : nullptr);
}

int CurrentCpu() {
  const int cpu = sched_getcpu();
  return cpu >= 0 ? cpu : AllowedCpus().front();
}

int CpuForThread(const std::vector<int>& allowed, int first_cpu, int index) {
  size_t start = 0;
  while (start < allowed.size() && allowed[start] < first_cpu) ++start;
  if (start == allowed.size()) start = 0;
  return allowed[(start + static_cast<size_t>(index)) % allowed.size()];
}

namespace {
bool BindCallingThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  return CPU_COUNT(&set) > 0 && sched_setaffinity(0, sizeof(set), &set) == 0;
}
}  // namespace

ThreadPin::ThreadPin(int cpu) : cpu_(cpu), previous_(AllowedCpus()) {
  pinned_ = BindCallingThread({cpu});
}

ThreadPin::~ThreadPin() {
  if (pinned_) BindCallingThread(previous_);
}

std::string CpusAllowedList(pid_t id) {
  std::ifstream status(fmt::format("/proc/{}/status", id));
  constexpr std::string_view kField = "Cpus_allowed_list:";
  for (std::string line; std::getline(status, line);) {
    if (line.compare(0, kField.size(), kField) != 0) continue;
    size_t start = line.find_first_not_of(" \t", kField.size());
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::string DescribeCallingThreadPlacement() {
  const std::string list = CpusAllowedList(gettid());
  const bool one = !list.empty() && list.find_first_of(",-") == std::string::npos;
  return fmt::format("{} {}", one ? "CPU" : "CPUs", list.empty() ? "?" : list);
}

}  // namespace xackly
