// scenarios/catalog/<name>.toml is every catalog protocol written as a
// declarative scenario: running the file is running the catalog protocol.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "scenarios/scenario.h"
#include "tests/scenarios/scenario_test_util.h"

namespace xackly {
namespace {

std::string CatalogFile(const std::string& name) {
  return std::string(XACKLY_SCENARIO_CATALOG_DIR) + "/" + name + ".toml";
}

TEST(CatalogFiles, EachFileIsItsCatalogProtocolInDeclarativeForm) {
  for (const ProtocolDef& want : Catalog()) {
    SCOPED_TRACE(want.name);
    std::string path = CatalogFile(want.name);
    Result<Scenario> s = ParseScenario(testing::ReadTestFile(path), path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->name, want.name);
    EXPECT_EQ(s->protocol_ref, "") << "an inline [protocol], not a reference";
    EXPECT_EQ(s->config.protocol.cpp_handler, nullptr);
    testing::ExpectSameProtocol(s->config.protocol, want);
    // The same run defaults: persistence, naming, faults, expectation,
    // workload, timing, seed; no explicit schedule.
    testing::ExpectSameRunSettings(s->config, RunConfig::For(want));
  }
}

TEST(CatalogFiles, TheFolderHoldsExactlyTheCatalog) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(XACKLY_SCENARIO_CATALOG_DIR)) {
    files.insert(entry.path().filename().string());
  }
  std::set<std::string> want = {"scripts"};  // the catalog as protocol scripts
  for (const ProtocolDef& p : Catalog()) want.insert(p.name + ".toml");
  EXPECT_EQ(files, want);
  // scripts/: each protocol's scenario file, and its script (kept equal to
  // the C++ form by tests/sim/catalog_scripts_test.cc).
  for (const ProtocolDef& p : Catalog()) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(XACKLY_SCENARIO_CATALOG_DIR) / "scripts" /
                                        (p.name + ".toml")))
        << p.name;
  }
}

TEST(CatalogFiles, EachFileExplainsItselfInItsHeader) {
  for (const ProtocolDef& p : Catalog()) {
    SCOPED_TRACE(p.name);
    std::string text = testing::ReadTestFile(CatalogFile(p.name));
    // A hand-written comment header, before the generated body.
    ASSERT_EQ(text.rfind("# " + p.name + ": ", 0), 0u) << text.substr(0, 200);
    EXPECT_LT(text.find("# Why:"), text.find("# xackly scenario")) << "the header says why";
  }
}

}  // namespace
}  // namespace xackly
