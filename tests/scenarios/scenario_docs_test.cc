// docs/scenarios.md is the reference users read; its one source is the top
// comment of scenarios/scenario.h, where the parser's contract lives. The
// copy must be exact (tests/sync-scenario-docs writes it), so a key added
// to the format and documented in the header reaches the docs too.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace xackly {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The comment lines between the format's title rule and `#pragma once`,
// without their "// " (what tests/sync-scenario-docs copies).
std::string HeaderReference(const std::string& header) {
  std::istringstream in(header);
  std::vector<std::string> lines;
  std::string line;
  bool title = false;
  int rules_after_title = 0;
  while (std::getline(in, line)) {
    if (!title) {
      title = line.starts_with("// The scenario file format");
      continue;
    }
    if (rules_after_title == 0) {  // the ==== rule under the title
      ++rules_after_title;
      continue;
    }
    if (!line.starts_with("//")) break;
    std::string text = line.substr(2);
    if (text.starts_with(" ")) text = text.substr(1);
    lines.push_back(text);
  }
  while (!lines.empty() && lines.back().find_first_not_of(' ') == std::string::npos) lines.pop_back();
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(ScenarioDocsTest, TheReferenceInTheDocsIsTheHeadersOwn) {
  const std::string header = Slurp(XACKLY_SCENARIO_HEADER);
  const std::string docs = Slurp(XACKLY_SCENARIO_DOCS);
  const std::string reference = HeaderReference(header);
  ASSERT_GT(reference.size(), 2000u) << "the header's reference was not found";
  EXPECT_NE(docs.find("```text\n" + reference + "```\n"), std::string::npos)
      << "docs/scenarios.md differs from the top comment of scenarios/scenario.h: run tests/sync-scenario-docs";
}

}  // namespace
}  // namespace xackly
