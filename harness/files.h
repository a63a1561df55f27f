// Reading and writing the files xackly's commands take and leave behind
// (scenario files, replay files, reports, traces).
#pragma once

#include <string>
#include <string_view>

#include "sim/status.h"

namespace xackly {

// The whole file. kNotFound when it does not exist, kIoError otherwise; the
// message names the path.
Result<std::string> ReadFile(const std::string& path);

// Writes `content` to `path` through a temporary file renamed into place, so
// a failure never leaves a half-written file. Creates missing parent
// directories. The message of a failure names the path.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// `dir` + "/" + `name`, without doubling the slash.
std::string JoinPath(std::string_view dir, std::string_view name);

}  // namespace xackly
