// The one recogniser of stream commands, without a server: each test hands
// the feed a command and the reply Redis would give (and, for commands the
// oracle cannot see into, the replies of its read-back), then checks what
// the oracle's model and judgement make of it. The rule under test: a
// correct protocol is never reported broken because the oracle did not
// understand a command.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "sim/oracle.h"
#include "sim/oracle_feed.h"
#include "sim/worker.h"

namespace xackly {
namespace {

using Argv = std::vector<std::string>;

Reply Str(const std::string& s) { return Reply::String(s); }
Reply Int(int64_t n) { return Reply::Integer(n); }
Reply Arr(std::vector<Reply> e) { return Reply::Array(std::move(e)); }
std::string Id(int n) { return std::to_string(n) + "-0"; }
// [id, [event_id, order:n]]
Reply EntryReply(int n) { return Arr({Str(Id(n)), Arr({Str("event_id"), Str(EventId(n))})}); }
// [id, consumer, idle, deliveries]
Reply PendingReply(int n, const std::string& consumer) {
  return Arr({Str(Id(n)), Str(consumer), Int(0), Int(1)});
}
// XINFO GROUPS with one group "workers" at `last`.
Reply GroupsReply(const std::string& last) {
  return Arr({Arr({Str("name"), Str("workers"), Str("consumers"), Int(1), Str("pending"), Int(0),
                   Str("last-delivered-id"), Str(last)})});
}

class OracleFeedTest : public ::testing::Test {
 protected:
  OracleFeedTest() : oracle_(3), feed_(&oracle_, &ledger_, &env_, [this](const auto& c) { return Read(c); }) {
    env_.protocol = &protocol_;
    env_.names = &names_;
  }

  // The feed's read-back: answers from `reads_`, in order, and records what was asked.
  Result<std::vector<Reply>> Read(const std::vector<std::vector<std::string>>& commands) {
    std::vector<Reply> out;
    for (const auto& c : commands) {
      asked_.push_back(c[0]);
      if (reads_.empty()) return Status::Internal("unexpected read " + c[0]);
      out.push_back(std::move(reads_.front()));
      reads_.pop_front();
    }
    return out;
  }

  // `argv` sent by worker `who` (slot = name) at `t_ms`, `reply` its real reply.
  OracleFeed::Observed Send(const Argv& argv, Reply reply, const std::string& who = "w1", int64_t t_ms = 1) {
    Step s;
    s.op = Op::kCommand;
    s.argv = argv;
    s.reply = std::move(reply);
    Result<OracleFeed::Observed> r = feed_.Redis(t_ms, {who, who}, s, /*reply_lost=*/false);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : OracleFeed::Observed{};
  }
  void Produce(int n) { Send({"XADD", "events", Id(n), "event_id", EventId(n)}, Str(Id(n)), "p1"); }
  void Read(int n, const std::string& consumer) {
    Send({"XREADGROUP", "GROUP", "workers", consumer, "COUNT", "10", "STREAMS", "events", ">"},
         Arr({Arr({Str("events"), Arr({EntryReply(n)})})}), consumer);
  }
  void Effect(int n, const std::string& consumer) {
    EffectRecord r{EventId(n), Id(n), consumer, 5, "sql"};
    ledger_.Record(r);
    oracle_.Effect(r);
  }
  // The final PEL holds exactly `pending` (id, owner); judged with w1, w2 alive.
  std::vector<Violation> Judge(std::vector<PendingRow> pending = {}) {
    final_.pending = std::move(pending);
    final_.live_consumers = {"w1", "w2"};
    return oracle_.Judge(final_, ledger_);
  }
  std::vector<HistoryKind> Kinds(int n) {
    std::vector<HistoryKind> out;
    for (const HistoryItem& i : oracle_.HistoryOf(EventId(n))) out.push_back(i.kind);
    return out;
  }

