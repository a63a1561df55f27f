// Format names, file names, and the --format list.
#include "reports/report.h"

#include <algorithm>

#include <fmt/format.h>

#include "reports/text_util.h"
#include "sim/text.h"

namespace xackly::report {
namespace {

struct Format {
  const char* name;
  const char* file;
};

constexpr Format kFormats[] = {
    {"text", "report.txt"}, {"md", "report.md"},   {"html", "report.html"},
    {"junit", "junit.xml"}, {"json", "report.json"},
};

const Format* Find(std::string_view name) {
  for (const Format& f : kFormats) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Format& f : kFormats) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

std::vector<std::string> ParseFormats(std::string_view list, std::string* error) {
  XACKLY_CHECK(error != nullptr);
  const std::string valid = fmt::format("{}", fmt::join(FormatNames(), ", "));
  std::vector<std::string> out;
  for (std::string_view piece : SplitList(list, ',')) {
    const std::string_view name = Trim(piece);
    if (name.empty()) continue;
    if (Find(name) == nullptr) {
      *error = fmt::format("unknown report format '{}'; valid formats: {}", Printable(name), valid);
      return {};
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
  }
  if (out.empty()) {
    *error = "no report format given; valid formats: " + valid;
    return {};
  }
  error->clear();
  return out;
}

std::string ReportFileName(std::string_view format) {
  const Format* f = Find(format);
  XACKLY_CHECK(f != nullptr);
  return f->file;
}

std::string RenderFormat(const Report& report, std::string_view format) {
  XACKLY_CHECK(Find(format) != nullptr);
  if (format == "text") return RenderText(report, /*color=*/false);
  if (format == "md") return RenderMarkdown(report);
  if (format == "html") return RenderHtml(report);
  if (format == "junit") return RenderJunit(report);
  return RenderJson(report);
}

}  // namespace xackly::report
