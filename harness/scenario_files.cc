#include "harness/scenario_files.h"

#include <filesystem>

#include <fmt/format.h>

#include "harness/files.h"
#include "sim/lua/script_actor.h"

namespace xackly {

Result<Scenario> LoadScenarioFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return Status::InvalidArgument(text.status().message());
  Result<Scenario> scenario = ParseScenario(*text, path);
  if (!scenario.ok()) return scenario;
  ProtocolDef& p = scenario->config.protocol;
  if (!p.script_path.empty()) {  // [protocol] script: relative to the scenario file
    std::filesystem::path script_path(p.script_path);
    if (script_path.is_relative()) script_path = std::filesystem::path(path).parent_path() / script_path;
    std::string shown = script_path.lexically_normal().string();
    Result<std::string> source = ReadFile(shown);
    if (!source.ok()) {
      return Status::InvalidArgument(fmt::format("{}: protocol.script: {}", path, source.status().message()));
    }
    // [protocol.params] reach the script as the chunk-local `params`, and the
    // [protocol] include files run before it, all on its first line.
    // Chunk names are the files' names: a script sees them in error
    // messages (pcall), so they must not depend on the directory xackly
    // runs in or on where a replay file sits.
    std::string prelude = ScriptParamsPrelude(scenario->script_params);
    size_t total_bytes = source->size();
    for (const std::string& include : scenario->script_includes) {
      std::filesystem::path include_path(include);
      if (include_path.is_relative()) include_path = std::filesystem::path(path).parent_path() / include_path;
      std::string include_shown = include_path.lexically_normal().string();
      Result<std::string> included = ReadFile(include_shown);
      if (!included.ok()) {
        return Status::InvalidArgument(fmt::format("{}: protocol.include: {}", path, included.status().message()));
      }
      total_bytes += included->size();
      if (total_bytes > kMaxScriptBytes) {
        return Status::InvalidArgument(fmt::format(
            "{}: protocol.include: the script and its includes add up to more than {} MiB at {}",
            path, kMaxScriptBytes >> 20, include_shown));
      }
      prelude += ScriptIncludePrelude(include_path.filename().string(), *included);
    }
    ScriptSource script_source{shown, prelude + *source, script_path.filename().string()};
    auto script = LuaScript::Load(std::move(script_source));
    if (!script.ok()) return script.status();
    p.script = std::move(script).value();
  }
  return scenario;
}

void RebaseScriptPaths(Scenario* s, const std::string& from_file, const std::string& to_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path from_dir = fs::absolute(fs::path(from_file), ec).parent_path();
  const fs::path to_dir = fs::absolute(fs::path(to_file), ec).parent_path();
  auto rebase = [&](std::string* path) {
    if (path->empty() || fs::path(*path).is_absolute()) return;
    fs::path moved = (from_dir / *path).lexically_normal().lexically_relative(to_dir);
    if (!moved.empty()) *path = moved.string();
  };
  rebase(&s->config.protocol.script_path);
  for (std::string& include : s->script_includes) rebase(&include);
}

}  // namespace xackly