  ProtocolDef protocol_;
  WorldNames names_;
  ActorEnv env_;
  Oracle oracle_;
  EffectLedger ledger_;
  OracleFeed feed_;
  std::deque<Reply> reads_;
  std::vector<std::string> asked_;
  Oracle::FinalState final_;
};

TEST_F(OracleFeedTest, ProducedEventsWakeWorkersAndOnlyTheRunsStreamCounts) {
  EXPECT_EQ(Send({"XADD", "events", "1-0", "event_id", "order:1"}, Str("1-0"), "p1").produced, 1);
  EXPECT_EQ(Send({"XADD", "outbox", "*", "event_id", "order:2"}, Str("9-0"), "w1").produced, 0);
  EXPECT_EQ(oracle_.live_count(), 1u);
}

TEST_F(OracleFeedTest, ReadOfSeveralStreamsAttributesEachEntryToItsStream) {
  Produce(1);
  Produce(2);
  // events:retry holds an entry with the same ID and an event_id: not ours.
  Send({"XREADGROUP", "GROUP", "workers", "w1", "STREAMS", "events:retry", "events", ">", "0"},
       Arr({Arr({Str("events:retry"), Arr({EntryReply(2)})}), Arr({Str("events"), Arr({EntryReply(1)})})}));
  std::vector<HistoryKind> one = Kinds(1);
  EXPECT_NE(std::find(one.begin(), one.end(), HistoryKind::kRedelivered), one.end())
      << "the id for `events` is \"0\": own pending";
  std::vector<HistoryKind> two = Kinds(2);
  EXPECT_EQ(std::find(two.begin(), two.end(), HistoryKind::kRedelivered), two.end());
  EXPECT_EQ(std::find(two.begin(), two.end(), HistoryKind::kDelivered), two.end());
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {{Id(1), "w1", 0, 1}}}).empty());
}

TEST_F(OracleFeedTest, ReadOfAnotherGroupIsNotADeliveryOfOurs) {
  Produce(1);
  Send({"XREADGROUP", "GROUP", "audit", "a1", "STREAMS", "events", ">"},
       Arr({Arr({Str("events"), Arr({EntryReply(1)})})}));
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
  EXPECT_FALSE(oracle_.NothingLeftToDeliver());  // still unread by `workers`
}

// Another group's claim of the run's stream, XCLAIM or XAUTOCLAIM, hands
// its entries to the claiming worker as that group's: a w:effect of one is
// then refused, naming the group (Simulation::CheckEffect), instead of
// judged as a second run of the event in the run's group. A JUSTID claim
// hands over no entry, and none of it is a delivery of ours.
TEST_F(OracleFeedTest, AnEntryClaimedThroughAnotherGroupIsThatGroups) {
  for (int n = 1; n <= 3; ++n) Produce(n);
  Send({"XAUTOCLAIM", "events", "indexer", "w1", "0", "0-0"}, Arr({Str("0-0"), Arr({EntryReply(1)}), Arr({})}), "w1");
  Send({"XCLAIM", "events", "indexer", "w2", "0", Id(2)}, Arr({EntryReply(2)}), "w2");
  Send({"XAUTOCLAIM", "events", "indexer", "w3", "0", "0-0", "JUSTID"}, Arr({Str("0-0"), Arr({Str(Id(3))}), Arr({})}),
       "w3");
  EXPECT_EQ(feed_.OtherGroupOf("w1", EventId(1)).value_or("none"), "indexer") << "XAUTOCLAIM";
  EXPECT_EQ(feed_.OtherGroupOf("w2", EventId(2)).value_or("none"), "indexer") << "XCLAIM";
  EXPECT_EQ(feed_.OtherGroupOf("w3", EventId(3)).value_or("none"), "none") << "JUSTID";
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
  EXPECT_FALSE(oracle_.NothingLeftToDeliver()) << "all three still unread by `workers`";
}

