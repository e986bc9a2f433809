#include "text/tokenizer/moonshot_chunking.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/utf8.h"

namespace k3::text {
namespace {

// tokenization_kimi.py's chunking written as plainly as the Python: over code points, window by
// window, with Python's str.isspace set. The reference for the single-pass implementation.
bool PyIsSpace(char32_t c) {
  return (c >= 0x9 && c <= 0xD) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::vector<size_t> ReferenceChunkEnds(const std::u32string& cps, size_t max_chars,
                                       size_t max_run) {
  std::vector<size_t> ends;  // in code points
  for (size_t w = 0; w < cps.size(); w += max_chars) {
    size_t end = std::min(cps.size(), w + max_chars);
    bool run_is_space = PyIsSpace(cps[w]);
    size_t run = 0;
    for (size_t i = w; i < end; ++i) {
      bool is_space = PyIsSpace(cps[i]);
      if (run_is_space != is_space) {
        run = 1;
        run_is_space = is_space;
      } else if (++run > max_run) {
        ends.push_back(i);
        run = 1;
      }
    }
    ends.push_back(end);
  }
  return ends;
}

TEST(MoonshotChunkingTest, MatchesPlainReferenceOnRandomText) {
  std::mt19937 rng(17);
  const char32_t alphabet[] = {U'a',      U' ',          U'\n',     U'\u3000', U'\u001F', U'\u00A0',
                               U'\u4E2D', U'\U0001F600', U'\u0085', U'x',      U'\u200B'};
  for (int round = 0; round < 3000; ++round) {
    std::u32string cps;
    std::string text;
    std::vector<size_t> byte_offset = {0};
    int length = rng() % 60;
    for (int i = 0; i < length; ++i) {
      char32_t c = alphabet[rng() % (rng() % 2 ? 2 : std::size(alphabet))];
      cps.push_back(c);
      base::AppendUtf8(c, &text);
      byte_offset.push_back(text.size());
    }
    size_t max_chars = 1 + rng() % 20, max_run = 1 + rng() % 6;
    std::vector<size_t> expected;
    for (size_t cp_end : ReferenceChunkEnds(cps, max_chars, max_run))
      expected.push_back(byte_offset[cp_end]);
    ASSERT_EQ(MoonshotChunkEnds(text, max_chars, max_run), expected)
        << "round " << round << " max_chars " << max_chars << " max_run " << max_run;
  }
}

TEST(MoonshotChunkingTest, ShortTextIsOneChunkAndEmptyIsNone) {
  EXPECT_EQ(MoonshotChunkEnds("hello world"), (std::vector<size_t>{11}));
  EXPECT_TRUE(MoonshotChunkEnds("").empty());
}

// With the real limits the fast path (word-at-a-time run bounds) decides most windows; it must
// agree with the reference on long texts with runs just under and over 25,000 characters.
TEST(MoonshotChunkingTest, RealLimitsOnLongTexts) {
  std::mt19937 rng(29);
  const char32_t fill[] = {U'a', U' ', U'\u4E2D', U'\u3000', U'\n', U'\u001F', U'\u00E9'};
  for (int round = 0; round < 12; ++round) {
    std::u32string cps;
    while (cps.size() < 900'000) {
      size_t run = rng() % 4 == 0 ? 24'990 + rng() % 20 : 1 + rng() % 12;
      cps.append(run, fill[rng() % std::size(fill)]);
      cps.push_back(rng() % 2 ? U' ' : U'b');
    }
    std::string text;
    std::vector<size_t> byte_offset = {0};
    for (char32_t c : cps) {
      base::AppendUtf8(c, &text);
      byte_offset.push_back(text.size());
    }
    std::vector<size_t> expected;
    for (size_t cp_end : ReferenceChunkEnds(cps, kMoonshotMaxEncodeChars, kMoonshotMaxRunChars))
      expected.push_back(byte_offset[cp_end]);
    ASSERT_EQ(MoonshotChunkEnds(text), expected) << "round " << round;
  }
}

}  // namespace
}  // namespace k3::text
