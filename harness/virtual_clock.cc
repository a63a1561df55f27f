#include "harness/virtual_clock.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "harness/clock_page.h"
#include "harness/files.h"
#include "sim/limits.h"

namespace xackly {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

Result<std::unique_ptr<VirtualClock>> VirtualClock::Create(const std::string& page_path,
                                                           int64_t start_epoch_ms) {
  int fd = ::open(page_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IoError(fmt::format("cannot create clock page {}: {}", page_path, ErrnoText(errno)));
  }
  if (::ftruncate(fd, XACKLY_CLOCK_PAGE_BYTES) != 0) {
    int err = errno;
    ::close(fd);
    return Status::IoError(fmt::format("cannot size clock page {}: {}", page_path, ErrnoText(err)));
  }
  void* addr = ::mmap(nullptr, XACKLY_CLOCK_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED) {
    return Status::IoError(fmt::format("cannot map clock page {}: {}", page_path, ErrnoText(err)));
  }
  auto* page = static_cast<int64_t*>(addr);
  std::unique_ptr<VirtualClock> clock(new VirtualClock(page_path, page));
  clock->StoreMs(start_epoch_ms);
  std::atomic_ref<int64_t>(page[XACKLY_CLOCK_PAGE_SLOT_MAGIC])
      .store(static_cast<int64_t>(XACKLY_CLOCK_PAGE_MAGIC), std::memory_order_release);
  return clock;
}

VirtualClock::VirtualClock(std::string page_path, int64_t* page)
    : page_path_(std::move(page_path)), page_(page) {}

VirtualClock::~VirtualClock() { ::munmap(page_, XACKLY_CLOCK_PAGE_BYTES); }

void VirtualClock::StoreMs(int64_t epoch_ms) {
  if (epoch_ms > kMaxClockEpochMs) {
    out_of_range_ = true;
    epoch_ms = kMaxClockEpochMs;
  }
  std::atomic_ref<int64_t>(page_[XACKLY_CLOCK_PAGE_SLOT_NS])
      .store(epoch_ms * kNsPerMs, std::memory_order_release);
}

int64_t VirtualClock::NowMs() const {
  return std::atomic_ref<int64_t>(page_[XACKLY_CLOCK_PAGE_SLOT_NS]).load(std::memory_order_acquire) /
         kNsPerMs;
}

void VirtualClock::SetMs(int64_t epoch_ms) {
  XACKLY_CHECK(epoch_ms >= NowMs());
  StoreMs(epoch_ms);
}

void VirtualClock::AdvanceMs(int64_t delta_ms) {
  XACKLY_CHECK(delta_ms >= 0);
  StoreMs(SaturatingAdd(NowMs(), delta_ms));
}

void VirtualClock::ResetMs(int64_t epoch_ms) {
  out_of_range_ = false;
  StoreMs(epoch_ms);
  std::atomic_ref<int64_t>(page_[XACKLY_CLOCK_PAGE_SLOT_CASE]).fetch_add(1, std::memory_order_acq_rel);
}

Result<std::string> FindClockLibrary(const std::string& explicit_path) {
  auto usable = [](const std::string& path) { return ::access(path.c_str(), R_OK) == 0; };
  if (!explicit_path.empty()) {
    if (usable(explicit_path)) return explicit_path;
    return Status::NotFound(fmt::format("clock library {} is not readable", explicit_path));
  }
  if (const char* env = std::getenv(kClockLibEnv); env != nullptr && *env != '\0') {
    if (usable(env)) return std::string(env);
    return Status::NotFound(fmt::format("clock library ${}={} is not readable", kClockLibEnv, env));
  }
  Result<std::string> dir = ExecutableDir();
  if (!dir.ok()) {
    return Status::NotFound(fmt::format("cannot locate {}: ${} is not set and {}", kClockLibName, kClockLibEnv,
                                        dir.status().message()));
  }
  std::string candidate = *dir + kClockLibName;
  if (usable(candidate)) return candidate;
  return Status::NotFound(fmt::format(
      "cannot find the virtual-clock library: ${} is not set and {} does not exist (the build "
      "puts it next to the xackly executable and installs it in <prefix>/lib; set ${} to its path)",
      kClockLibEnv, candidate, kClockLibEnv));
}

}  // namespace xackly
