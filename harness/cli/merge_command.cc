// `xackly merge DIR...`: one report set from the JSON reports of several
// `check --shard I/N` runs (harness/merge.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/cli/command.h"
#include "harness/cli/shared_flags.h"
#include "harness/files.h"
#include "harness/merge.h"
#include "harness/results.h"
#include "reports/report.h"

namespace xackly {

namespace {

struct MergeFlags {
  std::vector<std::string> inputs;
  OutputFlags output;
};

// A directory holding report.json, or a JSON file.
std::string JsonPathOf(const std::string& input) {
  return std::filesystem::is_directory(input) ? JoinPath(input, "report.json") : input;
}

// Copies each counterexample's replay file, found next to the shard's
// report, into the merged output and points the report at the copy (with
// no `out_dir`: points the report at the file where it was found).
Status CollectReplayFiles(report::Report* merged, const std::vector<std::string>& inputs,
                          const std::string& out_dir) {
  for (report::CheckReport& k : merged->checks) {
    if (!k.counterexample || k.counterexample->replay_file.empty()) continue;
    std::string name = std::filesystem::path(k.counterexample->replay_file).filename().string();
    if (!IsPlainFileName(name)) continue;  // a report naming "..": nothing to copy
    for (const std::string& input : inputs) {
      std::string dir = std::filesystem::path(JsonPathOf(input)).parent_path().string();
      Result<std::string> text = ReadFile(JoinPath(dir.empty() ? "." : dir, name));
      if (!text.ok() || text->find(k.counterexample->trace_hash) == std::string::npos) continue;
      std::string copy = JoinPath(dir.empty() ? "." : dir, name);
      if (!out_dir.empty()) {
        copy = JoinPath(out_dir, name);
        Status s = WriteFileAtomically(copy, *text);
        if (!s.ok()) return s;
      }
      k.counterexample->replay_file = copy;
      k.counterexample->replay_command = ReplayCommand(copy);
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterMergeCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Combine the JSON reports of `check --shard I/N` runs into one report set");
  cmd->footer(
      "Each DIR holds a report.json written by `xackly check --shard I/N --format json --out DIR` "
      "(a .json file may be named directly). The merged verdicts and counterexamples are those of "
      "the unsharded run; replay files found beside the shard reports are copied into --out. "
      "Without --out, --format F prints the merged report in format F on stdout and writes nothing.\n"
      "Exit 0: every merged verdict matches its expectation; 1: one does not; 2: the reports do "
      "not belong together or cannot be read, or bad usage; 3: the merged reports could not be written.");
  cmd->add_option("DIR", flags->inputs, "shard output directories (or report JSON files)")->required();
  flags->output.default_out = "xackly-merged";
  cmd->add_option("--out", flags->output.out_dir, "directory for the merged reports (default xackly-merged)")
      ->check(NonEmptyPath());
  cmd->add_option("--format", flags->output.formats,
                  fmt::format("with --out: formats to write there: {} (default: all); without --out: the one "
                              "format to print on stdout (nothing is written)",
                              fmt::join(report::FormatNames(), ", ")));
  cmd->add_flag("--quiet", flags->output.quiet,
                "stdout carries one line per merged check (name, expected, observed, result, cases) and nothing "
                "else; a mismatch's replay command is one line on stderr");
  cmd->callback([flags, &result] {
    OutputFlags output = flags->output;
    if (Status resolved = ResolveOutput(&output); !resolved.ok()) {
      PrintError("merge", resolved);
      result.exit_code = kExitUsage;
      return;
    }
    if (!output.stdout_format.empty()) output.out_dir.clear();  // stdout only: no files at all
    std::vector<report::Report> shards;
    for (const std::string& input : flags->inputs) {
      std::string path = JsonPathOf(input);
      Result<std::string> text = ReadFile(path);
      if (!text.ok()) {
        PrintError("merge", text.status());
        result.exit_code = kExitUsage;
        return;
      }
      Result<report::Report> r = report::ParseJsonReport(*text);
      if (!r.ok()) {
        PrintError("merge", Status::InvalidArgument(path + ": " + r.status().message()));
        result.exit_code = kExitUsage;
        return;
      }
      shards.push_back(std::move(r).value());
    }
    Result<report::Report> merged = MergeReports(shards);
    if (!merged.ok()) {
      PrintError("merge", merged.status());
      result.exit_code = kExitUsage;
      return;
    }
    merged->command_line = CommandLine();
    Status copied = CollectReplayFiles(&*merged, flags->inputs, output.out_dir);
    std::vector<std::string> written;
    Status wrote = copied.ok() ? WriteReports(*merged, output, &written) : copied;
    if (!wrote.ok()) {
      PrintError("merge", wrote);
      result.exit_code = wrote.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitHarnessFailure;
      return;
    }
    // The report comes last: a failure ends with its replay command.
    // Gaps are judged here for a sharded search: a site one shard fired is
    // no gap (MergeReports), one no shard fired is (exit 4, as check's).
    const bool gaps = std::any_of(merged->checks.begin(), merged->checks.end(), report::FailedOnlyByGaps);
    result.exit_code = !merged->all_matched ? kExitVerdictMismatch : gaps ? kExitCoverageGaps : kExitOk;
    if (PrintMachineReport(*merged, output)) return;
    if (output.quiet) {
      for (const report::CheckReport& c : merged->checks) {
        fmt::print("{:<24} expected {:<28} observed {:<14} {} ({})\n", c.name, c.expected.ToString(), c.observed,
                   report::ResultWord(c), report::CaseCountsText(c));
        if (!c.matched && c.counterexample) fmt::print(stderr, "replay: {}\n", c.counterexample->replay_command);
      }
      return;
    }
    for (const std::string& f : written) fmt::print("wrote {}\n", f);
    std::printf("%s", report::RenderText(*merged, ColorAllowed(stdout), /*mismatches_only=*/true).c_str());
  });
}

}  // namespace xackly
