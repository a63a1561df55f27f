#include "tests/scenarios/scenario_test_util.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace xackly::testing {

void ExpectSameFaultModel(const FaultModel& got, const FaultModel& want) {
  EXPECT_EQ(got.ToString(), want.ToString()) << "faults (kinds and sites)";
  EXPECT_TRUE(got.kinds == want.kinds) << "faults.kinds";
  EXPECT_EQ(got.crash_points, want.crash_points) << "faults.crash_points";
  EXPECT_EQ(got.lost_sites, want.lost_sites) << "faults.lost_sites";
  EXPECT_EQ(got.crash_ppm, want.crash_ppm) << "faults.crash_ppm";
  EXPECT_EQ(got.stall_ppm, want.stall_ppm) << "faults.stall_ppm";
  EXPECT_EQ(got.stall_ms, want.stall_ms) << "faults.stall_ms";
  EXPECT_EQ(got.lost_request_ppm, want.lost_request_ppm) << "faults.lost_request_ppm";
  EXPECT_EQ(got.lost_reply_ppm, want.lost_reply_ppm) << "faults.lost_reply_ppm";
  EXPECT_EQ(got.scheduled_count, want.scheduled_count) << "faults.scheduled_count";
  EXPECT_EQ(got.xdel_target, want.xdel_target) << "faults.xdel_target";
  EXPECT_EQ(got.xtrim_target, want.xtrim_target) << "faults.xtrim_target";
  EXPECT_EQ(got.clock_jump_ms, want.clock_jump_ms) << "faults.clock_jump_ms";
  EXPECT_EQ(got.store_outage_ms, want.store_outage_ms) << "faults.store_outage_ms";
  EXPECT_EQ(got.poison_count, want.poison_count) << "faults.poison_count";
}

void ExpectSameProtocol(const ProtocolDef& got, const ProtocolDef& want) {
  EXPECT_EQ(got.name, want.name) << "protocol.name";
  EXPECT_EQ(got.description, want.description) << "protocol.description";
  EXPECT_EQ(got.expected.ToString(), want.expected.ToString()) << "protocol.expected";
  EXPECT_EQ(got.dedupe, want.dedupe) << "protocol.dedupe";
  EXPECT_EQ(got.dedupe_ttl_ms, want.dedupe_ttl_ms) << "protocol.dedupe_ttl_ms";
  EXPECT_EQ(got.effect, want.effect) << "protocol.effect";
  EXPECT_EQ(got.idempotency_key, want.idempotency_key) << "protocol.idempotency_key";
  EXPECT_EQ(got.on_duplicate, want.on_duplicate) << "protocol.on_duplicate";
  EXPECT_TRUE(got.loop == want.loop) << "protocol.loop";
  EXPECT_TRUE(got.janitor == want.janitor) << "protocol.janitor";
  EXPECT_EQ(got.steps, want.steps) << "protocol.steps";
  EXPECT_EQ(got.naming, want.naming) << "protocol.naming";
  EXPECT_EQ(got.persistence, want.persistence) << "protocol.persistence";
  EXPECT_EQ(got.fault_phase_ms, want.fault_phase_ms) << "protocol.fault_phase_ms";
  ExpectSameFaultModel(got.faults, want.faults);
}

void ExpectSameRunSettings(const RunConfig& got, const RunConfig& want) {
  EXPECT_EQ(got.expected.ToString(), want.expected.ToString()) << "expected";
  EXPECT_EQ(got.seed, want.seed) << "seed";
  EXPECT_EQ(got.producers, want.producers) << "producers";
  EXPECT_EQ(got.workers, want.workers) << "workers";
  EXPECT_EQ(got.events, want.events) << "events";
  EXPECT_EQ(got.naming, want.naming) << "naming";
  EXPECT_EQ(got.persistence, want.persistence) << "persistence";
  EXPECT_TRUE(got.timing == want.timing) << "timing";
  ExpectSameFaultModel(got.faults, want.faults);
  EXPECT_EQ(got.fault_schedule.has_value(), want.fault_schedule.has_value()) << "fault_schedule";
  if (got.fault_schedule && want.fault_schedule) {
    EXPECT_EQ(*got.fault_schedule, *want.fault_schedule) << "fault_schedule";
  }
  EXPECT_EQ(got.picks, want.picks) << "picks";
  EXPECT_EQ(got.keep_trace, want.keep_trace) << "keep_trace";
}

void ExpectSameRunConfig(const RunConfig& got, const RunConfig& want) {
  ExpectSameProtocol(got.protocol, want.protocol);
  EXPECT_EQ(got.protocol.cpp_handler, want.protocol.cpp_handler) << "protocol.cpp_handler";
  ExpectSameRunSettings(got, want);
}

void ExpectSameScenario(const Scenario& got, const Scenario& want) {
  EXPECT_EQ(got.name, want.name) << "name";
  EXPECT_EQ(got.description, want.description) << "description";
  EXPECT_EQ(got.protocol_ref, want.protocol_ref) << "protocol_ref";
  EXPECT_EQ(got.trace_hash, want.trace_hash) << "trace_hash";
  EXPECT_EQ(got.server, want.server) << "server";
  EXPECT_EQ(got.server_hashes, want.server_hashes) << "server_hashes";
  EXPECT_EQ(got.origin, want.origin) << "origin";
  EXPECT_EQ(got.handler, want.handler) << "handler";
  ExpectSameRunConfig(got.config, want.config);
}

Scenario CatalogAsInline(const ProtocolDef& p) {
  Scenario s;
  s.name = p.name;
  s.config = RunConfig::For(p);
  s.config.protocol.cpp_handler = nullptr;
  return s;
}

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace xackly::testing
