// The piece caches against uncached encoding: the per-thread short-piece table must never answer
// with another vocabulary's ids, and pieces it cannot hold must still come out right.
#include "text/tokenizer/piece_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "base/base64.h"
#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

// Every byte (rank = byte value), then "he" 256, "ll" 257, "hell" 258: "hello" is [258, 'o'].
std::string TinyRanks() {
  std::string ranks;
  for (int b = 0; b < 256; ++b) {
    ranks +=
        base::Base64Encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  }
  return ranks + base::Base64Encode("he") + " 256\n" + base::Base64Encode("ll") + " 257\n" +
         base::Base64Encode("hell") + " 258\n";
}

std::vector<TokenId> EncodeOnFreshThread(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<TokenId> ids;
  std::thread([&] { ids = tokenizer.Encode(text, SpecialMode::kNone).value(); }).join();
  return ids;
}

TEST(PieceCacheTest, ThreadTableNeverMixesVocabularies) {
  const Tokenizer& kimi = testing::KimiTokenizer("k25");
  auto tiny = Tokenizer::FromTiktoken(TinyRanks(), {}, TokenizerOptions{}).value();
  // " hellohello" (11 bytes) goes through the mid table, the shorter words the short one.
  const std::string text = "hello hello world xyzw xyzw hello hellohello hellohello";
  const std::vector<TokenId> kimi_ids = EncodeOnFreshThread(kimi, text);
  // On one thread: Kimi fills the table, the tiny vocabulary must not see its entries, and Kimi
  // must not see the tiny ones afterwards.
  EXPECT_EQ(kimi.Encode(text, SpecialMode::kNone).value(), kimi_ids);
  const std::vector<TokenId> tiny_ids = tiny->Encode(text, SpecialMode::kNone).value();
  const std::vector<TokenId> hello = {258, 'o'};
  std::vector<TokenId> want = hello;
  for (std::string_view word :
       {" hello", " world", " xyzw", " xyzw", " hello", " hellohello", " hellohello"}) {
    if (word == " hello") {
      want.push_back(' ');
      want.insert(want.end(), hello.begin(), hello.end());
    } else if (word == " hellohello") {
      want.insert(want.end(), {' ', 258, 'o', 258, 'o'});
    } else {
      want.insert(want.end(), word.begin(), word.end());  // no merges: one id per byte
    }
  }
  EXPECT_EQ(tiny_ids, want);
  EXPECT_EQ(kimi.Encode(text, SpecialMode::kNone).value(), kimi_ids);
  // A second Kimi instance has the same ids but is another vocabulary object: same answers.
  auto kimi_again = Tokenizer::FromKimiDirectory(testing::SharedDir() + "/kimi/k25").value();
  EXPECT_EQ(kimi_again->Encode(text, SpecialMode::kNone).value(), kimi_ids);
}

TEST(PieceCacheTest, WarmEncodesEqualColdOnes) {
  const Tokenizer& kimi = testing::KimiTokenizer("k25");
  const std::string text =
      testing::ReadFileOrDie(testing::SharedDir() + "/goldens/tokenizer/long_mixed_500k.txt")
          .substr(0, 200000);
  // Cut on a character boundary: back up over UTF-8 continuation bytes.
  std::string_view head = text;
  while (!head.empty() && (static_cast<uint8_t>(head.back()) & 0xC0) == 0x80) head.remove_suffix(1);
  if (!head.empty() && static_cast<uint8_t>(head.back()) >= 0xC0) head.remove_suffix(1);
  const std::vector<TokenId> cold = EncodeOnFreshThread(kimi, head);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(kimi.Encode(head, SpecialMode::kAll).value(), cold) << "round " << round;
  }
}

TEST(PieceCacheTest, ShortTableKeepsUpToThreeIdsAndDeclinesMore) {
  const BpeRanks ranks = BpeRanks::Parse(TinyRanks()).value();
  PieceCache cache(1000, ranks);
  const TokenId three[] = {1, 2, 3};
  const TokenId four[] = {1, 2, 3, 4};
  const uint64_t key = BpeRanks::Prefix8("abcdefg");
  EXPECT_TRUE(cache.InsertShort(key, 7, three, 3));
  PieceCache::ShortIds got = cache.LookupShort(key, 7);
  ASSERT_EQ(got.count, 3u);
  EXPECT_EQ(got.ids[2], 3u);
  EXPECT_EQ(cache.LookupShort(key, 6).count, 0u);  // same bytes, other length: another piece
  EXPECT_FALSE(cache.InsertShort(BpeRanks::Prefix8("abcd"), 4, four, 4));
  EXPECT_EQ(cache.LookupShort(BpeRanks::Prefix8("abcd"), 4).count, 0u);
}

TEST(PieceCacheTest, MidTableKeysOnBothEndsAndTheLength) {
  const BpeRanks ranks = BpeRanks::Parse(TinyRanks()).value();
  PieceCache cache(1000, ranks);
  const TokenId ten[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const TokenId eleven[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  // Same first and last 8 bytes, different middle: 16 vs 15 bytes, so the length tells them apart.
  const std::string a = "abcdefghXbcdefgh", b = "abcdefghbcdefgh";
  ASSERT_TRUE(cache.InsertMid(PieceCache::MidKeyOf(a), ten, 10));
  std::vector<TokenId> got;
  ASSERT_TRUE(cache.LookupMid(PieceCache::MidKeyOf(a), &got));
  EXPECT_EQ(got, std::vector<TokenId>(ten, ten + 10));
  EXPECT_FALSE(cache.LookupMid(PieceCache::MidKeyOf(b), &got));
  EXPECT_FALSE(cache.LookupMid(PieceCache::MidKeyOf("abcdefghXbcdefgX"), &got));
  EXPECT_FALSE(cache.InsertMid(PieceCache::MidKeyOf("123456789"), eleven, 11));
  EXPECT_FALSE(cache.LookupMid(PieceCache::MidKeyOf("123456789"), &got));
  EXPECT_EQ(got.size(), 10u);  // misses append nothing
}

}  // namespace
}  // namespace k3::text
