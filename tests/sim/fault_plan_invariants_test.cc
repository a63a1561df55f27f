// What keeps a fault plan honest when nobody looks: a rate plan draws for
// every kind at every visit (so a hit, or a kind being off, never shifts the
// decisions that follow), a disabled plan is silent, and coverage says which
// enabled sites never fired. None of these needs a server.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/faults.h"

namespace xackly {
namespace {

// Visits alternate between two crash points on one worker slot; returns, per
// visit, the kind that fired ("crash", "stall") or "".
std::vector<std::string> Decisions(FaultPlan& plan, int visits) {
  std::vector<std::string> out;
  for (int i = 0; i < visits; ++i) {
    std::optional<FaultSpec> f = plan.AtPoint("w1", i % 2 ? "after-effect" : "after-read", SiteFamily::kCrashPoint);
    out.push_back(f ? FaultKindName(f->kind) : "");
  }
  return out;
}

FaultModel Model(std::set<FaultKind> kinds, std::vector<std::string> points = {}) {
  FaultModel m;
  m.kinds = std::move(kinds);
  m.crash_points = std::move(points);
  m.crash_ppm = 400000;
  m.stall_ppm = 400000;
  return m;
}

TEST(FaultPlanInvariantsTest, ACrashHitDoesNotShiftTheStallDecisionsThatFollow) {
  // Stall alone vs crash and stall: both draw crash then stall at every
  // visit, so wherever the mixed plan stalls, the stall-only plan stalls too.
  FaultPlan mixed(Model({FaultKind::kCrash, FaultKind::kStall}), Rng(11).Split("faults"), 1000, 1);
  FaultPlan stall_only(Model({FaultKind::kStall}), Rng(11).Split("faults"), 1000, 1);
  std::vector<std::string> a = Decisions(mixed, 400);
  std::vector<std::string> b = Decisions(stall_only, 400);
  int crashes = 0;
  int stalls = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "crash") ++crashes;
    if (a[i] == "stall") {
      ++stalls;
      EXPECT_EQ(b[i], "stall") << "visit " << i << ": the mixed plan's stream shifted";
    }
  }
  // Both kinds fired often enough for the comparison to mean something.
  EXPECT_GT(crashes, 50);
  EXPECT_GT(stalls, 20);
}

TEST(FaultPlanInvariantsTest, AnIneligibleSiteStillConsumesItsDraws) {
  // Crashes allowed only at after-effect vs everywhere: the after-effect
  // decisions are the same, because after-read visits draw in both plans.
  FaultPlan narrow(Model({FaultKind::kCrash}, {"after-effect"}), Rng(5).Split("faults"), 1000, 1);
  FaultPlan wide(Model({FaultKind::kCrash}), Rng(5).Split("faults"), 1000, 1);
  std::vector<std::string> a = Decisions(narrow, 400);
  std::vector<std::string> b = Decisions(wide, 400);
  int fired = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(a[i], "") << "after-read is not eligible in the narrow plan";
      continue;
    }
    EXPECT_EQ(a[i], b[i]) << "after-effect visit " << i;
    fired += a[i] == "crash";
  }
  EXPECT_GT(fired, 50);
}

TEST(FaultPlanInvariantsTest, ADisabledRatePlanIsSilentAndKeepsItsRecord) {
  FaultModel m = Model({FaultKind::kCrash});
  m.crash_ppm = 1'000'000;  // fires at every eligible visit while enabled
  FaultPlan plan(m, Rng(1), 1000, 1);
  ASSERT_TRUE(plan.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));  // positive control
  plan.Disable();
  EXPECT_FALSE(plan.enabled());
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(plan.AtPoint("w1", "after-read", SiteFamily::kCrashPoint));
  EXPECT_EQ(plan.fired().size(), 1u);
  EXPECT_EQ(plan.Coverage().fired.at("crash@after-read"), 1);
}

TEST(FaultCoverageTest, NeverFiredListsEnabledSitesWithoutAFiring) {
  FaultCoverage c;
  c.enabled = {"crash@after-ack", "crash@after-effect", "crash@after-read", "xdel"};
  c.fired = {{"crash@after-effect", 2}, {"crash@after-read", 0}, {"lost-reply@XACK", 1}};
  // Zero counts count as never fired; a fired site that was not enabled is
  // not a gap; the list is in site order.
  EXPECT_EQ(c.NeverFired(), (std::vector<std::string>{"crash@after-ack", "crash@after-read", "xdel"}));
}

TEST(FaultCoverageTest, AddSumsCountsAndUnitesEnabledSites) {
  FaultCoverage a;
  a.enabled = {"crash@after-effect", "xdel"};
  a.fired = {{"crash@after-effect", 2}};
  FaultCoverage b;
  b.enabled = {"crash@after-effect", "restart"};
  b.fired = {{"crash@after-effect", 1}, {"xdel", 1}};
  a.Add(b);
  EXPECT_EQ(a.fired.at("crash@after-effect"), 3);
  EXPECT_EQ(a.fired.at("xdel"), 1);
  EXPECT_EQ(a.enabled, (std::set<std::string>{"crash@after-effect", "restart", "xdel"}));
  EXPECT_EQ(a.NeverFired(), (std::vector<std::string>{"restart"}));
}

TEST(FaultCoverageTest, APlansCoverageNamesEveryEnabledSiteAndWhatFired) {
  FaultModel m;
  m.kinds = {FaultKind::kCrash, FaultKind::kLostReply, FaultKind::kXdel};
  m.crash_points = {"after-effect", "after-ack"};
  m.lost_sites = {"XACK"};
  FaultPlan plan(m, {*ParseFaultSpec("crash w1 after-effect #1"), *ParseFaultSpec("xdel pending @5ms")});
  ASSERT_TRUE(plan.AtPoint("w1", "after-effect", SiteFamily::kCrashPoint));
  plan.RecordFired(plan.scheduled()[0]);
  FaultCoverage c = plan.Coverage();
  EXPECT_EQ(c.enabled, (std::set<std::string>{"crash@after-ack", "crash@after-effect", "lost-reply@XACK", "xdel"}));
  EXPECT_EQ(c.NeverFired(), (std::vector<std::string>{"crash@after-ack", "lost-reply@XACK"}));
}

}  // namespace
}  // namespace xackly
