#include "harness/cli/shared_flags.h"
#include "sim/limits.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "harness/files.h"
#include "harness/scenario_files.h"
#include "reports/report.h"
#include "sim/lua/script_actor.h"
#include "sim/sites.h"
#include "sim/text.h"

namespace xackly {

namespace {
std::string g_command_line;
}

void SetCommandLine(int argc, char** argv) {
  g_command_line = "xackly";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool plain = !arg.empty() && arg.find_first_of(" \t'\"$\\") == std::string::npos;
    g_command_line += " " + (plain ? arg : "'" + arg + "'");
  }
}

std::string CommandLine() { return g_command_line; }

const std::string& TargetFlags::scenario_file() const {
  static const std::string kNone;
  XACKLY_CHECK(scenarios.size() <= 1);
  return scenarios.empty() ? kNone : scenarios.front();
}

void AddTargetFlags(CLI::App* cmd, TargetFlags* flags, ScenarioCount count) {
  CLI::Option* protocol = cmd->add_option(
      "--protocol", flags->protocol,
      "a catalog protocol (`xackly protocols` lists them), run with its own defaults");
  const std::string file_help =
      "a scenario file (TOML, see scenarios/example.toml); its [protocol] may be a Lua script (script = "
      "\"my_consumer.lua\", docs/scripts.md) or your own consumer program (command = [\"python3\", "
      "\"consumer.py\"], docs/real-consumers.md)";
  CLI::Option* scenario = cmd->add_option(
      "--scenario", flags->scenarios,
      count == ScenarioCount::kOne
          ? file_help
          : file_help + ". Several files and directories make a suite (repeat --scenario, or give it several "
                        "values): a directory stands for every *.toml below it, recursively, in path order, "
                        "except the replay files xackly writes (*.replay.toml); one report and one JUnit "
                        "testcase per scenario; two scenarios with the same name are refused");
  if (count == ScenarioCount::kOne) scenario->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  protocol->excludes(scenario);
}

// A scenario whose handler is C++ code in someone's test: this executable
// has only its steps, which document the handler and are not it, so running
// them would replay another protocol (and blame the server for the trace).
Status RunnableByThisExecutable(const Scenario& scenario, const std::string& scenario_file) {
  if (scenario.handler != HandlerForm::kCpp) return Status::Ok();
  const std::string file = scenario_file.empty() ? "the file" : scenario_file;
  return Status::InvalidArgument(fmt::format(
      "{}: [protocol] handler = \"c++\": the handler of protocol '{}' is C++ code in your own test (a "
      "ProtocolDef cpp_handler), which the xackly executable cannot run; its `steps` only document it. "
      "Replay the file from that test, with that protocol: xackly::ReplayCaseFile(\"{}\", protocol, "
      "options) (harness/embed.h) runs it with your handler and checks its trace hash",
      file, scenario.config.protocol.name, file));
}

Result<Scenario> LoadTarget(const TargetFlags& flags) {
  if (!flags.scenarios.empty()) {
    const std::string& file = flags.scenario_file();
    Result<Scenario> s = LoadScenarioFile(file);
    if (!s.ok()) return s;
    if (Status runnable = RunnableByThisExecutable(*s, file); !runnable.ok()) return runnable;
    return s;
  }
  const ProtocolDef* p = FindProtocol(flags.protocol);
  if (p == nullptr) {
    std::string close = ClosestProtocolNames(flags.protocol);
    return Status::InvalidArgument(fmt::format("--protocol: unknown protocol '{}'{} (valid: {})", flags.protocol,
                                               close.empty() ? "" : "; did you mean " + close + "?",
                                               CatalogNames()));
  }
  Scenario s;
  s.name = p->name;
  s.description = p->description;
  s.protocol_ref = p->name;
  s.config = RunConfig::For(*p);
  return s;
}


std::string ClosestProtocolNames(const std::string& name) {
  size_t best = std::max<size_t>(2, name.size() / 3) + 1;
  std::vector<std::string> closest;
  for (const ProtocolDef& p : Catalog()) {
    size_t d = EditDistance(name, p.name);
    if (!name.empty() && p.name.find(name) != std::string::npos) d = std::min<size_t>(d, 2);  // a part of the name
    if (d < best) {
      best = d;
      closest.clear();
    }
    if (d == best) closest.push_back(p.name);
  }
  std::string out;
  for (size_t i = 0; i < closest.size() && i < 3; ++i) out += (out.empty() ? "" : " or ") + closest[i];
  return out;
}

