// The fault lab's fixture: one protocol, a small workload and an explicit
// fault plan against a real redis-server, with the rendered trace kept for
// assertions and failure messages. Shared by the fault-lab test files.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/simulation.h"
#include "tests/harness/test_util.h"

namespace xackly {

class FaultLabTest : public ServerTest {
 protected:
  // Runs `protocol` with one event and `workers` workers under exactly `faults`.
  RunResult Run(const std::string& protocol, std::vector<std::string> faults,
                const std::function<void(RunConfig&)>& adjust = nullptr) {
    RunConfig c = RunConfig::For(*FindProtocol(protocol));
    c.workers = 1;
    c.events = 1;
    c.keep_trace = true;
    std::vector<FaultSpec> specs;
    for (const std::string& f : faults) {
      Result<FaultSpec> spec = ParseFaultSpec(f);
      EXPECT_TRUE(spec.ok()) << f;
      if (spec.ok()) specs.push_back(*spec);
    }
    c.fault_schedule = specs;
    if (adjust) adjust(c);
    EXPECT_TRUE(ValidateRunConfig(c).ok());
    RedisServer* server = StartServer(c.persistence);
    Result<RunResult> r = RunSimulation(c, server);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    for (const TraceLine& l : r->trace) trace_ += Trace::Render(l) + "\n";
    return std::move(r).value();
  }

  // The only violation, or a failure.
  Violation Only(const RunResult& r) {
    EXPECT_EQ(r.violations.size(), 1u) << trace_;
    return r.violations.empty() ? Violation{} : r.violations[0];
  }

  bool InTrace(std::string_view text) const { return Contains(trace_, text); }

  std::string trace_;
};

}  // namespace xackly
