// The one Connection implementation that speaks to a real server, and the
// only file in xackly that includes hiredis. Blocking, one command at a time,
// over a Unix socket.
#pragma once

#include <sys/time.h>

#include <memory>
#include <string>

#include "sim/connection.h"
#include "sim/status.h"

namespace xackly {

// Connects to the Unix socket at `socket_path`. `timeout_ms` (> 0) bounds the
// connect and every later Call: a reply that takes longer makes the Call fail
// with kTimeout and leaves the connection dead (Connection's contract).
// Fails with kIoError when nothing accepts on the socket.
//
// Side effect: the first call sets SIGPIPE to SIG_IGN for the whole process,
// so that writing to a server that died yields kIoError instead of killing
// xackly. Child processes started by the harness reset it before exec.
Result<std::unique_ptr<Connection>> ConnectUnix(const std::string& socket_path, int timeout_ms);

// `timeout_ms` (>= 0) as the whole seconds and microseconds hiredis takes.
timeval ToTimeval(int timeout_ms);

}  // namespace xackly
