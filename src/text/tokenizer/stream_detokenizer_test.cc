#include "text/tokenizer/stream_detokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"

namespace k3::text {
namespace {

const Tokenizer& Kimi() { return testing::KimiTokenizer("k25"); }

TEST(StreamDetokenizerTest, HoldsBackSplitCharacters) {
  StreamDetokenizer stream(Kimi());
  std::string out;
  ASSERT_TRUE(stream.Push(134750, &out).ok());  // b"\xf0\x9f\x98": first 3 bytes of U+1F600
  EXPECT_EQ(out, "");
  EXPECT_EQ(stream.pending_bytes(), 3u);
  ASSERT_TRUE(stream.Push(222, &out).ok());  // b"\x80"
  EXPECT_EQ(out, "\U0001F600");
  EXPECT_EQ(stream.pending_bytes(), 0u);
}

TEST(StreamDetokenizerTest, FlushesReplacementOnlyAtEnd) {
  StreamDetokenizer stream(Kimi());
  std::string out;
  ASSERT_TRUE(stream.Push(134750, &out).ok());
  stream.Finish(&out);
  EXPECT_EQ(out, "\uFFFD");
}

TEST(StreamDetokenizerTest, UnknownIdIsAnErrorAndChangesNothing) {
  StreamDetokenizer stream(Kimi());
  std::string out;
  EXPECT_EQ(stream.Push(999999, &out).code(), base::StatusCode::kOutOfRange);
  EXPECT_EQ(out, "");
}

// Streaming any id sequence must give exactly what one Decode gives, including invalid orderings.
TEST(StreamDetokenizerTest, ConcatenationEqualsDecodeOnRandomIds) {
  std::mt19937 rng(9);
  std::vector<TokenId> interesting = {134750, 222, 64390, 101,    67963,
                                      172,    106, 19180, 163586, 33845};
  for (int round = 0; round < 500; ++round) {
    std::vector<TokenId> ids;
    int length = rng() % 12;
    for (int i = 0; i < length; ++i) {
      ids.push_back(rng() % 3 ? interesting[rng() % interesting.size()] : rng() % 163584);
    }
    StreamDetokenizer stream(Kimi());
    std::string streamed;
    for (TokenId id : ids) ASSERT_TRUE(stream.Push(id, &streamed).ok());
    stream.Finish(&streamed);
    ASSERT_EQ(streamed, *Kimi().Decode(ids));
  }
}

}  // namespace
}  // namespace k3::text
