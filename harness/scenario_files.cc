#include "harness/scenario_files.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "harness/files.h"
#include "harness/real_consumer.h"
#include "reports/text_util.h"
#include "sim/lua/script_actor.h"

namespace xackly {

namespace {

// Reads the script or include `named` (as [protocol] names it) of the
// scenario file `scenario_file` for LoadScenarioFile: from *s's embedded
// copy or from disk (`which`), recording what it read in s->embedded.
Result<std::string> ReadScriptFile(const std::string& scenario_file, const std::string& named, ScriptFiles which,
                                   Scenario* s) {
  namespace fs = std::filesystem;
  auto embedded = std::find_if(s->embedded.begin(), s->embedded.end(),
                               [&](const EmbeddedFile& f) { return f.path == named; });
  const bool has_copy = embedded != s->embedded.end();
  if (has_copy && which == ScriptFiles::kEmbeddedCopies) return embedded->text;
  fs::path on_disk(named);
  if (on_disk.is_relative()) on_disk = fs::path(scenario_file).parent_path() / on_disk;
  std::error_code ec;
  const std::string beside = on_disk.lexically_normal().string();  // where it is looked for first
  if (has_copy && !fs::exists(on_disk, ec) && !embedded->from.empty()) on_disk = embedded->from;
  const std::string shown = on_disk.lexically_normal().string();
  Result<std::string> text = ReadFile(shown);
  if (!text.ok() && shown != beside) {
    // --current looked beside the file, then where the file was recorded.
    return Status::NotFound(fmt::format("{} (not beside the file as {}, nor where it was recorded: {})", named,
                                        beside, text.status().message()));
  }
  if (!text.ok()) return text.status();
  if (has_copy && ContentHash(*text) != embedded->hash) s->changed_files.push_back(shown);
  EmbeddedFile read{named, fs::absolute(on_disk, ec).lexically_normal().string(), ContentHash(*text), *text};
  if (has_copy) {
    *embedded = std::move(read);
  } else {
    s->embedded.push_back(std::move(read));
  }
  return text;
}

// Whether the command argument `arg` of the scenario file `scenario_file`
// names a file of the consumer's own to carry in a replay file: a relative
// path to a text file (UTF-8, no NUL) of at most kMaxConsumerFileBytes beside
// the scenario, or one a replay file already carries.
bool IsConsumerTextFile(const std::string& scenario_file, const std::string& arg, const Scenario& s) {
  namespace fs = std::filesystem;
  if (arg.empty() || fs::path(arg).is_absolute()) return false;
  if (std::any_of(s.embedded.begin(), s.embedded.end(), [&](const EmbeddedFile& f) { return f.path == arg; })) {
    return true;
  }
  const fs::path beside = fs::path(scenario_file).parent_path() / arg;
  std::error_code ec;
  if (!fs::is_regular_file(beside, ec) || fs::file_size(beside, ec) > kMaxConsumerFileBytes) return false;
  Result<std::string> text = ReadFile(beside.string());
  return text.ok() && text->find('\0') == std::string::npos && report::ValidUtf8(*text) == *text;
}

}  // namespace

Result<Scenario> LoadScenarioFile(const std::string& path, ScriptFiles which) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return Status::InvalidArgument(text.status().message());
  Result<Scenario> scenario = ParseScenario(*text, path);
  if (!scenario.ok()) return scenario;
  ProtocolDef& p = scenario->config.protocol;
  if (!p.script_path.empty()) {  // [protocol] script: relative to the scenario file
    const std::string script_name = std::filesystem::path(p.script_path).filename().string();
    Result<std::string> source = ReadScriptFile(path, p.script_path, which, &*scenario);
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
      Result<std::string> included = ReadScriptFile(path, include, which, &*scenario);
      if (!included.ok()) {
        return Status::InvalidArgument(fmt::format("{}: protocol.include: {}", path, included.status().message()));
      }
      total_bytes += included->size();
      if (total_bytes > kMaxScriptBytes) {
        return Status::InvalidArgument(fmt::format(
            "{}: protocol.include: the script and its includes add up to more than {} MiB at {}",
            path, kMaxScriptBytes >> 20, include));
      }
      prelude += ScriptIncludePrelude(std::filesystem::path(include).filename().string(), *included);
    }
    std::filesystem::path shown(p.script_path);
    if (shown.is_relative()) shown = std::filesystem::path(path).parent_path() / shown;
    ScriptSource script_source{shown.lexically_normal().string(), prelude + *source, script_name};
    auto script = LuaScript::Load(std::move(script_source));
    if (!script.ok()) return script.status();
    p.script = std::move(script).value();
  }
  if (!p.consumer_command.empty()) {  // [protocol] command: the user's own consumer, run from the file's directory
    // The consumer's own text files among its arguments (consumer.py) go
    // into the replay file with their hashes, read from disk every time (the
    // process runs the file on disk): a replay after they changed says so.
    for (const std::string& arg : p.consumer_command) {
      if (!IsConsumerTextFile(path, arg, *scenario)) continue;
      Result<std::string> read = ReadScriptFile(path, arg, ScriptFiles::kCurrent, &*scenario);
      if (!read.ok()) {
        return Status::InvalidArgument(fmt::format("{}: protocol.command: {}", path, read.status().message()));
      }
    }
    RealConsumerOptions options;
    options.command = p.consumer_command;
    std::error_code ec;
    options.working_dir =
        std::filesystem::absolute(std::filesystem::path(path), ec).lexically_normal().parent_path().string();
    auto consumer = RealConsumer::Create(std::move(options));
    if (!consumer.ok()) {
      return Status::InvalidArgument(fmt::format("{}: protocol.command: {}", path, consumer.status().message()));
    }
    p.script = std::move(consumer).value();
  }
  return scenario;
}

void RebaseScriptPaths(Scenario* s, const std::string& from_file, const std::string& to_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Normalized first: "src/../out" is not a sibling of "src" to
  // lexically_relative, which counts ".." as a name.
  const fs::path from_dir = fs::absolute(fs::path(from_file), ec).lexically_normal().parent_path();
  const fs::path to_dir = fs::absolute(fs::path(to_file), ec).lexically_normal().parent_path();
  auto rebase = [&](std::string* path) {
    if (path->empty() || fs::path(*path).is_absolute()) return;
    fs::path moved = (from_dir / *path).lexically_normal().lexically_relative(to_dir);
    if (!moved.empty()) *path = moved.string();
  };
  rebase(&s->config.protocol.script_path);
  // A command's arguments that name files beside the scenario (consumer.py)
  // move with it; the program and other arguments stay as written.
  for (std::string& arg : s->config.protocol.consumer_command) {
    if (arg.empty() || fs::path(arg).is_absolute() || !fs::is_regular_file(from_dir / arg, ec)) continue;
    rebase(&arg);
  }
  for (std::string& include : s->script_includes) rebase(&include);
  for (EmbeddedFile& f : s->embedded) rebase(&f.path);
}

}  // namespace xackly
