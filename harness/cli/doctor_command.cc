// `xackly doctor [--server PATH] [--persistence MODE]`.
#include <cstdio>
#include <memory>
#include <string>

#include "harness/cli/command.h"
#include "harness/doctor.h"

namespace xackly {

namespace {

struct DoctorFlags {
  std::string server_path;
  std::string persistence;  // empty: every mode
};

}  // namespace

void RegisterDoctorCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<DoctorFlags>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check that the server on this machine starts and runs correctly under the virtual "
      "clock (run this first)");
  cmd->footer(
      "Prints one line per check: `ok   <check>` or `FAIL <check>: why`. Exit 0 when every "
      "check passes, 3 when one fails or no server can be started (including a --server path "
      "that does not exist), 2 for bad flags.");
  cmd->add_option("--server", flags->server_path,
                  "redis-server or valkey-server binary (default: $XACKLY_REDIS_SERVER, else "
                  "redis-server on PATH)");
  cmd->add_option("--persistence", flags->persistence,
                  "check only this persistence mode, and run the clock checks on it (default: "
                  "clock checks with none; crash checks for none, rdb and aof-always)")
      ->check(CLI::IsMember({"none", "rdb", "aof-always"}));
  cmd->callback([flags, &result] {
    DoctorOptions options;
    options.server_path = flags->server_path;
    if (!flags->persistence.empty()) {
      Persistence persistence;
      XACKLY_CHECK(ParsePersistence(flags->persistence, &persistence));  // CLI11 checked it
      options.persistence = persistence;
    }
    result.exit_code = RunDoctor(options, stdout) ? kExitOk : kExitHarnessFailure;
  });
}

}  // namespace xackly
