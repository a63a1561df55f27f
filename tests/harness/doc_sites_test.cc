// The site names the README and docs teach are names a user can write:
// every script-style site (`after-COMMIT`, `before-XACK`, `point:NAME`)
// they mention is one some catalog script or example visits (found by
// check's own probes), and every built-in-style point (`after-commit`) is
// a point of the built-in protocols.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/case_pool.h"
#include "harness/check.h"
#include "harness/files.h"
#include "harness/scenario_files.h"
#include "sim/sites.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

const char* const kDocs[] = {"README.md", "docs/scripts.md", "docs/scenarios.md"};

// The backticked names in the docs that match `pattern`, with the file
// that names each.
std::map<std::string, std::string> NamesInDocs(const std::regex& pattern) {
  std::map<std::string, std::string> names;
  for (const char* doc : kDocs) {
    Result<std::string> text = ReadFile(std::string(XACKLY_SOURCE_DIR) + "/" + doc);
    EXPECT_TRUE(text.ok()) << doc;
    if (!text.ok()) continue;
    const std::regex quoted("`([^`\\s]+)`");
    for (auto it = std::sregex_iterator(text->begin(), text->end(), quoted); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      if (std::regex_match(name, pattern)) names.emplace(name, doc);
    }
  }
  return names;
}

// The crash points check's probes find in the catalog scripts and
// examples, in name order, probed until every site of `wanted` is among
// them (all of them when one never is).
std::set<std::string> VisitedByTheShippedScripts(const std::set<std::string>& wanted) {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"scenarios/catalog/scripts", "scenarios/examples"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(XACKLY_SOURCE_DIR) + "/" + dir)) {
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::set<std::string> visited;
  CasePool pool(2, TestServerOptions());
  for (const std::filesystem::path& file : files) {
    if (std::includes(visited.begin(), visited.end(), wanted.begin(), wanted.end())) break;
    Result<Scenario> s = LoadScenarioFile(file.string());
    EXPECT_TRUE(s.ok()) << file << ": " << s.status().ToString();
    if (!s.ok()) continue;
    Result<ProbedConfig> probed = WithVisitedSites(s->config, pool, 1);
    EXPECT_TRUE(probed.ok()) << file << ": " << probed.status().ToString();
    if (probed.ok()) visited.insert(probed->visited_crash_points.begin(), probed->visited_crash_points.end());
  }
  return visited;
}

TEST(DocSitesTest, EveryScriptSiteTheDocsNameIsOneAShippedScriptVisits) {
  const std::map<std::string, std::string> named =
      NamesInDocs(std::regex("(before|after)-[A-Z][A-Z_]*|point:[a-z][a-z0-9-]*|after-effect"));
  ASSERT_GE(named.size(), 5u) << "the docs teach script sites by example";
  std::set<std::string> wanted;
  for (const auto& [site, doc] : named) {
    if (!site.ends_with("-CMD") && !site.ends_with("-VERB")) wanted.insert(site);  // not the grammar's placeholders
  }
  const std::set<std::string> visited = VisitedByTheShippedScripts(wanted);
  for (const std::string& site : wanted) {
    const std::string& doc = named.at(site);
    EXPECT_TRUE(visited.count(site)) << doc << " names " << site
                                     << ", which no catalog script or example visits";
  }
}

TEST(DocSitesTest, EveryBuiltInPointTheDocsNameExists) {
  const std::vector<std::string> points = AllCrashPoints();
  const std::map<std::string, std::string> named =
      NamesInDocs(std::regex("(before|after|mid)-[a-z][a-z-]*[a-z]"));
  ASSERT_GE(named.size(), 5u);
  for (const auto& [site, doc] : named) {
    if (site == "after-effect") continue;  // both families' name
    if (site == "after-efect") continue;   // docs/scripts.md's example of a typo the parser refuses
    EXPECT_NE(std::find(points.begin(), points.end(), site), points.end())
        << doc << " names " << site << ", which is no built-in protocol's crash point";
  }
}

}  // namespace
}  // namespace xackly
