// libFuzzer target: any bytes as a scenario file. ParseScenario must return
// (a Scenario or one error line) and never crash, hang or overflow; what it
// accepts must survive WriteScenario: the written file parses and writes
// back to the same text (the same run).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenarios/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  xackly::Result<xackly::Scenario> parsed = xackly::ParseScenario(text, "fuzz.toml");
  if (!parsed.ok()) {
    // One line, never empty.
    const std::string message = parsed.status().message();
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  std::string written = xackly::WriteScenario(*parsed);
  xackly::Result<xackly::Scenario> again = xackly::ParseScenario(written, "fuzz.toml");
  if (!again.ok()) {
    std::fprintf(stderr, "round trip: the written scenario does not parse: %s\n--- written:\n%s\n",
                 again.status().message().c_str(), written.c_str());
    std::abort();
  }
  if (std::string rewritten = xackly::WriteScenario(*again); rewritten != written) {
    std::fprintf(stderr, "round trip: written twice, two texts\n--- first:\n%s\n--- second:\n%s\n",
                 written.c_str(), rewritten.c_str());
    std::abort();
  }
  return 0;
}
