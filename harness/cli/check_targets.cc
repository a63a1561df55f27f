#include "harness/cli/check_targets.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

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

enum class Depth { kDirectlyIn, kBelow };

// The scenario files (*.toml, not IsReplayFileName) in `dir`, and with
// kBelow in its subdirectories too, appended in path order. A directory
// that cannot be read adds nothing.
void AppendScenarioFiles(const std::filesystem::path& dir, Depth depth, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  auto note = [&found](const fs::directory_entry& entry) {
    const fs::path& p = entry.path();
    std::error_code ec;
    if (p.extension() == ".toml" && !IsReplayFileName(p.filename().string()) && !entry.is_directory(ec)) {
      found.push_back(p.string());
    }
  };
  std::error_code ec;
  if (depth == Depth::kBelow) {
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      note(*it);
    }
  } else {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) note(*it);
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
}

// Loads each of `files` as LoadTarget does and appends it; the first file
// that fails is the error.
Status AppendFileTargets(const std::vector<std::string>& files, std::vector<Target>* targets) {
  for (const std::string& file : files) {
    TargetFlags flags;
    flags.scenarios = {file};
    Result<Scenario> s = LoadTarget(flags);
    if (!s.ok()) return s.status();
    targets->push_back({std::move(s).value(), file});
  }
  return Status::Ok();
}

// How an error names a target: its file, or the catalog protocol.
std::string TargetOrigin(const Target& t) {
  return t.scenario_file.empty() ? "the catalog protocol" : t.scenario_file;
}

}  // namespace

void AddCatalogTargets(std::vector<Target>* targets) {
  for (const ProtocolDef& p : Catalog()) {
    TargetFlags flags;
    flags.protocol = p.name;
    targets->push_back({*LoadTarget(flags), ""});
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
    AppendScenarioFiles(root / "catalog" / "scripts", Depth::kDirectlyIn, &files);
    AppendScenarioFiles(root / "examples", Depth::kDirectlyIn, &files);
  }
  for (const std::string& n : libraries) {
    if (library.empty() || library == "all" || library == n) AppendScenarioFiles(root / "library" / n, Depth::kDirectlyIn, &files);
  }
  if (files.empty()) {
    fmt::print("xackly check --all: no protocol scripts under {} (set XACKLY_SCENARIO_DIR to a copy of "
               "scenarios/): checking the C++ catalog only\n",
               root.string());
    return Status::Ok();
  }
  return AppendFileTargets(files, targets);
}

Status AddSuiteTargets(const std::vector<std::string>& paths, std::vector<Target>* targets) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(path);  // a file, or what LoadTarget says is wrong with it
      continue;
    }
    const size_t before = files.size();
    AppendScenarioFiles(path, Depth::kBelow, &files);
    if (files.size() == before) {
      return Status::InvalidArgument(fmt::format("--scenario {}: a directory with no scenario file below it (*.toml, "
                                                 "replay files *.replay.toml skipped)",
                                                 path));
    }
  }
  return AppendFileTargets(files, targets);
}

Status RequireDistinctNames(const std::vector<Target>& targets) {
  std::map<std::string, const Target*> first_named;
  for (const Target& t : targets) {
    auto [seen, added] = first_named.emplace(t.scenario.name, &t);
    if (added) continue;
    std::error_code ec;
    if (!t.scenario_file.empty() && std::filesystem::equivalent(seen->second->scenario_file, t.scenario_file, ec)) {
      return Status::InvalidArgument(fmt::format(
          "{} is named twice (once through a directory that holds it, or as two paths): name it once",
          t.scenario_file));
    }
    return Status::InvalidArgument(fmt::format(
        "two scenarios are named '{}': {} and {}; their replay files, report rows and JUnit testcases would "
        "collide: give one another name (name = \"...\" at the top of its file)",
        t.scenario.name, TargetOrigin(*seen->second), TargetOrigin(t)));
  }
  return Status::Ok();
}

}  // namespace xackly
