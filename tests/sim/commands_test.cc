// The command table (sim/commands.h): one row per command, read the same
// whatever the case, with the answers the simulator, the oracle and the
// reports rely on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/commands.h"
#include "sim/sites.h"
#include "sim/step.h"

namespace xackly {
namespace {

TEST(CommandTableTest, LookupsIgnoreCase) {
  for (const CommandInfo& row : AllCommands()) {
    std::string lower(row.verb);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower.find(' ') != std::string::npos) continue;  // a subcommand's row: reached through CommandOf
    EXPECT_EQ(&CommandNamed(lower), &row) << row.verb;
  }
  EXPECT_EQ(CommandOf(std::vector<std::string>{"xAcK", "s", "g", "1-0"}).verb, "XACK");
  EXPECT_FALSE(CommandNamed("NOSUCHCOMMAND").known);
}

TEST(CommandTableTest, ASubcommandHasItsOwnRowInAnyCase) {
  const std::vector<std::string> del = {"xgroup", "delconsumer", "s", "g", "c1"};
  EXPECT_EQ(CommandOf(del).verb, "XGROUP DELCONSUMER");
  EXPECT_EQ(CommandOf(del).category, ReportCategory::kDelete);
  EXPECT_EQ(CommandOf(std::vector<std::string>{"XGROUP", "SETID", "s", "g", "0"}).verb, "XGROUP");
}

TEST(CommandTableTest, CanonicalSpellingIsUpperCaseForTheCommandAndItsSubcommandOnly) {
  std::vector<std::string> argv = {"xgroup", "createconsumer", "orders", "group", "consumer"};
  CanonicalizeCommand(&argv);
  EXPECT_EQ(argv, (std::vector<std::string>{"XGROUP", "CREATECONSUMER", "orders", "group", "consumer"}));
  std::vector<std::string> set = {"set", "key", "value"};  // SET has no subcommands: the key keeps its case
  CanonicalizeCommand(&set);
  EXPECT_EQ(set, (std::vector<std::string>{"SET", "key", "value"}));
}

TEST(CommandTableTest, ReadsChangeNothingAndUnknownCommandsMayChangeAnything) {
  for (const char* read : {"XRANGE", "XPENDING", "GET", "SMEMBERS", "EVAL_RO", "MULTI", "INFO"}) {
    EXPECT_FALSE(CommandNamed(read).writes) << read;
  }
  for (const char* write : {"XACK", "XREADGROUP", "XADD", "SET", "EVAL", "EXEC", "DEL"}) {
    EXPECT_TRUE(CommandNamed(write).writes) << write;
  }
  EXPECT_TRUE(UnknownCommand().writes);
  EXPECT_TRUE(UnknownCommand().MayWriteList());
}

// The Redis effect ledger is a list: only a step that may write a list (or
// any key, or runs code) makes the scheduler read it again.
TEST(CommandTableTest, OnlyListWritesAnyKeyWritesAndCodeMayChangeAList) {
  for (const char* no : {"XACK", "HSET", "SADD", "INCR", "GET", "LRANGE", "SETNX", "ZADD"}) {
    EXPECT_FALSE(CommandNamed(no).MayWriteList()) << no;
  }
  for (const char* yes : {"RPUSH", "LTRIM", "DEL", "SET", "RENAME", "SUNIONSTORE", "EVAL", "FCALL", "EXEC",
                          "EXPIRE", "RESTORE"}) {
    EXPECT_TRUE(CommandNamed(yes).MayWriteList()) << yes;
  }
}

TEST(CommandTableTest, ScriptsAreRefusedBlockingAndHarnessCommands) {
  EXPECT_EQ(CommandNamed("blpop").script, ScriptRefusal::kBlocking);
  EXPECT_EQ(CommandNamed("WAIT").script, ScriptRefusal::kBlocking);
  EXPECT_EQ(CommandNamed("flushall").script, ScriptRefusal::kHarness);
  EXPECT_EQ(CommandNamed("HELLO").script, ScriptRefusal::kHarness);
  EXPECT_EQ(CommandNamed("XACK").script, ScriptRefusal::kAllowed);
  EXPECT_TRUE(HasOption(std::vector<std::string>{"XREAD", "block", "0", "STREAMS", "s", "$"}, "BLOCK"));
  EXPECT_FALSE(HasOption(std::vector<std::string>{"XREAD", "STREAMS", "blocks", "$"}, "BLOCK"));
}

TEST(CommandTableTest, TimersAndArgumentPositionsAreWhereRedisPutsThem) {
  const CommandInfo& claim = CommandNamed("XAUTOCLAIM");  // XAUTOCLAIM key group consumer min-idle start
  EXPECT_EQ(claim.timer, TimerKind::kClaimThreshold);
  EXPECT_EQ(claim.timer_at, 4);
  EXPECT_EQ(claim.group_at, 2);
  EXPECT_EQ(claim.consumer_at, 3);
  EXPECT_EQ(CommandNamed("XACK").ids_from, 3);     // XACK key group id...
  EXPECT_EQ(CommandNamed("EVAL").numkeys_at, 2);   // EVAL script numkeys key...
  EXPECT_EQ(CommandNamed("SETEX").timer_unit_ms, 1000);
}

TEST(CommandTableTest, LostSitesThatChangeStateAreWritesAndSqlOtherThanReads) {
  EXPECT_TRUE(SiteChangesState("XACK"));
  EXPECT_TRUE(SiteChangesState("INSERT"));   // an SQL verb the table does not know
  EXPECT_TRUE(SiteChangesState("COMMIT"));
  EXPECT_FALSE(SiteChangesState("SELECT"));  // the SQL read
  EXPECT_FALSE(SiteChangesState("BEGIN"));
  EXPECT_FALSE(SiteChangesState("XPENDING"));
}

TEST(SiteNamesTest, AStatementIsNamedByItsVerbAfterCommentsAndWhitespace) {
  EXPECT_EQ(StatementVerb("insert or ignore into t values (1)"), "INSERT");
  EXPECT_EQ(StatementVerb("/* done */ COMMIT"), "COMMIT");
  EXPECT_EQ(StatementVerb("-- mark it\r\n  update t set a = 1"), "UPDATE");
  EXPECT_EQ(StatementVerb("\r\n\tBEGIN"), "BEGIN");
  EXPECT_EQ(StatementVerb("/* unterminated"), "");
}

TEST(SiteNamesTest, AStepsSitesAreNamedInOnePlace) {
  Step command;
  command.op = Op::kCommand;
  command.argv = {"XACK", "s", "g", "1-0"};
  EXPECT_EQ(PointBefore(command), "before-XACK");
  EXPECT_EQ(PointAfter(command), "after-XACK");
  EXPECT_EQ(RequestSite(command), "XACK");
  Step sql;
  sql.op = Op::kSqlStatement;
  sql.label = "/* the effect */ insert into t values (?1)";
  EXPECT_EQ(PointBefore(sql), "");
  EXPECT_EQ(PointAfter(sql), "after-INSERT");
  EXPECT_EQ(RequestSite(sql), "INSERT");
  Step commit;
  commit.op = Op::kSqlCommit;
  EXPECT_EQ(PointAfter(commit), "after-commit");
  EXPECT_EQ(RequestSite(commit), "COMMIT");
  Step point;
  point.op = Op::kCheckpoint;
  point.label = "point:mid-batch";
  EXPECT_EQ(PointAfter(point), "point:mid-batch");
  EXPECT_EQ(RequestSite(point), "");
}

// A script's site names its command in upper case, with only the
// punctuation command and SQL verbs have (_ . |): a lower-case or spaced
// name is a typo the scenario must refuse, not a site that never fires.
TEST(SiteNamesTest, AScriptsSiteIsAnUpperCaseVerbWithOnlyItsOwnPunctuation) {
  for (const char* verb : {"XACK", "X_1", "A.B", "XGROUP|CREATE", "X9"}) {
    EXPECT_TRUE(IsScriptSiteName(verb, SiteFamily::kRequest)) << verb;
    EXPECT_TRUE(IsScriptSiteName(std::string("before-") + verb, SiteFamily::kCrashPoint)) << verb;
    EXPECT_TRUE(IsScriptSiteName(std::string("after-") + verb, SiteFamily::kCrashPoint)) << verb;
  }
  for (const char* verb : {"xack", "Xack", "X ACK", "X-ACK", "XACK;", "", "_XACK", "9X"}) {
    EXPECT_FALSE(IsScriptSiteName(verb, SiteFamily::kRequest)) << verb;
    EXPECT_FALSE(IsScriptSiteName(std::string("after-") + verb, SiteFamily::kCrashPoint)) << verb;
  }
  // A w:point of the script's own: "point:" and lower-case letters, digits
  // (0 to 9), '-', '_' and '.', at the ends of each range.
  for (const char* name : {"point:a", "point:z", "point:step-0", "point:step-9", "point:a_b.c"}) {
    EXPECT_TRUE(IsScriptSiteName(name, SiteFamily::kCrashPoint)) << name;
    EXPECT_FALSE(IsScriptSiteName(name, SiteFamily::kRequest)) << name;
  }
  for (const char* name : {"point:", "point:A", "point:a b", "point:a/b", "point:a:b", "point:`", "point:{"}) {
    EXPECT_FALSE(IsScriptSiteName(name, SiteFamily::kCrashPoint)) << name;
  }
}

}  // namespace
}  // namespace xackly
