// `xackly doctor`: proves on this machine, against the real server binary,
// that everything the simulator relies on holds: the server starts under the
// virtual clock, every clock-dependent behaviour the simulator uses follows
// that clock exactly, and crash + restart loses what each persistence mode
// says it loses.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "sim/server.h"

namespace xackly {

struct DoctorOptions {
  // The server binary; empty: $XACKLY_REDIS_SERVER, else redis-server on PATH.
  std::string server_path;
  // When set, the clock checks run on a server with this persistence and only
  // this mode's crash check runs. Unset: clock checks with `none`, and the
  // crash check of every mode.
  std::optional<Persistence> persistence;
};

// Runs the checks in order, printing one line per check to `out` as it
// completes: "ok   <check>" or "FAIL <check>: <why>". When no server can be
// started, prints "FAIL server: <why>" and stops. Returns true when every
// check passed.
bool RunDoctor(const DoctorOptions& options, std::FILE* out);

}  // namespace xackly
