// The story and the other shared derivations: real counterexamples from a
// real server, and hand-made cases for the parts a small real case does not
// reach (claims, merged events, truncation).
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/model.h"
#include "reports/report.h"
#include "tests/reports/report_test_util.h"

namespace xackly::report {
namespace {

std::string Dump(const std::vector<std::string>& story) {
  std::string out;
  for (size_t i = 0; i < story.size(); ++i) out += std::to_string(i + 1) + ". " + story[i] + "\n";
  return out;
}

TEST(StoryTest, NoDedupeNamesTheCrashBetweenEffectAndAckAndEndsWithTheDuplicate) {
  const CaseReport& c = NoDedupeCase();
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  ASSERT_FALSE(story.empty());
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> effects = Find(story, "runs the side effect of order:1");
  const std::vector<size_t> crash = Find(story, "w1 crashes at after-effect, before XACK");
  ASSERT_EQ(effects.size(), 2u);
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_LT(effects[0], crash[0]);
  EXPECT_LT(crash[0], effects[1]);
  EXPECT_EQ(Find(story, "w1 reads 0-1 (order:1) with XREADGROUP >").size(), 1u);
  EXPECT_EQ(Find(story, "5 s later w1 starts again and re-reads its own pending 0-1 (XREADGROUP 0)").size(), 1u);
  EXPECT_NE(story.back().find("again → duplicate of order:1 (2 effects)"), std::string::npos);
  EXPECT_LE(story.size(), kMaxStorySentences);
}

// The producer's XADD request lost on the way: the story tells it once
// (it once told it twice, as the lost XADD and as a lost request), before
// the retry that adds the event, and the duplicate that follows.
TEST(StoryTest, ALostXaddRequestIsToldBeforeTheRetryThatAddsTheEvent) {
  const CaseReport c =
      RunCase("no-dedupe", 1, 1, std::vector<std::string>{"lost-request p1 XADD #1", "crash w1 after-effect #1"});
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> lost = Find(story, "p1 sends XADD for order:1, but the request is lost and never runs");
  const std::vector<size_t> added = Find(story, "adds order:1 as");
  ASSERT_EQ(lost.size(), 1u);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_LT(lost[0], added[0]);
  EXPECT_EQ(Find(story, "request is lost").size(), 1u) << "one fault, one sentence";
  EXPECT_NE(story.back().find("duplicate of order:1"), std::string::npos);
}

TEST(StoryTest, AckFirstEndsWithTheLoss) {
  const CaseReport& c = AckFirstCase();
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_FALSE(story.empty());
  EXPECT_EQ(Find(story, "w1 acknowledges 0-1 with XACK").size(), 1u);
  EXPECT_EQ(Find(story, "w1 crashes at after-ack, after XACK and before the side effect").size(), 1u);
  EXPECT_EQ(story.back(), "→ order:1 is lost: acked-without-effect.");
  EXPECT_TRUE(Find(story, "runs the side effect").empty());
}

// ack-before-dlq: the third delivery of a poison event dead-letters it by
// XACK first; a crash right after the XACK loses it. The story must say the
// XACK is the dead-lettering, and put the crash between XACK and the save.
// (A protocol that acks a failed event and never saves it is told the same
// way: "dead-letters" only when the payload does reach a dead-letter stream.)
TEST(StoryTest, AckBeforeDlqTellsTheDeadLetteringAndTheCrashBeforeTheSave) {
  const CaseReport c = RunCase("ack-before-dlq", 1, 1, std::vector<std::string>{"poison event 1", "crash w1 after-ack #1"});
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> failed = Find(story, "tries the side effect of order:1, but it fails (poison event).");
  EXPECT_EQ(failed.size(), 2u);
  EXPECT_TRUE(Find(story, "(failed (").empty());
  const std::vector<size_t> gives_up =
      Find(story, "w1 gives up on order:1 after 2 failed attempts and acknowledges 0-1 with XACK before its payload is "
                  "saved anywhere");
  const std::vector<size_t> crash =
      Find(story, "w1 crashes at after-ack, after XACK and before the payload reaches the dead-letter stream.");
  ASSERT_EQ(gives_up.size(), 1u);
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_LT(failed.back(), gives_up[0]);
  EXPECT_EQ(gives_up[0] + 1, crash[0]);
  EXPECT_TRUE(Find(story, "before the side effect").empty());
  EXPECT_EQ(story.back(), "→ order:1 is lost: acked-without-effect.");
}

// A hand-made give-up: two failed attempts, then XACK and the dead-letter
// XADD `dlq_after_ms` later; 0 when both ran in one MULTI/EXEC (the oracle
// sees a transaction's commands at its EXEC). The loss is only there
// because a story is told for a violation.
CaseReport GiveUpCase(int64_t dlq_after_ms) {
  CaseReport c;
  c.trace = {
      {0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
      {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {3, "w1", LineKind::kExternal, "ext apply order:1", "error: poison event"},
      {13, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0", "[...]"},
      {14, "w1", LineKind::kExternal, "ext apply order:1", "error: poison event"},
      {24, "w1", LineKind::kRedis, "XACK events workers 1-0", "1"},
      {24 + dlq_after_ms, "w1", LineKind::kRedis, "XADD dead-letters * event_id order:1 source_id 1-0", "\"24-0\""},
  };
  c.histories["order:1"] = {
      {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
      {HistoryKind::kDelivered, 2, 1, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kEffectFailed, 3, 2, "w1", "1-0", "poison event", 0},
      {HistoryKind::kRedelivered, 13, 3, "w1", "1-0", "XREADGROUP 0", 0},
      {HistoryKind::kEffectFailed, 14, 4, "w1", "1-0", "poison event", 0},
      {HistoryKind::kAcked, 24, 5, "w1", "1-0", "XACK removed it from the PEL", 0},
      {HistoryKind::kDeadLettered, 24 + dlq_after_ms, 6, "w1", "1-0", "payload written to the dead-letter stream", 0},
  };
  c.violations = {{VerdictKind::kLost, "order:1", "acked-without-effect", "acked, never ran", 0}};
  return c;
}

// An XACK that gives up on an event is the first half of dead-lettering it
// when the payload reaches the dead-letter stream then or later, in the
// same millisecond too: it is not an ack "before its payload is saved".
TEST(StoryTest, AGiveUpXackIsToldAsDeadLetteringWhenThePayloadIsSavedInTheSameMillisecond) {
  for (int64_t dlq_after_ms : {0, 1}) {
    const std::vector<std::string> story = Story(GiveUpCase(dlq_after_ms));
    SCOPED_TRACE(Dump(story));
    EXPECT_EQ(Find(story, "w1 gives up on order:1 after 2 failed attempts and dead-letters it, acknowledging 1-0 "
                          "with XACK first (the payload is not saved yet).")
                  .size(),
              1u)
        << "dead-lettered " << dlq_after_ms << " ms after the XACK";
    EXPECT_TRUE(Find(story, "before its payload is saved anywhere").empty());
  }
}

// dup-no-ack: after a crash between COMMIT and XACK the redelivery finds the
// event done, and the duplicate branch skips XACK: the entry stays pending.
TEST(StoryTest, DupNoAckTellsThatTheDuplicateBranchSkipsXack) {
  const CaseReport c = RunCase("dup-no-ack", 1, 1, "crash w1 after-commit #1");
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> crash = Find(story, "w1 crashes at after-commit, before XACK.");
  const std::vector<size_t> skip = Find(
      story, "re-reads its own pending 0-1 (XREADGROUP 0), finds order:1 already done and skips it without XACK");
  ASSERT_EQ(crash.size(), 1u);
  ASSERT_EQ(skip.size(), 1u);
  EXPECT_LT(crash[0], skip[0]);
  EXPECT_FALSE(Find(story, "again finds order:1 done and skips it without XACK").empty());
  EXPECT_EQ(Find(story, "runs the side effect of order:1").size(), 1u);
  EXPECT_NE(story.back().find("pel-leak"), std::string::npos);
}

// A redelivery of a done event followed by another delivery: with one
// handler per process the handler skipped it (the next delivery is the
// skip's consequence), told twice; in a handler pool of two lanes the
// claimed entry may wait in the process's queue while the next delivery
// comes, so only the last one, followed by nothing, is told as a skip.
TEST(StoryTest, InAHandlerPoolOnlyTheLastDeliveryOfADoneEventIsASkip) {
  for (const int handlers : {1, 2}) {
    CaseReport c;
    c.handlers = handlers;
    c.trace = {
        {0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
        {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
        {3, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
        {13, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0", "[...]"},
        {23, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0", "[...]"},
    };
    c.histories["order:1"] = {
        {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
        {HistoryKind::kDelivered, 2, 1, "w1", "1-0", "XREADGROUP >", 0},
        {HistoryKind::kEffect, 3, 2, "w1", "1-0", "ext", 0},
        {HistoryKind::kRedelivered, 13, 3, "w1", "1-0", "XREADGROUP 0", 0},
        {HistoryKind::kRedelivered, 23, 4, "w1", "1-0", "XREADGROUP 0", 0},
    };
    c.violations = {{VerdictKind::kPelLeak, "order:1", "pel-leak", "pending for ever", 0}};
    const std::vector<std::string> story = Story(c);
    SCOPED_TRACE(fmt::format("{} handlers\n{}", handlers, Dump(story)));
    EXPECT_EQ(Find(story, "already done and skips it without XACK").size(), 1u);
    EXPECT_EQ(Find(story, "again finds order:1 done and skips it without XACK").size(), handlers == 1 ? 1u : 0u);
  }
}

// A clock jump is stamped at its end: the done-record it leaps over expires
// during the jump, told after it, and the jump is not "50 s later".
TEST(StoryTest, AClockJumpIsToldBeforeTheExpiryItCauses) {
  const CaseReport c =
      RunCase("short-ttl-dedupe", 1, 1, std::vector<std::string>{"crash w1 after-eval #1", "clock-jump +60000ms @20ms"});
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> jump = Find(story, "an injected fault moves virtual time forward by 60 s.");
  const std::vector<size_t> expiry = Find(story, "the done-record of order:1 expires during the jump (10 s TTL).");
  ASSERT_EQ(jump.size(), 1u);
  ASSERT_EQ(expiry.size(), 1u);
  EXPECT_EQ(jump[0] + 1, expiry[0]);
  EXPECT_EQ(story[jump[0]], "an injected fault moves virtual time forward by 60 s.");
  EXPECT_NE(story.back().find("→ duplicate of order:1 (2 effects)"), std::string::npos);
}

TEST(StoryTest, EmptyWithoutViolations) {
  CaseReport c;
  c.histories["order:1"] = {{HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0}};
  EXPECT_TRUE(Story(c).empty());
}

// A hand-made claim case: w1 reads, stalls, w2 claims 30 s later.
CaseReport ClaimCase() {
  CaseReport c;
  c.trace = {
      {0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
      {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {3, "w1", LineKind::kFault, "!stall at after-read for 60000 ms", "", LineEvent::kStall, {}, "after-read"},
      {30010, "w2", LineKind::kRedis, "XAUTOCLAIM events workers w2 30000 0-0 COUNT 10", "[...]",
       LineEvent::kCommand, {"XAUTOCLAIM", "events", "workers", "w2", "30000", "0-0", "COUNT", "10"}},
      {30011, "w2", LineKind::kExternal, "ext apply order:1", "ok"},
      {30021, "w2", LineKind::kRedis, "XACK events workers 1-0", "1"},
      {60003, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
  };
  c.histories["order:1"] = {
      {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
      {HistoryKind::kDelivered, 2, 1, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kStall, 3, 2, "w1", "", "after-read", 60000, "", "after-read"},  // value: the stall's length
      {HistoryKind::kClaimed, 30010, 3, "w2", "1-0", "XAUTOCLAIM", 0, "XAUTOCLAIM"},
      {HistoryKind::kEffect, 30011, 4, "w2", "1-0", "side effect (external)", 0, "", "", "external"},
      {HistoryKind::kAcked, 30021, 5, "w2", "1-0", "XACK removed it from the PEL", 0},
      {HistoryKind::kEffect, 60003, 6, "w1", "1-0", "side effect (external)", 0, "", "", "external"},
  };
  c.violations = {{VerdictKind::kDuplicate, "order:1", "stall", "ran twice", 2}};
  return c;
}

TEST(StoryTest, ClaimsTakeMinIdleFromTheTraceLine) {
  const std::vector<std::string> story = Story(ClaimCase());
  SCOPED_TRACE(Dump(story));
  EXPECT_EQ(Find(story, "w1 stalls at after-read for 60 s, holding 1-0 unacknowledged").size(), 1u);
  EXPECT_EQ(Find(story, "30 s later w2 claims 1-0 (XAUTOCLAIM min-idle 30000).").size(), 1u);
  EXPECT_EQ(Find(story, "w2 runs the side effect of order:1 (external).").size(), 1u);
  EXPECT_EQ(story.back(), "30 s later w1 resumes and runs the side effect of order:1 again → duplicate of order:1 (2 effects).");
}

// A position-based reader (plain XREAD) that crashes after its effect and
// before its position moved, then reads the entry again: the story tells
// the reads as XREADs, and what the reader held without "unacknowledged"
// or "before XACK" (it acknowledges nothing).
TEST(StoryTest, APositionReaderIsToldByItsReadsNotByAcks) {
  CaseReport c;
  c.trace = {
      {0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
      {2, "w1", LineKind::kRedis, "XREAD COUNT 10 STREAMS events 0", "[...]"},
      {3, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
      {3, "w1", LineKind::kFault, "!crash at after-effect", "", LineEvent::kCrash, {}, "after-effect"},
      {100, "w1", LineKind::kRedis, "XREAD COUNT 10 STREAMS events 0", "[...]"},
      {101, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
  };
  c.histories["order:1"] = {
      {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
      {HistoryKind::kReadByPosition, 2, 1, "w1", "1-0", "read with XREAD from its own position", 0, "XREAD"},
      {HistoryKind::kEffect, 3, 2, "w1", "1-0", "side effect (external)", 0, "", "", "external"},
      {HistoryKind::kCrash, 3, 3, "w1", "", "after-effect", 0, "", "after-effect"},
      {HistoryKind::kReadByPosition, 100, 4, "w1", "1-0", "read with XREAD from its own position", 0, "XREAD"},
      {HistoryKind::kEffect, 101, 5, "w1", "1-0", "side effect (external)", 0, "", "", "external"},
  };
  c.violations = {{VerdictKind::kDuplicate, "order:1", "crash:after-effect", "ran twice", 2}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  EXPECT_EQ(Find(story, "w1 reads 1-0 (order:1) with XREAD from the position it keeps").size(), 1u);
  EXPECT_EQ(Find(story, "w1 crashes at after-effect, after the side effect of order:1 and before its position passes it").size(), 1u);
  EXPECT_EQ(Find(story, "w1 reads 1-0 with XREAD from the position it keeps").size(), 1u);  // the re-read
  EXPECT_TRUE(Find(story, "XACK").empty());
  EXPECT_TRUE(Find(story, "unacknowledged").empty());
}

// ClaimCase with w2's claim moved to `claim_ms` (its trace line and history).
CaseReport ClaimAt(int64_t claim_ms) {
  CaseReport c = ClaimCase();
  c.trace[3].t_ms = claim_ms;
  c.histories["order:1"][3].t_ms = claim_ms;
  return c;
}

// A hand-made loss decided by steps that name no event: w1 acks before
// its COMMIT, the COMMIT fails in an outage and w1 rolls back; w2's nil
// reply to a write of its own is not w1's business.
CaseReport FailedCommitCase() {
  CaseReport c;
  c.trace = {
      {0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
      {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {3, "w1", LineKind::kSql, "sql BEGIN", "ok"},
      {4, "w1", LineKind::kSql, "sql INSERT INTO effects VALUES ('order:1')", "1 row"},
      {5, "w1", LineKind::kRedis, "XACK events workers 1-0", "1"},
      {6, "w1", LineKind::kSql, "sql COMMIT", "error: transaction aborted by an outage"},
      {7, "w1", LineKind::kSql, "sql ROLLBACK", "error: no transaction"},
      {8, "w2", LineKind::kRedis, "SET lock:janitor 1 NX", "nil", LineEvent::kCommand, {"SET", "lock:janitor", "1", "NX"}},
      {9, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "nil", LineEvent::kCommand,
       {"XREADGROUP", "GROUP", "workers", "w1", "COUNT", "10", "STREAMS", "events", ">"}},
  };
  c.histories["order:1"] = {
      {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
      {HistoryKind::kDelivered, 2, 1, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kAcked, 5, 4, "w1", "1-0", "XACK removed it from the PEL", 0},
  };
  c.violations = {{VerdictKind::kLost, "order:1", "acked-without-effect", "acked, never ran", 0}};
  return c;
}

TEST(PathLinesTest, AFailedCommitAndItsRollbackAreOnThePathAndInTheStory) {
  const CaseReport c = FailedCommitCase();
  EXPECT_EQ(DecisiveLines(c), (std::vector<int64_t>{5, 6}));
  const std::vector<int64_t> path = PathLines(c);
  EXPECT_NE(std::find(path.begin(), path.end(), 5), path.end()) << "the failed COMMIT";
  EXPECT_NE(std::find(path.begin(), path.end(), 6), path.end()) << "the ROLLBACK";
  EXPECT_EQ(std::find(path.begin(), path.end(), 7), path.end()) << "another worker's nil";
  EXPECT_EQ(std::find(path.begin(), path.end(), 8), path.end()) << "a read's nil is only 'nothing new'";
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  EXPECT_EQ(Find(story, "w1's COMMIT fails (error: transaction aborted by an outage)").size(), 1u);
  EXPECT_EQ(Find(story, "w1 rolls its transaction back (ROLLBACK -> error: no transaction)").size(), 1u);
  EXPECT_TRUE(Find(story, "lock:janitor").empty());
}

// setnx-first: the crash after the mark is told, and so is the reply that
// made the replacement skip the effect (a key that names the event).
TEST(StoryTest, AWriteAnsweredNilThatDecidedTheBranchIsToldAndOnThePath) {
  const CaseReport c = RunCase("setnx-first", 1, 1, "crash w1 after-mark #1");
  ASSERT_FALSE(c.violations.empty());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> nil = Find(story, "w1 sends SET done:order:1 1 NX and gets nil.");
  const std::vector<size_t> ack = Find(story, "w1 acknowledges");
  ASSERT_EQ(nil.size(), 1u);
  ASSERT_EQ(ack.size(), 1u);
  EXPECT_LT(nil[0], ack[0]);
  int marks = 0;
  for (int64_t l : PathLines(c)) marks += c.trace[static_cast<size_t>(l)].request.starts_with("SET done:order:1") ? 1 : 0;
  EXPECT_EQ(marks, 2) << "the mark before the crash and the one answered nil";
}

// The store runs one transaction at a time: w1 stalls 1.5 s inside its
// transaction, so w2's BEGIN for order:2 waits for it. That wait is why w2
// acted late; it is on the path and in the story, naming whose transaction.
TEST(StoryTest, AStatementThatWaitedForAnotherWorkersTransactionIsToldAndOnThePath) {
  const CaseReport c =
      RunCase("dup-no-ack", 2, 2, std::vector<std::string>{"stall w1 after-mark #1 1500ms", "crash w2 after-commit #1"});
  ASSERT_FALSE(c.violations.empty());
  EXPECT_EQ(c.violations[0].event_id, "order:2");
  std::vector<int64_t> waited;
  for (size_t l = 0; l < c.trace.size(); ++l) {
    if (!c.trace[l].waited_for.empty()) waited.push_back(static_cast<int64_t>(l));
  }
  ASSERT_EQ(waited.size(), 1u);
  const TraceLine& begin = c.trace[static_cast<size_t>(waited[0])];
  EXPECT_EQ(begin.actor, "w2");
  EXPECT_EQ(begin.request, "sql BEGIN");
  EXPECT_EQ(begin.waited_for, "w1");
  EXPECT_GE(begin.duration_ms, 1500);
  const std::vector<int64_t> path = PathLines(c);
  EXPECT_NE(std::find(path.begin(), path.end(), waited[0]), path.end());
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> wait = Find(story, "w2 waits 1.5 s for w1's transaction to end, then sends BEGIN (ok).");
  const std::vector<size_t> effect = Find(story, "w2 runs the side effect of order:2");
  ASSERT_EQ(wait.size(), 1u);
  ASSERT_EQ(effect.size(), 1u);
  EXPECT_EQ(wait[0] + 1, effect[0]);
  EXPECT_TRUE(Find(story, "later w2 waits").empty()) << "the wait says where the time went";
}

TEST(StoryTest, RelativeTimeOnlyFromOneSecond) {
  const std::vector<std::string> story = Story(ClaimCase());
  SCOPED_TRACE(Dump(story));
  ASSERT_FALSE(story.empty());
  for (const std::string& s : story) {
    EXPECT_EQ(s.find(" ms later"), std::string::npos) << s;
  }
  // The two 30 s gaps say so; the 10 ms from the claim to the effect does not.
  EXPECT_EQ(Find(story, " later ").size(), 2u);
  EXPECT_EQ(Find(story, "w2 runs the side effect of order:1 (external).").size(), 1u);
  // The boundary: 999 ms after the stall is told without a time, 1000 ms with one.
  const std::vector<std::string> before = Story(ClaimAt(1002));
  const std::vector<std::string> at = Story(ClaimAt(1003));
  EXPECT_EQ(Find(before, "w2 claims 1-0").size(), 1u) << Dump(before);
  EXPECT_TRUE(Find(before, "later w2 claims 1-0").empty()) << Dump(before);
  EXPECT_EQ(Find(at, "1 s later w2 claims 1-0").size(), 1u) << Dump(at);
}

TEST(StoryTest, OneStepOfSeveralEventsIsOneSentence) {
  CaseReport c;
  c.trace = {{1002, "j1", LineKind::kRedis, "XTRIM events MAXLEN 3", "2"}};
  for (const auto& [event, id] : {std::pair{"order:1", "1-0"}, std::pair{"order:2", "6-0"}}) {
    c.histories[event] = {{HistoryKind::kPayloadDeleted, 1002, 0, "j1", id, "XTRIM events MAXLEN 3", 0}};
    c.violations.push_back({VerdictKind::kLost, event, "payload-deleted", "gone", 0});
  }
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 3u);
  EXPECT_EQ(story[0], "j1 deletes the payload of 1-0 (order:1) and 6-0 (order:2) with XTRIM events MAXLEN 3.");
  EXPECT_EQ(story[1], "→ order:1 is lost: payload-deleted.");
  EXPECT_EQ(story[2], "→ order:2 is lost: payload-deleted.");
}

// A fault's sentence comes from its kind's descriptor (sim/faults.cc): every
// kind that writes a history item gets a sentence of its own, with every
// hole filled, so a new kind needs no edit here.
TEST(StoryTest, EveryFaultKindIsToldByItsDescriptor) {
  for (const FaultKindInfo& k : AllFaultKinds()) {
    if (*k.story == '\0') continue;
    SCOPED_TRACE(k.name);
    HistoryKind kind = HistoryKind::kProduced;
    for (int h = 0; h <= static_cast<int>(kLastHistoryKind); ++h) {
      if (std::string_view(HistoryKindName(static_cast<HistoryKind>(h))) == k.history) kind = static_cast<HistoryKind>(h);
    }
    ASSERT_NE(kind, HistoryKind::kProduced);
    CaseReport c;
    HistoryItem item{kind, 5, -1, k.run_wide ? "fault" : "w1", k.run_wide ? "" : "1-0", "DETAIL", 2000};
    item.site = "XACK";
    c.histories["order:1"] = {item};
    c.violations = {{VerdictKind::kLost, "order:1", k.name, "gone", 0}};
    const std::vector<std::string> story = Story(c);
    SCOPED_TRACE(Dump(story));
    ASSERT_EQ(story.size(), 2u);
    EXPECT_EQ(story[0].find('{'), std::string::npos);
    EXPECT_NE(story[0], "DETAIL.");
    EXPECT_TRUE(story[0].starts_with(k.run_wide ? "an injected fault " : "w1 ")) << story[0];
  }
}

TEST(StoryTest, RepeatedStepsAreToldOnce) {
  CaseReport c;
  std::vector<HistoryItem>& h = c.histories["order:1"];
  for (int i = 0; i < 5; ++i) {
    h.push_back({HistoryKind::kClaimed, 30000LL * (i + 1), -1, "w1", "0-1", "XAUTOCLAIM", 0, "XAUTOCLAIM"});
  }
  c.violations = {{VerdictKind::kPelLeak, "order:1", "done-but-pending", "stays", 1}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 3u);
  EXPECT_EQ(story[0], "w1 claims 0-1 (order:1) (XAUTOCLAIM).");
  EXPECT_EQ(story[1], "w1 repeats this 4 more times over the next 120 s.");
  EXPECT_EQ(story[2], "→ order:1 stays pending forever (pel-leak): done-but-pending.");
}

// An entry left pending: the story says when nothing after the event's
// last step could hand it over again, read from the trace: no claim, no
// XREADGROUP of pending entries (any stream's ID but >), no script, none
// of them refused. Anything that could have (after that step, not before)
// leaves the sentence out: its steps then tell what happened.
TEST(StoryTest, APendingEntryThatNothingHandsOverAgainIsSaidSo) {
  auto line = [](std::string actor, std::vector<std::string> argv, std::string reply) {
    TraceLine t;
    t.actor = std::move(actor);
    t.request = fmt::format("{}", fmt::join(argv, " "));
    t.argv = std::move(argv);
    t.reply = std::move(reply);
    return t;
  };
  const TraceLine read = line("w1", {"XREADGROUP", "GROUP", "g", "w1", "STREAMS", "events", ">"}, "[1-0]");
  CaseReport base;
  base.trace = {line("w2", {"XAUTOCLAIM", "events", "g", "w2", "60000", "0"}, "[0-0, []]"), read};
  base.histories["order:1"] = {{HistoryKind::kDelivered, 10, 1, "w1", "1-0", "", 0, "XREADGROUP"}};
  base.violations = {{VerdictKind::kPelLeak, "order:1", "done-but-pending", "stays", 1},
                     {VerdictKind::kStuck, "order:1", "never-settled", "stays", 1}};
  const std::string said =
      "After its last step above, nothing hands order:1 over again: no XCLAIM or XAUTOCLAIM, no XREADGROUP of "
      "pending entries (an ID, not >), no EVAL or FCALL.";
  struct Next {
    const char* what;
    std::vector<TraceLine> lines;
    bool said;
  };
  const std::vector<Next> cases = {
      {"nothing after it (a claim before it does not count)", {}, true},
      {"a read of new entries", {read}, true},
      {"a claim", {line("w2", {"XAUTOCLAIM", "events", "g", "w2", "60000", "0"}, "[0-0, []]")}, false},
      {"an XCLAIM", {line("w2", {"xclaim", "events", "g", "w2", "0", "1-0"}, "[]")}, false},
      {"a read of its own pending entries", {line("w1", {"XREADGROUP", "GROUP", "g", "w1", "STREAMS", "events", "0"}, "[]")}, false},
      {"that read refused", {line("w1", {"XREADGROUP", "GROUP", "g", "w1", "STREAMS", "events", "0"}, "-READONLY no")}, true},
      {"two streams read new", {line("w1", {"XREADGROUP", "GROUP", "g", "w1", "streams", "a", "b", ">", ">"}, "nil")}, true},
      {"two streams, one pending", {line("w1", {"XREADGROUP", "GROUP", "g", "w1", "STREAMS", "a", "b", ">", "0"}, "nil")}, false},
      {"a script", {line("w1", {"EVAL", "return 1", "0"}, "1")}, false},
      {"a command the table does not know", {line("w1", {"MYMODULE.CLAIM", "events"}, "1")}, false},
  };
  for (const Next& next : cases) {
    CaseReport c = base;
    c.trace.insert(c.trace.end(), next.lines.begin(), next.lines.end());
    const std::vector<std::string> story = Story(c);
    SCOPED_TRACE(std::string(next.what) + "\n" + Dump(story));
    ASSERT_EQ(Find(story, "nothing hands").size(), next.said ? 1u : 0u) << "once for the event's two violations";
    if (!next.said) continue;
    ASSERT_GE(story.size(), 3u);
    EXPECT_EQ(story[story.size() - 3], said) << "before the conclusions";
  }
  CaseReport untraced = base;
  untraced.trace.clear();
  EXPECT_TRUE(Find(Story(untraced), "nothing hands").empty()) << "without a trace, nothing is claimed";
  CaseReport lost = base;
  lost.violations = {{VerdictKind::kLost, "order:1", "dropped", "gone", 0}};
  EXPECT_TRUE(Find(Story(lost), "nothing hands").empty()) << "said only of an entry left pending";
}

TEST(StoryTest, LongStoriesAreCutInTheMiddle) {
  CaseReport c;
  std::vector<HistoryItem>& h = c.histories["order:1"];
  for (int i = 0; i < 40; ++i) {
    // Alternating kinds, so nothing collapses.
    h.push_back({i % 2 ? HistoryKind::kAcked : HistoryKind::kRedelivered, i * 10LL, -1, "w1", "0-1", "", 0});
  }
  c.violations = {{VerdictKind::kLost, "order:1", "dropped", "gone", 0}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), kMaxStorySentences);
  EXPECT_EQ(Find(story, "…").size(), 1u);
  EXPECT_EQ(story.back(), "→ order:1 is lost: dropped.");

  // Renderers mark the cut and the verdict from the sentence's kind.
  const std::vector<StorySentence> kinds = StorySentences(c);
  ASSERT_EQ(kinds.size(), story.size());
  int cuts = 0, verdicts = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(kinds[i].text, story[i]);
    cuts += kinds[i].kind == StorySentence::Kind::kCut;
    verdicts += kinds[i].kind == StorySentence::Kind::kVerdict;
  }
  EXPECT_EQ(cuts, 1);
  EXPECT_EQ(verdicts, 1);
  EXPECT_EQ(kinds.back().kind, StorySentence::Kind::kVerdict);
}

TEST(StoryTest, ADuplicateToldOnItsEffectIsTheVerdictSentence) {
  const std::vector<StorySentence> story = StorySentences(NoDedupeCase());
  ASSERT_FALSE(story.empty());
  EXPECT_EQ(story.back().kind, StorySentence::Kind::kVerdict);
  EXPECT_NE(story.back().text.find("→ duplicate of order:1"), std::string::npos);
  for (size_t i = 0; i + 1 < story.size(); ++i) EXPECT_EQ(story[i].kind, StorySentence::Kind::kBeat) << story[i].text;
}

// A duplicate whose second effect the history does not hold (the ledger
// counted it; a consumer's own database, a service that applied a retry)
// is told in a verdict sentence of its own, never pinned on the history's
// last step (here an XACK, which ran no effect).
TEST(StoryTest, ADuplicateWithOneEffectInItsHistoryIsNotPinnedOnItsLastStep) {
  CaseReport c = NoDedupeCase();
  ASSERT_FALSE(c.violations.empty());
  std::vector<HistoryItem>& history = c.histories.at("order:1");
  auto second = std::find_if(std::find_if(history.begin(), history.end(),
                                          [](const HistoryItem& i) { return i.kind == HistoryKind::kEffect; }) + 1,
                             history.end(), [](const HistoryItem& i) { return i.kind == HistoryKind::kEffect; });
  ASSERT_NE(second, history.end());
  history.erase(second);
  ASSERT_NE(history.back().kind, HistoryKind::kEffect) << "the test needs a last step that is no effect";
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_FALSE(story.empty());
  EXPECT_EQ(story.back().rfind("→ duplicate of order:1 (2 effects)", 0), 0u) << "a verdict sentence of its own";
  for (size_t i = 0; i + 1 < story.size(); ++i) {
    EXPECT_EQ(story[i].find("→ duplicate of"), std::string::npos) << "a step's conclusion: " << story[i];
  }
}

// order:1's effect, a done-record kept `ttl_ms`, a claim 30 s later and
// the effect again: a dedupe-expired duplicate.
CaseReport DoneRecordThatExpires(int64_t ttl_ms) {
  CaseReport c;
  c.histories["order:1"] = {
      {HistoryKind::kEffect, 4, -1, "w1", "1-0", "side effect (redis)", 0, "", "", "redis"},
      {HistoryKind::kDedupeRecord, 4, -1, "w1", "", "done-record", ttl_ms},
      {HistoryKind::kClaimed, 30008, -1, "w2", "1-0", "XAUTOCLAIM", 0, "XAUTOCLAIM"},
      {HistoryKind::kEffect, 30009, -1, "w2", "1-0", "side effect (redis)", 0, "", "", "redis"},
  };
  c.violations = {{VerdictKind::kDuplicate, "order:1", "dedupe-expired", "x", 2}};
  return c;
}

TEST(StoryTest, ExpiredDoneRecordsAreTold) {
  const std::vector<std::string> story = Story(DoneRecordThatExpires(10000));
  SCOPED_TRACE(Dump(story));
  EXPECT_EQ(Find(story, "w1 records order:1 as done with a 10 s TTL.").size(), 1u);
  EXPECT_EQ(Find(story, "10 s later the done-record of order:1 expires (10 s TTL).").size(), 1u);
}

// The shortest TTL is still a TTL: a done-record kept for 1 ms says so.
TEST(StoryTest, AOneMillisecondTtlIsTold) {
  const std::vector<std::string> story = Story(DoneRecordThatExpires(1));
  SCOPED_TRACE(Dump(story));
  EXPECT_EQ(Find(story, "w1 records order:1 as done with a 1 ms TTL.").size(), 1u);
}

TEST(StoryTest, ARestartIsToldBeforeWhatItLost) {
  CaseReport c;
  c.trace = {{2, "fault", LineKind::kFault, "!restart @2ms", "", LineEvent::kScheduledFault, {}, "", "restart"}};
  c.histories["order:1"] = {
      {HistoryKind::kRestartLoss, 2, 0, "fault", "1-0", "lost by the server restart (persistence none)", 0,
       "", "", "", "", "none"},
      {HistoryKind::kServerRestart, 2, 0, "fault", "", "redis-server killed and restarted (persistence none)", 0,
       "", "", "", "", "none"},
  };
  c.violations = {{VerdictKind::kLost, "order:1", "server-data-loss", "x", 0}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 3u);
  EXPECT_EQ(story[0], "an injected fault kills redis-server and restarts it (persistence none).");
  EXPECT_EQ(story[1], "the server restart loses 1-0 (order:1) (persistence none); no worker had read it.");
}

// A failover that loses an entry no worker had read says why nobody had:
// each worker process that was down or stalled then, once, by the lane its
// fault fired in (its other lanes went down with it), and not one that
// had started again.
TEST(StoryTest, ALossOfAnUnreadEntryNamesEachWorkerProcessThatWasAway) {
  CaseReport c;
  c.handlers = 2;
  auto fault = [](int64_t t, const char* actor, LineEvent e, const char* site, int64_t ms = 0) {
    TraceLine line{t, actor, LineKind::kFault, "!", ""};
    line.event = e;
    line.site = site;
    line.duration_ms = ms;
    return line;
  };
  TraceLine start{40, "w3", LineKind::kLifecycle, "starts again", ""};
  start.event = LineEvent::kStart;
  c.trace = {
      fault(10, "w1#2", LineEvent::kCrash, "before-XREADGROUP"),
      fault(10, "w1", LineEvent::kCrash, "before-XREADGROUP in w1#2 (the whole process went down)"),
      fault(20, "w2", LineEvent::kStall, "after-effect", 60000),
      fault(20, "w2#2", LineEvent::kStall, "after-effect in w2 (the whole process stalls)", 60000),
      fault(30, "w3", LineEvent::kCrash, "before-XACK"),
      start,
      {510, "fault", LineKind::kFault, "!failover lag:1000 @510ms", "", LineEvent::kScheduledFault, {}, "", "failover"},
  };
  c.histories["order:1"] = {{HistoryKind::kFailoverLoss, 510, 6, "fault", "1-0", "lost by the failover"}};
  c.violations = {{VerdictKind::kLost, "order:1", "failover", "x", 0}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 2u);
  EXPECT_EQ(story[0],
            "the failover loses 1-0 (order:1) (the promoted replica never received its XADD); no worker had read it: "
            "w1#2 was down (it crashed at before-XREADGROUP, 500 ms earlier) and w2 was stalled at after-effect (a "
            "60 s stall that began 490 ms earlier).");
}

// A failover a replica lag brought about is told as that lag's, named by
// the lagging request of the actor that met it; when the trace no longer
// shows that request, by the actor alone; one the plan drew is "an
// injected fault".
TEST(StoryTest, AFailoverIsToldAsTheLagThatBroughtItAbout) {
  for (const std::string who : {"the lag at p1's WAIT", "a replica lag p1 met", "an injected fault"}) {
    CaseReport c;
    TraceLine wait{200, "p1", LineKind::kFault, "WAIT 1 500", "1 !replica-lag", LineEvent::kReplicaLag,
                   {"WAIT", "1", "500"}};
    TraceLine failover{209, "fault", LineKind::kFault, "!failover lagging @208ms", "", LineEvent::kScheduledFault,
                       {}, "", "failover"};
    if (who != "an injected fault") failover.brought_by = "p1";
    c.trace = {{0, "p1", LineKind::kRedis, "XADD events 1-0 event_id order:1", "\"1-0\""},
               who == "the lag at p1's WAIT" ? wait : TraceLine{200, "p1", LineKind::kRedis, "PING", "PONG"},
               failover};
    c.histories["order:1"] = {
        {HistoryKind::kProduced, 0, 0, "p1", "1-0", "XADD acknowledged", 0},
        {HistoryKind::kFailover, 209, 2, "fault", "", "the lagging replica, which never received this write", 0},
        {HistoryKind::kFailoverLoss, 209, 2, "fault", "1-0", "lost by the failover", 0}};
    c.violations = {{VerdictKind::kLost, "order:1", "failover", "x", 0}};
    const std::vector<std::string> story = Story(c);
    SCOPED_TRACE(Dump(story));
    EXPECT_EQ(Find(story, who + " fails the primary over to the lagging replica").size(), 1u) << who;
  }
}

// A crash or stall of the holder that no history item of the event tells
// (here: after it acked, at a WAIT, in a new user's trial) is told as the
// fault it is, never as its raw trace line ("w1: !crash at before-WAIT
// (replacement starts in 100 ms) .").
TEST(StoryTest, AHoldersCrashOrStallNoHistoryTellsIsToldAsTheFault) {
  for (const bool crash : {true, false}) {
    SCOPED_TRACE(crash ? "crash" : "stall");
    CaseReport c;
    TraceLine fault{4, "w1", LineKind::kFault,
                    crash ? "!crash at before-WAIT (replacement starts in 100 ms)" : "!stall at before-WAIT for 3000 ms",
                    ""};
    fault.event = crash ? LineEvent::kCrash : LineEvent::kStall;
    fault.site = "before-WAIT";
    fault.duration_ms = crash ? 0 : 3000;
    c.trace = {
        {3, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
        fault,
    };
    c.histories["order:1"] = {{HistoryKind::kDelivered, 3, 0, "w1", "1-0", "XREADGROUP >", 0}};
    c.violations = {{VerdictKind::kLost, "order:1", "x", "x", 0}};
    const std::vector<std::string> story = Story(c);
    SCOPED_TRACE(Dump(story));
    ASSERT_EQ(story.size(), 3u);
    EXPECT_EQ(story[1], crash ? "w1 crashes at before-WAIT." : "w1 stalls at before-WAIT for 3 s.");
  }
}

TEST(StoryTest, AReplacementUnderANewNameIsTold) {
  CaseReport c;
  c.trace = {
      {3, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {3, "w1", LineKind::kFault, "!crash at after-read (replacement starts in 5000 ms)", "", LineEvent::kCrash,
       {}, "after-read"},
      {5003, "w1.2", LineKind::kLifecycle, "starts (replaces w1)", "", LineEvent::kStart, {}, "", "", "w1"},
  };
  c.histories["order:1"] = {
      {HistoryKind::kDelivered, 3, 0, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kCrash, 3, 1, "w1", "", "after-read", 0, "", "after-read"},
  };
  c.violations = {{VerdictKind::kLost, "order:1", "stranded", "x", 0}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 4u);
  EXPECT_EQ(story[1], "w1 crashes at after-read, holding 1-0 unacknowledged.");
  EXPECT_EQ(story[2], "5 s later w1.2 starts (replacing w1).");
  EXPECT_EQ(story[3], "→ order:1 is lost: stranded.");
}

// A worker's step on the trace's very first line counts as its last step
// told: its restart before its next step is told with that step.
TEST(StoryTest, ARestartAfterAStepOnTheFirstTraceLineIsTold) {
  CaseReport c;
  c.trace = {
      {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {5002, "w1", LineKind::kLifecycle, "starts", "", LineEvent::kStart},
      {5003, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0", "[...]"},
  };
  c.histories["order:1"] = {
      {HistoryKind::kDelivered, 2, 0, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kRedelivered, 5003, 2, "w1", "1-0", "XREADGROUP 0", 0},
  };
  c.violations = {{VerdictKind::kLost, "order:1", "stranded", "x", 0}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  ASSERT_EQ(story.size(), 3u);
  EXPECT_EQ(story[1], "5 s later w1 starts again and re-reads its own pending 1-0 (XREADGROUP 0).");
}

// A crash after both the side effect and XACK is told without a standing:
// the worker no longer holds the event, and it was neither "before XACK"
// nor "after XACK and before the side effect". Here a restart from an RDB
// saved before the XACK brings the entry back pending, and w1 runs the
// effect again.
TEST(StoryTest, ACrashAfterTheEffectAndXackIsNotToldAsBeforeEither) {
  CaseReport c;
  c.trace = {
      {2, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events >", "[...]"},
      {3, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
      {13, "w1", LineKind::kRedis, "XACK events workers 1-0", "1"},
      {14, "w1", LineKind::kFault, "!crash at after-ack (replacement starts in 5000 ms)", "", LineEvent::kCrash, {},
       "after-ack"},
      {20, "fault", LineKind::kFault, "!restart @20ms", "", LineEvent::kScheduledFault, {}, "", "restart"},
      {5014, "w1", LineKind::kLifecycle, "starts", "", LineEvent::kStart},
      {5015, "w1", LineKind::kRedis, "XREADGROUP GROUP workers w1 COUNT 10 STREAMS events 0", "[...]"},
      {5016, "w1", LineKind::kExternal, "ext apply order:1", "ok"},
  };
  c.histories["order:1"] = {
      {HistoryKind::kDelivered, 2, 0, "w1", "1-0", "XREADGROUP >", 0},
      {HistoryKind::kEffect, 3, 1, "w1", "1-0", "side effect (external)", 0, "", "", "external"},
      {HistoryKind::kAcked, 13, 2, "w1", "1-0", "XACK removed it from the PEL", 0},
      {HistoryKind::kCrash, 14, 3, "w1", "", "after-ack", 0, "", "after-ack"},
      {HistoryKind::kServerRestart, 20, 4, "fault", "", "redis-server killed and restarted (persistence rdb)", 0,
       "", "", "", "", "rdb"},
      {HistoryKind::kRedelivered, 5015, 6, "w1", "1-0", "XREADGROUP 0", 0},
      {HistoryKind::kEffect, 5016, 7, "w1", "1-0", "side effect (external)", 0, "", "", "external"},
  };
  c.violations = {{VerdictKind::kDuplicate, "order:1", "server-data-loss", "ran twice", 2}};
  const std::vector<std::string> story = Story(c);
  SCOPED_TRACE(Dump(story));
  const std::vector<size_t> crash = Find(story, "w1 crashes at after-ack");
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_EQ(story[crash[0]], "w1 crashes at after-ack.");
  EXPECT_TRUE(Find(story, "before the side effect").empty());
  EXPECT_TRUE(Find(story, "before XACK").empty());
  EXPECT_NE(story.back().find("→ duplicate of order:1 (2 effects)"), std::string::npos);
}

TEST(PathLinesTest, NoDedupeFollowsTheEventThroughTheCrash) {
  const CaseReport& c = NoDedupeCase();
  const std::vector<int64_t> path = PathLines(c);
  ASSERT_FALSE(path.empty());
  std::vector<std::string> shown;
  for (int64_t l : path) shown.push_back(c.trace[static_cast<size_t>(l)].actor + " " + c.trace[static_cast<size_t>(l)].request);
  const auto has = [&](const std::string& needle) {
    return std::any_of(shown.begin(), shown.end(), [&](const std::string& s) { return s.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has("p1 XADD events 0-1"));
  EXPECT_TRUE(has("w1 ext apply order:1"));
  EXPECT_TRUE(has("w1 !crash at after-effect"));
  EXPECT_TRUE(has("w1 starts again"));
  EXPECT_TRUE(has("w1 XACK events workers 0-1"));
  EXPECT_FALSE(has("setup XGROUP CREATE"));
  EXPECT_TRUE(std::is_sorted(path.begin(), path.end()));
}

// A consumer that polls: 300 identical steps on the path read as one row
// with its count and span, in every format, and the path's first and
// other steps stay as they were.
TEST(PathLinesTest, RepeatedIdenticalStepsAreOneRowInEveryFormat) {
  CaseReport c = NoDedupeCase();
  const size_t before = FoldedPath(c).size();
  const auto first = static_cast<int64_t>(c.trace.size());
  AppendIdenticalPolls(&c, 300, 10);
  const std::vector<PathRow> rows = FoldedPath(c);
  ASSERT_EQ(rows.size(), before + 1);
  EXPECT_EQ(rows.back().line, first);
  EXPECT_EQ(rows.back().repeats, 299);
  EXPECT_EQ(rows.back().last, first + 299);
  const std::string said = fmt::format(" … and 299 more identical to #{} ({})", first + 299, FormatDuration(2990));
  EXPECT_EQ(RepeatsText(c, rows.back()), said);
  RunConfig config = RunConfig::For(*FindProtocol("no-dedupe"));
  const Report r = ReportOf({CheckFromCase(config, c)});
  EXPECT_NE(RenderText(r, /*color=*/false).find(said), std::string::npos);
  EXPECT_NE(RenderMarkdown(r).find(said), std::string::npos);
  EXPECT_NE(RenderJunit(r).find(said), std::string::npos);
  EXPECT_NE(RenderHtml(r).find("and 299 more identical"), std::string::npos);
  EXPECT_EQ(RenderText(r, false).find(fmt::format("#{} ", first + 1)), std::string::npos) << "folded away";
}

TEST(CoverageRowsTest, FlagsSitesThatNeverFired) {
  CheckReport k;
  k.fired_totals = {{"crash@after-effect", 3}, {"crash@after-read", 0}};
  k.never_fired = {"crash@after-read", "xdel"};
  const std::vector<CoverageRow> rows = CoverageRows(k);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].site, "crash@after-effect");
  EXPECT_EQ(rows[0].fired, 3);
  EXPECT_FALSE(rows[0].never_fired);
  EXPECT_TRUE(rows[1].never_fired);
  EXPECT_EQ(rows[2].site, "xdel");
  EXPECT_TRUE(rows[2].never_fired);
}

TEST(CoverageRowsTest, FallsBackToTheCounterexample) {
  CheckReport k;
  k.counterexample.emplace();
  k.counterexample->coverage.enabled = {"crash@after-ack", "crash@after-effect"};
  k.counterexample->coverage.fired = {{"crash@after-effect", 1}};
  const std::vector<CoverageRow> rows = CoverageRows(k);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].site, "crash@after-ack");
  EXPECT_TRUE(rows[0].never_fired);
  EXPECT_EQ(rows[1].site, "crash@after-effect");
  EXPECT_EQ(rows[1].fired, 1);
  EXPECT_FALSE(rows[1].never_fired) << "it fired";
}

TEST(FormatDurationTest, ReadsWell) {
  EXPECT_EQ(FormatDuration(7), "7 ms");
  EXPECT_EQ(FormatDuration(1000), "1 s");
  EXPECT_EQ(FormatDuration(2500), "2.5 s");
  EXPECT_EQ(FormatDuration(5000), "5 s");
  EXPECT_EQ(FormatDuration(30004), "30 s");
  // Each unit up to just below the next one's first value, at both edges.
  EXPECT_EQ(FormatDuration(999), "999 ms");
  EXPECT_EQ(FormatDuration(9949), "9.9 s");
  EXPECT_EQ(FormatDuration(9999), "10 s");
  EXPECT_EQ(FormatDuration(10'000), "10 s");
  EXPECT_EQ(FormatDuration(599'499), "599 s");
  EXPECT_EQ(FormatDuration(600'000), "10 min");
  EXPECT_EQ(FormatDuration(720000), "12 min");
  EXPECT_EQ(FormatDuration(629999), "10 min");  // to the nearest minute, half a minute up
  EXPECT_EQ(FormatDuration(630000), "11 min");
}

// Every format counts with Count: one is singular, none and many plural.
TEST(CountTest, OneIsSingularAndNoneOrManyArePlural) {
  EXPECT_EQ(Count(0, "worker"), "0 workers");
  EXPECT_EQ(Count(1, "case"), "1 case");
  EXPECT_EQ(Count(3, "failed attempt"), "3 failed attempts");
}

TEST(SummaryTest, CountsMatchedChecks) {
  Report r;
  EXPECT_EQ(Summary(r), "0 of 0 checks matched their expectation");
  r.checks.resize(1);
  r.checks[0].matched = true;
  EXPECT_EQ(Summary(r), "1 of 1 check matched its expectation");
}

}  // namespace
}  // namespace xackly::report
