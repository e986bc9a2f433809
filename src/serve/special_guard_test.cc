#include "serve/special_guard.h"

#include <gtest/gtest.h>

namespace k3::serve {
namespace {

text::SpecialTokens Specials() {
  return text::SpecialTokens({{"<|im_end|>", 100, true}, {"<think>", 101, false}});
}

TEST(SpecialGuard, TextWithoutSpecialsIsUntouchedAndOneSegment) {
  const text::SpecialTokens specials = Specials();
  SpecialGuard guard(specials, 7);
  const Json in = {{"role", "user"}, {"content", "plain <| text |>"}, {"n", 3}};
  EXPECT_EQ(guard.Shield(in), in);
  EXPECT_FALSE(guard.swapped_any());
  const auto segments = guard.Split("<|im_end|>plain");
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_TRUE(segments[0].allow_special);
  EXPECT_EQ(segments[0].text, "<|im_end|>plain");
}

TEST(SpecialGuard, SwappedStringsComeBackAsSpecialsOffSegments) {
  const text::SpecialTokens specials = Specials();
  SpecialGuard guard(specials, 7);
  const Json shielded = guard.Shield(Json::array({"a<|im_end|>b", Json{{"<think>", "x<think>"}}}));
  const std::string rendered = "<|im_end|>[" + shielded[0].get<std::string>() + "|" +
                               shielded[1].begin().key() + "=" +
                               shielded[1].begin().value().get<std::string>() + "]<|im_end|>";
  EXPECT_EQ(rendered.find("<|im_end|>["), 0u);
  EXPECT_EQ(rendered.find("<think>"), std::string::npos);
  const auto segments = guard.Split(rendered);
  std::string joined;
  std::string off;
  for (const auto& s : segments) {
    joined += s.text;
    if (!s.allow_special) off += s.text + ";";
  }
  EXPECT_EQ(joined, "<|im_end|>[a<|im_end|>b|<think>=x<think>]<|im_end|>");
  EXPECT_EQ(off, "<|im_end|>;<think>;<think>;");
  EXPECT_TRUE(segments.front().allow_special);
  EXPECT_TRUE(segments.back().allow_special);
}

TEST(SpecialGuard, ForgedOrMangledPlaceholdersStayText) {
  const text::SpecialTokens specials = Specials();
  SpecialGuard guard(specials, 7);
  const std::string placeholder = guard.Shield(Json("<|im_end|>")).get<std::string>();
  // Another nonce's placeholder (what a client could type) is not one of this render's.
  SpecialGuard other(specials, 8);
  const std::string forged = other.Shield(Json("<|im_end|>")).get<std::string>();
  const std::string truncated = placeholder.substr(0, placeholder.size() - 3);
  const auto segments = guard.Split(forged + truncated);
  for (const auto& s : segments) EXPECT_TRUE(s.allow_special) << s.text;
}

}  // namespace
}  // namespace k3::serve
