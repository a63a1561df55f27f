// Flags that run, check, replay and explain share, and how they resolve to
// what to run. Every resolution error is an input error (exit 2) whose
// message names the flag or file and lists the valid values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/redis_server.h"
#include "reports/model.h"
#include "reports/report.h"
#include "harness/scenario_files.h"
#include "scenarios/scenario.h"

namespace xackly {

// What to run: a catalog protocol or scenario files.
struct TargetFlags {
  std::string protocol;
  // The --scenario values in command-line order: at most one file, or,
  // where the command takes a suite (ScenarioCount::kSuite), any number of
  // files and directories (check_targets.h, AddSuiteTargets).
  std::vector<std::string> scenarios;
  // The one scenario file named, "" for none. REQUIRES: at most one.
  const std::string& scenario_file() const;
};
// How many --scenario values a command takes.
enum class ScenarioCount {
  kOne,    // one file (run)
  kSuite,  // files and directories, --scenario repeated or followed by several values (check)
};
// Adds --protocol and --scenario (mutually exclusive).
void AddTargetFlags(CLI::App* cmd, TargetFlags* flags, ScenarioCount count);

// Ok, or why this executable cannot run `scenario`: a file whose handler is
// C++ code in someone's own test ([protocol] handler = "c++"), of which it
// has only the documenting `steps` (running them would replay another
// protocol). The message names ReplayCaseFile (harness/embed.h).
Status RunnableByThisExecutable(const Scenario& scenario, const std::string& scenario_file);

// Reads and parses what the flags name. For --protocol the scenario is the
// catalog protocol with its own defaults. A scenario this executable cannot
// run (RunnableByThisExecutable) is an error. REQUIRES: either the protocol
// or exactly one scenario file is set.
Result<Scenario> LoadTarget(const TargetFlags& flags);

// The names of the catalog protocols closest to `name` ("did you mean"
// candidates), "" when none is close.
std::string ClosestProtocolNames(const std::string& name);

// Accepts what ParseSeed accepts (a seed as scenario files take it): CLI11
// alone would wrap "-1" and clamp values above 2^64-1.
CLI::Validator SeedValidator();

// Overrides of a scenario's run settings.
struct OverrideFlags {
  std::string seed;     // "" : the scenario's; else checked by SeedValidator
  std::optional<int> workers;
  std::optional<int> events;
  std::optional<int> producers;
  std::string persistence;
  std::string naming;
  std::string faults;   // comma-separated kinds, or "none"
  std::string expect;
};
// `with_seed`: also add --seed (check has its own).
void AddOverrideFlags(CLI::App* cmd, OverrideFlags* flags, bool with_seed);
// Applies the overrides and checks the result as a scenario file is checked
// (ValidateRunConfig, and the schedule names only actors the run has).
Status ApplyOverrides(const OverrideFlags& flags, RunConfig* config);

// Where reports go and how the terminal looks.
struct OutputFlags {
  std::string server_path;  // the server (the first of server_paths once resolved)
  // check: every --server given, in order (several: a server matrix).
  std::vector<std::string> server_paths;
  std::string out_dir;
  std::string formats;
  bool quiet = false;
  bool no_pin = false;  // --no-pin: leave case threads and servers where the kernel puts them
  // The --out default: where a command leaves replay files when --out is
  // not given ("" for none). Set by AddOutputFlags; ResolveOutput applies it.
  std::string default_out;
  // Set by ResolveOutput: the one format printed on stdout instead of being
  // written into --out ("" : the human summary on stdout, reports in --out).
  std::string stdout_format;
};
// `default_out`: the --out default ("" for none). --out and --format are
// resolved by ResolveOutput. `several_servers`: --server may be repeated
// (check's server matrix), into server_paths.
void AddOutputFlags(CLI::App* cmd, OutputFlags* flags, const std::string& default_out, bool several_servers = false);

// The convention of every report-writing command: `--format F` without
// `--out` prints format F on stdout (one format only) and no report file is
// written; replay files still go to the command's default --out. With
// --out, --format lists the files to write there. Call once, after the
// parse. Errors are input errors (kInvalidArgument, exit 2).
Status ResolveOutput(OutputFlags* flags);

// Where a command's human lines go: stdout, unless stdout carries a machine
// format (--format json|md|html|junit without --out): then stderr.
std::FILE* HumanOut(const OutputFlags& flags);

// Prints `report` on stdout in flags.stdout_format when that is a machine
// format; returns false (printing nothing) otherwise.
bool PrintMachineReport(const report::Report& report, const OutputFlags& flags);

// A CLI11 check that refuses an empty value ("--out ''" would silently mean
// "no --out").
CLI::Validator NonEmptyPath();

// What a previous run left in `dir`: the files listed in its manifest
// (dir/.xackly-files) are removed, so a replay file of an earlier run never
// sits beside a new report looking current. Only plain names inside `dir`
// are touched; files a user put there stay. A file that cannot be removed
// is left (the manifest's own removal is what matters: the next run's
// manifest names only its own files).
void RemovePreviousRunFiles(const std::string& dir);
// Adds `file` (a path inside `dir`) to the manifest before it is written:
// what a failed write leaves is still removed by the next run.
Status NoteRunFile(const std::string& dir, const std::string& file);
// Records `files` (paths inside `dir`) as this run's, for the next
// RemovePreviousRunFiles. Fails when the manifest cannot be written (a full
// disk): the next run could not tell these files from a user's.
Status RecordRunFiles(const std::string& dir, const std::vector<std::string>& files);

// Whether NO_COLOR (https://no-color.org) allows colour on `f`: a TTY and
// NO_COLOR unset or empty.
bool ColorAllowed(std::FILE* f);

RedisServerOptions ServerOptionsFrom(const OutputFlags& flags);

// Checks, before anything runs, what WriteReports will need: --format names
// known formats and --out is (or can be made) a writable directory, and
// locks --out for this process (its .xackly-lock; one run at a time: a
// second run on the same --out is refused). Errors are input errors
// (kInvalidArgument, exit 2).
Status CheckOutputFlags(const OutputFlags& flags);

// Writes `report` in every format --format names (default: every format,
// report::FormatNames()) into --out; appends the files written to *written.
Status WriteReports(const report::Report& report, const OutputFlags& flags, std::vector<std::string>* written);

// The command line as typed, for reports ("xackly check --all --seed 3").
std::string CommandLine();
void SetCommandLine(int argc, char** argv);

// One line describing a run configuration: "3 workers, 10 events, 1
// producer, persistence none, restart naming same, faults crash(...)".
std::string DescribeRun(const RunConfig& config);

// Prints `status` to stderr as "xackly <command>: error: ...".
void PrintError(const char* command, const Status& status);

}  // namespace xackly