CLI::Validator SeedValidator() {
  return CLI::Validator(
      [](std::string& text) {
        uint64_t seed = 0;
        return ParseSeed(text, &seed) ? std::string() : "expected an integer in 0..2^64-1, got '" + text.substr(0, 60) + "'";
      },
      "SEED");
}

CLI::Validator NonEmptyPath() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("must not be empty (leave the option out instead)") : std::string(); },
      "PATH");
}

void AddOverrideFlags(CLI::App* cmd, OverrideFlags* flags, bool with_seed) {
  if (with_seed) {
    cmd->add_option("--seed", flags->seed,
                    "the seed every scheduling and fault choice derives from (default: the "
                    "scenario's, else 1)")
        ->check(SeedValidator());
  }
  cmd->add_option("--workers", flags->workers, fmt::format("consumer workers (1..{})", kMaxWorkers))
      ->check(CLI::Range(1, kMaxWorkers));
  cmd->add_option("--events", flags->events, fmt::format("events to produce (1..{})", kMaxEvents))
      ->check(CLI::Range(1, kMaxEvents));
  cmd->add_option("--producers", flags->producers, fmt::format("producers (1..{})", kMaxProducers))
      ->check(CLI::Range(1, kMaxProducers));
  cmd->add_option("--persistence", flags->persistence, "server persistence: none, rdb, aof-always")
      ->check(CLI::IsMember({"none", "rdb", "aof-always"}));
  cmd->add_option("--naming", flags->naming,
                  "a restarted worker keeps its consumer name (same) or takes a new one (fresh)")
      ->check(CLI::IsMember({"same", "fresh"}));
  cmd->add_option("--faults", flags->faults,
                  "fault kinds to inject, comma-separated, or none (valid: " + FaultKindList() +
                      "); default: the protocol's fault model");
  cmd->add_option("--expect", flags->expect,
                  "the verdict to expect, kind or kind:cause (kinds: " + VerdictKindList() + ")");
}

Status ApplyOverrides(const OverrideFlags& f, RunConfig* c) {
  if (!f.seed.empty() && !ParseSeed(f.seed, &c->seed)) {
    return Status::InvalidArgument(fmt::format("--seed: expected an integer in 0..2^64-1, got '{}'", f.seed));
  }
  if (f.workers) c->workers = *f.workers;
  if (f.events) c->events = *f.events;
  if (f.producers) c->producers = *f.producers;
  if (!f.persistence.empty()) ParsePersistence(f.persistence, &c->persistence);
  if (!f.naming.empty()) c->naming = f.naming == "same" ? RestartNaming::kSame : RestartNaming::kFresh;
  if (!f.faults.empty()) {
    std::set<FaultKind> kinds;
    if (f.faults != "none") {
      for (std::string_view name : SplitList(f.faults, ',')) {
        FaultKind kind;
        if (!ParseFaultKind(name, &kind)) {
          return Status::InvalidArgument(fmt::format("--faults: unknown fault kind '{}' (valid: {}, or none)",
                                                     name, FaultKindList()));
        }
        kinds.insert(kind);
      }
    }
    c->faults.kinds = kinds;
    c->fault_schedule.reset();  // the kinds say what to draw; an explicit plan would ignore them
  }
  std::string why;
  if (!f.expect.empty() && !Expectation::Parse(f.expect, &c->expected, &why)) {
    return Status::InvalidArgument(fmt::format("--expect: '{}': {}", f.expect, why));
  }
  Status valid = ValidateRunConfig(*c);
  if (!valid.ok()) return Status::InvalidArgument(valid.message());
  Status fits = CheckScheduleFitsRun(*c);
  if (!fits.ok()) {
    return Status::InvalidArgument("the run as overridden does not fit the scenario: " + fits.message());
  }
  return Status::Ok();
}

