// ReplicatedServer: a failover drops exactly the writes the lag names, as
// the primary propagated them; WAIT's answer is true of the replica; the
// same commands drop the same writes every time; connections made before a
// failover are dead and new ones reach the promoted replica.
#include "harness/replicated_server.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/harness/test_util.h"

namespace xackly {
namespace {

std::unique_ptr<ReplicatedServer> StartReplicated() {
  Result<std::unique_ptr<ReplicatedServer>> s = ReplicatedServer::Start(TestServerOptions());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

Reply Send(Connection& c, std::vector<std::string> argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  Result<Reply> r = c.Call(std::span<const std::string_view>(views));
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << r.status().ToString();
  return r.ok() ? *r : Reply::Error("call failed");
}

// The dropped writes as people read them.
std::vector<std::string> Rendered(const FailoverOutcome& out) {
  std::vector<std::string> text;
  for (const ReplicatedWrite& w : out.dropped) text.push_back(w.Render());
  return text;
}

// An entry, a group, a delivery to c1: four writes as the primary
// propagates them (XADD; XGROUP CREATE; the delivery as one MULTI block).
void AddAndDeliver(Connection& c) {
  Send(c, {"XADD", "s", "1-1", "k", "v"});
  Send(c, {"XGROUP", "CREATE", "s", "g", "0"});
  Send(c, {"XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">"});
  Send(c, {"XACK", "s", "g", "1-1"});
}

// After AddAndDeliver: a second entry, 2-1, delivered to `consumer` and
// left pending.
void AddPending(Connection& c, const std::string& consumer) {
  Send(c, {"XADD", "s", "2-1", "k", "w"});
  Send(c, {"XREADGROUP", "GROUP", "g", consumer, "COUNT", "1", "STREAMS", "s", ">"});
}

TEST(ReplicatedServerTest, AFailoverDropsTheLastWritesAsThePrimaryPropagatedThem) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  AddAndDeliver(**conn);
  Result<FailoverOutcome> out = server->Failover(2, false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // The delivery (XCLAIM ... FORCE JUSTID LASTID with XGROUP SETID, or the
  // server's own form of it) and the XACK: both gone.
  const std::vector<std::string> dropped = Rendered(*out);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_NE(dropped[0].find("s g"), std::string::npos) << dropped[0];
  EXPECT_EQ(dropped[1], "XACK s g 1-1");
  // The connection made before is dead; a new one reaches the promoted
  // replica, where the entry is undelivered again.
  EXPECT_FALSE((*conn)->Call({"PING"}).ok() && (*conn)->alive());
  auto fresh = server->Connect();
  ASSERT_TRUE(fresh.ok());
  Reply again = Send(**fresh, {"XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", ">"});
  EXPECT_NE(again.Render().find("1-1"), std::string::npos) << again.Render();
}

// A lone DEL is how the primary propagates a key it expired, when its own
// expire cycle (real time) chooses: a failover never counts it among the
// writes it drops, so the kernel cannot decide what is lost. The lag skips
// it and drops the write before it.
TEST(ReplicatedServerTest, AFailoverNeverDropsALoneDel) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "kept", "1"});
  Send(**conn, {"SET", "dropped", "1"});
  Send(**conn, {"DEL", "kept"});
  Result<FailoverOutcome> out = server->Failover(1, false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Rendered(*out), std::vector<std::string>{"SET dropped 1"});
  auto fresh = server->Connect();
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(Send(**fresh, {"GET", "kept"}).is_nil());
  EXPECT_TRUE(Send(**fresh, {"GET", "dropped"}).is_nil());
}

TEST(ReplicatedServerTest, WaitIsTrueOfTheReplicaAndAFailoverCannotDropWhatItConfirmed) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  AddAndDeliver(**conn);
  Reply waited = Send(**conn, {"WAIT", "1", "0"});
  ASSERT_TRUE(waited.is_integer()) << waited.Render();
  EXPECT_EQ(waited.integer(), 1);
  Send(**conn, {"SET", "after", "1"});
  Result<FailoverOutcome> out = server->Failover(10, false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(Rendered(*out), std::vector<std::string>{"SET after 1"});
  auto fresh = server->Connect();
  ASSERT_TRUE(fresh.ok());
  Reply pending = Send(**fresh, {"XPENDING", "s", "g"});
  ASSERT_TRUE(pending.is_array() && !pending.elements().empty()) << pending.Render();
  EXPECT_EQ(pending.elements()[0].integer(), 0) << pending.Render();
  EXPECT_TRUE(Send(**fresh, {"GET", "after"}).is_nil());
}

// Two replicas, one lagging: what the other confirmed (its acknowledgement
// of a WAIT while one lags) survives a failover to the least-lagged
// replica, however many writes the seed drops, and is gone after a
// failover to the lagging one. A WAIT outside the lag counts both.
TEST(ReplicatedServerTest, WithTwoReplicasOnlyTheLaggingOnesPromotionDropsWhatTheOtherConfirmed) {
  for (const bool to_lagging : {false, true}) {
    SCOPED_TRACE(to_lagging ? "the lagging replica promoted" : "the least-lagged replica promoted");
    auto server = StartReplicated();
    ASSERT_NE(server, nullptr);
    server->SetReplicaCount(2);
    auto conn = server->Connect();
    ASSERT_TRUE(conn.ok());
    Reply both = Send(**conn, {"WAIT", "2", "0"});
    ASSERT_TRUE(both.is_integer()) << both.Render();
    EXPECT_EQ(both.integer(), 2);
    Send(**conn, {"SET", "confirmed", "1"});
    ASSERT_TRUE(server->ConfirmByOtherReplicas().ok());
    Send(**conn, {"SET", "unconfirmed", "1"});
    Result<FailoverOutcome> out = server->Failover(10, to_lagging);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Rendered(*out), to_lagging ? (std::vector<std::string>{"SET confirmed 1", "SET unconfirmed 1"})
                                         : (std::vector<std::string>{"SET unconfirmed 1"}));
    auto fresh = server->Connect();
    ASSERT_TRUE(fresh.ok());
    EXPECT_EQ(Send(**fresh, {"GET", "confirmed"}).is_nil(), to_lagging);
    EXPECT_TRUE(Send(**fresh, {"GET", "unconfirmed"}).is_nil());
  }
}

// What the other replicas confirmed is an index into the writes still to
// apply: a catch-up (a WAIT answered by all) moves it along, and a reset or
// a restart clears it, so it never keeps writes made after it.
TEST(ReplicatedServerTest, WhatTheOthersConfirmedFollowsCatchUpsResetsAndRestarts) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  server->SetReplicaCount(2);
  for (const char* between : {"WAIT", "Reset", "CrashAndRestart"}) {
    SCOPED_TRACE(between);
    auto conn = server->Connect();
    ASSERT_TRUE(conn.ok());
    Send(**conn, {"SET", "a", "1"});
    Send(**conn, {"SET", "b", "1"});
    ASSERT_TRUE(server->ConfirmByOtherReplicas().ok());
    if (std::string(between) == "WAIT") {
      EXPECT_EQ(Send(**conn, {"WAIT", "2", "0"}).integer(), 2);
    } else if (std::string(between) == "Reset") {
      ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
    } else {
      ASSERT_TRUE(server->CrashAndRestart().ok());
      conn = server->Connect();
      ASSERT_TRUE(conn.ok());
    }
    Send(**conn, {"SET", "c", "1"});
    Send(**conn, {"SET", "d", "1"});
    Result<FailoverOutcome> out = server->Failover(2, false);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Rendered(*out), (std::vector<std::string>{"SET c 1", "SET d 1"}));
  }
}

