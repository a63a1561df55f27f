// Reading and writing the files xackly's commands take and leave behind
// (scenario files, replay files, reports, traces).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sim/status.h"

namespace xackly {

// The largest file ReadFile takes (scenario, replay and script files are
// far smaller).
inline constexpr size_t kMaxInputFileBytes = size_t{16} << 20;

// The whole file. kNotFound when it does not exist, kInvalidArgument when
// it is not a regular file (a FIFO, /dev/zero: refused without waiting on
// it) or larger than kMaxInputFileBytes, kIoError otherwise; the message
// names the path.
Result<std::string> ReadFile(const std::string& path);

// Checks, before a run, that `path` can later be written by
// WriteFileAtomically: not a directory, and its parent a directory (or
// creatable). kInvalidArgument naming the path and why otherwise.
Status CheckWritableFilePath(const std::string& path);

// Writes `content` to `path` through a temporary file (".<name>.tmp.<pid>"
// in the same directory) renamed into place, so a failure never leaves a
// half-written file and nothing is written outside that directory. Creates
// missing parent directories. Fails with kIoError naming the path and why
// (also when `path` is a directory).
Status WriteFileAtomically(const std::string& path, std::string_view content);

// Creates `dir` if needed and checks that files can be written into it.
// kInvalidArgument naming the directory and why otherwise: commands check
// --out this way before running anything (a bad --out is bad input, exit 2).
Status PrepareOutputDir(const std::string& dir);

// A name that JoinPath keeps inside its directory: non-empty, at most 255
// bytes, no '/', no NUL, not "." or "..".
bool IsPlainFileName(std::string_view name);

// `dir` + "/" + `name`, without doubling the slash.
std::string JoinPath(std::string_view dir, std::string_view name);

// The directory of the running executable (/proc/self/exe), with a trailing
// '/': where the build and an installation put what xackly finds beside
// itself. kNotFound when /proc/self/exe cannot be read.
Result<std::string> ExecutableDir();

}  // namespace xackly