void AddOutputFlags(CLI::App* cmd, OutputFlags* flags, const std::string& default_out, bool several_servers) {
  const std::string server_help =
      "redis-server or valkey-server binary (default: $XACKLY_REDIS_SERVER, else redis-server on PATH)";
  if (several_servers) {
    cmd->add_option("--server", flags->server_paths,
                    server_help + "; give it several times for a server matrix: the same checks and cases on each "
                                  "server, verdicts side by side, reports in --out/<server>/")
        ->take_all();
  } else {
    cmd->add_option("--server", flags->server_path, server_help);
  }
  flags->default_out = default_out;
  cmd->add_option("--out", flags->out_dir,
                  default_out.empty() ? "directory for reports and the replay file"
                                      : "directory for reports and replay files (default " + default_out +
                                            ", cleared of the files the previous run wrote there)")
      ->check(NonEmptyPath());
  cmd->add_option("--format", flags->formats,
                  fmt::format("with --out: report formats to write there, comma-separated: {} (default: all); "
                              "without --out: the one format to print on stdout (progress and notes go to stderr)",
                              fmt::join(report::FormatNames(), ", ")));
  cmd->add_flag("--quiet", flags->quiet,
                "one line: the scenario, seed, observed and expected verdict and the trace hash, and nothing else "
                "(the reports are in --out); errors and a mismatch's replay command are one line each on stderr");
  cmd->add_flag("--no-pin", flags->no_pin,
                "do not bind each case thread and its redis-server to one CPU (default: bound, "
                "distinct CPUs for -j N)");
}

Status ResolveOutput(OutputFlags* flags) {
  if (!flags->server_paths.empty()) flags->server_path = flags->server_paths.front();
  if (!flags->out_dir.empty() || flags->formats.empty()) {
    if (flags->out_dir.empty()) flags->out_dir = flags->default_out;
    return Status::Ok();
  }
  std::string error;
  std::vector<std::string> formats = report::ParseFormats(flags->formats, &error);
  if (formats.empty()) return Status::InvalidArgument("--format: " + error);
  if (formats.size() > 1) {
    return Status::InvalidArgument(fmt::format(
        "--format: '{}' names {} formats, but without --out one format is printed on stdout; name one, or "
        "add --out DIR to write them all there",
        flags->formats, formats.size()));
  }
  flags->stdout_format = formats[0];
  flags->formats.clear();
  flags->out_dir = flags->default_out;  // replay files only: WriteReports writes nothing
  return Status::Ok();
}

std::FILE* HumanOut(const OutputFlags& flags) {
  return flags.stdout_format.empty() || flags.stdout_format == "text" ? stdout : stderr;
}

bool PrintMachineReport(const report::Report& r, const OutputFlags& flags) {
  if (HumanOut(flags) == stdout) return false;
  std::string text = report::RenderFormat(r, flags.stdout_format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
  return true;
}

namespace {
constexpr char kManifestName[] = ".xackly-files";
}

void RemovePreviousRunFiles(const std::string& dir) {
  Result<std::string> manifest = ReadFile(JoinPath(dir, kManifestName));
  if (!manifest.ok()) return;  // no previous run here
  size_t start = 0;
  while (start < manifest->size()) {
    size_t end = manifest->find('\n', start);
    if (end == std::string::npos) end = manifest->size();
    std::string name = manifest->substr(start, end - start);
    start = end + 1;
    if (!IsPlainFileName(name)) continue;
    std::error_code ec;
    std::filesystem::remove(JoinPath(dir, name), ec);
  }
  std::error_code ec;
  std::filesystem::remove(JoinPath(dir, kManifestName), ec);
}

Status NoteRunFile(const std::string& dir, const std::string& file) {
  const std::string name = std::filesystem::path(file).filename().string();
  if (!IsPlainFileName(name)) return Status::Ok();
  Result<std::string> manifest = ReadFile(JoinPath(dir, kManifestName));
  std::string text = manifest.ok() ? *manifest : "";
  if (("\n" + text).find("\n" + name + "\n") != std::string::npos) return Status::Ok();
  return WriteFileAtomically(JoinPath(dir, kManifestName), text + name + "\n");
}

Status RecordRunFiles(const std::string& dir, const std::vector<std::string>& files) {
  std::string manifest;
  for (const std::string& f : files) {
    std::string name = std::filesystem::path(f).filename().string();
    if (IsPlainFileName(name)) manifest += name + "\n";
  }
  return WriteFileAtomically(JoinPath(dir, kManifestName), manifest);
}

bool ColorAllowed(std::FILE* f) {
  const char* no_color = std::getenv("NO_COLOR");
  return (no_color == nullptr || *no_color == '\0') && ::isatty(::fileno(f)) == 1;
}

RedisServerOptions ServerOptionsFrom(const OutputFlags& flags) {
  RedisServerOptions o;
  o.server_path = flags.server_path;
  o.pin = !flags.no_pin;
  return o;
}

namespace {

constexpr char kLockName[] = ".xackly-lock";

// Holds an exclusive lock on `dir`'s lock file for the rest of this process
// (the file stays open, close-on-exec; the kernel drops the lock when the
// process ends, however it ends). kInvalidArgument when another process
// holds it: two runs writing one --out would interleave their files and
// manifests.
Status LockOutputDir(const std::string& dir) {
  static std::mutex mu;
  static std::set<std::string> held;
  std::lock_guard<std::mutex> lock(mu);
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(dir, ec).string();
  if (held.count(key) > 0) return Status::Ok();
  const std::string path = JoinPath(dir, kLockName);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::InvalidArgument(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::InvalidArgument(fmt::format(
          "{} is in use by another xackly run (it holds {}); give each run its own --out", dir, path));
    }
    return Status::InvalidArgument(fmt::format("cannot lock {}: {}", path, std::strerror(err)));
  }
  held.insert(key);
  return Status::Ok();
}

}  // namespace

