// WriteScenario: Scenario → a commented TOML file that ParseScenario reads
// back to the same Scenario. Keys are written through the same schema
// descriptions the reader uses (schema.h).
#include <functional>
#include <limits>
#include <set>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "scenarios/scenario.h"
#include "scenarios/schema.h"

namespace xackly {

namespace {

using namespace scenario_schema;

// Column where a value's trailing comment starts (when the line is shorter).
constexpr size_t kCommentColumn = 36;
// Picks longer than this are wrapped over several lines.
constexpr size_t kPicksPerLine = 24;

// A TOML basic string; `multi_line`: a multi-line one ('"""' and a
// newline, which TOML drops), whose newlines stay newlines.
std::string Quote(std::string_view s, bool multi_line = false) {
  std::string out = multi_line ? "\"\"\"\n" : "\"";
  for (char c : s) {
    if (multi_line && c == '\n') {
      out += c;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + (multi_line ? "\"\"\"" : "\"");
}

// The [[embedded]] tables: each file the run read, with its hash.
std::string EmbeddedTables(const std::vector<EmbeddedFile>& files) {
  std::string out;
  for (const EmbeddedFile& f : files) {
    out += "\n[[embedded]]                        # a file the run read, carried so that this file replays anywhere\n";
    out += "path = " + Quote(f.path) + "\n";
    out += "from = " + Quote(f.from) + "\n";
    out += "hash = " + Quote(f.hash) + "\n";
    out += "text = " + Quote(f.text, /*multi_line=*/true) + "\n";
  }
  return out;
}

// A rate as the exact decimal of ppm / 1e6 ("0.03", "1.0"), so that reading
// it back rounds to the same ppm.
std::string RateText(uint32_t ppm) {
  std::string fraction = fmt::format("{:06}", ppm % 1000000);
  while (fraction.size() > 1 && fraction.back() == '0') fraction.pop_back();
  return fmt::format("{}.{}", ppm / 1000000, fraction);
}

std::string WithComment(std::string line, const char* doc) {
  if (doc == nullptr) return line;
  if (line.size() < kCommentColumn) line.resize(kCommentColumn, ' ');
  else line += "  ";
  return line + "# " + doc;
}

template <typename Range, typename Name>
std::string Array(const Range& items, Name name) {
  std::string out = "[";
  for (const auto& item : items) out += (out.size() > 1 ? ", " : "") + Quote(name(item));
  return out + "]";
}

// Writes the keys of one table (see schema.h): those whose value differs
// from `base`, and those `always` names.
template <typename S>
class TableWriter {
 public:
  using KeyFilter = std::function<bool(std::string_view key)>;

  TableWriter(const S& value, const S& base, KeyFilter always)
      : value_(value), base_(base), always_(std::move(always)) {}

  const std::string& lines() const { return lines_; }

  template <typename T>
  void Int(const char* key, T S::*m, int64_t, int64_t, const char* doc) {
    Put(key, value_.*m != base_.*m, fmt::format("{}", value_.*m), doc);
  }
  void Bool(const char* key, bool S::*m, const char* doc) {
    Put(key, value_.*m != base_.*m, value_.*m ? "true" : "false", doc);
  }
  template <typename E>
  void Enum(const char* key, E S::*m, const EnumTable<E>& table, const char* doc) {
    Put(key, value_.*m != base_.*m, Quote(table.NameOf(value_.*m)), doc);
  }
  template <typename E>
  void EnumList(const char* key, std::vector<E> S::*m, const EnumTable<E>& table, const char* doc) {
    Put(key, value_.*m != base_.*m,
        Array(value_.*m, [&](E v) { return table.NameOf(v); }), doc);
  }
  template <typename E>
  void EnumSet(const char* key, std::set<E> S::*m, const EnumTable<E>& table, const char* doc) {
    std::vector<std::string> names;  // in table order, not set order
    for (const auto& [v, name] : table.names) {
      if ((value_.*m).count(v) > 0) names.push_back(name);
    }
    Put(key, value_.*m != base_.*m, Array(names, [](const std::string& n) { return n; }), doc);
  }
  void Names(const char* key, std::vector<std::string> S::*m, const std::vector<std::string>&,
             const char*, bool (*)(std::string_view), const char* doc) {
    Put(key, value_.*m != base_.*m, Array(value_.*m, [](const std::string& n) { return n; }), doc);
  }
  void Text(const char* key, std::string S::*m, bool (*)(std::string_view), const char*,
            const char* doc) {
    Put(key, value_.*m != base_.*m, Quote(value_.*m), doc);
  }
  void Rate(const char* key, uint32_t S::*m, const char* doc) {
    Put(key, value_.*m != base_.*m, RateText(value_.*m), doc);
  }

 private:
  void Put(const char* key, bool differs, const std::string& value, const char* doc) {
    if (!differs && !(always_ && always_(key))) return;
    lines_ += WithComment(fmt::format("{} = {}", key, value), doc) + "\n";
  }

  const S& value_;
  const S& base_;
  KeyFilter always_;
  std::string lines_;
};

bool AllKeys(std::string_view) { return true; }

// The lines of one table: every key (base == nullptr) or only the keys that
// differ from *base, plus those `always` names.
template <typename S, typename Describe>
std::string TableLines(const S& value, const std::type_identity_t<S>* base, Describe describe,
                       typename TableWriter<S>::KeyFilter always = nullptr) {
  if (base == nullptr) {
    base = &value;
    always = &AllKeys;
  }
  TableWriter<S> w(value, *base, std::move(always));
  describe(w);
  return w.lines();
}

// Appends "[header]  # comment" and `lines`; nothing when there are no lines
// unless `always`.
void Section(std::string* out, std::string_view header, const char* comment,
             const std::string& lines, bool always = false) {
  if (lines.empty() && !always) return;
  *out += "\n" + WithComment(fmt::format("[{}]", header), comment) + "\n" + lines;
}

// The [protocol] tables of `p`, in full; `handler` says whether its
// handler is C++ code the file cannot hold.
std::string ProtocolTables(const ProtocolDef& p, HandlerForm handler,
                           const std::vector<std::string>& includes = {}) {
  std::string out;
  std::string script = p.script_path.empty() ? "" : WithComment("script = " + Quote(p.script_path), "a protocol script (docs/scripts.md)") + "\n";
  if (!p.consumer_command.empty()) {
    std::string args;
    for (const std::string& arg : p.consumer_command) args += (args.empty() ? "" : ", ") + Quote(arg);
    script += WithComment("command = [" + args + "]", "your consumer process (docs/real-consumers.md)") + "\n";
  }
  if (handler == HandlerForm::kCpp) {
    script += WithComment("handler = " + Quote(HandlerForms().NameOf(handler)),
                          "C++ code in a test; `steps` only documents it: replay with xackly::ReplayCaseFile") +
              "\n";
  }
  if (!includes.empty()) {
    std::string list;
    for (const std::string& file : includes) list += (list.empty() ? "" : ", ") + Quote(file);
    script += WithComment("include = [" + list + "]", "Lua files run before the script") + "\n";
  }
  // A script's run still reads the declarative keys: its declared timers
  // (loop, TTL) size the quiet window and the search, so they are kept.
  const bool is_script = HasScriptOrCommand(p);
  Section(&out, "protocol",
          !p.consumer_command.empty()
              ? "your consumer command: the other keys below are the declarative model's defaults and judge "
                "nothing; only dedupe_ttl_ms and the loop's timers count (the timers it uses, docs/real-consumers.md)"
          : is_script ? "a protocol script: of the keys below only dedupe_ttl_ms and the loop's timers count "
                        "(the timers it declares, docs/scripts.md)"
                      : "inline, declarative definition",
          script + TableLines(p, nullptr, DescribeProtocol<TableWriter<ProtocolDef>>), true);
  Section(&out, "protocol.loop", is_script ? "the timers the script declares (docs/scripts.md)" : "the worker loop",
          TableLines(p.loop, nullptr, DescribeLoop<TableWriter<LoopConfig>>), true);
  Section(&out, "protocol.janitor", "retention and consumer clean-up",
          TableLines(p.janitor, nullptr, DescribeJanitor<TableWriter<JanitorConfig>>), true);
  return out;
}

// Every [faults] key: two models are equal when these texts are.
std::string FaultsText(const FaultModel& m) {
  return TableLines(m, nullptr, DescribeFaults<TableWriter<FaultModel>>);
}

// Everything that defines a protocol, in the file's own terms: two
// definitions are the same protocol when these texts are equal.
std::string Definition(const ProtocolDef& p) {
  return fmt::format("{}\n{}\n{}\n{}\n{}", ProtocolText(p), p.expected.ToString(),
                     RestartNamingName(p.naming), PersistenceName(p.persistence),
                     FaultsText(p.faults));
}

// The catalog protocol `s` may be written as a reference to, or nullptr.
const ProtocolDef* CatalogReference(const Scenario& s) {
  if (s.protocol_ref.empty()) return nullptr;
  const ProtocolDef* p = FindProtocol(s.protocol_ref);
  if (p == nullptr || p->cpp_handler != s.config.protocol.cpp_handler) return nullptr;
  return Definition(*p) == Definition(s.config.protocol) ? p : nullptr;
}

std::string PicksText(const std::vector<std::string>& picks) {
  if (picks.size() <= kPicksPerLine) {
    std::string out;
    for (const auto& p : picks) out += (out.empty() ? "" : " ") + p;
    return Quote(out);
  }
  // A multi-line string: a line-ending backslash joins the lines.
  std::string out = "\"\"\"\n";
  for (size_t i = 0; i < picks.size(); ++i) {
    out += picks[i];
    if (i + 1 == picks.size()) break;
    out += (i + 1) % kPicksPerLine == 0 ? " \\\n" : " ";
  }
  return out + "\"\"\"";
}

std::string ScheduleLines(const Scenario& s) {
  const RunConfig& c = s.config;
  std::string out;
  if (c.fault_schedule) {
    if (c.fault_schedule->empty()) {
      out += "faults = []  # no faults at all\n";
    } else {
      out += "faults = [\n";
      for (const FaultSpec& f : *c.fault_schedule) out += "  " + Quote(f.ToString()) + ",\n";
      out += "]\n";
    }
  }
  if (!c.picks.empty()) out += "picks = " + PicksText(c.picks) + "\n";
  if (s.trace_hash) out += "trace_hash = " + Quote(*s.trace_hash) + "\n";
  if (s.server) out += "server = " + Quote(*s.server) + "  # the server the trace hash was recorded on\n";
  if (!s.server_hashes.empty()) {
    out += "server_hashes = {";
    const char* sep = " ";
    for (const auto& [server, hash] : s.server_hashes) {
      out += sep + Quote(server) + " = " + Quote(hash);
      sep = ", ";
    }
    out += " }  # the trace hashes recorded on other servers\n";
  }
  if (out.empty()) out = "# empty: faults are drawn from [faults] and steps picked by the seed\n";
  return out;
}

}  // namespace

HandlerForm HandlerFormOf(const ProtocolDef& p) {
  if (p.cpp_handler == nullptr) return HandlerForm::kSteps;
  for (const ProtocolDef& reference : Catalog()) {
    if (reference.cpp_handler == p.cpp_handler) return HandlerForm::kSteps;
  }
  return HandlerForm::kCpp;
}

std::string ProtocolText(const ProtocolDef& p) { return ProtocolTables(p, HandlerForm::kSteps); }

std::string WriteScenario(const Scenario& s) {
  const RunConfig& c = s.config;
  const ProtocolDef* catalog = CatalogReference(s);
  const RunConfig defaults = RunConfig::For(c.protocol);
  std::string out = "# xackly scenario";
  if (!s.name.empty()) out += ": " + s.name;
  out += "\n# Format reference: docs/scenarios.md\n";

  if (!s.name.empty()) out += "name = " + Quote(s.name) + "\n";
  if (!s.description.empty()) out += "description = " + Quote(s.description) + "\n";
  if (!s.origin.empty()) out += "origin = " + Quote(s.origin) + "\n";
  if (catalog != nullptr) {
    out += WithComment("protocol = " + Quote(catalog->name), "a catalog protocol") + "\n";
  }
  out += WithComment("expect = " + Quote(c.expected.ToString()), "the verdict this run must produce") + "\n";
  // TOML integers are signed: larger seeds are written as decimal strings.
  out += c.seed <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? fmt::format("seed = {}\n", c.seed)
             : fmt::format("seed = \"{}\"\n", c.seed);

  // A catalog reference writes only what differs from the protocol's run
  // defaults; an inline protocol's defaults are whatever this file says.
  const RunConfig* base = catalog != nullptr ? &defaults : nullptr;
  Section(&out, "server", nullptr, TableLines(c, base, DescribeServer<TableWriter<RunConfig>>));
  Section(&out, "workload", nullptr, TableLines(c, nullptr, DescribeWorkload<TableWriter<RunConfig>>));
  Section(&out, "timing", "virtual milliseconds",
          TableLines(c.timing, &defaults.timing, DescribeTiming<TableWriter<Timing>>));
  if (catalog == nullptr) {
    ProtocolDef p = c.protocol;
    if (p.name.empty()) p.name = s.name;
    const HandlerForm handler = HandlerFormOf(p) == HandlerForm::kCpp ? HandlerForm::kCpp : s.handler;
    out += ProtocolTables(p, handler, s.script_includes);
    std::string params;
    for (const auto& [key, value] : s.script_params) {
      if (const bool* b = std::get_if<bool>(&value)) {
        params += fmt::format("{} = {}\n", key, *b ? "true" : "false");
      } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
        params += fmt::format("{} = {}\n", key, *i);
      } else {
        params += fmt::format("{} = {}\n", key, Quote(std::get<std::string>(value)));
      }
    }
    Section(&out, "protocol.params", "the script's options", params);
  }
  for (const ConsumerGroupSpec& g : c.groups) {  // after every [table] a key of the file's top level can follow
    out += "\n" + WithComment("[[groups]]", "a further consumer group on the stream") + "\n";
    out += "name = " + Quote(g.name) + "\n";
    out += "consumer = " + Quote(g.function) + "\n";
    out += fmt::format("workers = {}\n", g.workers);
  }
  // An inline file's [faults] is the protocol's own model, which
  // RunConfig::For resolves into the run's; a run whose model differs from
  // that is written as it ran.
  const bool is_inline = catalog == nullptr;
  const FaultModel inline_start =
      InlineStartingModel(c.protocol, SitesFoundByRunning(c.protocol) || s.handler == HandlerForm::kCpp);  // what the parser amends
  const FaultModel& model =
      is_inline && FaultsText(c.faults) == FaultsText(defaults.faults) ? c.protocol.faults : c.faults;
  Section(&out, "faults", "the model a plan is drawn from when [schedule] has no faults",
          TableLines(model, is_inline ? &inline_start : &defaults.faults,
                     DescribeFaults<TableWriter<FaultModel>>,
                     [&](std::string_view key) { return is_inline && FaultKeyMatters(model, key); }),
          /*always=*/is_inline);  // an inline file without [faults] gets DefaultFaultModel
  Section(&out, "schedule", "an exact replay", ScheduleLines(s), true);
  out += EmbeddedTables(s.embedded);
  return out;
}

}  // namespace xackly