TEST_F(OracleFeedTest, XclaimJustidMovesOwnershipWithoutADelivery) {
  Produce(1);
  Read(1, "w1");
  Send({"XCLAIM", "events", "workers", "w2", "1000", Id(1), "JUSTID"}, Arr({Str(Id(1))}), "w2");
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {{Id(1), "w2", 0, 1}}}).empty());
  // A crash of the new owner now touches the event.
  oracle_.WorkerFault(HistoryKind::kCrash, 9, "w2", "after-XCLAIM", {});
  std::vector<HistoryKind> k = Kinds(1);
  EXPECT_NE(std::find(k.begin(), k.end(), HistoryKind::kCrash), k.end());
  EXPECT_EQ(std::count(k.begin(), k.end(), HistoryKind::kDelivered), 1);
}

TEST_F(OracleFeedTest, XclaimOfADeletedPayloadDropsItFromThePel) {
  Produce(1);
  Read(1, "w1");
  Send({"XDEL", "events", Id(1)}, Int(1), "j1");
  Send({"XCLAIM", "events", "workers", "w2", "0", Id(1)}, Arr({}), "w2");
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
}

TEST_F(OracleFeedTest, XackOfSeveralIdsAcksEveryOne) {
  for (int n = 1; n <= 3; ++n) Produce(n);
  Send({"XREADGROUP", "GROUP", "workers", "w1", "STREAMS", "events", ">"},
       Arr({Arr({Str("events"), Arr({EntryReply(1), EntryReply(2), EntryReply(3)})})}));
  Send({"XACK", "events", "workers", Id(1), Id(2), Id(3)}, Int(3));
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
  EXPECT_TRUE(oracle_.NothingLeftToDeliver());
}

TEST_F(OracleFeedTest, MultiQueuesUntilExecAndDiscardForgets) {
  Produce(1);
  Read(1, "w1");
  Send({"MULTI"}, Reply::StatusText("OK"));
  EXPECT_TRUE(feed_.InMulti("w1"));
  Send({"XACK", "events", "workers", Id(1)}, Reply::StatusText("QUEUED"));
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {{Id(1), "w1", 0, 1}}}).empty()) << "not acked before EXEC";
  Send({"EXEC"}, Arr({Int(1)}));
  EXPECT_FALSE(feed_.InMulti("w1"));
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());

  Produce(2);
  Read(2, "w1");
  Send({"MULTI"}, Reply::StatusText("OK"));
  Send({"XACK", "events", "workers", Id(2)}, Reply::StatusText("QUEUED"));
  Send({"DISCARD"}, Reply::StatusText("OK"));
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {{Id(2), "w1", 0, 1}}}).empty());
}

TEST_F(OracleFeedTest, XaddWithMaxlenReadsTheLengthBackAndDeletesTheOldest) {
  Produce(1);
  Produce(2);
  reads_ = {Int(2)};
  Send({"XADD", "events", "MAXLEN", "~", "2", Id(3), "event_id", EventId(3)}, Str(Id(3)), "p1");
  ASSERT_EQ(asked_, std::vector<std::string>{"XLEN"});
  EXPECT_EQ(oracle_.OldestLive(5), (std::vector<std::string>{Id(2), Id(3)}));
}

// The user's EVAL acks inside: the read-back sees the PEL emptied, so the
// model agrees with Redis and the run can settle.
TEST_F(OracleFeedTest, AcksInsideEvalAreReadBack) {
  Produce(1);
  Read(1, "w1");
  Effect(1, "w1");
  reads_ = {Arr({}), GroupsReply(Id(1)), Int(1), Arr({})};
  Send({"EVAL", "redis.call('XACK', KEYS[1], 'workers', ARGV[1])", "1", "events", Id(1)}, Int(1));
  EXPECT_EQ(asked_, (std::vector<std::string>{"XPENDING", "XINFO", "XLEN", "XRANGE"}));
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
  for (const Violation& v : Judge()) EXPECT_NE(v.event_id, "order:1") << v.detail;
}