// With one replica there is no other to confirm anything: the lagging
// replica is the only one, and a failover with any lag drops as before.
TEST(ReplicatedServerTest, WithOneReplicaNoOtherReplicaConfirmsAWrite) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "k", "1"});
  ASSERT_TRUE(server->ConfirmByOtherReplicas().ok());
  Result<FailoverOutcome> out = server->Failover(1, false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Rendered(*out), std::vector<std::string>{"SET k 1"});
}

TEST(ReplicatedServerTest, TheSameCommandsDropTheSameWritesEveryTime) {
  std::vector<std::vector<std::string>> dropped;
  for (int run = 0; run < 2; ++run) {
    auto server = StartReplicated();
    ASSERT_NE(server, nullptr);
    for (int round = 0; round < 2; ++round) {  // a Reset between cases forgets the last case's writes
      ASSERT_TRUE(server->Reset(kDefaultStartEpochMs).ok());
      auto conn = server->Connect();
      ASSERT_TRUE(conn.ok());
      AddAndDeliver(**conn);
      Send(**conn, {"SET", "k", "v", "PX", "60000"});
      Result<FailoverOutcome> out = server->Failover(3, false);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      dropped.push_back(Rendered(*out));
    }
  }
  ASSERT_EQ(dropped[0].size(), 3u);
  EXPECT_EQ(dropped[0], dropped[1]);
  EXPECT_EQ(dropped[0], dropped[2]);
  EXPECT_EQ(dropped[0], dropped[3]);
  // SET ... PX is propagated with an absolute expiry.
  EXPECT_NE(dropped[0][2].find("PXAT"), std::string::npos) << dropped[0][2];
}

