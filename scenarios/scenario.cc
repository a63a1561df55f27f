// ParseScenario: TOML text → Scenario. Every check names the field it is
// about and the line it is on; the first problem found is the one reported.
#include "scenarios/scenario.h"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "scenarios/schema.h"
#include "sim/sites.h"
#include "sim/text.h"
#include "sim/text_hash.h"

namespace xackly {

namespace {

using namespace scenario_schema;

// Longest user string quoted back in a message.
constexpr size_t kMaxQuotedChars = 60;

// Escapes control characters, so that a message stays one line.
std::string OneLine(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

// `s` cut to kMaxQuotedChars, "..." marking a cut.
std::string Cut(std::string_view s) { return ClipText(s, kMaxQuotedChars); }

std::string Quoted(std::string_view s) { return fmt::format("'{}'", Cut(s)); }

// How a value looks after "got": strings quoted, numbers as written.
std::string Got(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return Quoted(n.as_string()->get());
    case toml::node_type::integer: return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: {  // 1e3 is a float: never show it as the integer 1000
      const double v = n.as_floating_point()->get();
      if (std::isfinite(v) && v == std::floor(v)) return fmt::format("{} (a floating-point number)", v >= 1e15 || v <= -1e15 ? fmt::format("{}", v) : fmt::format("{:.1f}", v));
      return fmt::format("{}", v);
    }
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

uint32_t LineOf(const toml::node& n) { return std::max<uint32_t>(1, n.source().begin.line); }

std::string Join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string IntRange(int64_t min, int64_t max) { return fmt::format("an integer in {}..{}", min, max); }

// The first error of a parse. Later failures are dropped, so callers may
// go on after one and check failed() where it matters.
class Errors {
 public:
  explicit Errors(std::string_view source) : source_(source) {}

  bool failed() const { return !status_.ok(); }
  const Status& status() const { return status_; }

  void Fail(uint32_t line, std::string_view path, std::string_view what) {
    if (failed()) return;
    status_ = Status::InvalidArgument(OneLine(fmt::format("{}:{}: {}: {}", source_, line, path, what)));
  }
  void Fail(const toml::node& at, std::string_view path, std::string_view what) {
    Fail(LineOf(at), path, what);
  }

 private:
  std::string source_;
  Status status_;
};

// --- Values -----------------------------------------------------------------
// Each returns nullopt after reporting why the node is not what `path` needs.

std::optional<int64_t> ReadInt(Errors* e, const toml::node& n, const std::string& path,
                               int64_t min, int64_t max) {
  const auto* v = n.as_integer();
  if (v == nullptr) {
    e->Fail(n, path, fmt::format("expected {}, got {}", IntRange(min, max), Got(n)));
    return std::nullopt;
  }
  int64_t x = v->get();
  if (x < min) {
    e->Fail(n, path, fmt::format("expected an integer >= {}, got {}", min, x));
    return std::nullopt;
  }
  if (x > max) {
    e->Fail(n, path, fmt::format("expected an integer <= {}, got {}", max, x));
    return std::nullopt;
  }
  return x;
}

std::optional<std::string> ReadString(Errors* e, const toml::node& n, const std::string& path,
                                      std::string_view expected) {
  const auto* v = n.as_string();
  if (v == nullptr) {
    e->Fail(n, path, fmt::format("expected {}, got {}", expected, Got(n)));
    return std::nullopt;
  }
  return v->get();
}

template <typename E>
std::optional<E> ReadEnum(Errors* e, const toml::node& n, const std::string& path,
                          const EnumTable<E>& table) {
  std::optional<std::string> name =
      ReadString(e, n, path, fmt::format("a {} ({})", table.noun, table.List()));
  if (!name) return std::nullopt;
  E value{};
  if (!table.Parse(*name, &value)) {
    e->Fail(n, path, fmt::format("unknown {} {} (valid: {})", table.noun, Quoted(*name), table.List()));
    return std::nullopt;
  }
  return value;
}

template <typename E>
std::optional<std::vector<E>> ReadEnumArray(Errors* e, const toml::node& n, const std::string& path,
                                            const EnumTable<E>& table) {
  const toml::array* a = n.as_array();
  if (a == nullptr) {
    e->Fail(n, path, fmt::format("expected an array of {}s ({}), got {}", table.noun, table.List(), Got(n)));
    return std::nullopt;
  }
  std::vector<E> out;
  for (size_t i = 0; i < a->size(); ++i) {
    std::optional<E> v = ReadEnum(e, (*a)[i], fmt::format("{}[{}]", path, i), table);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// Reports the first key of `table` (in file order) that `known` lacks.
void CheckKeys(Errors* e, const toml::table& table, const std::string& path,
               const std::vector<std::string>& known) {
  const toml::key* first = nullptr;
  for (auto&& [key, node] : table) {
    if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
    if (first == nullptr || key.source().begin.line < first->source().begin.line) first = &key;
  }
  if (first == nullptr) return;
  std::vector<std::string> valid;  // in order, each once (a reader may name a key twice)
  for (const auto& k : known) {
    if (std::find(valid.begin(), valid.end(), k) == valid.end()) valid.push_back(k);
  }
  const std::vector<std::string> near = NearestSites(first->str(), valid);
  e->Fail(std::max<uint32_t>(1, first->source().begin.line), Join(path, Cut(first->str())),
          fmt::format("unknown key{} (valid: {})", near.empty() ? "" : fmt::format("; did you mean {}?", near[0]),
                      fmt::join(valid, ", ")));
}

// The subtable `key` of `parent`, or nullptr when absent or not a table
// (then reported).
const toml::table* SubTable(Errors* e, const toml::table& parent, const std::string& parent_path,
                            const char* key) {
  const toml::node* n = parent.get(key);
  if (n == nullptr) return nullptr;
  std::string path = Join(parent_path, key);
  if (!n->is_table()) {
    e->Fail(*n, path, fmt::format("expected a table [{}], got {}", path, Got(*n)));
    return nullptr;
  }
  return n->as_table();
}

// --- Tables -----------------------------------------------------------------

// Reads one table into the members of `target` that a schema description
// names (see schema.h); keys the table lacks keep the target's value.
template <typename S>
class TableReader {
 public:
  // `table` may be nullptr (an absent table: nothing to read).
  TableReader(Errors* errors, const toml::table* table, std::string path, S* target,
              std::vector<std::string> also_known = {})
      : errors_(errors), table_(table), path_(std::move(path)), target_(target),
        known_(std::move(also_known)) {}

  // The keys `describe` names (nothing is read).
  template <typename Describe>
  std::vector<std::string> Keys(Describe describe) {
    collecting_ = true;
    describe(*this);
    collecting_ = false;
    return known_;
  }

  // Checks the table for unknown keys, then reads the keys `describe` names.
  template <typename Describe>
  void Read(Describe describe) {
    if (table_ == nullptr) return;
    collecting_ = true;
    describe(*this);
    collecting_ = false;
    CheckKeys(errors_, *table_, path_, known_);
    describe(*this);
  }

  template <typename T>
  void Int(const char* key, T S::*m, int64_t min, int64_t max, const char* /*doc*/) {
    max = std::min<int64_t>(max, std::numeric_limits<T>::max());
    if (const toml::node* n = Find(key)) {
      if (auto v = ReadInt(errors_, *n, Join(path_, key), min, max)) target_->*m = static_cast<T>(*v);
    }
  }

  void Bool(const char* key, bool S::*m, const char* /*doc*/) {
    if (const toml::node* n = Find(key)) {
      if (const auto* b = n->as_boolean()) {
        target_->*m = b->get();
      } else {
        errors_->Fail(*n, Join(path_, key), fmt::format("expected true or false, got {}", Got(*n)));
      }
    }
  }

  template <typename E>
  void Enum(const char* key, E S::*m, const EnumTable<E>& table, const char* /*doc*/) {
    if (const toml::node* n = Find(key)) {
      if (auto v = ReadEnum(errors_, *n, Join(path_, key), table)) target_->*m = *v;
    }
  }

  template <typename E>
  void EnumList(const char* key, std::vector<E> S::*m, const EnumTable<E>& table,
                const char* /*doc*/) {
    if (const toml::node* n = Find(key)) {
      if (auto v = ReadEnumArray(errors_, *n, Join(path_, key), table)) target_->*m = std::move(*v);
    }
  }

  template <typename E>
  void EnumSet(const char* key, std::set<E> S::*m, const EnumTable<E>& table, const char* /*doc*/) {
    if (const toml::node* n = Find(key)) {
      if (auto v = ReadEnumArray(errors_, *n, Join(path_, key), table)) {
        target_->*m = std::set<E>(v->begin(), v->end());
      }
    }
  }

  // `valid` names, and names that `also` accepts (a protocol script's sites).
  void Names(const char* key, std::vector<std::string> S::*m, const std::vector<std::string>& valid,
             const char* noun, bool (*also)(std::string_view), const char* doc) {
    EnumTable<std::string> table{noun, {}};
    for (const std::string& name : valid) table.names.emplace_back(name, name);
    const toml::node* n = Find(key);
    if (n != nullptr && n->as_array() != nullptr) {
      const SiteFamily family = also == &IsScriptCrashSite ? SiteFamily::kCrashPoint : SiteFamily::kRequest;
      size_t i = 0;
      for (const toml::node& item : *n->as_array()) {
        std::optional<std::string> name = item.value<std::string>();
        const std::string path = fmt::format("{}[{}]", Join(path_, key), i++);
        if (!name || std::find(valid.begin(), valid.end(), *name) != valid.end()) continue;
        if (also(*name)) {
          table.names.emplace_back(*name, *name);
          continue;
        }
        // Refused below; a script's site spelled in the wrong case is the
        // usual mistake (the README's after-commit for a script's after-COMMIT).
        if (const std::string script = AsScriptSite(*name, family); !script.empty()) {
          errors_->Fail(item, path,
                        fmt::format("unknown {} {}: did you mean {}? (a protocol script's sites name the command "
                                    "as sent, in upper case; the built-in protocols' are {})",
                                    noun, Quoted(*name), Quoted(script), table.List()));
          return;
        }
      }
    }
    EnumList(key, m, table, doc);
  }

  void Text(const char* key, std::string S::*m, bool (*check)(std::string_view),
            const char* expected, const char* /*doc*/) {
    if (const toml::node* n = Find(key)) {
      std::string path = Join(path_, key);
      std::optional<std::string> v = ReadString(errors_, *n, path, expected);
      if (!v) return;
      if (check != nullptr && !check(*v)) {
        errors_->Fail(*n, path, fmt::format("expected {}, got {}", expected, Quoted(*v)));
        return;
      }
      target_->*m = std::move(*v);
    }
  }

  void Rate(const char* key, uint32_t S::*m, const char* /*doc*/) {
    const toml::node* n = Find(key);
    if (n == nullptr) return;
    std::optional<double> rate;
    if (const auto* f = n->as_floating_point()) rate = f->get();
    if (const auto* i = n->as_integer()) rate = static_cast<double>(i->get());
    if (!rate || !(*rate >= 0.0 && *rate <= 1.0)) {  // also rejects NaN
      errors_->Fail(*n, Join(path_, key), fmt::format("expected a number in 0..1, got {}", Got(*n)));
      return;
    }
    target_->*m = static_cast<uint32_t>(std::llround(*rate * 1e6));
  }

 private:
  // The node for `key` when reading; records the key when collecting.
  const toml::node* Find(const char* key) {
    if (collecting_) {
      known_.emplace_back(key);
      return nullptr;
    }
    if (errors_->failed()) return nullptr;
    return table_->get(key);
  }

  Errors* errors_;
  const toml::table* table_;
  std::string path_;
  S* target_;
  std::vector<std::string> known_;
  bool collecting_ = false;
};

template <typename S, typename Describe>
void ReadTable(Errors* e, const toml::table* table, std::string path, S* target,
               Describe describe, std::vector<std::string> also_known = {}) {
  TableReader<S> reader(e, table, std::move(path), target, std::move(also_known));
  reader.Read(describe);
}

// --- Run-specific checks -----------------------------------------------------

// What a schedule entry may name: a point fault names a worker process
// ("w3", every group's workers included), a pick any actor that takes
// steps, handler lanes too ("w3#2").
enum class Naming : uint8_t { kProcesses, kLanes };

// The actor slots of a run ("p1", "w1".."wN" over every group, with lanes
// "w1#2".. when `naming` allows, "j1"), and how to print them.
std::vector<std::string> Slots(const RunConfig& c, Naming naming) {
  std::vector<std::string> out;
  for (int i = 1; i <= c.producers; ++i) out.push_back(ActorName(ActorRole::kProducer, i));
  for (int i = 1; i <= c.TotalWorkers(); ++i) {
    const int lanes = naming == Naming::kLanes ? c.handlers : 1;
    for (int lane = 1; lane <= lanes; ++lane) out.push_back(ActorName(ActorRole::kWorker, i, 1, false, lane));
  }
  if (c.protocol.janitor.enabled()) out.emplace_back("j1");
  return out;
}

std::string SlotSummary(const RunConfig& c, Naming naming) {
  auto range = [](char letter, int n) {
    return n == 1 ? fmt::format("{}1", letter) : fmt::format("{}1..{}{}", letter, letter, n);
  };
  std::string out = range('p', c.producers) + ", " + range('w', c.TotalWorkers());
  if (naming == Naming::kLanes && c.handlers > 1) out += fmt::format(", their lanes w1#2..w1#{}", c.handlers);
  if (c.protocol.janitor.enabled()) out += ", j1";
  return out;
}

// "expected an actor of this run (p1, w1..w3), got 'w4'", or nullopt when
// `actor` is one of this run's.
std::optional<std::string> ActorMismatch(const RunConfig& c, const std::string& actor, Naming naming) {
  std::vector<std::string> slots = Slots(c, naming);
  if (std::find(slots.begin(), slots.end(), actor) != slots.end()) return std::nullopt;
  return fmt::format("expected an actor of this run ({}), got {}", SlotSummary(c, naming), Quoted(actor));
}

bool IsHex16(std::string_view s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

// A trace hash at `path`: 16 hex digits, lower-cased; nullopt after an
// error naming `path`.
std::optional<std::string> ReadTraceHash(Errors* e, const toml::node& n, const std::string& path) {
  std::optional<std::string> hash = ReadString(e, n, path, "16 hex digits");
  if (!hash) return std::nullopt;
  if (!IsHex16(*hash)) {
    e->Fail(n, path, fmt::format("expected 16 hex digits, got {}", Quoted(*hash)));
    return std::nullopt;
  }
  std::transform(hash->begin(), hash->end(), hash->begin(),
                 [](char ch) { return static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); });
  return hash;
}

std::vector<std::string> SplitWhitespace(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !space(s[j])) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// --- The scenario -------------------------------------------------------------

// The length of the UTF-8 sequence at the start of `s` (1..4), or 0 when it
// is not a valid one (overlong, a surrogate, above U+10FFFF, cut short).
size_t Utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2, cp = b & 0x1f;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3, cp = b & 0x0f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4, cp = b & 0x07;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  const uint32_t kMinOf[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinOf[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// "LINE: invalid TOML: ..." for the first NUL byte, invalid UTF-8 sequence,
// or non-ASCII character outside a string or comment (TOML allows none
// there; toml++ 3.3 reaches __builtin_unreachable on "seed = 0\xcd\x9a"),
// or a key or value nested deeper than toml++ can parse without running
// out of stack (it recurses once per dotted part of a key: a table header
// of 40 000 parts crashed it), or nullopt when there is none. Tracks just
// enough of TOML's lexical structure (comments, the four kinds of strings,
// keys and the brackets of values) to know where it is.
// Whether `path` names a Lua file: a script or include must end in ".lua",
// so a scenario cannot have any other readable file (whose text a syntax
// error would quote) loaded as a script.
bool IsLuaFileName(std::string_view path) {
  constexpr std::string_view kExtension = ".lua";
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.size() > kExtension.size() && name.substr(name.size() - kExtension.size()) == kExtension;
}

constexpr int kMaxTomlKeyParts = 64;
constexpr size_t kMaxTomlValueNesting = 64;

std::optional<std::string> FindInvalidText(std::string_view text) {
  enum class In { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };
  In in = In::kCode;
  uint32_t line = 1;
  // Keys: a line starts one (outside a multi-line array), so do '{' and ','
  // inside an inline table; '=' ends it. `open` holds the value brackets.
  bool in_key = true;
  int key_parts = 1;
  std::string open;
  auto at = [&](size_t i, std::string_view what) { return text.substr(i, what.size()) == what; };
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\0') return fmt::format("{}: invalid TOML: a NUL byte", line);
    size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0) {
      return fmt::format("{}: invalid TOML: not UTF-8 (byte 0x{:02x})", line,
                         static_cast<unsigned char>(c));
    }
    if (n > 1 && in == In::kCode) {
      return fmt::format("{}: invalid TOML: a non-ASCII character outside a string or comment", line);
    }
    if (c == '\n') {
      ++line;
      if (in != In::kMultiBasic && in != In::kMultiLiteral) in = In::kCode;
      if (in == In::kCode && open.empty()) {
        in_key = true;
        key_parts = 1;
      }
    }
    switch (in) {
      case In::kCode:
        if (c == '#') in = In::kComment;
        if (in_key && c == '.' && ++key_parts > kMaxTomlKeyParts) {
          return fmt::format("{}: invalid TOML: a key of more than {} dotted parts", line, kMaxTomlKeyParts);
        }
        if (in_key && c == '=') in_key = false;
        if (!in_key && (c == '[' || c == '{')) {
          open += c;
          if (open.size() > kMaxTomlValueNesting) {
            return fmt::format("{}: invalid TOML: values nested more than {} deep", line, kMaxTomlValueNesting);
          }
        }
        if (!in_key && (c == ']' || c == '}') && !open.empty()) open.pop_back();
        if (!open.empty() && open.back() == '{' && (c == '{' || c == ',')) {
          in_key = true;
          key_parts = 1;
        }
        if (at(i, "\"\"\"") || at(i, "\'\'\'")) {
          in = c == '"' ? In::kMultiBasic : In::kMultiLiteral;
          n = 3;
        } else if (c == '"') {
          in = In::kBasic;
        } else if (c == '\'') {
          in = In::kLiteral;
        }
        break;
      case In::kBasic:
      case In::kMultiBasic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80 &&
            text[i + 1] != '\n' && text[i + 1] != '\0') {
          n = 2;  // an escaped quote or backslash ends nothing
        } else if (in == In::kBasic && c == '"') {
          in = In::kCode;
        } else if (in == In::kMultiBasic && at(i, "\"\"\"")) {
          in = In::kCode;
          n = 3;
          while (n < 5 && i + n < text.size() && text[i + n] == '"') ++n;  // up to two more quotes
        }
        break;
      case In::kLiteral:
        if (c == '\'') in = In::kCode;
        break;
      case In::kMultiLiteral:
        if (at(i, "\'\'\'")) {
          in = In::kCode;
          n = 3;
          while (n < 5 && i + n < text.size() && text[i + n] == '\'') ++n;
        }
        break;
      case In::kComment:
        break;
    }
    i += n;
  }
  return std::nullopt;
}

constexpr char kNameExpected[] =
    "a name of 1..128 characters A-Z a-z 0-9 . _ - (not starting with . or -)";

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> kKeys = {
      "protocol", "name",     "description", "origin", "expect",   "seed",
      "server",   "workload", "timing",      "faults", "schedule", "embedded",
      "groups",
  };
  return kKeys;
}

class ScenarioParser {
 public:
  ScenarioParser(Errors* errors, const toml::table& root, std::string_view source_name)
      : e_(errors), root_(root), source_name_(source_name) {}

  // Meaningful only when !errors->failed().
  Scenario Parse();

 private:
  std::optional<std::string> TopString(const char* key, std::string_view expected);
  void ReadProtocol();
  ProtocolDef ReadInlineProtocol(const toml::table& t);
  // [protocol.params] of table `protocol` into s_.script_params.
  void ReadConsumerCommand(const toml::node& command, const toml::table& protocol, ProtocolDef* p);
  void ReadScriptParams(const toml::table& params, const toml::table& protocol);
  // [protocol] include into s_.script_includes.
  void ReadScriptIncludes(const toml::node& include, const toml::table& protocol);
  void ReadExpect();
  void ReadSeed();
  void ReadSchedule();
  // [[groups]]: further consumer groups on the stream (RunConfig::groups).
  void ReadGroups();
  // [[embedded]] into s_.embedded: each table's keys, strings, and a text
  // that matches its hash.
  void ReadEmbedded();
  void CheckActor(const toml::node& at, const std::string& path, const std::string& actor, Naming naming,
                  std::string_view context);
  // Reports a run-level error "path: what" (ValidateRunConfig's form) on the
  // line of the deepest part of `path` the file has, else line 1 "scenario".
  void FailAtNamedField(const std::string& message);
  // A site the file names in [faults] crash_points or lost_sites that the
  // (built-in or inline) protocol never visits is an error at its line.
  void CheckNamedSites();
  // A ValidateProtocol message ("protocol 'x': step 2 (ack): ..."), at the
  // line and field it is about: the step, else the key it names.
  void FailAtProtocolField(const std::string& message);

  Errors* e_;
  const toml::table& root_;
  std::string_view source_name_;
  Scenario s_;
  const toml::table* inline_protocol_ = nullptr;
};

Scenario ScenarioParser::Parse() {
  CheckKeys(e_, root_, "", TopLevelKeys());
  s_.name = ScenarioNameFrom(std::filesystem::path(source_name_).stem().string());
  if (auto v = TopString("name", kNameExpected)) {
    if (!IsScenarioName(*v)) e_->Fail(*root_.get("name"), "name", fmt::format("expected {}, got {}", kNameExpected, Quoted(*v)));
    s_.name = *v;
  }
  if (auto v = TopString("description", "a string")) s_.description = *v;
  if (auto v = TopString("origin", "a string")) s_.origin = *v;

  ReadProtocol();
  if (e_->failed()) return s_;
  RunConfig& c = s_.config;
  ReadTable(e_, SubTable(e_, root_, "", "server"), "server", &c, DescribeServer<TableReader<RunConfig>>);
  s_.has_workload = root_.get("workload") != nullptr;
  ReadTable(e_, SubTable(e_, root_, "", "workload"), "workload", &c,
            DescribeWorkload<TableReader<RunConfig>>);
  ReadTable(e_, SubTable(e_, root_, "", "timing"), "timing", &c.timing,
            DescribeTiming<TableReader<Timing>>);
  ReadTable(e_, SubTable(e_, root_, "", "faults"), "faults", &c.faults,
            DescribeFaults<TableReader<FaultModel>>);
  if (const toml::node* kinds = root_.at_path("faults.kinds").node()) {
    s_.no_faults_asked = kinds->is_array() && kinds->as_array()->empty();
    c.faults.kinds_are_default = false;
  }
  ReadExpect();
  ReadSeed();
  ReadGroups();
  if (e_->failed()) return s_;
  // A server with a replica can fail over: a default model then fails it
  // over too (defaults must reach every fault the run can have).
  if (c.replicas > 0 && c.faults.kinds_are_default) {
    c.faults.kinds.insert(FaultKind::kFailover);
    c.faults.kinds.insert(FaultKind::kReplicaLag);
  }

  if (inline_protocol_ != nullptr) {
    // An inline protocol's own run defaults are the ones this file sets;
    // the run's fault model is the file's, resolved to the sites the
    // protocol visits (as RunConfig::For resolves a catalog protocol's).
    ProtocolDef& p = c.protocol;
    p.expected = c.expected;
    p.naming = c.naming;
    p.persistence = c.persistence;
    p.faults = c.faults;
    Status valid = ValidateProtocol(p);
    if (!valid.ok()) FailAtProtocolField(valid.message());
    // A C++ handler's sites are what it does when it runs, not what its
    // documenting steps say (SitesFoundByRunning): its lists stay as written.
    if (s_.handler != HandlerForm::kCpp) c.faults = ReachableFaultModel(p);
  }
  CheckNamedSites();
  ReadSchedule();
  ReadEmbedded();
  if (e_->failed()) return s_;
  Status valid = ValidateRunConfig(c);
  if (!valid.ok()) FailAtNamedField(valid.message());
  return s_;
}

void ScenarioParser::CheckNamedSites() {
  const ProtocolDef& p = s_.config.protocol;
  if (e_->failed() || SitesFoundByRunning(p)) return;  // a script's: `check` finds them by running it
  struct Named {
    const char* key;
    std::vector<std::string> visits;
  };
  for (const Named& named : {Named{"crash_points", CrashPointsOf(p)}, Named{"lost_sites", LostSitesOf(p)}}) {
    const toml::node* list = root_.at_path(std::string("faults.") + named.key).node();
    if (list == nullptr || !list->is_array()) continue;
    const toml::array& sites = *list->as_array();
    for (size_t i = 0; i < sites.size(); ++i) {
      const std::optional<std::string> site = sites[i].value<std::string>();
      if (!site || std::find(named.visits.begin(), named.visits.end(), *site) != named.visits.end()) continue;
      e_->Fail(sites[i], fmt::format("faults.{}[{}]", named.key, i),
               fmt::format("{} is a site this protocol never visits, so no fault could fire there (it visits: "
                           "{})",
                           Quoted(*site), fmt::join(named.visits, ", ")));
      return;
    }
  }
}

std::optional<std::string> ScenarioParser::TopString(const char* key, std::string_view expected) {
  const toml::node* n = root_.get(key);
  if (n == nullptr || e_->failed()) return std::nullopt;
  return ReadString(e_, *n, key, expected);
}

void ScenarioParser::ReadProtocol() {
  const toml::node* n = root_.get("protocol");
  if (e_->failed()) return;
  std::string expected = fmt::format(
      "a catalog protocol name ({}) or an inline [protocol] table", CatalogNames());
  if (n == nullptr) {
    e_->Fail(1, "protocol", fmt::format("expected {}, got nothing", expected));
    return;
  }
  if (const toml::table* t = n->as_table()) {
    inline_protocol_ = t;
    ProtocolDef p = ReadInlineProtocol(*t);
    // No base: the default model for the operations the protocol uses (a
    // correct protocol must survive it), never silence. [faults] amends it
    // key by key (Parse). A script's sites are what it visits: a base's
    // site lists name a C++ loop's sites, not the script's.
    const bool by_running = SitesFoundByRunning(p) || s_.handler == HandlerForm::kCpp;
    if (t->get("base") == nullptr) {
      p.faults = InlineStartingModel(p, by_running);
    } else if (by_running) {
      p.faults.crash_points.clear();
      p.faults.lost_sites.clear();
    } else {
      // The base's sites, narrowed to those the amended steps still visit
      // (changed steps or effect may leave some unreachable; written out,
      // such a site would be refused as one no fault could fire at).
      p.faults = WithoutUnvisitedSites(p);
    }
    s_.config = RunConfig::For(p);
    s_.config.faults = p.faults;  // [faults] amends the protocol's own model
    return;
  }
  std::optional<std::string> name = ReadString(e_, *n, "protocol", expected);
  if (!name) return;
  const ProtocolDef* p = FindProtocol(*name);
  if (p == nullptr) {
    e_->Fail(*n, "protocol", fmt::format("unknown catalog protocol {} (valid: {})", Quoted(*name),
                                         CatalogNames()));
    return;
  }
  s_.protocol_ref = *name;
  s_.config = RunConfig::For(*p);
}

ProtocolDef ScenarioParser::ReadInlineProtocol(const toml::table& t) {
  ProtocolDef p;
  const toml::node* base = t.get("base");
  if (base != nullptr) {
    std::optional<std::string> name = ReadString(e_, *base, "protocol.base", "a catalog protocol name");
    if (!name) return p;
    const ProtocolDef* def = FindProtocol(*name);
    if (def == nullptr) {
      e_->Fail(*base, "protocol.base", fmt::format("unknown catalog protocol {} (valid: {})",
                                                   Quoted(*name), CatalogNames()));
      return p;
    }
    p = *def;
    p.cpp_handler = nullptr;  // an inline protocol runs its steps
  }
  p.name = s_.name;
  // A loop or janitor key written directly under [protocol]: say where it belongs.
  const std::vector<std::pair<const char*, std::vector<std::string>>> nested = {
      {"loop", TableReader<LoopConfig>(e_, nullptr, "", nullptr).Keys(DescribeLoop<TableReader<LoopConfig>>)},
      {"janitor",
       TableReader<JanitorConfig>(e_, nullptr, "", nullptr).Keys(DescribeJanitor<TableReader<JanitorConfig>>)},
  };
  for (auto&& [key, node] : t) {
    for (const auto& [table, keys] : nested) {
      if (std::find(keys.begin(), keys.end(), key.str()) == keys.end()) continue;
      e_->Fail(std::max<uint32_t>(1, key.source().begin.line), "protocol." + std::string(key.str()),
               fmt::format("unknown key in [protocol]: it belongs under [protocol.{}]", table));
    }
  }
  ReadTable(e_, &t, "protocol", &p, DescribeProtocol<TableReader<ProtocolDef>>,
            {"base", "loop", "janitor", "script", "params", "include", "handler", "command"});
  if (const toml::node* handler = t.get("handler")) {  // the handler is C++ code outside the file
    if (auto form = ReadEnum(e_, *handler, "protocol.handler", HandlerForms())) s_.handler = *form;
    if (s_.handler == HandlerForm::kCpp && t.get("script") != nullptr) {
      e_->Fail(*handler, "protocol.handler",
               "expected \"steps\" or no handler key with a script (the script is the handler), got \"c++\"");
    }
  }
  if (const toml::node* script = t.get("script")) {  // a protocol script (docs/scripts.md)
    const char* expected = "a path to a Lua protocol script (a .lua file), relative to this file";
    std::optional<std::string> path = ReadString(e_, *script, "protocol.script", expected);
    if (path && !IsLuaFileName(*path)) {
      e_->Fail(*script, "protocol.script", fmt::format("expected {}, got {}", expected, Quoted(*path)));
    }
    if (path) p.script_path = *path;
  }
  if (const toml::node* command = t.get("command")) ReadConsumerCommand(*command, t, &p);
  if (const toml::table* params = SubTable(e_, t, "protocol", "params")) ReadScriptParams(*params, t);
  if (const toml::node* include = t.get("include")) ReadScriptIncludes(*include, t);
  if (base == nullptr && t.get("steps") == nullptr && t.get("script") == nullptr && t.get("command") == nullptr) {
    e_->Fail(t, "protocol.steps",
             fmt::format("expected an array of steps ({}) when there is no base, got nothing",
                         HandlerOps().List()));
  }
  ReadTable(e_, SubTable(e_, t, "protocol", "loop"), "protocol.loop", &p.loop,
            DescribeLoop<TableReader<LoopConfig>>);
  ReadTable(e_, SubTable(e_, t, "protocol", "janitor"), "protocol.janitor", &p.janitor,
            DescribeJanitor<TableReader<JanitorConfig>>);
  return p;
}

void ScenarioParser::ReadConsumerCommand(const toml::node& command, const toml::table& protocol, ProtocolDef* p) {
  const char* expected = "an array of 1..64 strings: the program and its arguments (your consumer, "
                         "docs/real-consumers.md), e.g. [\"python3\", \"consumer.py\"]";
  if (protocol.get("script") != nullptr) {
    e_->Fail(command, "protocol.command", "expected either a script or a command, got both");
    return;
  }
  const toml::array* args = command.as_array();
  if (args == nullptr || args->empty() || args->size() > 64) {
    e_->Fail(command, "protocol.command", fmt::format("expected {}, got {}", expected, Got(command)));
    return;
  }
  std::vector<std::string> argv;
  for (const toml::node& arg : *args) {
    std::optional<std::string> text = ReadString(e_, arg, "protocol.command", expected);
    if (!text) return;
    if (text->find('\0') != std::string::npos || (argv.empty() && text->empty())) {
      e_->Fail(arg, "protocol.command", fmt::format("expected {}, got {}", expected, Quoted(*text)));
      return;
    }
    argv.push_back(std::move(*text));
  }
  p->consumer_command = std::move(argv);
}

void ScenarioParser::ReadScriptParams(const toml::table& params, const toml::table& protocol) {
  if (protocol.get("script") == nullptr) {
    e_->Fail(params, "protocol.params", "expected only with protocol.script (they are a script's options), got no script");
    return;
  }
  for (const auto& [key, node] : params) {
    std::string name(key.str());
    std::string path = "protocol.params." + name;
    bool identifier = !name.empty() && name.size() <= 64 && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) identifier = identifier && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_');
    if (!identifier) {
      e_->Fail(node, path, fmt::format("expected a key of 1..64 characters a-z 0-9 _ not starting with a digit, got {}", Quoted(name)));
      return;
    }
    if (const auto* b = node.as_boolean()) {
      s_.script_params[name] = b->get();
    } else if (const auto* i = node.as_integer()) {
      s_.script_params[name] = i->get();
    } else if (const auto* str = node.as_string()) {
      s_.script_params[name] = str->get();
    } else {
      e_->Fail(node, path, fmt::format("expected a string, an integer or a boolean, got {}", Got(node)));
      return;
    }
  }
}

void ScenarioParser::ReadScriptIncludes(const toml::node& include, const toml::table& protocol) {
  const char* expected = "an array of paths to Lua files (.lua), relative to this file";
  if (protocol.get("script") == nullptr) {
    e_->Fail(include, "protocol.include", "expected only with protocol.script, got no script");
    return;
  }
  const toml::array* files = include.as_array();
  if (files == nullptr) {
    e_->Fail(include, "protocol.include", fmt::format("expected {}, got {}", expected, Got(include)));
    return;
  }
  for (const toml::node& file : *files) {
    std::optional<std::string> path = ReadString(e_, file, "protocol.include", expected);
    if (!path) return;
    if (!IsLuaFileName(*path)) {
      e_->Fail(file, "protocol.include", fmt::format("expected {}, got {}", expected, Quoted(*path)));
      return;
    }
    s_.script_includes.push_back(*path);
  }
}

void ScenarioParser::ReadExpect() {
  const toml::node* n = root_.get("expect");
  if (n == nullptr || e_->failed()) return;
  std::string expected = fmt::format(
      "\"<kind>[:<cause>]\", alternatives joined by | and combinations by + (\"lost|stuck\", "
      "\"duplicate+pel-leak\"), kind one of {} (ok takes no cause)",
      VerdictKindList());
  std::optional<std::string> text = ReadString(e_, *n, "expect", expected);
  if (!text) return;
  std::string why;
  if (!Expectation::Parse(*text, &s_.config.expected, &why)) {
    e_->Fail(*n, "expect", fmt::format("{}: {}", Quoted(*text), why));
  }
}

void ScenarioParser::ReadSeed() {
  const toml::node* n = root_.get("seed");
  if (n == nullptr || e_->failed()) return;
  if (const auto* i = n->as_integer(); i != nullptr && i->get() >= 0) {
    s_.config.seed = static_cast<uint64_t>(i->get());
    s_.has_seed = true;
    return;
  }
  if (const auto* str = n->as_string(); str != nullptr && ParseSeed(str->get(), &s_.config.seed)) {
    return;
  }
  e_->Fail(*n, "seed", fmt::format(
      "expected an integer >= 0 (or a decimal string for seeds above 2^63-1), got {}", Got(*n)));
}

void ScenarioParser::FailAtProtocolField(const std::string& message) {
  std::string what = message;
  if (what.starts_with("protocol '")) {
    size_t end = what.find("': ");
    if (end != std::string::npos) what = what.substr(end + 3);
  }
  const toml::table& t = *inline_protocol_;
  unsigned step = 0;
  if (std::sscanf(what.c_str(), "step %u (", &step) == 1 && step > 0) {
    if (const toml::array* steps = t.get_as<toml::array>("steps"); steps != nullptr && step <= steps->size()) {
      e_->Fail((*steps)[step - 1], fmt::format("protocol.steps[{}]", step - 1), what);
      return;
    }
  }
  // The first key the message names, in [protocol], [protocol.loop] or [protocol.janitor].
  size_t best = std::string::npos, best_length = 0;
  const toml::node* at = nullptr;
  std::string path;
  for (const char* table : {"", "loop", "janitor"}) {
    const toml::table* sub = *table == '\0' ? &t : t.get_as<toml::table>(table);
    if (sub == nullptr) continue;
    for (auto&& [key, node] : *sub) {
      size_t pos = what.find(key.str());
      if (pos == std::string::npos || node.is_table()) continue;
      if (pos > best || (pos == best && key.str().size() <= best_length)) continue;  // the longest at the first place
      best = pos;
      best_length = key.str().size();
      at = &node;
      path = *table == '\0' ? "protocol." + std::string(key.str()) : fmt::format("protocol.{}.{}", table, key.str());
    }
  }
  if (at == nullptr) {
    at = t.get("steps") != nullptr ? t.get("steps") : static_cast<const toml::node*>(&t);
    path = t.get("steps") != nullptr ? "protocol.steps" : "protocol";
  }
  e_->Fail(*at, path, what);
}

namespace {

// The largest duration written in the file: an integer (or an integer in an
// array) under a key ending in "_ms", with its dotted path; nullptr when
// there is none.
struct LargestDuration {
  const toml::node* node = nullptr;
  std::string path;
  int64_t ms = -1;
};
void FindLargestDuration(const toml::node& n, const std::string& path, bool is_duration,
                         LargestDuration* out) {
  if (const toml::table* t = n.as_table()) {
    for (auto&& [key, child] : *t) {
      const std::string name(key.str());
      const bool duration = name.size() > 3 && name.compare(name.size() - 3, 3, "_ms") == 0;
      FindLargestDuration(child, path.empty() ? name : path + "." + name, duration, out);
    }
  } else if (const toml::array* a = n.as_array()) {
    for (const toml::node& element : *a) FindLargestDuration(element, path, is_duration, out);
  } else if (const auto* v = n.as_integer(); v != nullptr && is_duration && v->get() > out->ms) {
    *out = {&n, path, v->get()};
  }
}

}  // namespace

void ScenarioParser::FailAtNamedField(const std::string& message) {
  size_t colon = message.find(": ");
  std::string path = colon == std::string::npos ? "" : message.substr(0, colon);
  if (path.empty() || path.find(' ') != std::string::npos) {
    e_->Fail(1, "scenario", message);
    return;
  }
  std::string what = message.substr(colon + 2);
  // A message about a whole table (the run's durations added up) names the
  // largest duration the file sets: the one to shorten, on its own line.
  const toml::node* whole = root_.at_path(path).node();
  if (whole == nullptr || whole->is_table()) {
    LargestDuration largest;
    FindLargestDuration(root_, "", false, &largest);
    if (largest.node != nullptr) {
      e_->Fail(*largest.node, largest.path, fmt::format("{} ({} ms here is the largest of them)", what, largest.ms));
      return;
    }
  }
  for (std::string part = path; !part.empty();) {
    if (const toml::node* n = root_.at_path(part).node()) {
      e_->Fail(*n, path, what);
      return;
    }
    size_t dot = part.rfind('.');
    part = dot == std::string::npos ? "" : part.substr(0, dot);
  }
  e_->Fail(1, path, what);
}

void ScenarioParser::CheckActor(const toml::node& at, const std::string& path,
                                const std::string& actor, Naming naming, std::string_view context) {
  if (std::optional<std::string> why = ActorMismatch(s_.config, actor, naming)) {
    e_->Fail(at, path, *why + std::string(context));
  }
}

void ScenarioParser::ReadEmbedded() {
  const toml::node* n = root_.get("embedded");
  if (n == nullptr || e_->failed()) return;
  const toml::array* files = n->as_array();
  if (files == nullptr) {
    e_->Fail(*n, "embedded", fmt::format("expected [[embedded]] tables (path, from, hash, text), got {}", Got(*n)));
    return;
  }
  for (size_t i = 0; i < files->size() && !e_->failed(); ++i) {
    const std::string path = fmt::format("embedded[{}]", i);
    const toml::table* t = (*files)[i].as_table();
    if (t == nullptr) {
      e_->Fail((*files)[i], path, fmt::format("expected a table (path, from, hash, text), got {}", Got((*files)[i])));
      return;
    }
    CheckKeys(e_, *t, path, {"path", "from", "hash", "text"});
    EmbeddedFile f;
    for (auto [key, member] : {std::pair{"path", &EmbeddedFile::path}, std::pair{"from", &EmbeddedFile::from},
                               std::pair{"hash", &EmbeddedFile::hash}, std::pair{"text", &EmbeddedFile::text}}) {
      const toml::node* v = t->get(key);
      if (e_->failed()) return;
      if (v == nullptr) {
        e_->Fail(*t, path + "." + key, "expected a string, got nothing");
        return;
      }
      std::optional<std::string> text = ReadString(e_, *v, path + "." + key, "a string");
      if (!text) return;
      f.*member = std::move(*text);
    }
    if (ContentHash(f.text) != f.hash) {
      e_->Fail(*t->get("hash"), path + ".hash",
               fmt::format("the embedded text of {} does not match its hash {} (it is {}): the file was edited; "
                           "remove this [[embedded]] table to run {} as it is on disk",
                           Quoted(f.path), Quoted(f.hash), Quoted(ContentHash(f.text)), Quoted(f.path)));
      return;
    }
    s_.embedded.push_back(std::move(f));
  }
}

void ScenarioParser::ReadGroups() {
  const toml::node* n = root_.get("groups");
  if (n == nullptr || e_->failed()) return;
  const toml::array* a = n->as_array();
  if (a == nullptr || !a->is_array_of_tables()) {
    e_->Fail(*n, "groups",
             fmt::format("expected [[groups]] tables (name = \"indexer\", consumer = \"index_consumer\", "
                         "workers = 2), got {}",
                         Got(*n)));
    return;
  }
  if (s_.config.protocol.script_path.empty()) {
    e_->Fail(*n, "groups", "further consumer groups need a protocol script ([protocol] script): each group's "
                           "workers run a function of it");
    return;
  }
  for (size_t i = 0; i < a->size() && !e_->failed(); ++i) {
    const toml::table& t = *(*a)[i].as_table();
    const std::string path = fmt::format("groups[{}]", i);
    CheckKeys(e_, t, path, {"name", "consumer", "workers"});
    if (e_->failed()) return;
    ConsumerGroupSpec g;
    const toml::node* name = t.get("name");
    if (name == nullptr) {
      e_->Fail((*a)[i], path + ".name", "expected the group's name (a string), got nothing");
      return;
    }
    std::optional<std::string> v = ReadString(e_, *name, path + ".name", "the group's name (a string)");
    if (!v) return;
    g.name = *v;
    if (const toml::node* f = t.get("consumer")) {
      std::optional<std::string> fn = ReadString(e_, *f, path + ".consumer", "the name of a function of the script");
      if (!fn) return;
      g.function = *fn;
    }
    if (const toml::node* w = t.get("workers")) {
      std::optional<int64_t> count = ReadInt(e_, *w, path + ".workers", 1, kMaxWorkers);
      if (!count) return;
      g.workers = static_cast<int>(*count);
    }
    // The group's own mistakes at its own line (ValidateRunConfig's rules).
    RunConfig one;
    one.protocol.script_path = s_.config.protocol.script_path;
    one.groups = s_.config.groups;
    one.groups.push_back(g);
    // (The workers of all groups added up are checked with the whole file.)
    if (Status valid = ValidateGroups(one); !valid.ok() && valid.message().rfind("groups.", 0) == 0) {
      const std::string& message = valid.message();  // "groups.<field> ..."
      const std::string field = message.substr(7, message.find_first_of(" :") - 7);
      const toml::node* at = t.get(field);
      e_->Fail(at != nullptr ? *at : (*a)[i], path + "." + field, message.substr(message.find(' ') + 1));
      return;
    }
    s_.config.groups.push_back(std::move(g));
  }
}

void ScenarioParser::ReadSchedule() {
  const toml::table* t = SubTable(e_, root_, "", "schedule");
  if (t == nullptr || e_->failed()) return;
  CheckKeys(e_, *t, "schedule", {"faults", "picks", "trace_hash", "server", "server_hashes"});
  RunConfig& c = s_.config;

  if (const toml::node* n = t->get("faults"); n != nullptr && !e_->failed()) {
    const toml::array* a = n->as_array();
    if (a == nullptr) {
      e_->Fail(*n, "schedule.faults",
               fmt::format("expected an array of fault strings like \"crash w1 after-effect #1\", got {}",
                           Got(*n)));
      return;
    }
    c.fault_schedule.emplace();
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::node& el = (*a)[i];
      std::string path = fmt::format("schedule.faults[{}]", i);
      std::optional<std::string> text =
          ReadString(e_, el, path, "a fault string like \"crash w1 after-effect #1\"");
      if (!text) return;
      Result<FaultSpec> spec = ParseFaultSpec(*text);
      if (!spec.ok()) {
        e_->Fail(el, path, spec.status().message());
        return;
      }
      if (IsPointFault(spec->kind)) {
        CheckActor(el, path, spec->actor, Naming::kProcesses, fmt::format(" in '{}'", *text));
      }
      c.fault_schedule->push_back(*spec);
    }
  }

  if (const toml::node* n = t->get("picks"); n != nullptr && !e_->failed()) {
    std::optional<std::string> text =
        ReadString(e_, *n, "schedule.picks", "actor slots separated by spaces, like \"p1 w1 w2\"");
    if (!text) return;
    c.picks = SplitWhitespace(*text);
    for (size_t i = 0; i < c.picks.size() && !e_->failed(); ++i) {
      CheckActor(*n, "schedule.picks", c.picks[i], Naming::kLanes, fmt::format(" as pick {}", i + 1));
    }
  }

  if (const toml::node* n = t->get("trace_hash"); n != nullptr && !e_->failed()) {
    std::optional<std::string> hash = ReadTraceHash(e_, *n, "schedule.trace_hash");
    if (!hash) return;
    s_.trace_hash = *hash;
  }

  if (const toml::node* n = t->get("server"); n != nullptr && !e_->failed()) {
    std::optional<std::string> server = ReadString(e_, *n, "schedule.server", "a server name and version like \"redis 7.0.15\"");
    if (!server) return;
    s_.server = *server;
  }

  if (const toml::node* n = t->get("server_hashes"); n != nullptr && !e_->failed()) {
    const toml::table* hashes = n->as_table();
    if (hashes == nullptr) {
      e_->Fail(*n, "schedule.server_hashes",
               "expected a table of server = hash, like { \"valkey 8.0.1\" = \"0c1f9e2a7d3b4c55\" }");
      return;
    }
    for (const auto& [server, value] : *hashes) {
      if (server.str().empty()) {
        e_->Fail(value, "schedule.server_hashes", "a server name is empty: name it as a report does, like \"valkey 8.0.1\"");
        return;
      }
      std::optional<std::string> hash =
          ReadTraceHash(e_, value, fmt::format("schedule.server_hashes.{}", Quoted(std::string(server.str()))));
      if (!hash) return;
      s_.server_hashes[std::string(server.str())] = *hash;
    }
  }
}

}  // namespace

bool IsScenarioName(std::string_view name) {
  if (name.empty() || name.size() > kMaxScenarioNameChars || name[0] == '.' || name[0] == '-') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string ScenarioNameFrom(std::string_view text) {
  std::string out(text.substr(0, kMaxScenarioNameChars));
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '_' && !(i > 0 && (c == '.' || c == '-'))) out[i] = '_';
  }
  return out.empty() ? "scenario" : out;
}

