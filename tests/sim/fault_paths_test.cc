// Every fault path, checked where a refactor would quietly break it: each
// crash point fires when a plan names it, nothing fires once the fault phase
// is over, the drain waits out the longest stall, both XTRIM forms cut at
// the exact boundary, and a store outage reaches every sink. Real server,
// explicit plans (tests/sim/fault_lab_util.h).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/fault_lab_util.h"

namespace xackly {
namespace {

class FaultPathsTest : public FaultLabTest {
 public:
  using FaultLabTest::Only;
  using FaultLabTest::trace_;

 protected:
  // How often `text` occurs in the trace.
  int CountInTrace(std::string_view text) const {
    int n = 0;
    for (size_t at = trace_.find(text); at != std::string::npos; at = trace_.find(text, at + 1)) ++n;
    return n;
  }
  static bool Fired(const RunResult& r, const std::string& spec) {
    return std::any_of(r.fired.begin(), r.fired.end(),
                       [&](const FaultSpec& f) { return f.ToString() == spec; });
  }
};

struct CrashPointCase {
  const char* point;
  const char* protocol;
  std::vector<std::string> faults;  // the last one is the crash at `point`
  std::function<void(RunConfig&)> adjust;
};

TEST_F(FaultPathsTest, EveryCrashPointFiresWhenThePlanNamesIt) {
  const auto fresh = [](RunConfig& c) { c.naming = RestartNaming::kFresh; };
  const CrashPointCase cases[] = {
      {"after-read", "no-dedupe", {"crash w1 after-read #1"}, nullptr},
      // The same consumer name re-reads its own pending entries after a restart.
      {"after-pending-read", "txn-dedupe", {"crash w1 after-mark #1", "crash w1 after-pending-read #1"}, nullptr},
      // A fresh name claims them instead.
      {"after-claim", "txn-dedupe", {"crash w1 after-mark #1", "crash w1 after-claim #1"}, fresh},
      {"after-dedupe-check", "mark-after-effect", {"crash w1 after-dedupe-check #1"}, nullptr},
      {"after-mark", "txn-dedupe", {"crash w1 after-mark #1"}, nullptr},
      {"after-effect", "no-dedupe", {"crash w1 after-effect #1"}, nullptr},
      {"after-commit", "txn-dedupe", {"crash w1 after-commit #1"}, nullptr},
      {"after-eval", "lua-dedupe", {"crash w1 after-eval #1"}, nullptr},
      {"after-ack", "no-dedupe", {"crash w1 after-ack #1"}, nullptr},
      {"after-dead-letter", "dlq-after-3", {"poison event 1", "crash w1 after-dead-letter #1"}, nullptr},
      {"mid-batch", "batch-ack-no-dedupe", {"crash w1 mid-batch #1"}, [](RunConfig& c) {
         c.events = 2;
         c.timing.produce_every_ms = 0;
         c.picks = {"p1", "p1"};
       }},
  };
  std::vector<std::string> covered;
  for (const CrashPointCase& k : cases) {
    SCOPED_TRACE(k.point);
    trace_.clear();
    RunResult r = Run(k.protocol, k.faults, k.adjust);
    const std::string& spec = k.faults.back();
    EXPECT_TRUE(Fired(r, spec)) << spec << "\n" << trace_;
    EXPECT_GE(r.coverage.fired[std::string("crash@") + k.point], 1) << trace_;
    EXPECT_TRUE(InTrace(std::string("!crash at ") + k.point)) << trace_;
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();
    covered.push_back(k.point);
  }
  std::sort(covered.begin(), covered.end());
  std::vector<std::string> all = AllCrashPoints();
  std::sort(all.begin(), all.end());
  EXPECT_EQ(covered, all) << "a crash point without a case here";
}

TEST_F(FaultPathsTest, NothingFiresOnceTheFaultPhaseIsOver) {
  // no-dedupe, one event: a 2 s fault phase. The crash at 0.01 s fires; the
  // replacement starts at 5 s, in the drain, where its second after-effect
  // visit and the restart planned at 3 s (after the phase) must not fire.
  RunResult r = Run("no-dedupe", {"crash w1 after-effect #1", "crash w1 after-effect #2", "restart @3000ms"});
  ASSERT_TRUE(InTrace("fault phase over")) << trace_;
  EXPECT_EQ(CountInTrace("!crash at"), 1) << trace_;
  EXPECT_FALSE(InTrace("!restart")) << trace_;
  ASSERT_EQ(r.fired.size(), 1u) << trace_;
  EXPECT_EQ(r.fired[0].ToString(), "crash w1 after-effect #1");
  int64_t drain_ms = -1;
  for (const TraceLine& l : r.trace) {
    if (Contains(Trace::Render(l), "fault phase over")) drain_ms = l.t_ms;
    if (drain_ms >= 0) {
      EXPECT_NE(l.kind, LineKind::kFault) << Trace::Render(l);
    }
  }
  EXPECT_GE(r.virtual_ms, 5000) << "the replacement ran in the drain";
  Violation v = Only(r);
  EXPECT_EQ(v.cause, "crash:after-effect");
  EXPECT_EQ(v.effect_count, 2);
}

TEST_F(FaultPathsTest, TheDrainWaitsOutAPlannedStall) {
  // w1 stalls 60 s after reading; w2 claims the entry (idle 50 ms), runs the
  // effect and acks; at 60 s w1 wakes and runs it again. A drain that stopped
  // after the protocol's own timeouts (~11 s) would call this ok. The model
  // has no stall kind: only the plan says how long the stall is.
  RunResult r = Run("eager-claim", {"stall w1 after-read #1 60000ms"}, [](RunConfig& c) {
    c.workers = 2;
    c.faults.kinds.clear();
  });
  EXPECT_GE(r.virtual_ms, 60000) << trace_;
  Violation v = Only(r);
  EXPECT_EQ(v.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(v.cause, "stall");
  EXPECT_EQ(v.effect_count, 2);
}

TEST_F(FaultPathsTest, TheDrainWaitsOutTheModelsStallLength) {
  // A rate plan where every after-read visit stalls 60 s: both workers
  // stall, nobody processes order:1 until w1 wakes at 60 s. A drain that
  // stopped after the protocol's own timeouts would call that stuck.
  trace_.clear();
  RunConfig c = RunConfig::For(*FindProtocol("eager-claim"));
  c.workers = 2;
  c.events = 1;
  c.keep_trace = true;
  c.faults.kinds = {FaultKind::kStall};
  c.faults.crash_points = {"after-read"};
  c.faults.stall_ppm = 1'000'000;
  c.faults.stall_ms = 60000;
  ASSERT_TRUE(ValidateRunConfig(c).ok());
  Result<RunResult> r = RunSimulation(c, StartServer(c.persistence));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const TraceLine& l : r->trace) trace_ += Trace::Render(l) + "\n";
  ASSERT_TRUE(InTrace("!stall at after-read for 60000 ms")) << trace_;
  EXPECT_GE(r->virtual_ms, 60000) << trace_;
  EXPECT_EQ(r->effect_counts["order:1"], 1) << trace_;
  EXPECT_EQ(r->observed, "ok") << trace_;
}

// w1 reads 0-1 and dies holding it; order:2 (100-0) is produced after and
// is still unread when `trim` runs at 150 ms. Only order:1 may be lost, and
// the oracle's model of the stream must agree with what the server trimmed.
void ExpectOnlyTheFirstEntryTrimmed(FaultPathsTest& t, const RunResult& r) {
  Violation v = t.Only(r);
  EXPECT_EQ(v.event_id, "order:1");
  EXPECT_EQ(v.cause, "payload-deleted");
  EXPECT_EQ(r.effect_counts.count("order:2") ? r.effect_counts.at("order:2") : 0, 1) << t.trace_;
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
}

void TwoEntriesOneUnread(RunConfig& c) {
  c.events = 2;
  c.timing.produce_every_ms = 100;
}

TEST_F(FaultPathsTest, XtrimMinidLastDeliveredCutsRightAfterTheLastDeliveredEntry) {
  // MINID last-delivered + 1 = 0-2: removes 0-1, keeps the undelivered 100-0.
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "xtrim minid:last-delivered @150ms"},
                    TwoEntriesOneUnread);
  EXPECT_TRUE(InTrace("fault    XTRIM events MINID 0-2 -> 1")) << trace_;
  ExpectOnlyTheFirstEntryTrimmed(*this, r);
}