TEST(ReplicatedServerTest, ThePromotedPrimaryHasAReplicaAgainThatFollowsIt) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "a", "1"});
  ASSERT_TRUE(server->Failover(0, false).ok());
  conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "b", "2"});
  Result<FailoverOutcome> second = server->Failover(0, false);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->dropped.empty());
  conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ(Send(**conn, {"MGET", "a", "b"}).Render(), Reply::Array({Reply::String("1"), Reply::String("2")}).Render());
}

TEST(ReplicatedServerTest, AfterAPrimaryRestartTheReplicaHoldsWhatThePrimaryKept) {
  auto server = StartReplicated();  // persistence none: a restart keeps nothing
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "before", "1"});
  ASSERT_TRUE(server->CrashAndRestart().ok());
  conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"SET", "after", "1"});
  ASSERT_TRUE(server->Failover(0, false).ok());
  conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  EXPECT_TRUE(Send(**conn, {"GET", "before"}).is_nil());
  EXPECT_EQ(Send(**conn, {"GET", "after"}).Render(), Reply::String("1").Render());
}

// After a catch-up the replica holds what the primary holds, every kind of
// key included (a stream with its group and PEL, a hash, a set, a sorted
// set, a list, a key set with EX); a write that reached the replica without
// going through the primary is named, with both sides, as the servers'
// finding, also one past the 200 characters a difference shows.
TEST(ReplicatedServerTest, ACaughtUpReplicaHoldsWhatThePrimaryHoldsAndADifferenceIsNamed) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  AddAndDeliver(**conn);
  AddPending(**conn, "c2");
  Send(**conn, {"HSET", "h", "a", "1", "b", "2"});
  Send(**conn, {"ZADD", "z", "1", "a", "2", "b"});
  Send(**conn, {"SET", "long", std::string(300, 'x')});
  Send(**conn, {"SADD", "set", "x", "y", "z"});
  Send(**conn, {"SET", "done:1", "1", "EX", "60"});
  Send(**conn, {"RPUSH", "ledger", "e1", "e2"});
  Result<std::string> same = server->Divergence();
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, "");

  auto replica = server->replica().ConnectHarness();
  ASSERT_TRUE(replica.ok());
  Send(**replica, {"XACK", "s", "g", "2-1"});
  Send(**replica, {"SET", "stray", "1"});
  Send(**replica, {"SETRANGE", "long", "250", "y"});  // beyond what a difference shows of a value
  Result<std::string> diverged = server->Divergence();
  ASSERT_TRUE(diverged.ok()) << diverged.status().ToString();
  EXPECT_NE(diverged->find("key \"s\": the primary holds stream"), std::string::npos) << *diverged;
  EXPECT_NE(diverged->find("\"2-1\" \"c2\" x1"), std::string::npos) << *diverged;  // the primary's PEL row
  EXPECT_NE(diverged->find("key \"stray\": the primary holds no such key; the replica holds string \"1\""),
            std::string::npos)
      << *diverged;
  EXPECT_NE(diverged->find("key \"long\""), std::string::npos) << *diverged;
  EXPECT_EQ(diverged->find("key \"h\""), std::string::npos) << *diverged;
  EXPECT_EQ(diverged->find("key \"z\""), std::string::npos) << *diverged;
  EXPECT_EQ(diverged->find("done:1"), std::string::npos) << *diverged;
}

