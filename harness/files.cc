#include "harness/files.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace xackly {

Result<std::string> ReadFile(const std::string& path) {
  // Opened without blocking (a FIFO with no writer would wait forever), then
  // judged by what was opened: only a regular file is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IoError(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::IoError(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(fmt::format(
        "{}: not a regular file (a FIFO, device or socket); scenarios and scripts are read from "
        "regular files only",
        path));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxInputFileBytes) {
    return Status::InvalidArgument(
        fmt::format("{}: larger than {} MiB; not a scenario or script", path, kMaxInputFileBytes >> 20));
  }
  // Read up to the limit, whatever the size said (the file may grow).
  std::string out;
  char chunk[65536];
  while (true) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::IoError(path + ": read failed: " + std::strerror(errno));
    if (got == 0) break;
    out.append(chunk, static_cast<size_t>(got));
    if (out.size() > kMaxInputFileBytes) {
      return Status::InvalidArgument(
          fmt::format("{}: larger than {} MiB; not a scenario or script", path, kMaxInputFileBytes >> 20));
    }
  }
  return out;
}

Status CheckWritableFilePath(const std::string& path) {
  std::filesystem::path target(path);
  std::error_code ec;
  if (!target.has_filename()) return Status::InvalidArgument(path + ": not a file name");
  if (std::filesystem::is_directory(target, ec)) {
    return Status::InvalidArgument(path + " is a directory (name the file to write)");
  }
  if (!target.has_parent_path()) return Status::Ok();
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec || !std::filesystem::is_directory(target.parent_path(), ec)) {
    return Status::InvalidArgument(target.parent_path().string() + ": cannot create: " +
                                   (ec ? ec.message() : std::string("not a directory")));
  }
  if (::access(target.parent_path().c_str(), W_OK) != 0) {
    return Status::InvalidArgument(target.parent_path().string() + ": not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  std::filesystem::path target(path);
  std::error_code ec;
  if (!target.has_filename()) return Status::IoError(path + ": not a file name");
  if (std::filesystem::is_directory(target, ec)) return Status::IoError(path + ": is a directory");
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return Status::IoError(target.parent_path().string() + ": cannot create: " + ec.message());
  }
  // The temporary file sits next to the target, so the rename never crosses
  // a file system and nothing lands anywhere else.
  std::filesystem::path tmp = target.parent_path() /
                              ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError(path + ": cannot write: " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return Status::IoError(path + ": write failed");
    }
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    return Status::IoError(path + ": cannot rename into place: " + why);
  }
  return Status::Ok();
}

Status PrepareOutputDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidArgument(dir + ": cannot create: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) return Status::InvalidArgument(dir + ": not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::InvalidArgument(dir + ": not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

bool IsPlainFileName(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

Result<std::string> ExecutableDir() {
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return Status::NotFound("/proc/self/exe is unreadable: cannot tell where the xackly executable is");
  std::string dir(exe, static_cast<size_t>(n));
  dir.resize(dir.rfind('/') + 1);
  return dir;
}

}  // namespace xackly
