// Actor names are made and read back in one place (sim/actor_name.h); the
// reports' lanes, slots and "an injected fault" wording depend on it.
#include "sim/actor_name.h"

#include <gtest/gtest.h>

namespace xackly {
namespace {

TEST(ActorNameTest, EveryNameTheSimulatorMakesReadsBackAsWhatItNames) {
  for (ActorRole role : {ActorRole::kProducer, ActorRole::kWorker, ActorRole::kJanitor}) {
    for (int number : {1, 2, 12}) {
      for (int incarnation : {1, 2, 31}) {
        for (bool fresh : {false, true}) {
          const std::string name = ActorName(role, number, incarnation, fresh);
          const ActorIdentity id = DescribeActor(name);
          EXPECT_EQ(id.role, role) << name;
          EXPECT_EQ(id.number, number) << name;
          EXPECT_EQ(id.incarnation, fresh ? incarnation : 1) << name;
          EXPECT_EQ(id.slot, ActorName(role, number)) << name;
        }
      }
    }
  }
}

TEST(ActorNameTest, AFreshNameCarriesTheIncarnationAndSharesTheSlot) {
  EXPECT_EQ(ActorName(ActorRole::kWorker, 2, 3, /*fresh_name=*/true), "w2.3");
  EXPECT_EQ(ActorName(ActorRole::kWorker, 2, 3, /*fresh_name=*/false), "w2");
  EXPECT_EQ(ActorName(ActorRole::kWorker, 2, 1, /*fresh_name=*/true), "w2");
  EXPECT_EQ(DescribeActor("w2.3").slot, "w2");
}

// A handler lane of a worker process (RunConfig::handlers) has a slot of
// its own; its number is the process's, so it counts for the process's
// group and fault draws.
TEST(ActorNameTest, AHandlerLaneNamesItsProcessAndItsLane) {
  for (int incarnation : {1, 4}) {
    for (bool fresh : {false, true}) {
      const std::string name = ActorName(ActorRole::kWorker, 2, incarnation, fresh, /*lane=*/3);
      const ActorIdentity id = DescribeActor(name);
      EXPECT_EQ(id.role, ActorRole::kWorker) << name;
      EXPECT_EQ(id.number, 2) << name;
      EXPECT_EQ(id.lane, 3) << name;
      EXPECT_EQ(id.incarnation, fresh ? incarnation : 1) << name;
      EXPECT_EQ(id.slot, "w2#3") << name;
    }
  }
  EXPECT_EQ(ActorName(ActorRole::kWorker, 2, 4, /*fresh_name=*/true, 3), "w2#3.4");
  EXPECT_EQ(ActorName(ActorRole::kWorker, 2, 1, false, /*lane=*/1), "w2");
  EXPECT_EQ(DescribeActor("w2").lane, 1);
}

TEST(ActorNameTest, TheHarnessLabelsAreNoWorkers) {
  EXPECT_EQ(DescribeActor(kFaultActor).role, ActorRole::kFaultInjector);
  EXPECT_EQ(DescribeActor(kSetupActor).role, ActorRole::kHarness);
  EXPECT_EQ(DescribeActor(kOracleActor).role, ActorRole::kHarness);
  EXPECT_EQ(DescribeActor(kSimActor).role, ActorRole::kSimulator);
}

TEST(ActorNameTest, ANameNoPartOfTheSimulatorMakesIsOther) {
  for (const char* name : {"", "w", "w0", "wx", "w1.", "w1.1", "w1.x", "w1x", "x1", "worker1", "p1.2.3",
                           "w1#", "w1#1", "w1#x", "p1#2", "w1.2#3"}) {
    const ActorIdentity id = DescribeActor(name);
    EXPECT_EQ(id.role, ActorRole::kOther) << name;
    EXPECT_EQ(id.slot, name) << name;
    EXPECT_EQ(std::string(ActorRoleName(id.role)), "") << name;
  }
}

}  // namespace
}  // namespace xackly