// A stream is shown as its entries in ID order, as XRANGE gives them (9-1
// before 10-1), not sorted as text: a set's or a hash's members have no
// order of their own and are sorted; a stream's have one.
TEST(ReplicatedServerTest, AStreamThatDiffersIsShownInIdOrder) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"XADD", "t", "9-1", "k", "v"});
  Send(**conn, {"XADD", "t", "10-1", "k", "v"});
  ASSERT_TRUE(server->Divergence().ok());
  auto replica = server->replica().ConnectHarness();
  ASSERT_TRUE(replica.ok());
  Send(**replica, {"XDEL", "t", "9-1"});
  Result<std::string> diverged = server->Divergence();
  ASSERT_TRUE(diverged.ok()) << diverged.status().ToString();
  const size_t nine = diverged->find("\"9-1\"");
  const size_t ten = diverged->find("\"10-1\"");
  ASSERT_NE(nine, std::string::npos) << *diverged;
  ASSERT_NE(ten, std::string::npos) << *diverged;
  EXPECT_LT(nine, ten) << *diverged;
}

// A hash that differs is shown as its field-value pairs, sorted by field
// (a server keeps no order), every pair whole: field, then its value.
TEST(ReplicatedServerTest, AHashThatDiffersIsShownAsItsSortedFieldValuePairs) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  Send(**conn, {"HSET", "h", "b", "2", "a", "1"});
  ASSERT_TRUE(server->Divergence().ok());
  auto replica = server->replica().ConnectHarness();
  ASSERT_TRUE(replica.ok());
  Send(**replica, {"HSET", "h", "c", "3"});
  Result<std::string> diverged = server->Divergence();
  ASSERT_TRUE(diverged.ok()) << diverged.status().ToString();
  EXPECT_NE(diverged->find("the primary holds hash {\"a\" \"1\", \"b\" \"2\"}"), std::string::npos) << *diverged;
  EXPECT_NE(diverged->find("the replica holds hash {\"a\" \"1\", \"b\" \"2\", \"c\" \"3\"}"), std::string::npos)
      << *diverged;
}

// A claim that finds its entry deleted drops it from the PEL on the primary
// (XAUTOCLAIM's third reply element); the replica must drop it too, or
// every replicated run with an xdel fault would end in a server finding.
TEST(ReplicatedServerTest, AClaimOfADeletedEntryLeavesBothServersAlike) {
  auto server = StartReplicated();
  ASSERT_NE(server, nullptr);
  auto conn = server->Connect();
  ASSERT_TRUE(conn.ok());
  AddAndDeliver(**conn);
  AddPending(**conn, "c1");
  Send(**conn, {"XDEL", "s", "2-1"});
  EXPECT_EQ(Send(**conn, {"XAUTOCLAIM", "s", "g", "c2", "0", "0-0"}).Render(),
            Reply::Array({Reply::String("0-0"), Reply::Array({}), Reply::Array({Reply::String("2-1")})}).Render());
  Result<std::string> diverged = server->Divergence();
  ASSERT_TRUE(diverged.ok()) << diverged.status().ToString();
  EXPECT_EQ(*diverged, "");
}

}  // namespace
}  // namespace xackly
