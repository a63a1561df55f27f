// The business channel's fault wrapper (sim/business.h) around the real SQL
// store and external service: what a lost request or reply does to the
// store, to the effect ledger and to what the caller sees.
#include <gtest/gtest.h>

#include "sim/business.h"
#include "sim/store.h"

namespace xackly {
namespace {

struct Channel {
  EffectLedger ledger;
  SqlStore store{&ledger};
  ExternalService external{&ledger};
  StoreChannel direct{&store, &external};
  LossyBusiness lossy{&direct};
};

Step ExternalEffect(const std::string& event_id) {
  Step s;
  s.op = Op::kExternalEffect;
  s.event_id = event_id;
  s.stream_id = "1-0";
  return s;
}

Step Statement(const std::string& sql) {
  Step s;
  s.op = Op::kSqlStatement;
  s.label = sql;
  return s;
}

const BusinessCall kCall{.owner = 1, .now_ms = 10, .actor = "w1"};

TEST(BusinessChannelTest, WithoutALossTheRequestRunsAndItsReplyComesBack) {
  Channel c;
  Step s = ExternalEffect("order:1");
  Result<BusinessReply> r = c.lossy.Call(kCall, s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->request, "apply order:1");
  EXPECT_EQ(r->result, "ok");
  EXPECT_EQ(s.outcome, BusinessOutcome::kOk);
  EXPECT_EQ(c.ledger.records().size(), 1u);
}

TEST(BusinessChannelTest, ALostRequestRunsNothingAndTimesOut) {
  Channel c;
  c.lossy.LoseNext(PointEffect::kLoseRequest);
  Step s = ExternalEffect("order:1");
  Result<BusinessReply> r = c.lossy.Call(kCall, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_TRUE(c.ledger.records().empty());
  EXPECT_FALSE(c.lossy.hidden_reply().has_value());
  // The loss was for one request only.
  Step again = ExternalEffect("order:1");
  EXPECT_TRUE(c.lossy.Call(kCall, again).ok());
  EXPECT_EQ(c.ledger.records().size(), 1u);
}

TEST(BusinessChannelTest, ALostReplyRunsTheRequestAndKeepsItsReplyForTheOracle) {
  Channel c;
  c.lossy.LoseNext(PointEffect::kLoseReply);
  Step s = ExternalEffect("order:1");
  Result<BusinessReply> r = c.lossy.Call(kCall, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  ASSERT_EQ(c.ledger.records().size(), 1u);  // the effect happened
  ASSERT_TRUE(c.lossy.hidden_reply().has_value());
  EXPECT_EQ(c.lossy.hidden_reply()->result, "ok");
}

TEST(BusinessChannelTest, ALostStatementRequestChangesNoTable) {
  Channel c;
  Step create = Statement("CREATE TABLE t(a)");
  ASSERT_TRUE(c.lossy.Call(kCall, create).ok());
  c.lossy.LoseNext(PointEffect::kLoseRequest);
  Step insert = Statement("INSERT INTO t VALUES (1)");
  EXPECT_FALSE(c.lossy.Call(kCall, insert).ok());
  Step count = Statement("SELECT count(*) FROM t");
  ASSERT_TRUE(c.lossy.Call(kCall, count).ok());
  ASSERT_EQ(count.sql.rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(count.sql.rows[0][0]), 0);
}

}  // namespace
}  // namespace xackly
