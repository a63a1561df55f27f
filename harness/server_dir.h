// The private directory of one redis-server: its config, socket, log, clock
// page and persisted files. Named <root>/xackly-XXXXXX, mode 0700, where
// root is DefaultTempRoot() (below). Each carries an owner marker (the pid of the
// xackly process that made it) so that a later xackly can tell a directory
// left behind by a killed run from one that is still in use.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sim/status.h"

namespace xackly {

// Name of the owner marker file inside every server dir.
inline constexpr char kOwnerMarkerName[] = "xackly-owner.pid";
// Name of the Unix socket inside every server dir.
inline constexpr char kSocketName[] = "redis.sock";

class ServerDir {
 public:
  // Creates a fresh server dir under `root` (empty: $TMPDIR, else /tmp).
  // Fails with kInvalidArgument when the socket path inside it would not fit
  // a Unix socket address (sun_path), naming the path and the limit, and
  // with kIoError when the directory or marker cannot be written.
  static Result<std::unique_ptr<ServerDir>> Create(const std::string& root);
  // Removes the directory and everything in it.
  ~ServerDir();
  ServerDir(const ServerDir&) = delete;
  ServerDir& operator=(const ServerDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(std::string_view name) const;
  std::string socket_path() const { return File(kSocketName); }

 private:
  explicit ServerDir(std::string path) : path_(std::move(path)) {}
  const std::string path_;
};

// $TMPDIR when set and non-empty, else /dev/shm when writable (memory: fsync
// is free, so appendfsync-always servers do not wait on the disk), else /tmp.
std::string DefaultTempRoot();

// Removes every <root>/xackly-* directory owned by this uid whose owner
// marker names a process that no longer exists. Directories without a
// marker, of another uid, or whose owner still runs are left alone.
// Returns how many were removed. Best effort: errors are ignored.
int RemoveStaleServerDirs(const std::string& root);

}  // namespace xackly
