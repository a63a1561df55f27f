// The harness as a replica's replication link. It connects to a primary's
// socket like a replica would (PSYNC ? -1), skips the snapshot of the full
// resync (the harness seeds the replica itself: harness/replicated_server.h)
// and then reads the primary's replication stream, write by write, exactly
// as the server propagates it: XREADGROUP arrives as XCLAIM ... FORCE JUSTID
// LASTID plus XGROUP SETID inside MULTI/EXEC, SET ... EX as PXAT, an EVAL as
// its effects. It applies nothing: the caller decides how much of the
// stream a replica receives, which is what makes a failover's loss a choice
// of the seed and not of the kernel.
//
// The link never acknowledges (no REPLCONF ACK): WAIT is answered by the
// harness (ReplicatedServer), and the primary is configured never to time
// the link out (ReplicationConfigLines).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/server.h"
#include "sim/status.h"

namespace xackly {

// redis.conf lines every server of a replicated run needs (a primary whose
// replica is the harness): no timeout or output-buffer limit for the link
// (virtual time may leap hours between two reads of it), no pings that
// would make the stream depend on real time, and a disk snapshot for the
// full resync (a diskless one waits for a delay on the server's clock).
std::vector<std::string> ReplicationConfigLines();

class ReplicationLink {
 public:
  // Connects to the Unix socket at `socket_path`, authenticates as
  // `user`/`secret`, asks for a full resync and reads past its snapshot.
  // `timeout_ms` (> 0) bounds every wait for the primary (the snapshot is
  // a fork and a write of an almost empty database). Fails with kIoError
  // (the socket), kTimeout, or kProtocolError naming what the primary sent.
  static Result<std::unique_ptr<ReplicationLink>> Open(const std::string& socket_path,
                                                       std::string_view user, std::string_view secret,
                                                       int timeout_ms);
  ~ReplicationLink();
  ReplicationLink(const ReplicationLink&) = delete;
  ReplicationLink& operator=(const ReplicationLink&) = delete;

  // Reads the stream until the link is at `offset` (the primary's
  // master_repl_offset, from INFO replication), queueing every complete
  // write in writes(); pings and SELECTs move the offset and queue nothing.
  // A `offset` below the link's is a no-op. Fails with kTimeout when the
  // primary does not send that much within the link's timeout, kIoError
  // when the link closed, kProtocolError on anything that is not a RESP
  // array of bulk strings.
  Status ReadUntil(int64_t offset);

  // The writes read and not yet taken, oldest first.
  std::deque<ReplicatedWrite>& writes() { return writes_; }
  // The primary's replication offset the link has read up to.
  int64_t offset() const { return offset_; }

 private:
  ReplicationLink(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {}
  // Appends what the socket has to buffer_, waiting up to the timeout.
  Status Fill();
  // A line ending in CRLF at the buffer's start (without it), consumed.
  Result<std::string> ReadLine();
  // Parses one command from the buffer's start: its arguments and how many
  // bytes it spans, or 0 bytes when the buffer holds only part of it.
  Result<size_t> ParseCommand(std::vector<std::string>* argv) const;
  Status Send(const std::vector<std::string_view>& argv);

  int fd_;
  int timeout_ms_;
  std::string buffer_;
  int64_t offset_ = 0;
  std::deque<ReplicatedWrite> writes_;
  // The block between MULTI and EXEC being read, if any.
  bool in_multi_ = false;
  ReplicatedWrite multi_;
};

}  // namespace xackly
