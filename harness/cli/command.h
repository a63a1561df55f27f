// The xackly subcommands. Each lives in its own file, harness/cli/
// <name>_command.cc, and is added to the executable by one line in
// main.cc's command table; a new subcommand touches no other command.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/exit_codes.h"

namespace xackly {

// Where a subcommand leaves its exit code (harness/exit_codes.h).
struct CommandResult {
  int exit_code = kExitOk;
};

// Adds one subcommand to `app`. The subcommand's callback runs the command
// and stores its exit code in `result`, which outlives the parse.
using RegisterCommandFn = void (*)(CLI::App& app, CommandResult& result);

void RegisterDoctorCommand(CLI::App& app, CommandResult& result);
void RegisterProtocolsCommand(CLI::App& app, CommandResult& result);
void RegisterRunCommand(CLI::App& app, CommandResult& result);
void RegisterCheckCommand(CLI::App& app, CommandResult& result);
void RegisterReplayCommand(CLI::App& app, CommandResult& result);
void RegisterExplainCommand(CLI::App& app, CommandResult& result);
void RegisterMergeCommand(CLI::App& app, CommandResult& result);

}  // namespace xackly
