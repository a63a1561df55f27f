#include "harness/cli/check_targets.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "harness/cli/shared_flags.h"
#include "harness/files.h"
#include "sim/protocol.h"

namespace xackly {

namespace {

std::filesystem::path ScenarioRoot() {
  const char* env = std::getenv("XACKLY_SCENARIO_DIR");
  if (env != nullptr && *env != '\0') return env;
  if (Result<std::string> exe = ExecutableDir(); exe.ok()) {
    std::error_code ec;
    const std::filesystem::path installed = std::filesystem::path(*exe) / XACKLY_INSTALLED_SCENARIO_DIR;
    if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal();
  }
  return XACKLY_SCENARIO_DIR;
}

// Every *.toml directly in `dir`, appended in name order.
void AppendScenarioFiles(const std::filesystem::path& dir, std::vector<std::string>* files) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
}

}  // namespace

void AddCatalogTargets(std::vector<Target>* targets) {
  for (const ProtocolDef& p : Catalog()) {
    TargetFlags t;
    t.protocol = p.name;
    targets->push_back({*LoadTarget(t), ""});
  }
}

Status AddScenarioTargets(const std::string& library, std::vector<Target>* targets) {
  namespace fs = std::filesystem;
  const fs::path root = ScenarioRoot();
  std::vector<std::string> libraries;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(root / "library", ec)) {
    if (dir.is_directory()) libraries.push_back(dir.path().filename().string());
  }
  std::sort(libraries.begin(), libraries.end());
  if (!library.empty() && library != "all" &&
      std::find(libraries.begin(), libraries.end(), library) == libraries.end()) {
    std::string known;
    for (const std::string& n : libraries) known += n + ", ";
    return Status::InvalidArgument(fmt::format("--library: unknown library '{}' (valid: {}all; from {}, set "
                                               "XACKLY_SCENARIO_DIR to a copy of scenarios/)",
                                               library, known, (root / "library").string()));
  }
  std::vector<std::string> files;
  if (library.empty()) {
    AppendScenarioFiles(root / "catalog" / "scripts", &files);
    AppendScenarioFiles(root / "examples", &files);
  }
  for (const std::string& n : libraries) {
    if (library.empty() || library == "all" || library == n) AppendScenarioFiles(root / "library" / n, &files);
  }
  if (files.empty()) {
    fmt::print("xackly check --all: no protocol scripts under {} (set XACKLY_SCENARIO_DIR to a copy of "
               "scenarios/): checking the C++ catalog only\n",
               root.string());
    return Status::Ok();
  }
  for (const std::string& file : files) {
    Result<Scenario> s = LoadScenarioFile(file);
    if (!s.ok()) return s.status();
    targets->push_back({std::move(s).value(), file});
  }
  return Status::Ok();
}

}  // namespace xackly
