// Escaping helpers: what each output format may and may not contain.
#include "reports/text_util.h"

#include <gtest/gtest.h>

namespace xackly::report {
namespace {

TEST(TextUtilTest, ValidUtf8ReplacesOnlyInvalidBytes) {
  EXPECT_EQ(ValidUtf8("plain é ✓ 😀"), "plain é ✓ 😀");
  EXPECT_EQ(ValidUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(ValidUtf8("\xc3"), "\xef\xbf\xbd");              // truncated sequence
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
}

TEST(TextUtilTest, PrintableHasNoControlCharacters) {
  EXPECT_EQ(Printable("a\nb\tc\rd\x1b[0m\x7f"), "a\\nb\\tc\\rd\\x1b[0m\\x7f");
  EXPECT_EQ(Printable("csi \xc2\x9b" "31m"), "csi \\u009b31m");
  EXPECT_EQ(Printable("é ✓"), "é ✓");
}

TEST(TextUtilTest, EscapeXmlEscapesMarkupAndForbiddenBytes) {
  EXPECT_EQ(EscapeXml("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(EscapeXml("line\nnext\ttab"), "line\nnext\ttab");
  EXPECT_EQ(EscapeXml("bell\x07 esc\x1b"), "bell\\x07 esc\\x1b");
}

TEST(TextUtilTest, WordsKeepIdsWhole) {
  EXPECT_EQ(Words("VALUES ('order:1', '0-1', 'w1', 6)"),
            (std::vector<std::string>{"VALUES", "order:1", "0-1", "w1", "6"}));
  EXPECT_EQ(Words("[[\"events\", [[\"0-1\", nil]]]]"), (std::vector<std::string>{"events", "0-1", "nil"}));
  EXPECT_EQ(Words("order:1|0-1|w1|2"), (std::vector<std::string>{"order:1", "0-1", "w1", "2"}));
  EXPECT_TRUE(Words("  ").empty());
}

}  // namespace
}  // namespace xackly::report
