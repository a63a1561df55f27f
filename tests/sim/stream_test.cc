// Reply shapes from Redis 7.0 (see DOMAIN.md) parsed into entries. The
// protocols and the oracle both depend on these, so the odd shapes matter
// most: deleted pending entries, XAUTOCLAIM's deleted list, empty XPENDING.
#include <gtest/gtest.h>

#include "sim/stream.h"

namespace xackly {
namespace {

Reply S(std::string s) { return Reply::String(std::move(s)); }
Reply A(std::vector<Reply> v) { return Reply::Array(std::move(v)); }

TEST(StreamTest, StreamIdsCompareNumericallyNotAsText) {
  auto a = StreamId::Parse("9-0");
  auto b = StreamId::Parse("10-0");
  ASSERT_TRUE(a && b);
  EXPECT_LT(*a, *b);
  EXPECT_EQ(StreamId::Parse("5-3")->Next().ToString(), "5-4");
  EXPECT_FALSE(StreamId::Parse("5-x"));
  EXPECT_FALSE(StreamId::Parse(""));
}

TEST(StreamTest, ReadReplyKeepsDeletedPendingEntriesAsDeleted) {
  // XREADGROUP ... 0 on a pending entry whose payload was XDELed: [id, nil].
  Reply r = A({A({S("events"), A({A({S("1-0"), A({S("event_id"), S("order:1")})}),
                                   A({S("2-0"), Reply::Nil()})})})});
  auto entries = ParseReadReply(r);
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].event_id(), "order:1");
  EXPECT_FALSE((*entries)[0].deleted);
  EXPECT_TRUE((*entries)[1].deleted);
  EXPECT_EQ((*entries)[1].id, "2-0");
}

TEST(StreamTest, NilReadIsEmptyAndErrorsAreMalformed) {
  auto none = ParseReadReply(Reply::Nil());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseReadReply(Reply::Error("NOGROUP No such key")));
}

// XINFO's records are name-value pairs: a record of an odd length (a name
// without its value) or a name that is not a string makes the reply
// malformed, never read past its end.
TEST(StreamTest, InfoRecordsAreNameValuePairsAndAnOddOneIsMalformed) {
  const Reply group = Reply::Array({Reply::String("name"), Reply::String("workers"), Reply::String("pending"),
                                    Reply::Integer(2)});
  auto records = ParseInfoRecords(Reply::Array({group}));
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0], (std::vector<std::pair<std::string, std::string>>{{"name", "workers"}, {"pending", "2"}}));
  EXPECT_FALSE(ParseInfoRecords(Reply::Array({Reply::Array({Reply::String("name"), Reply::String("workers"),
                                                            Reply::String("pending")})})));
  EXPECT_FALSE(ParseInfoRecords(Reply::Array({Reply::Array({Reply::Integer(1), Reply::String("workers")})})));
  EXPECT_FALSE(ParseInfoRecords(Reply::String("not an array")));
}

TEST(StreamTest, AutoClaimReportsDeletedIds) {
  Reply r = A({S("0-0"), A({A({S("3-0"), A({S("event_id"), S("order:3")})})}), A({S("4-0")})});
  auto c = ParseAutoClaimReply(r);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->next_cursor, "0-0");
  ASSERT_EQ(c->entries.size(), 1u);
  EXPECT_EQ(c->deleted_ids, std::vector<std::string>{"4-0"});
}

// Redis 6.2's XAUTOCLAIM answers [cursor, entries] without the deleted list.
TEST(StreamTest, AutoClaimWithoutADeletedListHasNoDeletedIds) {
  Reply r = A({S("0-0"), A({A({S("3-0"), A({S("event_id"), S("order:3")})})})});
  auto c = ParseAutoClaimReply(r);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->next_cursor, "0-0");
  ASSERT_EQ(c->entries.size(), 1u);
  EXPECT_EQ(c->entries[0].event_id(), "order:3");
  EXPECT_TRUE(c->deleted_ids.empty());
}

TEST(StreamTest, PendingSummaryEmptyFormAndRows) {
  auto empty = ParsePendingSummary(A({Reply::Integer(0), Reply::Nil(), Reply::Nil(), Reply::Nil()}));
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->count, 0);
  auto full = ParsePendingSummary(
      A({Reply::Integer(3), S("1-0"), S("3-0"), A({A({S("w1"), S("2")}), A({S("w2"), S("1")})})}));
  ASSERT_TRUE(full);
  EXPECT_EQ(full->per_consumer.size(), 2u);
  EXPECT_EQ(full->per_consumer[0].second, 2);
  auto rows = ParsePendingRows(A({A({S("1-0"), S("w1"), Reply::Integer(60000), Reply::Integer(2)})}));
  ASSERT_TRUE(rows);
  EXPECT_EQ((*rows)[0].idle_ms, 60000);
  EXPECT_EQ((*rows)[0].deliveries, 2);
  // A row of another shape is no PEL row: each field has its type, or the
  // whole reply is refused (never a row with a default in it).
  const std::vector<Reply> well = {S("1-0"), S("w1"), Reply::Integer(60000), Reply::Integer(2)};
  for (size_t field = 0; field < well.size(); ++field) {
    std::vector<Reply> row = well;
    row[field] = field < 2 ? Reply::Integer(7) : S("7");
    EXPECT_FALSE(ParsePendingRows(A({A(row)}))) << "field " << field;
  }
  EXPECT_FALSE(ParsePendingRows(A({A({S("1-0"), S("w1"), Reply::Integer(60000)})})));
}

}  // namespace
}  // namespace xackly