// What the read-back learns names the EVAL it happened in, with its source
// cut to the first line: a story or a verdict that quotes it stays
// readable, and a long script is not printed whole (the trace line keeps it).
TEST_F(OracleFeedTest, AnEvalIsNamedByItsFirstSourceLineNotItsWholeSource) {
  Produce(1);
  Read(1, "w1");
  reads_ = {Arr({}), GroupsReply(Id(1)), Int(1), Arr({})};
  const std::string source =
      "local done = redis.call('SET', KEYS[2], 1, 'NX')\n"
      "if done then redis.call('RPUSH', KEYS[3], ARGV[2]) end\n"
      "return redis.call('XACK', KEYS[1], 'workers', ARGV[1])";
  Send({"EVAL", source, "1", "events", Id(1)}, Int(1));
  std::string acked;
  for (const HistoryItem& i : oracle_.HistoryOf(EventId(1))) {
    if (i.kind == HistoryKind::kAcked) acked = i.detail;
  }
  EXPECT_NE(acked.find("EVAL \"local done = redis.call('SET', KEYS[2], 1, 'NX')... (3 lines)\" 1 events"),
            std::string::npos)
      << acked;
  EXPECT_EQ(acked.find("RPUSH"), std::string::npos) << acked;
}

// A script's `XADD *` takes its ID from the server's clock: the feed keeps
// the stream's top, which the built-in producer's next explicit ID must
// exceed (Simulation::ExecuteRedis).
TEST_F(OracleFeedTest, TheStreamsTopIsEveryIdAddedToIt) {
  EXPECT_EQ(feed_.stream_top(), (StreamId{0, 0}));
  Produce(1);
  EXPECT_EQ(feed_.stream_top(), StreamId::Parse(Id(1)));
  Send({"XADD", "events", "*", "note", "hello"}, Str("1700000001001-0"), "w1");  // no event: still the top
  EXPECT_EQ(feed_.stream_top(), (StreamId{1700000001001, 0}));
  Send({"XADD", "elsewhere", "*", "note", "hello"}, Str("1800000000000-0"), "w1");  // another stream
  EXPECT_EQ(feed_.stream_top(), (StreamId{1700000001001, 0}));
}

// A key the script sets with a TTL that names an event is that event's
// done-record with the TTL; one set without a TTL, or not set (NX on an
// existing key), is none.
TEST_F(OracleFeedTest, AKeyNamingAnEventSetWithATtlIsItsDoneRecord) {
  Produce(1);
  Produce(2);
  auto records = [&](int n) {
    std::vector<int64_t> ttls;
    for (const HistoryItem& i : oracle_.HistoryOf(EventId(n))) {
      if (i.kind == HistoryKind::kDedupeRecord) ttls.push_back(i.value);
    }
    return ttls;
  };
  Send({"SET", "done:order:12", "1", "NX", "EX", "5"}, Reply::StatusText("OK"));  // names no event of the run
  EXPECT_TRUE(records(1).empty());
  Send({"SET", "done:" + EventId(1), "1", "NX", "EX", "3"}, Reply::StatusText("OK"));
  EXPECT_EQ(records(1), std::vector<int64_t>{3000});
  Send({"SET", "done:" + EventId(2), "1", "NX"}, Reply::StatusText("OK"));  // no TTL
  Send({"SET", "lock:" + EventId(2), "1", "NX", "PX", "500"}, Reply::Nil());  // not set
  EXPECT_TRUE(records(2).empty());
  Send({"PEXPIRE", "done:" + EventId(2), "2000"}, Int(1));
  EXPECT_EQ(records(2), std::vector<int64_t>{2000});
  // Queued in a MULTI (answered QUEUED, as if OK) and discarded: never set.
  Produce(3);
  Send({"MULTI"}, Reply::StatusText("OK"));
  Send({"SET", "done:" + EventId(3), "1", "NX", "EX", "3"}, Reply::StatusText("QUEUED"));
  Send({"DISCARD"}, Reply::StatusText("OK"));
  EXPECT_TRUE(records(3).empty());
  // After the DISCARD the connection is out of its MULTI: the same SET now
  // runs at once and is the record. (A DISCARD without a MULTI changes
  // nothing.)
  Send({"DISCARD"}, Reply::Error("ERR DISCARD without MULTI"));
  Send({"SET", "done:" + EventId(3), "1", "NX", "EX", "4"}, Reply::StatusText("OK"));
  EXPECT_EQ(records(3), std::vector<int64_t>{4000});
}

