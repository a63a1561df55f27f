// The JSON form of the model: everything in a Report, field by field, so
// that `xackly merge` can read shard files back and combine them. Field names
// are the model's member names; enums are written by their names (the same
// names the CLI and scenario files use). Schema changes that a reader of an
// older version would misread bump kSchemaVersion.
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/report.h"
#include "reports/text_util.h"

namespace xackly::report {
namespace {

// ordered: "schema" comes first and fields keep the model's order.
using json = nlohmann::ordered_json;

json ExpectTermJson(const ExpectTerm& t) { return {{"kind", VerdictKindName(t.kind)}, {"cause", t.cause}}; }

// Its first term, and every alternative when there are several ("lost|stuck"):
// merge judges shards by the expectation it reads back.
json ExpectationJson(const Expectation& e) {
  json out = ExpectTermJson(ExpectTerm{e.kind, e.cause});
  json alternatives = json::array();
  for (const std::vector<ExpectTerm>& terms : e.alternatives) {
    json combination = json::array();
    for (const ExpectTerm& t : terms) combination.push_back(ExpectTermJson(t));
    alternatives.push_back(std::move(combination));
  }
  out["alternatives"] = std::move(alternatives);
  return out;
}

json FaultSpecJson(const FaultSpec& f) {
  return {{"kind", FaultKindName(f.kind)}, {"actor", f.actor},
          {"site", f.site},                {"nth", f.nth},
          {"at_ms", f.at_ms},              {"duration_ms", f.duration_ms},
          {"target", f.target},            {"event", f.event},
          {"text", f.ToString()}};  // for people; not read back
}

json CaseJson(const CaseReport& c) {
  json violations = json::array();
  for (const Violation& v : c.violations) {
    violations.push_back({{"kind", VerdictKindName(v.kind)},
                          {"event_id", v.event_id},
                          {"group", v.group},  // "": the run's own group
                          {"cause", v.cause},
                          {"detail", v.detail},
                          {"effect_count", v.effect_count}});
  }
  json fired = json::array();
  for (const FaultSpec& f : c.fired) fired.push_back(FaultSpecJson(f));
  // A long trace keeps the lines a reader needs (the violating events'
  // path, the start and the end) and writes null for the rest, so line
  // numbers (history items point at them) stay valid and the report stays
  // small: a script that polls for hours of virtual time makes 40 000-line
  // counterexamples. `xackly replay FILE --trace T` writes the whole trace.
  std::vector<bool> keep(c.trace.size(), c.trace.size() <= kJsonFullTraceLines);
  if (c.trace.size() > kJsonFullTraceLines) {
    for (int64_t line : PathLines(c)) {
      if (line >= 0 && static_cast<size_t>(line) < keep.size()) keep[static_cast<size_t>(line)] = true;
    }
    for (size_t i = 0; i < kJsonTraceEndLines && i < keep.size(); ++i) {
      keep[i] = true;
      keep[keep.size() - 1 - i] = true;
    }
  }
  json trace = json::array();
  int64_t elided = 0;
  for (size_t i = 0; i < c.trace.size(); ++i) {
    const TraceLine& l = c.trace[i];
    if (!keep[i]) {
      trace.push_back(nullptr);
      ++elided;
      continue;
    }
    trace.push_back({{"t_ms", l.t_ms},
                     {"actor", l.actor},
                     {"kind", LineKindName(l.kind)},
                     {"request", l.request},
                     {"reply", l.reply},
                     {"event", LineEventName(l.event)},
                     {"argv", l.argv},
                     {"site", l.site},
                     {"fault", l.fault},
                     {"replaces", l.replaces},
                     {"brought_by", l.brought_by},
                     {"duration_ms", l.duration_ms},
                     {"waited_for", l.waited_for},
                     {"ids", l.ids}});
  }
  json histories = json::object();
  for (const auto& [event, items] : c.histories) {
    json list = json::array();
    for (const HistoryItem& i : items) {
      list.push_back({{"kind", HistoryKindName(i.kind)},
                      {"t_ms", i.t_ms},
                      {"line", i.line},
                      {"actor", i.actor},
                      {"stream_id", i.stream_id},
                      {"detail", i.detail},
                      {"value", i.value},
                      {"command", i.command},
                      {"site", i.site},
                      {"sink", i.sink},
                      {"consumer", i.consumer},
                      {"persistence", i.persistence},
                      {"key", i.key},
                      {"fired_in", i.fired_in},
                      {"payload_missing", i.payload_missing}});
    }
    histories[event] = std::move(list);
  }
  return {{"protocol", c.protocol},
          {"scenario_file", c.scenario_file},
          {"seed", c.seed},
          {"producers", c.producers},
          {"workers", c.workers},
          {"handlers", c.handlers},
          {"events", c.events},
          {"persistence", c.persistence},
          {"restart_naming", c.restart_naming},
          {"expected", ExpectationJson(c.expected)},
          {"observed", c.observed},
          {"matched", c.matched},
          {"violations", std::move(violations)},
          {"trace_hash", c.trace_hash},
          {"steps", c.steps},
          {"virtual_ms", c.virtual_ms},
          {"fired", std::move(fired)},
          {"coverage", {{"fired", c.coverage.fired}, {"enabled", c.coverage.enabled}}},
          {"trace", std::move(trace)},
          {"trace_lines_elided", elided},
          {"histories", std::move(histories)},
          {"worker_groups", c.worker_groups},  // further groups' worker slots -> group
          {"replay_file", c.replay_file},
          {"replay_command", c.replay_command}};
}

json UnfiredJson(const CheckReport& k) {
  json list = json::array();
  for (const CheckReport::UnfiredFault& u : k.unfired_planned) list.push_back({{"fault", u.fault}, {"why", u.why}});
  return list;
}

json CheckJson(const CheckReport& k) {
  return {{"name", k.name},
          {"description", k.description},
          {"fault_model", k.fault_model},
          {"expected", ExpectationJson(k.expected)},
          {"observed", k.observed},
          {"matched", k.matched},
          {"undecided", k.undecided},
          {"cases_run", k.cases_run},
          {"cases_failed", k.cases_failed},
          {"cases_unjudged", k.cases_unjudged},
          {"other_violations", k.other_violations},
          {"counterexample", k.counterexample ? CaseJson(*k.counterexample) : json(nullptr)},
          {"counterexample_size", k.counterexample_size},
          {"shrink_steps", k.shrink_steps},
          {"shrink_cut", k.shrink_cut},
          {"first_hit_case", k.first_hit_case},
          {"fired_totals", k.fired_totals},
          {"never_fired", k.never_fired},
          {"cases_for_coverage", k.cases_for_coverage},
          {"coverage_gaps", k.coverage_gaps},
          {"gaps_allowed", k.gaps_allowed},
          {"unfired_planned", UnfiredJson(k)},
          {"single_run", k.single_run},
          {"seconds", k.seconds}};
}

// Reads typed fields out of parsed JSON, remembering the first problem with
// the path where it was found ("checks[0].counterexample.trace[3].t_ms").
class Reader {
 public:
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void Fail(const std::string& path, const std::string& what) {
    if (error_.empty()) error_ = (path.empty() ? "" : path + ": ") + what;
  }