namespace {
constexpr std::string_view kReplayFileSuffix = ".replay.toml";
}  // namespace

std::string ReplayFileName(std::string_view name) { return ScenarioNameFrom(name) + std::string(kReplayFileSuffix); }

bool IsReplayFileName(std::string_view path) { return path.ends_with(kReplayFileSuffix); }

bool ParseSeed(std::string_view text, uint64_t* seed) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *seed);
  return ec == std::errc() && end == text.data() + text.size();
}

Status CheckScheduleFitsRun(const RunConfig& c) {
  if (c.fault_schedule) {
    for (size_t i = 0; i < c.fault_schedule->size(); ++i) {
      const FaultSpec& spec = (*c.fault_schedule)[i];
      if (!IsPointFault(spec.kind)) continue;
      if (std::optional<std::string> why = ActorMismatch(c, spec.actor, Naming::kProcesses)) {
        return Status::InvalidArgument(
            fmt::format("schedule.faults[{}]: {} in '{}'", i, *why, spec.ToString()));
      }
    }
  }
  for (size_t i = 0; i < c.picks.size(); ++i) {
    if (std::optional<std::string> why = ActorMismatch(c, c.picks[i], Naming::kLanes)) {
      return Status::InvalidArgument(fmt::format("schedule.picks: {} as pick {}", *why, i + 1));
    }
  }
  return Status::Ok();
}

