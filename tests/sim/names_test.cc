// The spellings of the protocol's and the server's enums: each name a value
// is printed as parses back to that value, and nothing else parses. A C++
// caller that reads a protocol from its own configuration relies on both.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/protocol.h"
#include "sim/server.h"

namespace xackly {
namespace {

// Near misses of a real name: case, spaces, a prefix, an underscore.
std::vector<std::string> NearMisses(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string underscored(name);
  for (char& c : underscored) c = c == '-' ? '_' : c;
  std::vector<std::string> out = {upper, " " + std::string(name), std::string(name) + " ",
                                  std::string(name.substr(0, name.size() - 1)), std::string(name) + "s"};
  if (underscored != name) out.push_back(underscored);
  return out;
}

template <typename E>
void ExpectNamesParseBack(const std::vector<E>& values, const char* (*name_of)(E),
                          bool (*parse)(std::string_view, E*)) {
  std::vector<std::string> names;
  for (E v : values) {
    const std::string name = name_of(v);
    for (const std::string& earlier : names) EXPECT_NE(name, earlier) << "two values print alike";
    names.push_back(name);
    E parsed = v == values.front() ? values.back() : values.front();  // parse must overwrite it
    ASSERT_TRUE(parse(name, &parsed)) << name;
    EXPECT_EQ(parsed, v) << name;
  }
  for (const std::string& name : names) {
    for (const std::string& miss : NearMisses(name)) {
      E untouched = values.front();
      EXPECT_FALSE(parse(miss, &untouched)) << "'" << miss << "'";
      EXPECT_EQ(untouched, values.front()) << "a refused name changed the value: '" << miss << "'";
    }
  }
  E untouched = values.back();
  EXPECT_FALSE(parse("", &untouched));
  EXPECT_EQ(untouched, values.back());
}

TEST(EnumNamesTest, EveryHandlerStepsNameParsesBackAndTheListNamesThemAll) {
  const std::vector<HandlerOp> ops = {HandlerOp::kAck,    HandlerOp::kCheckDone, HandlerOp::kMarkDone,
                                      HandlerOp::kEffect, HandlerOp::kBegin,     HandlerOp::kCommit};
  ExpectNamesParseBack(ops, &HandlerOpName, &ParseHandlerOp);
  EXPECT_EQ(HandlerOpList(), "ack, check-done, mark-done, effect, begin, commit");
}

TEST(EnumNamesTest, EveryDedupeStoreAndEffectSinkNameParsesBack) {
  ExpectNamesParseBack({DedupeStore::kNone, DedupeStore::kSql, DedupeStore::kRedis}, &DedupeStoreName,
                       &ParseDedupeStore);
  ExpectNamesParseBack({EffectSink::kExternal, EffectSink::kSql, EffectSink::kRedis}, &EffectSinkName,
                       &ParseEffectSink);
  EXPECT_STREQ(DedupeStoreName(DedupeStore::kRedis), "redis");
  EXPECT_STREQ(EffectSinkName(EffectSink::kExternal), "external");
}

TEST(EnumNamesTest, EveryPersistenceNameParsesBack) {
  ExpectNamesParseBack({Persistence::kNone, Persistence::kRdb, Persistence::kAofAlways}, &PersistenceName,
                       &ParsePersistence);
  EXPECT_STREQ(PersistenceName(Persistence::kAofAlways), "aof-always");
}

}  // namespace
}  // namespace xackly
