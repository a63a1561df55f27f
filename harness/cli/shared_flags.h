// Flags that run, check, replay and explain share, and how they resolve to
// what to run. Every resolution error is an input error (exit 2) whose
// message names the flag or file and lists the valid values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/redis_server.h"
#include "reports/model.h"
#include "scenarios/scenario.h"

namespace xackly {

// What to run: a catalog protocol or a scenario file.
struct TargetFlags {
  std::string protocol;
  std::string scenario;
};
// Adds --protocol and --scenario (mutually exclusive).
void AddTargetFlags(CLI::App* cmd, TargetFlags* flags);

// Reads and parses what the flags name. For --protocol the scenario is the
// catalog protocol with its own defaults. REQUIRES: one of the two is set.
Result<Scenario> LoadTarget(const TargetFlags& flags);
// Reads and parses a scenario file.
Result<Scenario> LoadScenarioFile(const std::string& path);
// A protocol script's paths (script, include) are relative to the scenario
// file: rewrites them for a copy of `*s` written to `to_file` instead of
// `from_file`, so a replay file in --out still finds its script. Paths that
// are absolute, or a scenario without a script, are left as they are.
void RebaseScriptPaths(Scenario* s, const std::string& from_file, const std::string& to_file);

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
  std::string server_path;
  std::string out_dir;
  std::string formats;
  bool quiet = false;
  bool no_pin = false;  // --no-pin: leave case threads and servers where the kernel puts them
};
// `default_out`: the --out default ("" for none).
void AddOutputFlags(CLI::App* cmd, OutputFlags* flags, const std::string& default_out);

RedisServerOptions ServerOptionsFrom(const OutputFlags& flags);

// Checks, before anything runs, what WriteReports will need: --format names
// known formats and --out is (or can be made) a writable directory. Errors
// are input errors (kInvalidArgument, exit 2).
Status CheckOutputFlags(const OutputFlags& flags);

// Writes `report` in every format --format names (default: the command's
// `default_formats`) into --out; lists the files written in *written.
Status WriteReports(const report::Report& report, const OutputFlags& flags,
                    const std::string& default_formats, std::vector<std::string>* written);

// The command line as typed, for reports ("xackly check --all --seed 3").
std::string CommandLine();
void SetCommandLine(int argc, char** argv);

// One line describing a run configuration: "3 workers, 10 events, 1
// producer, persistence none, restart naming same, faults crash(...)".
std::string DescribeRun(const RunConfig& config);

// Prints `status` to stderr as "xackly <command>: error: ...".
void PrintError(const char* command, const Status& status);

}  // namespace xackly
