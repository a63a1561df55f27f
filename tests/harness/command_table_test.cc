// The command table (sim/commands.h) against the server it describes: where
// each row says a command's first key is, `COMMAND INFO` must say the same.
// A wrong position would name the wrong key when the oracle records a TTL
// or decides whether a write touched the run's stream; a row of a command
// that takes no key must name none.
#include <algorithm>
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
    if (server_first == 0) {
      // Movable keys (XREAD, MIGRATE...): the server gives no position.
      // Otherwise it takes no key (UNWATCH, TIME...), and a key named at
      // argv[1] would be some other argument, or none.
      // (A command of subcommands, XGROUP or OBJECT, has its keys in them.)
      const std::vector<Reply>& flags = entry.elements()[2].elements();
      const bool movable = std::any_of(flags.begin(), flags.end(), [](const Reply& f) { return f.str() == "movablekeys"; });
      EXPECT_TRUE(movable || row.subcommands) << row.verb << ": the table names a key at argv[" << int{row.first_key}
                                              << "], the server says it takes none";
      continue;
    }
    EXPECT_EQ(row.first_key, server_first) << row.verb;
    ++compared;
  }
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace xackly
