// The command table (sim/commands.h) against the server it describes: where
// each row says a command's first key is, `COMMAND INFO` must say the same.
// A wrong position would name the wrong key when the oracle records a TTL
// or decides whether a write touched the run's stream.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/commands.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

using CommandTableServerTest = ConnectedServerTest;

TEST_F(CommandTableServerTest, EveryRowsFirstKeyIsWhereTheServerSaysItIs) {
  int compared = 0;
  for (const CommandInfo& row : AllCommands()) {
    if (row.first_key == 0 || row.runs_code) continue;  // no key, or keys after numkeys
    std::string name(row.verb);
    const size_t space = name.find(' ');
    if (space != std::string::npos) name = name.substr(0, space) + "|" + name.substr(space + 1);
    Result<Reply> info = conn_->Call({"COMMAND", "INFO", name});
    ASSERT_TRUE(info.ok()) << name;
    if (!info->is_array() || info->elements().empty() || !info->elements()[0].is_array()) continue;  // not on this server
    const Reply& entry = info->elements()[0];
    ASSERT_GE(entry.elements().size(), 4u) << name;
    const int64_t server_first = entry.elements()[3].integer();
    if (server_first == 0) continue;  // movable keys (XREAD, MIGRATE...): the server gives no position
    EXPECT_EQ(row.first_key, server_first) << row.verb;
    ++compared;
  }
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace xackly