namespace {

// The key a "key = value" line `line` (from 1) of `text` sets, with the
// [table] it is in ("workload.events"), or "" when the line is no such line.
std::string KeyOnLine(std::string_view text, uint32_t line) {
  std::string table;
  uint32_t at = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view l = text.substr(start, end - start);
    size_t first = l.find_first_not_of(" \t");
    l = first == std::string_view::npos ? std::string_view() : l.substr(first);
    if (at == line) {
      size_t eq = l.find('=');
      if (eq == std::string_view::npos || l.starts_with("[") || l.starts_with("#")) return "";
      std::string_view key = l.substr(0, eq);
      key = key.substr(0, key.find_last_not_of(" \t") + 1);
      if (key.empty() || key.find_first_of(" \t\"'") != std::string_view::npos) return "";
      return table.empty() ? std::string(key) : table + "." + std::string(key);
    }
    if (l.starts_with("[") && !l.starts_with("[[")) {
      size_t close = l.find(']');
      if (close != std::string_view::npos) table = std::string(l.substr(1, close - 1));
    }
    if (end == text.size()) break;
    start = end + 1;
    ++at;
  }
  return "";
}

}  // namespace

std::string ContentHash(std::string_view text) {
  uint64_t hash = Fnv1aText::kOffsetBasis;
  Fnv1aText(&hash).append(text);
  return fmt::format("fnv1a64:{:016x}", hash);
}

