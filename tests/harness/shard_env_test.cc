// Issue 30: `check --shard auto` takes its shard from the CI system's
// environment (XACKLY_SHARD, GitLab's `parallel:`, a Kubernetes Indexed
// Job), so one command line serves every shard. A wrong or missing
// variable is bad input (exit 2) that names the variable and its value:
// a shard that silently ran the wrong cases would merge into a wrong
// result. tests/ci_files_test runs the CI files' own commands under each
// environment and checks their merge against one unsharded run.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/check.h"
#include "harness/exit_codes.h"
#include "harness/files.h"
#include "tests/harness/test_util.h"

namespace xackly {
namespace {

// ShardFromEnvironment over exactly these variables.
Result<ShardSpec> FromEnv(const std::map<std::string, std::string>& env) {
  return ShardFromEnvironment([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// The shard as --shard would say it ("2/3"), or the error message.
std::string Shard(const std::map<std::string, std::string>& env) {
  Result<ShardSpec> s = FromEnv(env);
  return s.ok() ? s->Text() : "error: " + s.status().message();
}

TEST(ShardFromEnvironmentTest, EachCiSystemsVariablesNameTheSameShard) {
  EXPECT_EQ(Shard({{"XACKLY_SHARD", "2/3"}}), "2/3");
  EXPECT_EQ(Shard({{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "3"}}), "2/3");  // GitLab: 1-based
  EXPECT_EQ(Shard({{"JOB_COMPLETION_INDEX", "1"}, {"XACKLY_SHARD_COUNT", "3"}}), "2/3");  // Kubernetes: 0-based
  // The first and last shard of each, and one shard of one.
  EXPECT_EQ(Shard({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "3"}}), "1/3");
  EXPECT_EQ(Shard({{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "3"}}), "3/3");
  EXPECT_EQ(Shard({{"JOB_COMPLETION_INDEX", "0"}, {"XACKLY_SHARD_COUNT", "3"}}), "1/3");
  EXPECT_EQ(Shard({{"JOB_COMPLETION_INDEX", "2"}, {"XACKLY_SHARD_COUNT", "3"}}), "3/3");
  EXPECT_EQ(Shard({{"XACKLY_SHARD", "1/1"}}), "1/1");
}

TEST(ShardFromEnvironmentTest, XacklyShardWinsThenGitLabThenKubernetes) {
  const std::map<std::string, std::string> all = {{"XACKLY_SHARD", "1/2"},
                                                  {"CI_NODE_INDEX", "2"},
                                                  {"CI_NODE_TOTAL", "3"},
                                                  {"JOB_COMPLETION_INDEX", "3"},
                                                  {"XACKLY_SHARD_COUNT", "4"}};
  EXPECT_EQ(Shard(all), "1/2");
  Result<ShardSpec> s = FromEnv(all);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->source, "XACKLY_SHARD=1/2");
  std::map<std::string, std::string> no_xackly = all;
  no_xackly["XACKLY_SHARD"] = "";  // set but empty counts as unset
  EXPECT_EQ(Shard(no_xackly), "2/3");
  no_xackly.erase("CI_NODE_INDEX");
  no_xackly.erase("CI_NODE_TOTAL");
  EXPECT_EQ(Shard(no_xackly), "4/4");
}

TEST(ShardFromEnvironmentTest, AMalformedValueNamesTheVariableAndTheValue) {
  struct Bad {
    std::map<std::string, std::string> env;
    std::string named;  // what the message must quote
  };
  const Bad bad[] = {
      {{{"XACKLY_SHARD", "3"}}, "XACKLY_SHARD='3'"},
      {{{"XACKLY_SHARD", "4/3"}}, "XACKLY_SHARD='4/3'"},
      {{{"XACKLY_SHARD", "0/3"}}, "XACKLY_SHARD='0/3'"},
      {{{"XACKLY_SHARD", " 1/3"}}, "XACKLY_SHARD=' 1/3'"},
      {{{"XACKLY_SHARD", "1/+3"}}, "XACKLY_SHARD='1/+3'"},
      {{{"XACKLY_SHARD", "auto"}}, "XACKLY_SHARD='auto'"},
      {{{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX='0': expected 1..3"},
      {{{"CI_NODE_INDEX", "4"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX='4': expected 1..3"},
      {{{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "three"}}, "CI_NODE_TOTAL='three'"},
      {{{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "0"}}, "CI_NODE_TOTAL='0'"},
      {{{"JOB_COMPLETION_INDEX", "3"}, {"XACKLY_SHARD_COUNT", "3"}}, "JOB_COMPLETION_INDEX='3': expected 0..2"},
      {{{"JOB_COMPLETION_INDEX", "-1"}, {"XACKLY_SHARD_COUNT", "3"}}, "JOB_COMPLETION_INDEX='-1'"},
      {{{"JOB_COMPLETION_INDEX", "1"}, {"XACKLY_SHARD_COUNT", "99999999999"}}, "XACKLY_SHARD_COUNT='99999999999'"},
      {{{"XACKLY_SHARD", std::string(100, '7')}}, "XACKLY_SHARD='" + std::string(60, '7') + "'..."},
      {{{"XACKLY_SHARD", std::string(61, '7')}}, "XACKLY_SHARD='" + std::string(60, '7') + "'..."},  // one cut
  };
  for (const Bad& b : bad) {
    Result<ShardSpec> s = FromEnv(b.env);
    ASSERT_FALSE(s.ok()) << b.named;
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument) << b.named;
    EXPECT_TRUE(Contains(s.status().message(), b.named)) << s.status().message();
  }
}

TEST(ShardFromEnvironmentTest, HalfAPairNamesTheMissingVariable) {
  std::string m = Shard({{"CI_NODE_INDEX", "2"}});
  EXPECT_TRUE(Contains(m, "CI_NODE_INDEX='2' is set but CI_NODE_TOTAL is not")) << m;
  m = Shard({{"JOB_COMPLETION_INDEX", "2"}});
  EXPECT_TRUE(Contains(m, "JOB_COMPLETION_INDEX='2' is set but XACKLY_SHARD_COUNT is not")) << m;
  EXPECT_TRUE(Contains(m, "completions")) << m;  // why Kubernetes needs it
  m = Shard({{"XACKLY_SHARD_COUNT", "3"}});
  EXPECT_TRUE(Contains(m, "XACKLY_SHARD_COUNT='3' is set but JOB_COMPLETION_INDEX is not")) << m;
}

TEST(ShardFromEnvironmentTest, NoShardInTheEnvironmentNamesEveryVariable) {
  std::string m = Shard({{"XACKLY_SHARD", ""}, {"CI", "true"}});
  for (const char* name :
       {"XACKLY_SHARD", "CI_NODE_INDEX", "CI_NODE_TOTAL", "JOB_COMPLETION_INDEX", "XACKLY_SHARD_COUNT"}) {
    EXPECT_TRUE(Contains(m, name)) << m;
  }
}

// `--shard I/N` counts from 1: a 0 (or an I above N) would run another
// shard's cases, or case -1, under a label that merge then trusts.
TEST(ShardFlagTest, ParseShardTakesExactlyOneToN) {
  int index = -7, count = -7;
  ASSERT_TRUE(ParseShard("1/2", &index, &count));
  EXPECT_EQ(index, 0);
  EXPECT_EQ(count, 2);
  ASSERT_TRUE(ParseShard("2/2", &index, &count));
  EXPECT_EQ(index, 1);
  ASSERT_TRUE(ParseShard("1/1", &index, &count));
  EXPECT_EQ(count, 1);
  for (const char* bad : {"0/2", "-1/2", "3/2", "2/0", "0/0", "1/-2", "1/", "/2", "1/2x", "1.0/2", "2"}) {
    index = count = -7;
    EXPECT_FALSE(ParseShard(bad, &index, &count)) << bad;
    EXPECT_EQ(index, -7) << bad << ": sets nothing";
    EXPECT_EQ(count, -7) << bad << ": sets nothing";
  }
}

TEST(ShardFlagTest, AShardOutsideOneToNExitsTwoNamingTheFlagBeforeAnyCaseRuns) {
  ScopedTempRoot dir;
  for (const char* bad : {"0/2", "2/0", "3/2"}) {
    CommandOutput out = RunXackly({"check", "--protocol", "no-dedupe", "--shard", bad, "--out", dir.path()});
    EXPECT_EQ(out.exit_code, kExitUsage) << bad << "\n" << out.output;
    const std::string said = std::string("xackly check: error: --shard: expected I/N with 1 <= I <= N, or auto, got '") +
                             bad + "'";
    EXPECT_TRUE(Contains(out.output, said)) << out.output;
    EXPECT_FALSE(Contains(out.output, "xackly check: seed")) << "nothing ran:\n" << out.output;
  }
}

// Environment overrides: the variables --shard auto reads are "" (unset)
// but for those in `set`, whatever the environment of the test has.
std::vector<std::string> ShardEnv(const std::map<std::string, std::string>& set) {
  std::vector<std::string> env;
  for (const char* name :
       {"XACKLY_SHARD", "CI_NODE_INDEX", "CI_NODE_TOTAL", "JOB_COMPLETION_INDEX", "XACKLY_SHARD_COUNT"}) {
    auto it = set.find(name);
    env.push_back(std::string(name) + "=" + (it == set.end() ? "" : it->second));
  }
  return env;
}

TEST(ShardAutoCliTest, ABadEnvironmentExitsTwoNamingTheVariableBeforeAnyCaseRuns) {
  ScopedTempRoot dir;
  CommandOutput none = RunXackly({"check", "--protocol", "no-dedupe", "--shard", "auto", "--out", dir.path()},
                                 ShardEnv({}));
  EXPECT_EQ(none.exit_code, kExitUsage) << none.output;
  EXPECT_TRUE(Contains(none.output, "xackly check: error: --shard auto: no shard in the environment")) << none.output;
  CommandOutput half = RunXackly({"check", "--protocol", "no-dedupe", "--shard", "auto", "--out", dir.path()},
                                 ShardEnv({{"CI_NODE_INDEX", "2"}}));
  EXPECT_EQ(half.exit_code, kExitUsage) << half.output;
  EXPECT_TRUE(Contains(half.output, "CI_NODE_TOTAL is not")) << half.output;
  EXPECT_FALSE(Contains(half.output, "xackly check: seed")) << "nothing ran:\n" << half.output;
}

TEST(ShardAutoCliTest, TheShardAndWhereItCameFromAreSaidAndRecorded) {
  ScopedTempRoot dir;
  CommandOutput ran = RunXackly({"check", "--protocol", "no-dedupe", "--cases", "4", "--shard", "auto", "--out",
                                 dir.path(), "--format", "json", "-j", "1"},
                                ShardEnv({{"JOB_COMPLETION_INDEX", "1"}, {"XACKLY_SHARD_COUNT", "2"}}));
  ASSERT_TRUE(ran.exit_code == kExitOk || ran.exit_code == kExitVerdictMismatch) << ran.output;
  EXPECT_TRUE(Contains(ran.output, "shard 2/2 (JOB_COMPLETION_INDEX=1, XACKLY_SHARD_COUNT=2)")) << ran.output;
  // The report records the shard as --shard I/N would: merge reads it.
  Result<std::string> json = ReadFile(dir.path() + "/report.json");
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(Contains(*json, "\"shard\": \"2/2\"")) << *json;
}

}  // namespace
}  // namespace xackly
