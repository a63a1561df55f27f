#include "sim/sites.h"

#include <algorithm>

#include "sim/commands.h"
#include "sim/faults.h"
#include "sim/step.h"

namespace xackly {

namespace {

constexpr std::string_view kOwnPoint = "point:";

bool IsVerb(std::string_view v) {
  return !v.empty() && v[0] >= 'A' && v[0] <= 'Z' && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '|';
  });
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

const std::vector<std::string>& AllCrashPoints() {
  static const std::vector<std::string> kPoints = {
      "after-read",   "after-pending-read", "after-claim",  "after-dedupe-check",
      "after-mark",   "after-effect",       "after-commit", "after-eval",
      "after-ack",    "after-dead-letter",  "mid-batch",
  };
  return kPoints;
}

const std::vector<std::string>& AllLostSites() {
  static const std::vector<std::string> kSites = {"XREADGROUP", "XAUTOCLAIM", "XACK", "XADD",
                                                  "SET",        "EVAL",       "COMMIT"};
  return kSites;
}

std::string StatementVerb(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      const size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (sql.substr(i, 2) == "/*") {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      break;
    }
  }
  return VerbOf(sql.substr(i));
}

std::string PointBefore(const Step& s) {
  return s.op == Op::kCommand && !s.argv.empty() ? "before-" + VerbOf(s.argv[0]) : "";
}

std::string PointAfter(const Step& s) {
  switch (s.op) {
    case Op::kCheckpoint: return s.label;
    case Op::kCommand: return s.argv.empty() ? "" : "after-" + VerbOf(s.argv[0]);
    case Op::kSqlStatement: return "after-" + StatementVerb(s.label);
    default: {
      const char* point = InfoOf(s.op).crash_point;
      return point != nullptr ? point : "";
    }
  }
}

std::string RequestSite(const Step& s) {
  switch (s.op) {
    case Op::kCommand: return s.argv.empty() ? "" : VerbOf(s.argv[0]);
    case Op::kSqlStatement: return StatementVerb(s.label);
    default: {
      const char* site = InfoOf(s.op).lost_site;
      return site != nullptr ? site : "";
    }
  }
}

bool IsScriptSiteName(std::string_view site, SiteFamily family) {
  switch (family) {
    case SiteFamily::kNone: return false;
    case SiteFamily::kRequest: return IsVerb(site);
    case SiteFamily::kCrashPoint: break;
  }
  for (std::string_view prefix : {"before-", "after-"}) {
    if (site.starts_with(prefix) && IsVerb(site.substr(prefix.size()))) return true;
  }
  // A w:point name of the script's own: "point:" and a lowercase name (the
  // prefix keeps typos of built-in names such as "after-efect" refused).
  std::string_view name = site.starts_with(kOwnPoint) ? site.substr(kOwnPoint.size()) : "";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

bool IsPointName(std::string_view site) {
  return Contains(AllCrashPoints(), site) ||
         (site.starts_with(kOwnPoint) && IsScriptSiteName(site, SiteFamily::kCrashPoint));
}

bool IsSiteName(std::string_view site, SiteFamily family) {
  switch (family) {
    case SiteFamily::kNone: return false;
    case SiteFamily::kCrashPoint: return Contains(AllCrashPoints(), site) || IsScriptSiteName(site, family);
    case SiteFamily::kRequest: return Contains(AllLostSites(), site) || IsScriptSiteName(site, family);
  }
  return false;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace


std::vector<std::string> NearestSites(std::string_view site, const std::vector<std::string>& candidates) {
  std::vector<std::pair<size_t, std::string>> scored;
  const std::string lower = Lower(site);
  for (const std::string& c : candidates) {
    const size_t d = Lower(c) == lower ? 0 : 1 + EditDistance(lower, Lower(c));
    if (d <= std::max<size_t>(3, site.size() / 4)) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

std::string AsScriptSite(std::string_view site, SiteFamily family) {
  std::string out(site);
  const size_t dash = family == SiteFamily::kCrashPoint ? out.find('-') : std::string::npos;
  for (size_t i = dash == std::string::npos ? 0 : dash + 1; i < out.size(); ++i) {
    out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  }
  // Only a command the table knows, or an SQL verb: "after-efect" is a
  // typo of a built-in point, not a command EFECT.
  static constexpr std::string_view kSqlVerbs[] = {"BEGIN", "COMMIT", "ROLLBACK", "END", "INSERT", "UPDATE",
                                                   "DELETE", "SELECT", "REPLACE", "SAVEPOINT", "RELEASE",
                                                   "CREATE", "DROP", "ALTER", "WITH"};
  const std::string_view verb = std::string_view(out).substr(dash == std::string::npos ? 0 : dash + 1);
  const bool known = &CommandNamed(verb) != &UnknownCommand() ||
                     std::find(std::begin(kSqlVerbs), std::end(kSqlVerbs), verb) != std::end(kSqlVerbs);
  return known && out != site && IsScriptSiteName(out, family) ? out : "";
}

std::string SiteKey(FaultKind kind, std::string_view site) {
  const FaultKindInfo& info = InfoOf(kind);
  return info.Sites() == SiteFamily::kNone ? std::string(info.name) : std::string(info.name) + "@" + std::string(site);
}

std::optional<ParsedSiteKey> ParseSiteKey(std::string_view key) {
  const size_t at = key.find('@');
  const FaultKindInfo* info = FaultKindNamed(key.substr(0, at));
  if (info == nullptr || (at == std::string_view::npos) != (info->Sites() == SiteFamily::kNone)) return std::nullopt;
  return ParsedSiteKey{info->kind, at == std::string_view::npos ? "" : std::string(key.substr(at + 1))};
}

}  // namespace xackly
