#include "harness/cli/out_dir.h"

#include "harness/files.h"
#include "harness/scenario_files.h"

namespace xackly {

void OutDir::ClearPrevious() const {
  if (!dir_.empty()) RemovePreviousRunFiles(dir_);
}

Result<std::string> OutDir::WriteReplay(const std::string& stem, Scenario replay, const std::string& scenario_file,
                                        const std::string& server) {
  if (dir_.empty()) return std::string();
  const std::string file = JoinPath(dir_, ReplayFileName(stem));
  if (!scenario_file.empty()) RebaseScriptPaths(&replay, scenario_file, file);
  replay.server = server;
  written_.push_back(file);
  // In the manifest before it exists: a write that fails half-way (a full
  // disk) leaves no file the next run would not remove.
  if (Status noted = NoteRunFile(dir_, file); !noted.ok()) return noted;
  if (Status s = WriteFileAtomically(file, WriteScenario(replay)); !s.ok()) return s;
  return file;
}

Status OutDir::WriteReports(const report::Report& report, const OutputFlags& output) {
  return xackly::WriteReports(report, output, &written_);
}

Status OutDir::WriteFile(const std::string& name, const std::string& text) {
  if (dir_.empty()) return Status::Ok();
  const std::string path = JoinPath(dir_, name);
  // In the manifest before it exists, as WriteReports does.
  if (Status noted = NoteRunFile(dir_, path); !noted.ok()) return noted;
  if (Status s = WriteFileAtomically(path, text); !s.ok()) return s;
  written_.push_back(path);
  return Status::Ok();
}

Status OutDir::Record() const {
  if (dir_.empty() || written_.empty()) return Status::Ok();
  return RecordRunFiles(dir_, written_);
}

}  // namespace xackly
