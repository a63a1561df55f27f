// Prints a catalog protocol as a declarative scenario file: the generated
// body of scenarios/catalog/<name>.toml (whose header comment is written by
// hand). Usage: xackly_catalog_toml <protocol>
#include <cstdio>

#include "scenarios/scenario.h"
#include "tests/scenarios/scenario_test_util.h"

int main(int argc, char** argv) {
  const xackly::ProtocolDef* p = argc == 2 ? xackly::FindProtocol(argv[1]) : nullptr;
  if (p == nullptr) {
    std::fprintf(stderr, "usage: xackly_catalog_toml <%s>\n", xackly::CatalogNames().c_str());
    return 2;
  }
  std::fputs(xackly::WriteScenario(xackly::testing::CatalogAsInline(*p)).c_str(), stdout);
  return 0;
}
