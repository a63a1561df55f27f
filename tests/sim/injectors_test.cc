// The scheduled injectors pick their victim by the group's position on a
// real redis-server. Each test drives the injector alone through a FaultHost
// on one connection, with the stream and the group set up by hand, and
// reads back which entry lost its payload: the fault model (sim/faults.cc)
// names the victim, and the report blames what it says was deleted.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/injectors.h"
#include "sim/stream.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// A FaultHost on one connection at virtual time 0: every harness call goes
// straight to the server; notes are kept for the test.
class ConnectionHost final : public FaultHost {
 public:
  explicit ConnectionHost(Connection& conn) : conn_(conn) {}

  std::vector<std::string> notes;

  int64_t now_ms() const override { return 0; }
  void AdvanceClockMs(int64_t) override {}
  const WorldNames& names() const override { return names_; }
  Oracle& oracle() override { return oracle_; }
  Result<Reply> HarnessCall(std::vector<std::string> argv, const char*) override {
    const std::vector<std::string_view> view(argv.begin(), argv.end());
    return conn_.Call(view);
  }
  Result<std::vector<Reply>> HarnessCalls(const std::vector<std::vector<std::string>>& commands,
                                          const char*) override {
    std::vector<std::vector<std::string_view>> views;
    for (const auto& argv : commands) views.emplace_back(argv.begin(), argv.end());
    return conn_.CallAll(views);
  }
  Result<std::optional<StreamId>> ReadLastDelivered(const char* actor) override {
    Result<Reply> groups = HarnessCall({"XINFO", "GROUPS", names_.stream}, actor);
    if (!groups.ok()) return groups.status();
    return GroupLastDeliveredId(*groups, names_.group);
  }
  void Note(std::string_view label, std::string_view rest) override {
    notes.push_back(std::string(label) + ": " + std::string(rest));
  }
  void RunNote(std::string text) override { notes.push_back(std::move(text)); }
  Status RestartServer() override { return Status::Internal("no restarts in this test"); }
  Result<FailoverOutcome> FailoverServer(int, bool) override { return Status::Internal("no failovers in this test"); }
  Persistence persistence() const override { return Persistence::kNone; }
  void StoreDownUntil(int64_t) override {}

 private:
  Connection& conn_;
  WorldNames names_;
  Oracle oracle_{3};
};

class XdelInjectorTest : public ConnectedServerTest {
 protected:
  // Entries 0-1, 0-2, 0-3 in the stream, the group at 0, and the first
  // `delivered` of them read by one consumer (then `acked` of those acked).
  void Prepare(int delivered, int acked = 0) {
    for (const char* id : {"0-1", "0-2", "0-3"}) {
      ASSERT_EQ(Render(*conn_, {"XADD", "events", id, "event_id", id}), std::string("\"") + id + "\"");
    }
    ASSERT_EQ(Render(*conn_, {"XGROUP", "CREATE", "events", "workers", "0"}), "+OK");
    if (delivered > 0) {
      const std::string count = std::to_string(delivered);
      Render(*conn_, {"XREADGROUP", "GROUP", "workers", "w1", "COUNT", count, "STREAMS", "events", ">"});
    }
    for (int i = 1; i <= acked; ++i) {
      ASSERT_EQ(Render(*conn_, {"XACK", "events", "workers", "0-" + std::to_string(i)}), "1");
    }
  }
  // Injects `xdel <target>` and returns the IDs left in the stream.
  std::string XdelThenRange(const std::string& target) {
    ConnectionHost host(*conn_);
    FaultSpec f;
    f.kind = FaultKind::kXdel;
    f.target = target;
    Status s = InjectorOf(FaultKind::kXdel)(host, f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    notes_ = host.notes;
    Result<Reply> r = conn_->Call({"XRANGE", "events", "-", "+"});
    std::string ids;
    if (!r.ok()) return "<" + r.status().ToString() + ">";
    if (std::optional<std::vector<StreamEntry>> entries = ParseRangeReply(*r)) {
      for (const StreamEntry& e : *entries) ids += (ids.empty() ? "" : " ") + e.id;
    }
    return ids;
  }

  std::vector<std::string> notes_;
};

TEST_F(XdelInjectorTest, UnreadDeletesTheFirstEntryAfterTheGroupsPosition) {
  Prepare(/*delivered=*/1);  // 0-2 and 0-3 unread
  EXPECT_EQ(XdelThenRange("unread"), "0-1 0-3");
  EXPECT_TRUE(notes_.empty());
}

TEST_F(XdelInjectorTest, UnreadWithNothingDeliveredDeletesTheFirstEntry) {
  Prepare(/*delivered=*/0);
  EXPECT_EQ(XdelThenRange("unread"), "0-2 0-3");
}

TEST_F(XdelInjectorTest, UnreadWithOneUnreadEntryDeletesThatOne) {
  Prepare(/*delivered=*/2);
  EXPECT_EQ(XdelThenRange("unread"), "0-1 0-2");
}

TEST_F(XdelInjectorTest, UnreadWithEverythingDeliveredDeletesNothingAndSaysSo) {
  Prepare(/*delivered=*/3);
  EXPECT_EQ(XdelThenRange("unread"), "0-1 0-2 0-3");  // never the last delivered entry
  EXPECT_EQ(notes_, std::vector<std::string>{"xdel unread: no such entry right now; nothing deleted"});
}

TEST_F(XdelInjectorTest, PendingDeletesTheOldestPendingEntry) {
  Prepare(/*delivered=*/3, /*acked=*/1);  // 0-2 and 0-3 pending
  EXPECT_EQ(XdelThenRange("pending"), "0-1 0-3");
}

TEST_F(XdelInjectorTest, AckedDeletesTheOldestDeliveredEntryNoLongerPending) {
  Prepare(/*delivered=*/3, /*acked=*/2);
  EXPECT_EQ(XdelThenRange("acked"), "0-2 0-3");
}

TEST_F(XdelInjectorTest, AckedWithNothingAckedDeletesNothing) {
  Prepare(/*delivered=*/2);
  EXPECT_EQ(XdelThenRange("acked"), "0-1 0-2 0-3");
  EXPECT_EQ(notes_, std::vector<std::string>{"xdel acked: no such entry right now; nothing deleted"});
}

}  // namespace
}  // namespace xackly