Status CheckOutputFlags(const OutputFlags& flags) {
  if (flags.out_dir.empty()) return Status::Ok();
  std::string error;
  if (!flags.formats.empty() && report::ParseFormats(flags.formats, &error).empty()) {
    return Status::InvalidArgument("--format: " + error);
  }
  Status dir = PrepareOutputDir(flags.out_dir);
  if (!dir.ok()) return Status::InvalidArgument("--out: " + dir.message());
  Status locked = LockOutputDir(flags.out_dir);
  if (!locked.ok()) return Status::InvalidArgument("--out: " + locked.message());
  return Status::Ok();
}

Status WriteReports(const report::Report& r, const OutputFlags& flags, std::vector<std::string>* written) {
  if (flags.out_dir.empty() || !flags.stdout_format.empty()) return Status::Ok();
  std::string error;
  std::vector<std::string> formats =
      flags.formats.empty() ? report::FormatNames() : report::ParseFormats(flags.formats, &error);
  if (formats.empty()) return Status::InvalidArgument("--format: " + error);
  for (const std::string& format : formats) {
    std::string path = JoinPath(flags.out_dir, report::ReportFileName(format));
    // In the manifest before it exists: a write that fails half-way (a full
    // disk) leaves no file the next run would not remove.
    if (Status noted = NoteRunFile(flags.out_dir, path); !noted.ok()) return noted;
    Status s = WriteFileAtomically(path, report::RenderFormat(r, format));
    if (!s.ok()) return s;
    written->push_back(path);
  }
  return Status::Ok();
}

std::string DescribeRun(const RunConfig& c) {
  std::string groups;  // "(group workers) + 2 in group search-indexer (w3..w4)"
  int slot = c.workers;
  for (const ConsumerGroupSpec& g : c.groups) {
    groups += fmt::format(" + {} in group {} (w{}..w{})", g.workers, g.name, slot + 1, slot + g.workers);
    slot += g.workers;
  }
  if (!groups.empty()) groups = fmt::format(" in group {}", WorldNames{}.group) + groups;
  if (c.handlers > 1) groups += fmt::format(", {} handler lanes per worker process (w1, w1#2..w1#{})", c.handlers, c.handlers);
  const std::string replicas =
      c.replicas > 0 ? ", " + Plural(c.replicas, "replica") : "";
  return fmt::format("{} worker{}{}, {} event{}, {} producer{}, persistence {}{}, restart naming {}, faults {}",
                     c.workers, c.workers == 1 ? "" : "s", groups, c.events, c.events == 1 ? "" : "s",
                     c.producers, c.producers == 1 ? "" : "s", PersistenceName(c.persistence), replicas,
                     RestartNamingName(c.naming),
                     c.fault_schedule ? fmt::format("explicit plan of {}", c.fault_schedule->size())
                                      : c.faults.ToString());
}

void PrintError(const char* command, const Status& status) {
  fmt::print(stderr, "xackly {}: error: {}\n", command, status.message());
}

}  // namespace xackly
