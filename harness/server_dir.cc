#include "harness/server_dir.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace xackly {

namespace {

constexpr char kDirPrefix[] = "xackly-";
constexpr char kDirTemplateSuffix[] = "XXXXXX";

// The pid recorded in `dir`'s owner marker, or 0 when there is none.
pid_t OwnerOf(const std::filesystem::path& dir) {
  std::ifstream in(dir / kOwnerMarkerName);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::string DefaultTempRoot() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && *tmpdir != '\0') return tmpdir;
  // Memory, when there is a writable tmpfs: an fsync there costs nothing,
  // so a server with appendfsync always is not slowed (or timed out) by
  // other programs' disk writes. Its files still outlive the server process
  // across a restart, which is all persistence means here.
  return ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

Result<std::unique_ptr<ServerDir>> ServerDir::Create(const std::string& root) {
  std::string base = root.empty() ? DefaultTempRoot() : root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string templ = fmt::format("{}/{}{}", base, kDirPrefix, kDirTemplateSuffix);
  std::string socket_path = templ + "/" + kSocketName;
  constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;
  if (socket_path.size() > kMaxSocketPath) {
    return Status::InvalidArgument(fmt::format(
        "the server socket path {} would be {} bytes, but a Unix socket path may have at most "
        "{}; point TMPDIR at a shorter directory (e.g. TMPDIR=/tmp)",
        socket_path, socket_path.size(), kMaxSocketPath));
  }
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return Status::IoError(fmt::format("cannot create a directory {}: {}", templ, std::strerror(errno)));
  }
  std::unique_ptr<ServerDir> dir(new ServerDir(buf.data()));
  std::ofstream marker(dir->File(kOwnerMarkerName));
  marker << ::getpid() << "\n";
  marker.close();
  if (!marker) {
    return Status::IoError(fmt::format("cannot write {}", dir->File(kOwnerMarkerName)));
  }
  return dir;
}

ServerDir::~ServerDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ServerDir::File(std::string_view name) const {
  return fmt::format("{}/{}", path_, name);
}

int RemoveStaleServerDirs(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(root.empty() ? DefaultTempRoot() : root, ec);
  if (ec) return 0;
  std::vector<fs::path> stale;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
      continue;
    }
    pid_t owner = OwnerOf(entry.path());
    if (owner == 0 || ProcessExists(owner)) continue;
    stale.push_back(entry.path());
  }
  int removed = 0;
  for (const fs::path& dir : stale) {
    fs::remove_all(dir, ec);
    if (!ec) ++removed;
  }
  return removed;
}

}  // namespace xackly
