// Helpers for the scenario tests: field-by-field comparison of the sim
// structs that have no operator== (ProtocolDef holds a function pointer;
// FaultModel and Expectation define none), and file reading.
#pragma once

#include <string>

#include "scenarios/scenario.h"
#include "sim/protocol.h"
#include "sim/simulation.h"

namespace xackly::testing {

// Every field but cpp_handler. Failures name the field.
void ExpectSameProtocol(const ProtocolDef& got, const ProtocolDef& want);
void ExpectSameFaultModel(const FaultModel& got, const FaultModel& want);
// Everything in a RunConfig except the protocol.
void ExpectSameRunSettings(const RunConfig& got, const RunConfig& want);
// The protocol (cpp_handler included) and the run settings.
void ExpectSameRunConfig(const RunConfig& got, const RunConfig& want);
void ExpectSameScenario(const Scenario& got, const Scenario& want);

// A catalog protocol as a declarative inline scenario with its run defaults
// (what scenarios/catalog/<name>.toml holds).
Scenario CatalogAsInline(const ProtocolDef& p);

// The whole file; fails the test (and returns "") when it cannot be read.
std::string ReadTestFile(const std::string& path);

}  // namespace xackly::testing