  // The member `key` of object `obj`, or nullptr after recording an error.
  const json* Member(const json& obj, const std::string& path, const char* key) {
    if (failed()) return nullptr;
    if (!obj.is_object()) {
      Fail(path, "expected an object");
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      Fail(Join(path, key), "missing");
      return nullptr;
    }
    return &*it;
  }

  void Read(const json& obj, const std::string& path, const char* key, std::string* out) {
    if (const json* v = Member(obj, path, key)) ReadValue(*v, Join(path, key), out);
  }
  void Read(const json& obj, const std::string& path, const char* key, bool* out) {
    const json* v = Member(obj, path, key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(Join(path, key), "expected true or false");
    *out = v->get<bool>();
  }
  void Read(const json& obj, const std::string& path, const char* key, double* out) {
    const json* v = Member(obj, path, key);
    if (v == nullptr) return;
    if (!v->is_number()) return Fail(Join(path, key), "expected a number");
    *out = v->get<double>();
  }
  void Read(const json& obj, const std::string& path, const char* key, uint64_t* out) {
    const json* v = Member(obj, path, key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) return Fail(Join(path, key), "expected a non-negative integer");
    *out = v->get<uint64_t>();
  }
  void Read(const json& obj, const std::string& path, const char* key, int64_t* out) {
    if (const json* v = Member(obj, path, key)) ReadValue(*v, Join(path, key), out);
  }
  void Read(const json& obj, const std::string& path, const char* key, int* out) {
    int64_t wide = 0;
    Read(obj, path, key, &wide);
    if (failed()) return;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
      return Fail(Join(path, key), "out of range");
    }
    *out = static_cast<int>(wide);
  }

