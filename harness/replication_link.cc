#include "harness/replication_link.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sim/step.h"
#include "sim/stream.h"
#include "sim/text.h"

namespace xackly {

std::vector<std::string> ReplicationConfigLines() {
  return {
      // The harness reads the link between cases and at failovers only;
      // virtual time can pass hours in between.
      "repl-timeout 2000000000",
      "repl-ping-replica-period 2000000000",
      "client-output-buffer-limit replica 0 0 0",
      "repl-diskless-sync no",
      "repl-backlog-size 16mb",
      // The full resync after a failover ends when the primary's cron (real
      // time, hz per second) sees the snapshot's fork exit: 10 ms, not 100.
      "hz 100",
  };
}

Result<std::unique_ptr<ReplicationLink>> ReplicationLink::Open(const std::string& socket_path,
                                                               std::string_view user, std::string_view secret,
                                                               int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("replication link: socket path too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("replication link: socket(): {}", std::strerror(errno)));
  std::unique_ptr<ReplicationLink> link(new ReplicationLink(fd, timeout_ms));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::IoError(fmt::format("replication link: connect to {}: {}", socket_path, std::strerror(errno)));
  }
  auto expect_ok = [&](const char* what) -> Status {
    Result<std::string> line = link->ReadLine();
    if (!line.ok()) return line.status();
    if (*line != "+OK") {
      return Status::ProtocolError(fmt::format("replication link: {} replied {}", what, *line));
    }
    return Status::Ok();
  };
  if (Status s = link->Send({"AUTH", user, secret}); !s.ok()) return s;
  if (Status s = expect_ok("AUTH"); !s.ok()) return s;
  if (Status s = link->Send({"REPLCONF", "capa", "psync2"}); !s.ok()) return s;
  if (Status s = expect_ok("REPLCONF capa"); !s.ok()) return s;
  if (Status s = link->Send({"PSYNC", "?", "-1"}); !s.ok()) return s;
  Result<std::string> sync = link->ReadLine();
  if (!sync.ok()) return sync.status();
  // +FULLRESYNC <replid> <offset>
  std::vector<std::string_view> words = SplitList(*sync, ' ');
  int64_t offset = -1;
  if (words.size() != 3 || words[0] != "+FULLRESYNC" || !ParseDecimal(words[2], &offset)) {
    return Status::ProtocolError("replication link: PSYNC replied " + *sync);
  }
  // While the snapshot is made the primary sends bare newlines; then
  // $<length>\r\n and that many bytes, with no CRLF after them.
  std::string header;
  while (true) {
    while (!link->buffer_.empty() && link->buffer_[0] == '\n') link->buffer_.erase(0, 1);
    if (!link->buffer_.empty()) {
      Result<std::string> line = link->ReadLine();
      if (!line.ok()) return line.status();
      header = *line;
      break;
    }
    if (Status s = link->Fill(); !s.ok()) return s;
  }
  int64_t rdb_bytes = -1;
  if (header.size() < 2 || header[0] != '$' || !ParseDecimal(std::string_view(header).substr(1), &rdb_bytes) ||
      rdb_bytes < 0) {
    return Status::ProtocolError("replication link: expected the snapshot's length, got " + header);
  }
  while (static_cast<int64_t>(link->buffer_.size()) < rdb_bytes) {
    if (Status s = link->Fill(); !s.ok()) return s;
  }
  link->buffer_.erase(0, static_cast<size_t>(rdb_bytes));
  link->offset_ = offset;
  return link;
}

ReplicationLink::~ReplicationLink() {
  ::shutdown(fd_, SHUT_RDWR);  // the primary drops this replica at once, whatever fork holds a copy
  ::close(fd_);
}

Status ReplicationLink::Send(const std::vector<std::string_view>& argv) {
  std::string out = fmt::format("*{}\r\n", argv.size());
  for (std::string_view a : argv) out += fmt::format("${}\r\n{}\r\n", a.size(), a);
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(fmt::format("replication link: send: {}", std::strerror(errno)));
    sent += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ReplicationLink::Fill() {
  pollfd p{fd_, POLLIN, 0};
  int ready = ::poll(&p, 1, timeout_ms_);
  if (ready < 0 && errno == EINTR) return Status::Ok();
  if (ready == 0) {
    return Status::Timeout(fmt::format("replication link: the primary sent nothing for {} ms", timeout_ms_));
  }
  char chunk[65536];
  ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
  if (n < 0 && errno == EINTR) return Status::Ok();
  if (n <= 0) return Status::IoError("replication link: the primary closed the link");
  buffer_.append(chunk, static_cast<size_t>(n));
  return Status::Ok();
}

Result<std::string> ReplicationLink::ReadLine() {
  size_t end;
  while ((end = buffer_.find("\r\n")) == std::string::npos) {
    if (Status s = Fill(); !s.ok()) return s;
  }
  std::string line = buffer_.substr(0, end);
  buffer_.erase(0, end + 2);
  return line;
}

Result<size_t> ReplicationLink::ParseCommand(std::vector<std::string>* argv) const {
  std::string_view b = buffer_;
  size_t pos = 0;
  auto line = [&](char type, int64_t* n) -> Result<bool> {  // false: incomplete
    size_t end = b.find("\r\n", pos);
    if (end == std::string_view::npos) return false;
    std::string_view text = b.substr(pos, end - pos);
    if (text.empty() || text[0] != type || !ParseDecimal(text.substr(1), n) || *n < 0) {
      return Status::ProtocolError(fmt::format("replication link: expected '{}<n>', got '{}'", type,
                                               text.substr(0, 40)));
    }
    pos = end + 2;
    return true;
  };
  int64_t count = 0;
  Result<bool> got = line('*', &count);
  if (!got.ok()) return got.status();
  if (!*got) return size_t{0};
  argv->clear();
  for (int64_t i = 0; i < count; ++i) {
    int64_t len = 0;
    got = line('$', &len);
    if (!got.ok()) return got.status();
    if (!*got || pos + static_cast<size_t>(len) + 2 > b.size()) return size_t{0};
    argv->emplace_back(b.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len) + 2;
  }
  if (count == 0) return Status::ProtocolError("replication link: an empty command");
  return pos;
}

Status ReplicationLink::ReadUntil(int64_t offset) {
  while (offset_ < offset) {
    std::vector<std::string> argv;
    Result<size_t> used = ParseCommand(&argv);
    if (!used.ok()) return used.status();
    if (*used == 0) {
      if (Status s = Fill(); !s.ok()) return s;
      continue;
    }
    buffer_.erase(0, *used);
    offset_ += static_cast<int64_t>(*used);
    const std::string verb = VerbOf(argv[0]);
    if (verb == "PING" || verb == "SELECT" || verb == "REPLCONF") continue;
    if (verb == "MULTI") {
      in_multi_ = true;
      multi_ = ReplicatedWrite{};
      continue;
    }
    if (in_multi_ && verb == "EXEC") {
      in_multi_ = false;
      if (!multi_.commands.empty()) writes_.push_back(std::move(multi_));
      multi_ = ReplicatedWrite{};
      continue;
    }
    if (in_multi_) {
      multi_.commands.push_back(std::move(argv));
      continue;
    }
    writes_.push_back(ReplicatedWrite{{std::move(argv)}});
  }
  return Status::Ok();
}

}  // namespace xackly
