// Helpers shared by the report tests: real counterexamples from a real
// redis-server (one per test process, started on first use), the model
// filled from a RunResult the way the harness glue fills it, a synthetic
// report that sets every field, and running external tools (xmllint,
// chromium) with a time limit.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/model.h"
#include "sim/simulation.h"

namespace xackly::report {

// The model of one run, as `xackly run` fills it.
CaseReport CaseFromRun(const RunConfig& config, const RunResult& result);
// A check of one case (cases_run 1), as `xackly run` fills it.
CheckReport CheckFromCase(const RunConfig& config, const CaseReport& c);
// A report of `checks`, with the header fields filled.
Report ReportOf(std::vector<CheckReport> checks);

// Runs `protocol` with workers/events and one explicit fault on a server
// shared by the whole test process, keeping the trace. Records a fatal
// failure and returns an empty case when the server or the run fails.
CaseReport RunCase(const std::string& protocol, int workers, int events, const std::string& fault);
// The same with several faults, one FaultSpec text each.
CaseReport RunCase(const std::string& protocol, int workers, int events, const std::vector<std::string>& faults);

// no-dedupe, 1 worker, 1 event, "crash w1 after-effect #1": a duplicate.
const CaseReport& NoDedupeCase();
// Appends `n` identical janitor polls (XPENDING naming entry 0-1, on the
// violating path), `step_ms` apart from 10 ms after `c`'s last line.
void AppendIdenticalPolls(CaseReport* c, int n, int64_t step_ms);
// ack-first, 1 worker, 1 event, "crash w1 after-ack #1": a loss.
const CaseReport& AckFirstCase();

// A report that sets every field of the model to a non-default value and
// uses every enum value, with hostile text (quotes, <, &, |, backticks,
// control bytes, non-ASCII).
Report EverythingReport();

// `name` found on PATH, or "".
std::string FindOnPath(const std::string& name);

struct ToolOutput {
  int exit_code = -1;  // -1: did not exit normally (killed after the time limit)
  std::string out;     // stdout (stderr is discarded unless merge_stderr)
};
// Runs `path` with `args`, at most `timeout_ms`, and collects its output.
ToolOutput RunTool(const std::string& path, const std::vector<std::string>& args, int timeout_ms,
                   bool merge_stderr = false);

// A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` to path()/name and returns the file's path.
  std::string Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// Every sentence of `story` that contains `needle`, as indexes.
std::vector<size_t> Find(const std::vector<std::string>& story, const std::string& needle);

}  // namespace xackly::report
