// The shared text helpers (sim/text.h): where a clip cuts, what counts as a
// word or a list item, and when a noun is plural. Messages everywhere go
// through them, so an off-by-one here shows in every error a user reads.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/text.h"

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
}

}  // namespace
}  // namespace xackly
