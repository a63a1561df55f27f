// The lost-request / lost-reply wrapper around the Redis seam, against a
// fake connection that counts what reached the "server".
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/lossy_connection.h"

namespace xackly {
namespace {

class CountingConnection : public Connection {
 public:
  explicit CountingConnection(std::vector<std::string>* executed) : executed_(executed) {}
  Result<Reply> Call(std::span<const std::string_view> argv) override {
    executed_->emplace_back(argv[0]);
    return Reply::Integer(static_cast<int64_t>(executed_->size()));
  }
  using Connection::Call;
  bool alive() const override { return true; }

 private:
  std::vector<std::string>* executed_;
};

TEST(LossyConnectionTest, WithoutALossEveryCallGoesThrough) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  ASSERT_TRUE(c.Call({"XACK"}).ok());
  ASSERT_TRUE(c.Call({"XADD"}).ok());
  EXPECT_EQ(executed, (std::vector<std::string>{"XACK", "XADD"}));
  EXPECT_TRUE(c.alive());
}

TEST(LossyConnectionTest, ALostRequestNeverReachesTheServerAndTimesOut) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  c.LoseNext(PointEffect::kLoseRequest);
  Result<Reply> r = c.Call({"XACK"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_TRUE(executed.empty());
  EXPECT_FALSE(c.hidden_reply().has_value());
  EXPECT_FALSE(c.alive());
  EXPECT_EQ(c.Call({"PING"}).status().code(), Status::Code::kClosed);
}

TEST(LossyConnectionTest, ALostReplyExecutesAndKeepsTheReplyForTheOracle) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  c.LoseNext(PointEffect::kLoseReply);
  Result<Reply> r = c.Call({"XADD"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_EQ(executed, std::vector<std::string>{"XADD"});
  ASSERT_TRUE(c.hidden_reply().has_value());
  EXPECT_EQ(c.hidden_reply()->integer(), 1);
  EXPECT_FALSE(c.alive());
}

// A pipeline is one request: an armed loss applies to all of it (the
// default CallAll would have sent each command through Call, where only the
// first met the loss and the rest were sent on a dead connection).
TEST(LossyConnectionTest, ALostPipelineRequestSendsNoneOfItsCommands) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  c.LoseNext(PointEffect::kLoseRequest);
  const std::vector<std::vector<std::string_view>> commands = {{"MULTI"}, {"XACK"}, {"EXEC"}};
  Result<std::vector<Reply>> r = c.CallAll(commands);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_TRUE(executed.empty());
  EXPECT_FALSE(c.alive());
}

TEST(LossyConnectionTest, ALostPipelineReplyRunsEveryCommandAndHidesEveryReply) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  c.LoseNext(PointEffect::kLoseReply);
  const std::vector<std::vector<std::string_view>> commands = {{"XACK"}, {"XADD"}};
  Result<std::vector<Reply>> r = c.CallAll(commands);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_EQ(executed, (std::vector<std::string>{"XACK", "XADD"}));
  ASSERT_EQ(c.hidden_replies().size(), 2u);
  EXPECT_EQ(c.hidden_replies()[1].integer(), 2);
  EXPECT_FALSE(c.alive());
  EXPECT_EQ(c.CallAll(commands).status().code(), Status::Code::kClosed);
}

TEST(LossyConnectionTest, APipelineWithoutALossGoesThrough) {
  std::vector<std::string> executed;
  LossyConnection c(std::make_unique<CountingConnection>(&executed));
  const std::vector<std::vector<std::string_view>> commands = {{"XACK"}, {"XADD"}};
  Result<std::vector<Reply>> r = c.CallAll(commands);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 2u);
  EXPECT_TRUE(c.alive());
}

}  // namespace
}  // namespace xackly