TEST_F(OracleFeedTest, DeliveriesAndClaimsInsideEvalAreReadBack) {
  Produce(1);
  Produce(2);
  Read(1, "w1");
  reads_ = {Arr({PendingReply(1, "w2"), PendingReply(2, "w2")}), GroupsReply(Id(2)), Int(2), Arr({})};
  Send({"EVAL", "...", "1", "events"}, Int(1), "w2");
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {{Id(1), "w2", 0, 2}, {Id(2), "w2", 0, 1}}}).empty());
  std::vector<HistoryKind> one = Kinds(1);
  EXPECT_NE(std::find(one.begin(), one.end(), HistoryKind::kClaimed), one.end());
  std::vector<HistoryKind> two = Kinds(2);
  EXPECT_NE(std::find(two.begin(), two.end(), HistoryKind::kDelivered), two.end());
}

// A plain XREAD (no group) of the run's stream hands its entries to a
// reader that keeps its own position: read by position, not delivered.
TEST_F(OracleFeedTest, APlainXreadOfTheStreamIsAReadByPosition) {
  Produce(1);
  Send({"XREAD", "COUNT", "10", "STREAMS", "events", "0"}, Arr({Arr({Str("events"), Arr({EntryReply(1)})})}));
  std::vector<HistoryKind> one = Kinds(1);
  EXPECT_NE(std::find(one.begin(), one.end(), HistoryKind::kReadByPosition), one.end());
  EXPECT_EQ(std::find(one.begin(), one.end(), HistoryKind::kDelivered), one.end());
}

// XREADGROUP ... NOACK hands the entry over without a PEL row: the model
// must not wait for an XACK that cannot come, and a crash before the
// effect is blamed on NOACK, not on an entry that "left the PEL".
TEST_F(OracleFeedTest, ANoAckReadIsDeliveredButNeverPending) {
  Produce(1);
  Send({"XREADGROUP", "GROUP", "workers", "w1", "COUNT", "10", "NOACK", "STREAMS", "events", ">"},
       Arr({Arr({Str("events"), Arr({EntryReply(1)})})}));
  EXPECT_TRUE(oracle_.ModelMismatches({.pending = {}}).empty());
  std::vector<Violation> v = Judge();
  ASSERT_GE(v.size(), 1u);
  EXPECT_EQ(v[0].event_id, "order:1");
  EXPECT_EQ(v[0].cause, "read-noack") << v[0].detail;
  EXPECT_TRUE(IsKnownCause(VerdictKind::kLost, v[0].cause));
}

// The producer's XADDs inside EVAL: the read-back learns the entries, so a
// lost event is blamed on what really happened, not "never-produced".
TEST_F(OracleFeedTest, XaddsInsideEvalAreReadBackAsProduced) {
  reads_ = {Arr({}), GroupsReply("0-0"), Int(2), Arr({EntryReply(1), EntryReply(2)})};
  EXPECT_EQ(Send({"EVAL", "...", "1", "events"}, Int(2), "p1").produced, 0);
  EXPECT_EQ(oracle_.live_count(), 2u);
  Read(1, "w1");
  Effect(1, "w1");
  Send({"XACK", "events", "workers", Id(1)}, Int(1));
  std::vector<Violation> v = Judge();
  ASSERT_EQ(v.size(), 2u);  // order:2 (in the stream, unread) and order:3 (never added)
  EXPECT_EQ(v[0].event_id, "order:2");
  EXPECT_EQ(v[0].cause, "never-delivered");
  EXPECT_EQ(v[1].cause, "never-produced");
}