TEST_F(FaultPathsTest, XtrimMaxlenKeepsExactlyTheNewestEntries) {
  RunResult r = Run("txn-dedupe", {"crash w1 after-mark #1", "xtrim maxlen:1 @150ms"}, TwoEntriesOneUnread);
  EXPECT_TRUE(InTrace("fault    XTRIM events MAXLEN 1 -> 1")) << trace_;
  ExpectOnlyTheFirstEntryTrimmed(*this, r);
}

TEST_F(FaultPathsTest, AStoreOutageReachesTheExternalService) {
  // no-dedupe's effect is an external call: it fails while the outage lasts,
  // the entry stays pending, and a later delivery applies it once.
  RunResult r = Run("no-dedupe", {"store-outage 3000ms @0ms"});
  EXPECT_TRUE(InTrace("ext apply order:1 -> unavailable")) << trace_;
  EXPECT_TRUE(InTrace("ext apply order:1 -> ok")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

TEST_F(FaultPathsTest, TheDrainWaitsOutAStoreOutageLongerThanTheProtocolsTimeouts) {
  // 120 s without a store: more than no-dedupe's own timeouts (~80 s). The
  // effect succeeds once the store is back; stopping earlier would call a
  // correct run stuck.
  RunResult r = Run("no-dedupe", {"store-outage 120000ms @0ms"});
  EXPECT_GE(r.virtual_ms, 120000) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

TEST_F(FaultPathsTest, AStoreOutageReachesTheSqlStore) {
  RunResult r = Run("txn-dedupe", {"store-outage 3000ms @0ms"});
  EXPECT_TRUE(InTrace("sql BEGIN -> unavailable")) << trace_;
  EXPECT_TRUE(r.violations.empty()) << trace_;
  EXPECT_EQ(r.effect_counts["order:1"], 1);
}

}  // namespace
}  // namespace xackly