  void ReadValue(const json& v, const std::string& path, std::string* out) {
    if (!v.is_string()) return Fail(path, "expected a string");
    *out = v.get<std::string>();
  }
  void ReadValue(const json& v, const std::string& path, int64_t* out) {
    if (!v.is_number_integer()) return Fail(path, "expected an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Fail(path, "out of range");
    }
    *out = v.get<int64_t>();
  }
  void ReadValue(const json& v, const std::string& path, int* out) {
    int64_t wide = 0;
    ReadValue(v, path, &wide);
    if (failed()) return;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
      return Fail(path, "out of range");
    }
    *out = static_cast<int>(wide);
  }

  void ReadStrings(const json& obj, const std::string& path, const char* key,
                   std::vector<std::string>* out) {
    ForArray(obj, path, key, [&](const json& v, const std::string& vp) {
      ReadValue(v, vp, &out->emplace_back());
    });
  }
  // Calls each(element, element_path) for every element of array `key`.
  template <typename Each>
  void ForArray(const json& obj, const std::string& path, const char* key, Each each) {
    if (const json* v = Member(obj, path, key)) ForElements(*v, Join(path, key), each);
  }
  // The same for the array `v` found at `path`.
  template <typename Each>
  void ForElements(const json& v, const std::string& path, Each each) {
    if (failed()) return;
    if (!v.is_array()) return Fail(path, "expected an array");
    for (size_t i = 0; i < v.size() && !failed(); ++i) each(v[i], path + "[" + std::to_string(i) + "]");
  }
  // Calls each(name, value, value_path) for every member of object `key`.
  template <typename Each>
  void ForObject(const json& obj, const std::string& path, const char* key, Each each) {
    const json* v = Member(obj, path, key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Join(path, key), "expected an object");
    for (auto it = v->begin(); it != v->end() && !failed(); ++it) {
      each(it.key(), it.value(), Join(path, key) + "." + it.key());
    }
  }

  // Reads an enum by name through `parse(name, &value)`.
  template <typename E, typename Parse>
  void ReadEnum(const json& obj, const std::string& path, const char* key, E* out, Parse parse,
                const char* what) {
    std::string name;
    Read(obj, path, key, &name);
    if (failed()) return;
    if (!parse(name, out)) Fail(Join(path, key), "unknown " + std::string(what) + " '" + name + "'");
  }

  static std::string Join(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string error_;
};

// Reverse of a Name() function over the enum's values 0..last.
template <typename E>
bool ParseByName(std::string_view name, E last, const char* (*name_of)(E), E* out) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    const auto e = static_cast<E>(i);
    if (name == name_of(e)) {
      *out = e;
      return true;
    }
  }
  return false;
}

bool ParseHistoryKind(std::string_view name, HistoryKind* out) {
  return ParseByName(name, kLastHistoryKind, &HistoryKindName, out);
}
bool ParseLineKind(std::string_view name, LineKind* out) {
  return ParseByName(name, kLastLineKind, &LineKindName, out);
}
bool ParseLineEvent(std::string_view name, LineEvent* out) {
  return ParseByName(name, kLastLineEvent, &LineEventName, out);
}

void ReadExpectation(Reader& r, const json& obj, const std::string& path, const char* key,
                     Expectation* out) {
  const json* e = r.Member(obj, path, key);
  if (e == nullptr) return;
  const std::string p = Reader::Join(path, key);
  r.ReadEnum(*e, p, "kind", &out->kind, ParseVerdictKind, "verdict kind");
  r.Read(*e, p, "cause", &out->cause);
  if (!e->contains("alternatives")) return;  // absent before it was added
  r.ForArray(*e, p, "alternatives", [&](const json& combination, const std::string& cp) {
    std::vector<ExpectTerm>& terms = out->alternatives.emplace_back();
    r.ForElements(combination, cp, [&](const json& term, const std::string& tp) {
      ExpectTerm& t = terms.emplace_back();
      r.ReadEnum(term, tp, "kind", &t.kind, ParseVerdictKind, "verdict kind");
      r.Read(term, tp, "cause", &t.cause);
    });
  });
}