// Without the read-back the model would think every entry delivered and the
// run would settle early, leaving the re-deliverable entries for a false
// `lost`.
TEST_F(OracleFeedTest, SetidBackwardsMakesEntriesDeliverableAgain) {
  Produce(1);
  Read(1, "w1");
  Send({"XACK", "events", "workers", Id(1)}, Int(1));
  // (every event produced, nothing pending: otherwise settled)
  Produce(2);
  Produce(3);
  Send({"XREADGROUP", "GROUP", "workers", "w1", "STREAMS", "events", ">"},
       Arr({Arr({Str("events"), Arr({EntryReply(2), EntryReply(3)})})}));
  Send({"XACK", "events", "workers", Id(2), Id(3)}, Int(2));
  ASSERT_TRUE(oracle_.NothingLeftToDeliver());
  reads_ = {Arr({}), GroupsReply("0-0"), Int(3), Arr({})};
  Send({"XGROUP", "SETID", "events", "workers", "0"}, Reply::StatusText("OK"));
  EXPECT_FALSE(oracle_.NothingLeftToDeliver());
}

// XREADGROUP > never reads a pending entry: moving the position back below
// one does not make it deliverable again (only its claim or its owner's
// own pending read does); once it is acked, nothing is left.
TEST_F(OracleFeedTest, SetidBackwardsLeavesAPendingEntryWithItsOwner) {
  for (int n = 1; n <= 3; ++n) {
    Produce(n);
    Read(n, "w1");
  }
  Send({"XACK", "events", "workers", Id(1), Id(2)}, Int(2));
  reads_ = {Arr({PendingReply(3, "w1")}), GroupsReply(Id(2)), Int(3), Arr({})};
  Send({"XGROUP", "SETID", "events", "workers", Id(2)}, Reply::StatusText("OK"));
  Send({"XACK", "events", "workers", Id(3)}, Int(1));
  EXPECT_TRUE(oracle_.NothingLeftToDeliver()) << "order:3 was pending, not rewound";
}

// Inside EVAL, an entry's first delivery is progress (the run's quiet
// window counts from it); the same entry claimed by another consumer
// later is not, so a script that only moves entries between owners lets
// the run end.
TEST_F(OracleFeedTest, AFirstDeliveryInsideEvalIsProgressAClaimIsNot) {
  Produce(1);
  reads_ = {Arr({PendingReply(1, "w1")}), GroupsReply(Id(1)), Int(1), Arr({})};
  Send({"EVAL", "...", "1", "events"}, Int(1), "w1", 5000);
  EXPECT_EQ(oracle_.last_progress_ms(), 5000);
  EXPECT_EQ(Kinds(1), (std::vector<HistoryKind>{HistoryKind::kProduced, HistoryKind::kDelivered}));
  reads_ = {Arr({PendingReply(1, "w2")}), GroupsReply(Id(1)), Int(1), Arr({})};
  Send({"EVAL", "...", "1", "events"}, Int(1), "w2", 9000);
  EXPECT_EQ(oracle_.last_progress_ms(), 5000);
  EXPECT_EQ(Kinds(1).back(), HistoryKind::kClaimed);
}

TEST_F(OracleFeedTest, DestroyedGroupEmptiesThePelModel) {
  Produce(1);
  Read(1, "w1");
  reads_ = {Reply::Error("NOGROUP No such key 'events' or consumer group 'workers'"), Arr({}), Int(1), Arr({})};
  Send({"XGROUP", "DESTROY", "events", "workers"}, Int(1));
  EXPECT_TRUE(oracle_.ModelMismatches({}).empty());
  EXPECT_FALSE(oracle_.NothingLeftToDeliver()) << "order:1 will be delivered again to a new group";
}

