// The xackly executable: parses the command line with CLI11, runs one
// subcommand and turns the outcome into one of the exit codes in
// harness/exit_codes.h (CLI11's own exit codes never leak out).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "harness/cli/command.h"
#include "harness/cli/shared_flags.h"
#include "harness/exit_codes.h"
#include "harness/live_servers.h"

namespace {

constexpr char kDescription[] =
    "xackly: a deterministic simulation and fault-injection harness for Redis Streams consumer "
    "protocols.\n"
    "It runs a real, unmodified redis-server as a child process on a private Unix socket, on a "
    "virtual clock that xackly alone moves, drives simulated producers and consumer workers "
    "against it one request at a time from a seed, injects faults (worker crashes between "
    "protocol steps, lost replies, stalls, XDEL/XTRIM, restarts...) and judges whether any "
    "event's side effect ran twice or never. Every failure shrinks to a replay file.\n"
    "Start with `xackly check --all` (the whole protocol catalog) or `xackly protocols`; "
    "`xackly doctor` checks that the server on this machine works under the virtual clock.";

constexpr char kFooter[] =
    "Exit codes: 0 the observed verdict equals the expected one (doctor: every check passed); "
    "1 it does not; 2 usage or input error; 3 harness or server failure.\n"
    "Server binary: --server PATH, else $XACKLY_REDIS_SERVER, else redis-server on PATH.";

// Every subcommand, in the order --help lists them.
constexpr xackly::RegisterCommandFn kCommands[] = {
    xackly::RegisterDoctorCommand,
    xackly::RegisterProtocolsCommand,
    xackly::RegisterRunCommand,
    xackly::RegisterCheckCommand,
    xackly::RegisterReplayCommand,
    xackly::RegisterExplainCommand,
    xackly::RegisterMergeCommand,
};

}  // namespace

int main(int argc, char** argv) {
  xackly::InstallLiveServerSignalHandlers();
  xackly::SetCommandLine(argc, argv);
  CLI::App app(kDescription, "xackly");
  app.footer(kFooter);
  // At most one; "none" is handled below, after CLI11 has reported unknown
  // flags and words (its own "subcommand required" check would hide them).
  app.require_subcommand(0, 1);
  xackly::CommandResult result;
  for (xackly::RegisterCommandFn register_command : kCommands) register_command(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is an "error" with CLI11 exit code 0.
    return app.exit(e) == 0 ? xackly::kExitOk : xackly::kExitUsage;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stderr);
    std::fputs("\nerror: name a subcommand\n", stderr);
    return xackly::kExitUsage;
  }
  return result.exit_code;
}