void ReadFaultSpec(Reader& r, const json& f, const std::string& p, FaultSpec* out) {
  r.ReadEnum(f, p, "kind", &out->kind, ParseFaultKind, "fault kind");
  r.Read(f, p, "actor", &out->actor);
  r.Read(f, p, "site", &out->site);
  r.Read(f, p, "nth", &out->nth);
  r.Read(f, p, "at_ms", &out->at_ms);
  r.Read(f, p, "duration_ms", &out->duration_ms);
  r.Read(f, p, "target", &out->target);
  r.Read(f, p, "event", &out->event);
}

void ReadCase(Reader& r, const json& j, const std::string& p, CaseReport* c) {
  r.Read(j, p, "protocol", &c->protocol);
  r.Read(j, p, "scenario_file", &c->scenario_file);
  r.Read(j, p, "seed", &c->seed);
  r.Read(j, p, "producers", &c->producers);
  r.Read(j, p, "workers", &c->workers);
  if (j.contains("handlers")) r.Read(j, p, "handlers", &c->handlers);  // absent before it was added: 1
  r.Read(j, p, "events", &c->events);
  r.Read(j, p, "persistence", &c->persistence);
  r.Read(j, p, "restart_naming", &c->restart_naming);
  ReadExpectation(r, j, p, "expected", &c->expected);
  r.Read(j, p, "observed", &c->observed);
  r.Read(j, p, "matched", &c->matched);
  r.ForArray(j, p, "violations", [&](const json& v, const std::string& vp) {
    Violation& out = c->violations.emplace_back();
    r.ReadEnum(v, vp, "kind", &out.kind, ParseVerdictKind, "verdict kind");
    r.Read(v, vp, "event_id", &out.event_id);
    if (v.contains("group")) r.Read(v, vp, "group", &out.group);  // absent before it was added
    r.Read(v, vp, "cause", &out.cause);
    r.Read(v, vp, "detail", &out.detail);
    r.Read(v, vp, "effect_count", &out.effect_count);
  });
  r.Read(j, p, "trace_hash", &c->trace_hash);
  r.Read(j, p, "steps", &c->steps);
  r.Read(j, p, "virtual_ms", &c->virtual_ms);
  r.ForArray(j, p, "fired", [&](const json& f, const std::string& fp) {
    ReadFaultSpec(r, f, fp, &c->fired.emplace_back());
  });
  if (const json* cov = r.Member(j, p, "coverage")) {
    const std::string cp = Reader::Join(p, "coverage");
    r.ForObject(*cov, cp, "fired", [&](const std::string& site, const json& n, const std::string& np) {
      r.ReadValue(n, np, &c->coverage.fired[site]);
    });
    r.ForArray(*cov, cp, "enabled", [&](const json& s, const std::string& sp) {
      std::string site;
      r.ReadValue(s, sp, &site);
      c->coverage.enabled.insert(site);
    });
  }
  r.ForArray(j, p, "trace", [&](const json& l, const std::string& lp) {
    TraceLine& out = c->trace.emplace_back();
    if (l.is_null()) {  // elided from a long trace (see CaseJson)
      out.kind = LineKind::kHarness;
      out.event = LineEvent::kNote;
      out.request = "(line left out of the JSON report)";
      return;
    }
    r.Read(l, lp, "t_ms", &out.t_ms);
    r.Read(l, lp, "actor", &out.actor);
    r.ReadEnum(l, lp, "kind", &out.kind, ParseLineKind, "trace line kind");
    r.Read(l, lp, "request", &out.request);
    r.Read(l, lp, "reply", &out.reply);
    r.ReadEnum(l, lp, "event", &out.event, ParseLineEvent, "trace line event");
    r.ReadStrings(l, lp, "argv", &out.argv);
    r.Read(l, lp, "site", &out.site);
    r.Read(l, lp, "fault", &out.fault);
    r.Read(l, lp, "replaces", &out.replaces);
    if (l.contains("brought_by")) r.Read(l, lp, "brought_by", &out.brought_by);  // absent before it was added
    r.Read(l, lp, "duration_ms", &out.duration_ms);
    r.Read(l, lp, "waited_for", &out.waited_for);
    r.ReadStrings(l, lp, "ids", &out.ids);
  });
  if (j.contains("worker_groups")) {  // absent before it was added
    r.ForObject(j, p, "worker_groups", [&](const std::string& slot, const json& group, const std::string& gp) {
      r.ReadValue(group, gp, &c->worker_groups[slot]);
    });
  }
  r.ForObject(j, p, "histories", [&](const std::string& event, const json& list, const std::string& hp) {
    std::vector<HistoryItem>& items = c->histories[event];
    r.ForElements(list, hp, [&](const json& item, const std::string& ip) {
      HistoryItem& out = items.emplace_back();
      r.ReadEnum(item, ip, "kind", &out.kind, ParseHistoryKind, "history kind");
      r.Read(item, ip, "t_ms", &out.t_ms);
      r.Read(item, ip, "line", &out.line);
      r.Read(item, ip, "actor", &out.actor);
      r.Read(item, ip, "stream_id", &out.stream_id);
      r.Read(item, ip, "detail", &out.detail);
      r.Read(item, ip, "value", &out.value);
      r.Read(item, ip, "command", &out.command);
      r.Read(item, ip, "site", &out.site);
      r.Read(item, ip, "sink", &out.sink);
      r.Read(item, ip, "consumer", &out.consumer);
      r.Read(item, ip, "persistence", &out.persistence);
      if (item.contains("key")) r.Read(item, ip, "key", &out.key);  // absent before it was added
      if (item.contains("fired_in")) r.Read(item, ip, "fired_in", &out.fired_in);  // likewise
      r.Read(item, ip, "payload_missing", &out.payload_missing);
    });
  });
  r.Read(j, p, "replay_file", &c->replay_file);
  r.Read(j, p, "replay_command", &c->replay_command);
}

