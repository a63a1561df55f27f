// What one command writes into --out: replay files and reports, and the
// manifest (.xackly-files) that lets the next run there remove them. run,
// check, replay, explain and merge write through it.
#pragma once

#include <string>
#include <vector>

#include "harness/cli/shared_flags.h"
#include "reports/model.h"
#include "scenarios/scenario.h"

namespace xackly {

class OutDir {
 public:
  // `dir` "" : no --out (nothing is written, every call succeeds).
  explicit OutDir(std::string dir) : dir_(std::move(dir)) {}

  // Removes what the previous run wrote here (RemovePreviousRunFiles): no
  // stale replay file sits beside a new report looking current.
  void ClearPrevious() const;
  // Writes `replay` as <dir>/<ReplayFileName(stem)>, its script paths
  // rebased from `scenario_file` ("" none) to there, recorded with
  // `server`; returns the path ("" without --out).
  Result<std::string> WriteReplay(const std::string& stem, Scenario replay, const std::string& scenario_file,
                                  const std::string& server);
  // Writes `report` in every format `output` asks for (WriteReports).
  Status WriteReports(const report::Report& report, const OutputFlags& output);
  // Writes `text` as <dir>/<name>, atomically.
  Status WriteFile(const std::string& name, const std::string& text);
  // Records every file written so far as this run's (the manifest). Fails
  // when the manifest cannot be written.
  Status Record() const;

  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& written() const { return written_; }

 private:
  std::string dir_;
  std::vector<std::string> written_;
};

}  // namespace xackly