Result<Scenario> ParseScenario(std::string_view text, std::string_view source_name) {
  // toml++ 3.3 reaches assertions and __builtin_unreachable on some of
  // these; it only ever sees valid UTF-8 without NUL.
  if (std::optional<std::string> bad = FindInvalidText(text)) {
    return Status::InvalidArgument(fmt::format("{}:{}", source_name, *bad));
  }
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& err) {
    const uint32_t line = std::max<uint32_t>(1, err.source().begin.line);
    std::string key = KeyOnLine(text, line);
    return Status::InvalidArgument(OneLine(fmt::format("{}:{}: {}invalid TOML: {}", source_name, line,
                                                       key.empty() ? "" : key + ": ", err.description())));
  }
  Errors errors(source_name);
  ScenarioParser parser(&errors, root, source_name);
  Scenario s = parser.Parse();
  if (errors.failed()) return errors.status();
  return s;
}

// `text` as a Lua string literal: every byte a decimal escape.
static std::string LuaQuoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) out += fmt::format("\\{:03d}", c);
  return out + "\"";
}

std::string ScriptIncludePrelude(std::string_view name, std::string_view text) {
  // An include that does not compile fails with its own message
  // ("name:line: ..."), not as a call of nil on the script's first line.
  return fmt::format("do local f, e = load({}, {}, \"t\"); if not f then error(e, 0) end; f() end; ",
                     LuaQuoted(text), LuaQuoted("@" + std::string(name)));
}

std::string ScriptParamsPrelude(const std::map<std::string, ScriptParam>& params) {
  std::string out = "local params = {";
  for (const auto& [key, value] : params) {
    out += "[" + LuaQuoted(key) + "] = ";  // a key may be a Lua keyword (`end`)
    if (const bool* b = std::get_if<bool>(&value)) {
      out += *b ? "true" : "false";
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      out += *i == std::numeric_limits<int64_t>::min() ? "math.mininteger" : std::to_string(*i);
    } else {
      out += LuaQuoted(std::get<std::string>(value));
    }
    out += ", ";
  }
  return out + "}; ";
}

}  // namespace xackly
