// The hiredis Connection against a real server: every reply type arrives as
// the right Reply, arguments are binary safe, and every way an exchange can
// fail leaves a dead connection that says why.
#include "harness/hiredis_connection.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/harness/test_util.h"

namespace xackly {
namespace {

using namespace std::string_literals;

class HiredisConnectionTest : public ServerTest {};

// Every timeout reaches hiredis whole: seconds, and the rest in microseconds.
TEST(HiredisTimeoutTest, ATimeoutIsItsWholeSecondsAndTheRestInMicroseconds) {
  const std::vector<std::pair<int, std::pair<long, long>>> cases = {
      {1, {0, 1000}}, {999, {0, 999000}}, {1000, {1, 0}}, {1500, {1, 500000}}, {60001, {60, 1000}}};
  for (const auto& [ms, want] : cases) {
    const timeval tv = ToTimeval(ms);
    EXPECT_EQ(std::make_pair(static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec)), want) << ms << " ms";
  }
}

TEST_F(HiredisConnectionTest, RendersEveryReplyType) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);

  EXPECT_EQ(Render(*conn, {"GET", "missing"}), "nil");
  EXPECT_EQ(Render(*conn, {"INCR", "n"}), "1");
  EXPECT_EQ(Render(*conn, {"SET", "k", "v"}), "+OK");
  EXPECT_EQ(Render(*conn, {"GET", "k"}), "\"v\"");
  EXPECT_EQ(Render(*conn, {"XADD", "s", "1-1", "f", "v"}), "\"1-1\"");
  EXPECT_EQ(Render(*conn, {"XRANGE", "s", "-", "+"}), "[[\"1-1\", [\"f\", \"v\"]]]");
  EXPECT_EQ(Render(*conn, {"XRANGE", "empty", "-", "+"}), "[]");
  EXPECT_EQ(Render(*conn, {"XGROUP", "CREATE", "s", "g", "$"}), "+OK");
  // Empty summary form: nil elements inside an array.
  EXPECT_EQ(Render(*conn, {"XPENDING", "s", "g"}), "[0, nil, nil, nil]");

  // An error reply is a value, not a failed exchange.
  Result<Reply> error = conn->Call({"XACK", "k", "g", "1-1"});  // k is a string
  ASSERT_TRUE(error.ok()) << error.status().ToString();
  EXPECT_TRUE(error->is_error());
  EXPECT_EQ(error->Render(), "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_TRUE(conn->alive());
}

TEST_F(HiredisConnectionTest, DeletedPendingEntryReadsBackAsIdAndNil) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);
  ASSERT_EQ(Render(*conn, {"XADD", "s", "1-1", "f", "v"}), "\"1-1\"");
  ASSERT_EQ(Render(*conn, {"XGROUP", "CREATE", "s", "g", "0"}), "+OK");
  ASSERT_EQ(Render(*conn, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}),
            "[[\"s\", [[\"1-1\", [\"f\", \"v\"]]]]]");
  ASSERT_EQ(Render(*conn, {"XDEL", "s", "1-1"}), "1");
  // The PEL still holds 1-1, but its payload is gone.
  EXPECT_EQ(Render(*conn, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"}),
            "[[\"s\", [[\"1-1\", nil]]]]");
}

TEST_F(HiredisConnectionTest, ArgumentsAndRepliesAreBinarySafe) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);
  const std::string key = "key with spaces\0and a NUL"s;
  const std::string value = "\r\n\0\xff\"quoted\""s;
  ASSERT_EQ(Render(*conn, {"SET", key, value}), "+OK");
  Result<Reply> got = conn->Call({"GET", key});
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->is_string());
  EXPECT_EQ(got->str(), value);
  EXPECT_EQ(got->Render(), "\"\\r\\n\\x00\\xff\\\"quoted\\\"\"");
  EXPECT_EQ(Render(*conn, {"SET", "", ""}), "+OK");
  EXPECT_EQ(Render(*conn, {"GET", ""}), "\"\"");
}

TEST_F(HiredisConnectionTest, ServerCrashKillsTheConnectionForGood) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<Connection> conn = ConnectTo(*server);
  ASSERT_NE(conn, nullptr);
  ASSERT_EQ(Render(*conn, {"PING"}), "+PONG");
  server->Crash();
  Result<Reply> first = conn->Call({"PING"});
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), Status::Code::kIoError) << first.status().ToString();
  EXPECT_FALSE(conn->alive());
  // Even once the server is back, the old connection stays dead.
  ASSERT_TRUE(server->Restart().ok());
  Result<Reply> second = conn->Call({"PING"});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kClosed) << second.status().ToString();
  std::unique_ptr<Connection> fresh = ConnectTo(*server);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(Render(*fresh, {"PING"}), "+PONG");
}

TEST_F(HiredisConnectionTest, ReplyLaterThanTheDeadlineIsATimeout) {
  RedisServer* server = StartServer();
  ASSERT_NE(server, nullptr);
  Result<std::unique_ptr<Connection>> conn = ConnectUnix(server->socket_path(), 200);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  Result<Reply> blocked = (*conn)->Call({"BLPOP", "nothing", "0"});  // blocks forever
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), Status::Code::kTimeout) << blocked.status().ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_FALSE((*conn)->alive());
  EXPECT_EQ((*conn)->Call({"PING"}).status().code(), Status::Code::kClosed);
}

TEST(HiredisConnectionFailureTest, NothingListeningIsAnIoError) {
  ScopedTempRoot root;
  Result<std::unique_ptr<Connection>> conn = ConnectUnix(root.path() + "/no.sock", 1000);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), Status::Code::kIoError);
  EXPECT_NE(conn.status().message().find("no.sock"), std::string::npos) << conn.status().message();
}

TEST(HiredisConnectionFailureTest, GarbageFromThePeerIsAProtocolError) {
  ScopedTempRoot root;
  const std::string path = root.path() + "/fake.sock";
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  // A peer that answers any command with something that is not RESP.
  std::thread peer([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char buf[256];
    if (::read(fd, buf, sizeof(buf)) > 0) {
      const char kGarbage[] = "this is not RESP\r\n";
      (void)!::write(fd, kGarbage, sizeof(kGarbage) - 1);
    }
    ::sleep(1);
    ::close(fd);
  });
  Result<std::unique_ptr<Connection>> conn = ConnectUnix(path, 2000);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  Result<Reply> reply = (*conn)->Call({"PING"});
  peer.join();
  ::close(listener);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), Status::Code::kProtocolError) << reply.status().ToString();
  EXPECT_FALSE((*conn)->alive());
  EXPECT_EQ((*conn)->Call({"PING"}).status().code(), Status::Code::kClosed);
}

}  // namespace
}  // namespace xackly
