// The shared text helpers (sim/text.h): where a clip cuts, what counts as a
// word or a list item, and when a noun is plural. Messages everywhere go
// through them, so an off-by-one here shows in every error a user reads.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/text.h"
#include "sim/trace.h"

namespace xackly {
namespace {

TEST(TextHelpersTest, AClipKeepsTextUpToItsLimitWholeAndCutsOneCharacterMore) {
  EXPECT_EQ(ClipText("", 0), "");
  EXPECT_EQ(ClipText("abc", 3), "abc");
  EXPECT_EQ(ClipText("abcd", 3), "abc...");
  EXPECT_EQ(ClipText("a", 0), "...");
  const std::string exact(240, 'x');
  EXPECT_EQ(ClipText(exact, 240), exact);
  EXPECT_EQ(ClipText(exact + "y", 240), exact + "...");
}

TEST(TextHelpersTest, WordsSkipEmptyRunsAndListsKeepEmptyItems) {
  using Views = std::vector<std::string_view>;
  EXPECT_EQ(SplitWords("  a  bc d "), (Views{"a", "bc", "d"}));
  EXPECT_EQ(SplitWords(""), Views{});
  EXPECT_EQ(SplitWords("a,b;;c", ",;"), (Views{"a", "b", "c"}));
  EXPECT_EQ(SplitList("a,,b"), (Views{"a", "", "b"}));
  EXPECT_EQ(SplitList(""), Views{""});
  EXPECT_EQ(SplitList("a|b|", '|'), (Views{"a", "b", ""}));
}

TEST(TextHelpersTest, PluralOnlyForCountsOtherThanOne) {
  EXPECT_EQ(Plural(1, "case"), "1 case");
  EXPECT_EQ(Plural(0, "case"), "0 cases");
  EXPECT_EQ(Plural(size_t{2}, "fault"), "2 faults");
  EXPECT_EQ(Plural(int64_t{1}, "delivery", "deliveries"), "1 delivery");
  EXPECT_EQ(Plural(0, "delivery", "deliveries"), "0 deliveries");
  EXPECT_EQ(Plural(3, "delivery", "deliveries"), "3 deliveries");
}

// What the determinism check prints when two runs of one seed differ: the
// first line that differs, or where one trace ends; nothing for two equal
// traces.
TEST(TextHelpersTest, TheFirstTraceDifferenceNamesTheLineOrWhereATraceEnds) {
  auto line = [](int64_t t, const char* request) {
    TraceLine l;
    l.t_ms = t;
    l.actor = "w1";
    l.kind = LineKind::kRedis;
    l.request = request;
    l.reply = "1";
    return l;
  };
  const std::vector<TraceLine> two = {line(0, "XACK events workers 1-0"), line(1, "XACK events workers 2-0")};
  const std::vector<TraceLine> one = {two[0]};
  const std::vector<TraceLine> other = {two[0], line(1, "XACK events workers 3-0")};
  EXPECT_EQ(FirstTraceDifference(two, two), "");
  EXPECT_EQ(FirstTraceDifference({}, {}), "");
  const std::string shorter = FirstTraceDifference(two, one);
  EXPECT_EQ(shorter.find("first differ at trace line 2: `"), 0u) << shorter;
  EXPECT_NE(shorter.find("` then `(the trace ends)`"), std::string::npos) << shorter;
  const std::string longer = FirstTraceDifference(one, two);
  EXPECT_EQ(longer.find("first differ at trace line 2: `(the trace ends)` then `"), 0u) << longer;
  const std::string differs = FirstTraceDifference(two, other);
  EXPECT_NE(differs.find("2-0"), std::string::npos) << differs;
  EXPECT_NE(differs.find("3-0"), std::string::npos) << differs;
}

}  // namespace
}  // namespace xackly
