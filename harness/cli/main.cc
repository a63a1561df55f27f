// The xackly executable: parses the command line with CLI11, runs one
// subcommand and turns the outcome into one of the exit codes in
// harness/exit_codes.h (CLI11's own exit codes never leak out).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/command.h"
#include "harness/cli/shared_flags.h"
#include "harness/exit_codes.h"
#include "harness/live_servers.h"
#include "harness/redis_server.h"
#include "sim/protocol.h"

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

// The subcommand a command line names (its first word that is one), "" when none.
std::string SubcommandOf(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[i]) return argv[i];
    }
  }
  return "";
}

// A hint for a CLI11 parse error: a protocol name given without --protocol.
std::string HintFor(const std::string& command, int argc, char** argv) {
  if (command != "run" && command != "check") return "";
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (xackly::FindProtocol(word) != nullptr && std::string(argv[i - 1]) != "--protocol") {
      return fmt::format("; did you mean `xackly {} --protocol {}`?", command, word);
    }
  }
  return "";
}

// --version: this build and the server binary it would use.
void PrintVersion() {
  fmt::print("xackly {}\n", XACKLY_VERSION);
  xackly::Result<std::string> server = xackly::FindServerBinary("");
  fmt::print("server default: --server PATH, else ${}, else redis-server on PATH; here: {}\n", xackly::kServerEnv,
             server.ok() ? *server : "none found (" + server.status().message() + ")");
}

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
  bool version = false;
  app.add_flag("--version", version, "print the version and the server binary xackly would use, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is an "error" with CLI11 exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? xackly::kExitOk : xackly::kExitUsage;
    std::string command = SubcommandOf(app, argc, argv);
    std::fprintf(stderr, "xackly%s%s: error: %s%s\n", command.empty() ? "" : " ", command.c_str(), e.what(),
                 HintFor(command, argc, argv).c_str());
    std::fprintf(stderr, "see `xackly%s%s --help`\n", command.empty() ? "" : " ", command.c_str());
    return xackly::kExitUsage;
  }
  if (version) {
    PrintVersion();
    return xackly::kExitOk;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stderr);
    std::fputs("\nerror: name a subcommand\n", stderr);
    return xackly::kExitUsage;
  }
  return result.exit_code;
}
