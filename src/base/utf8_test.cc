#include "base/utf8.h"

#include <gtest/gtest.h>

namespace k3::base {
namespace {

TEST(Utf8Test, DecodesValidSequences) {
  char32_t cp;
  bool valid;
  EXPECT_EQ(DecodeUtf8("A", &cp, &valid), 1u);
  EXPECT_EQ(cp, U'A');
  EXPECT_EQ(DecodeUtf8("\xC3\xA9", &cp, &valid), 2u);
  EXPECT_EQ(cp, U'\u00E9');
  EXPECT_EQ(DecodeUtf8("\xE4\xB8\xAD", &cp, &valid), 3u);
  EXPECT_EQ(cp, U'\u4E2D');
  EXPECT_EQ(DecodeUtf8("\xF0\x9F\x98\x80", &cp, &valid), 4u);
  EXPECT_EQ(cp, U'\U0001F600');
  EXPECT_TRUE(valid);
}

TEST(Utf8Test, RejectsOverlongsSurrogatesAndOutOfRange) {
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98"));      // truncated
  EXPECT_TRUE(IsValidUtf8("plain \xE2\x82\xAC"));
}

// Expected strings are what Python's bytes.decode("utf-8", "replace") returns.
TEST(Utf8Test, ReplacementMatchesPythonMaximalSubparts) {
  EXPECT_EQ(Utf8Replace("\xF0\x9F\x98"), "\xEF\xBF\xBD");          // one U+FFFD
  EXPECT_EQ(Utf8Replace("\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // two
  EXPECT_EQ(Utf8Replace("\xE0\x80\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(Utf8Replace("a\xF0\x9F"
                        "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(Utf8Replace("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(Utf8Replace("ok"), "ok");
}

TEST(Utf8Test, CompletePrefixHoldsBackOnlyPossiblyValidTails) {
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xF0\x9F\x98"), 2u);
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xF0\x9F\x98\x80"), 6u);
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xE2"), 2u);
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\x80"), 3u);      // stray continuation: never valid
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xF0\x41"), 4u);  // broken already
  EXPECT_EQ(CompleteUtf8PrefixLength(""), 0u);
}

TEST(Utf8Test, RoundTripsEveryScalarValue) {
  for (char32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x3000 ? 1 : 97)) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    AppendUtf8(cp, &s);
    char32_t back;
    bool valid;
    ASSERT_EQ(DecodeUtf8(s, &back, &valid), s.size());
    ASSERT_TRUE(valid);
    ASSERT_EQ(back, cp);
  }
  EXPECT_EQ(CountCodePoints("a\xC3\xA9\xF0\x9F\x98\x80\x80"), 4u);
}

}  // namespace
}  // namespace k3::base
