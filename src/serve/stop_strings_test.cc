#include "serve/stop_strings.h"

#include <gtest/gtest.h>

#include <random>

namespace k3::serve {
namespace {

// Feeds text in the given chunk sizes; returns what was emitted and whether a stop matched.
std::pair<std::string, bool> FeedChunks(StopStringMatcher& m, const std::string& text,
                                        const std::vector<size_t>& cuts) {
  std::string out;
  size_t at = 0;
  bool stopped = false;
  for (size_t cut : cuts) {
    stopped = m.Feed(std::string_view(text).substr(at, cut - at), &out) || stopped;
    at = cut;
  }
  stopped = m.Feed(std::string_view(text).substr(at), &out) || stopped;
  m.Finish(&out);
  return {out, stopped};
}

TEST(StopStrings, HoldsBackPartialMatchesAndCutsAtTheEarliestStop) {
  StopStringMatcher m({"END", "\n\n"});
  std::string out;
  EXPECT_FALSE(m.Feed("hello E", &out));
  EXPECT_EQ(out, "hello ");  // "E" may start "END"
  EXPECT_FALSE(m.Feed("N", &out));
  EXPECT_EQ(out, "hello ");
  EXPECT_TRUE(m.Feed("D and more", &out));
  EXPECT_EQ(out, "hello ");
  EXPECT_EQ(m.matched(), "END");
  EXPECT_TRUE(m.Feed("ignored", &out));
  EXPECT_EQ(out, "hello ");
}

TEST(StopStrings, FalseStartIsReleasedAndIncludeStopKeepsIt) {
  StopStringMatcher m({"END"});
  std::string out;
  m.Feed("EN", &out);
  m.Feed("x", &out);
  EXPECT_EQ(out, "ENx");
  StopStringMatcher keep({"END"}, /*include_stop=*/true);
  std::string kept;
  EXPECT_TRUE(keep.Feed("aEND b", &kept));
  EXPECT_EQ(kept, "aEND");
}

// Any chunking gives the same output as one whole feed, which equals a direct search.
TEST(StopStrings, EveryChunkingAgreesWithADirectSearch) {
  std::mt19937 rng(3);
  const std::string alphabet = "ab\xC3\xA9\n";
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int len = static_cast<int>(rng() % 30);
    for (int i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    std::vector<std::string> stops = {"ab\n", "ba"};
    size_t first = std::string::npos;
    for (const auto& s : stops) first = std::min(first, text.find(s));
    const std::string expected = first == std::string::npos ? text : text.substr(0, first);
    std::vector<size_t> cuts;
    for (size_t i = 1; i < text.size(); ++i) {
      if (rng() % 3 == 0) cuts.push_back(i);
    }
    StopStringMatcher m(stops);
    auto [out, stopped] = FeedChunks(m, text, cuts);
    EXPECT_EQ(out, expected) << text;
    EXPECT_EQ(stopped, first != std::string::npos);
  }
}

}  // namespace
}  // namespace k3::serve