TEST_F(OracleFeedTest, CreateconsumerAndReadsNeedNoReadBack) {
  Produce(1);
  Send({"XGROUP", "CREATECONSUMER", "events", "workers", "w9"}, Int(1));
  Send({"XPENDING", "events", "workers"}, Arr({Int(0), Reply::Nil(), Reply::Nil(), Reply::Nil()}));
  Send({"XRANGE", "events", "-", "+"}, Arr({EntryReply(1)}));
  Send({"EVAL_RO", "return 1", "1", "events"}, Int(1));
  EXPECT_TRUE(asked_.empty());
}

TEST_F(OracleFeedTest, EntriesDeletedInsideEvalAreReadBackAsDeleted) {
  Produce(1);
  Produce(2);
  reads_ = {Arr({}), GroupsReply("0-0"), Int(1), Arr({}), Arr({EntryReply(2)})};
  Send({"FCALL", "trim_one", "1", "events"}, Int(1), "j1");
  EXPECT_EQ(oracle_.OldestLive(5), std::vector<std::string>{Id(2)});
  std::vector<Violation> v = Judge();
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].event_id, "order:1");
  EXPECT_EQ(v[0].cause, "payload-deleted");
}

// An EVAL that replaces the stream with a key of another type: XLEN and
// XRANGE answer WRONGTYPE. The stream is gone, so its one live payload is
// gone, and the event no worker had handled is lost by the deletion (a
// failed XLEN counts no entries; taken as one, it would match the model's
// one live entry and the loss would go unseen).
TEST_F(OracleFeedTest, AStreamReplacedByAnotherTypeInsideEvalLosesItsLivePayloads) {
  Produce(1);
  const Reply wrong_type = Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value");
  reads_ = {wrong_type, wrong_type, wrong_type, wrong_type, wrong_type};
  Send({"EVAL", "redis.call('DEL', KEYS[1]) redis.call('SET', KEYS[1], 'x')", "1", "events"}, Reply::Nil(), "j1");
  EXPECT_EQ(asked_, (std::vector<std::string>{"XPENDING", "XINFO", "XLEN", "XRANGE", "XRANGE"}));
  EXPECT_TRUE(oracle_.OldestLive(5).empty());
  bool judged = false;
  for (const Violation& v : Judge()) {
    if (v.event_id != "order:1") continue;  // order:2 and :3 were never produced
    judged = true;
    EXPECT_EQ(v.cause, "payload-deleted") << v.detail;
  }
  EXPECT_TRUE(judged) << "order:1 lost with the stream, unjudged";
}

TEST_F(OracleFeedTest, AFailedReadBackIsAHarnessFailure) {
  Step s;
  s.op = Op::kCommand;
  s.argv = {"EVAL", "return 1", "1", "events"};
  s.reply = Int(1);
  Result<OracleFeed::Observed> r = feed_.Redis(1, {"w1", "w1"}, s, false);
  EXPECT_FALSE(r.ok());
}

// A catalog step carries its event: the feed takes it from the step, not
// from the argv (a dead letter of a deleted entry has no event_id field).
TEST_F(OracleFeedTest, CatalogStepsGiveTheirEventAndEntry) {
  Produce(1);
  Step s;
  s.op = Op::kDeadLetter;
  s.argv = {"XADD", "events:dlq", "*", "source_id", Id(1)};
  s.event_id = EventId(1);
  s.stream_id = Id(1);
  s.reply = Str("7-0");
  ASSERT_TRUE(feed_.Redis(1, {"w1", "w1"}, s, false).ok());
  std::vector<HistoryKind> k = Kinds(1);
  EXPECT_NE(std::find(k.begin(), k.end(), HistoryKind::kDeadLettered), k.end());
}

}  // namespace
}  // namespace xackly