void ReadCheck(Reader& r, const json& j, const std::string& p, CheckReport* k) {
  r.Read(j, p, "name", &k->name);
  r.Read(j, p, "description", &k->description);
  r.Read(j, p, "fault_model", &k->fault_model);
  ReadExpectation(r, j, p, "expected", &k->expected);
  r.Read(j, p, "observed", &k->observed);
  r.Read(j, p, "matched", &k->matched);
  r.Read(j, p, "undecided", &k->undecided);
  r.Read(j, p, "cases_run", &k->cases_run);
  r.Read(j, p, "cases_failed", &k->cases_failed);
  if (j.contains("cases_unjudged")) r.Read(j, p, "cases_unjudged", &k->cases_unjudged);  // absent before it was added
  if (j.contains("other_violations")) {  // absent from reports before it was added
    r.ForObject(j, p, "other_violations", [&](const std::string& cls, const json& n, const std::string& np) {
      r.ReadValue(n, np, &k->other_violations[cls]);
    });
  }
  if (const json* c = r.Member(j, p, "counterexample"); c != nullptr && !c->is_null()) {
    ReadCase(r, *c, Reader::Join(p, "counterexample"), &k->counterexample.emplace());
  }
  r.Read(j, p, "counterexample_size", &k->counterexample_size);
  r.Read(j, p, "shrink_steps", &k->shrink_steps);
  if (j.contains("shrink_cut")) r.Read(j, p, "shrink_cut", &k->shrink_cut);  // absent before it was added
  r.Read(j, p, "first_hit_case", &k->first_hit_case);
  r.ForObject(j, p, "fired_totals", [&](const std::string& site, const json& n, const std::string& np) {
    r.ReadValue(n, np, &k->fired_totals[site]);
  });
  r.ForArray(j, p, "never_fired", [&](const json& s, const std::string& sp) {
    r.ReadValue(s, sp, &k->never_fired.emplace_back());
  });
  r.Read(j, p, "cases_for_coverage", &k->cases_for_coverage);
  r.ForArray(j, p, "coverage_gaps", [&](const json& s, const std::string& sp) {
    r.ReadValue(s, sp, &k->coverage_gaps.emplace_back());
  });
  r.Read(j, p, "gaps_allowed", &k->gaps_allowed);
  if (j.contains("single_run")) r.Read(j, p, "single_run", &k->single_run);  // absent before it was added
  if (j.contains("unfired_planned")) {  // absent before it was added
    r.ForArray(j, p, "unfired_planned", [&](const json& u, const std::string& up) {
      CheckReport::UnfiredFault& out = k->unfired_planned.emplace_back();
      r.Read(u, up, "fault", &out.fault);
      r.Read(u, up, "why", &out.why);
    });
  }
  r.Read(j, p, "seconds", &k->seconds);
}

}  // namespace

