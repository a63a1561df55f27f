// The command table (sim/commands.h) against the server it describes: where
// each row says a command's first key is, `COMMAND INFO` must say the same
// (its first-key field, or for a command that counts its keys its key
// specifications).
// A wrong position would name the wrong key when the oracle records a TTL
// or decides whether a write touched the run's stream; a row of a command
// that takes no key must name none.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/commands.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

using CommandTableServerTest = ConnectedServerTest;

// The value of `name` in a RESP2 map (an array of name, value, ...), or null.
const Reply* Field(const Reply& map, std::string_view name) {
  if (!map.is_array()) return nullptr;
  const std::vector<Reply>& e = map.elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    if (e[i].str() == name) return &e[i + 1];
  }
  return nullptr;
}

// Where a command's first key is by the server's key specifications
// (COMMAND INFO's 9th element, Redis 7): the first spec's begin_search
// index, plus its keynum's firstkey for a command that counts its keys
// (ZINTERCARD numkeys key ...). 0 when the server gives no spec or its
// first key follows a keyword (XREAD ... STREAMS key).
int64_t FirstKeyBySpecs(const Reply& entry) {
  if (entry.elements().size() < 9 || !entry.elements()[8].is_array() || entry.elements()[8].elements().empty()) {
    return 0;
  }
  const Reply& spec = entry.elements()[8].elements()[0];
  const Reply* begin = Field(spec, "begin_search");
  const Reply* find = Field(spec, "find_keys");
  if (begin == nullptr || find == nullptr) return 0;
  const Reply* begin_type = Field(*begin, "type");
  const Reply* begin_spec = Field(*begin, "spec");
  const Reply* index = begin_spec == nullptr ? nullptr : Field(*begin_spec, "index");
  if (begin_type == nullptr || begin_type->str() != "index" || index == nullptr) return 0;
  int64_t first = index->integer();
  const Reply* find_type = Field(*find, "type");
  const Reply* find_spec = Field(*find, "spec");
  const Reply* first_key = find_spec == nullptr ? nullptr : Field(*find_spec, "firstkey");
  if (find_type != nullptr && find_type->str() == "keynum" && first_key != nullptr) first += first_key->integer();
  return first;
}

TEST_F(CommandTableServerTest, EveryRowsFirstKeyIsWhereTheServerSaysItIs) {
  int compared = 0, compared_by_specs = 0;
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
      // Movable keys: the key specifications say where the first one is
      // (ZINTERCARD, LMPOP: after their count), unless it follows a keyword.
      if (const int64_t by_specs = FirstKeyBySpecs(entry); by_specs > 0) {
        EXPECT_EQ(row.first_key, by_specs) << row.verb << " (by its key specifications)";
        ++compared_by_specs;
        continue;
      }
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
  EXPECT_GT(compared_by_specs, 5) << "the movable-key commands that count their keys";
}

}  // namespace
}  // namespace xackly
