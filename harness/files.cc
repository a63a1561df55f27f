#include "harness/files.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace xackly {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return Status::IoError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open: " + std::strerror(errno));
  // Read in chunks up to the limit: /dev/zero or a FIFO has no size to ask.
  std::string out;
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    out.append(chunk, static_cast<size_t>(in.gcount()));
    if (out.size() > kMaxInputFileBytes) {
      return Status::InvalidArgument(
          fmt::format("{}: larger than {} MiB; not a scenario or script", path, kMaxInputFileBytes >> 20));
    }
  }
  if (in.bad()) return Status::IoError(path + ": read failed");
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