std::string RenderJson(const Report& report) {
  json checks = json::array();
  for (const CheckReport& k : report.checks) checks.push_back(CheckJson(k));
  // "schema" first: a reader checks it before anything else.
  json out = json::object();
  out["schema"] = kSchemaVersion;
  out["tool_version"] = report.tool_version;
  out["command"] = report.command;
  out["command_line"] = report.command_line;
  out["seed"] = report.seed;
  out["server_version"] = report.server_version;
  out["options"] = report.options;
  out["all_matched"] = report.all_matched;
  out["shard"] = report.shard;
  // null when no search ran (run, replay, explain: their settings are the
  // defaults), not a search of 0 cases.
  const SearchSettings& s = report.search;
  out["search"] = s == SearchSettings{} ? json(nullptr)
                                        : json{{"cases", s.cases},           {"max_workers", s.max_workers},
                                               {"max_events", s.max_events}, {"max_faults", s.max_faults},
                                               {"fixed_workload", s.fixed_workload}, {"swarm", s.swarm}};
  out["checks"] = std::move(checks);
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Report> ParseJsonReport(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("report: not valid JSON");
  if (!j.is_object() || !j.contains("schema")) {
    return Status::InvalidArgument("report: not an xackly JSON report (no \"schema\" field)");
  }
  const json& schema = j["schema"];
  if (!schema.is_number_integer() || schema.get<int64_t>() != kSchemaVersion) {
    return Status::InvalidArgument(
        fmt::format("report: schema {} is not supported; this xackly reads schema {} only",
                    Printable(schema.dump()), kSchemaVersion));
  }
  Report report;
  Reader r;
  r.Read(j, "", "tool_version", &report.tool_version);
  r.Read(j, "", "command", &report.command);
  r.Read(j, "", "command_line", &report.command_line);
  r.Read(j, "", "seed", &report.seed);
  r.Read(j, "", "server_version", &report.server_version);
  r.Read(j, "", "options", &report.options);
  r.Read(j, "", "all_matched", &report.all_matched);
  r.Read(j, "", "shard", &report.shard);
  if (const json* s = r.Member(j, "", "search"); s != nullptr && !s->is_null()) {
    SearchSettings& search = report.search;
    r.Read(*s, "search", "cases", &search.cases);
    r.Read(*s, "search", "max_workers", &search.max_workers);
    r.Read(*s, "search", "max_events", &search.max_events);
    r.Read(*s, "search", "max_faults", &search.max_faults);
    r.Read(*s, "search", "fixed_workload", &search.fixed_workload);
    r.Read(*s, "search", "swarm", &search.swarm);
  }
  r.ForArray(j, "", "checks", [&](const json& k, const std::string& kp) {
    ReadCheck(r, k, kp, &report.checks.emplace_back());
  });
  if (r.failed()) return Status::InvalidArgument("report: " + r.error());
  return report;
}

std::string RenderMatrixJson(const std::vector<ServerResult>& servers) {
  json out = json::object();
  out["schema"] = kSchemaVersion;
  out["shard"] = servers.empty() ? "" : servers[0].report.shard;
  json list = json::array();
  for (const ServerResult& s : servers) {
    list.push_back({{"label", s.label},
                    {"dir", s.dir},
                    {"server_version", s.report.server_version},
                    {"exit_code", s.exit_code}});
  }
  out["servers"] = list;
  json rows = json::array();
  for (const MatrixRow& r : MatrixRows(servers)) {
    rows.push_back({{"name", r.name},
                    {"expected", r.expected},
                    {"verdicts", r.verdicts},
                    {"passed", r.passed},
                    {"marks", r.marks},
                    {"differs", r.differs}});
  }
  out["rows"] = rows;
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace xackly::report
