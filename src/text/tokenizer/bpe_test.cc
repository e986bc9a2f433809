#include "text/tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "testing/paths.h"

namespace k3::text {
namespace {

const BpeRanks& KimiRanks() {
  static auto* ranks = new BpeRanks(
      BpeRanks::Parse(testing::ReadFileOrDie(testing::SharedDir() + "/kimi/k25/tiktoken.model"))
          .value());
  return *ranks;
}

// Tiktoken's merge rule, written as plainly as possible: the reference the fast paths must match.
std::vector<TokenId> NaiveMerge(const BpeRanks& ranks, std::string_view piece) {
  std::vector<std::string> parts;
  for (char c : piece) parts.emplace_back(1, c);
  for (;;) {
    TokenId best = kNoRank;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      TokenId rank = ranks.Find(parts[i] + parts[i + 1]);
      if (rank < best) best = rank, best_idx = i;
    }
    if (best == kNoRank) break;
    parts[best_idx] += parts[best_idx + 1];
    parts.erase(parts.begin() + best_idx + 1);
  }
  std::vector<TokenId> ids;
  for (const auto& p : parts) ids.push_back(ranks.Find(p));
  return ids;
}

TEST(BpeRanksTest, ParsesKimiAndFindsTokens) {
  const BpeRanks& ranks = KimiRanks();
  EXPECT_EQ(ranks.num_tokens(), 163584u);
  EXPECT_EQ(ranks.Find("!"), 0u);
  EXPECT_EQ(ranks.Find("Hello"), 19180u);
  EXPECT_EQ(ranks.Bytes(2695), " world");
  EXPECT_EQ(ranks.Find("no-such-token-anywhere-xyz"), kNoRank);
}

TEST(BpeRanksTest, RejectsBrokenFilesNamingTheLine) {
  auto bad_base64 = BpeRanks::Parse("IQ== 0\n*** 1\n");
  ASSERT_FALSE(bad_base64.ok());
  EXPECT_NE(bad_base64.status().message().find("line 2"), std::string::npos);
  auto duplicate_rank = BpeRanks::Parse("IQ== 0\nIg== 0\n");
  EXPECT_NE(duplicate_rank.status().message().find("duplicate rank"), std::string::npos);
  auto missing_bytes = BpeRanks::Parse("IQ== 0\n");
  EXPECT_NE(missing_bytes.status().message().find("single byte"), std::string::npos);
  EXPECT_FALSE(BpeRanks::Parse("IQ== x\n").ok());
  EXPECT_FALSE(BpeRanks::Parse("").ok());
}

TEST(BpeTest, SmallTreeAndNaiveAgreeOnRandomPieces) {
  const BpeRanks& ranks = KimiRanks();
  std::mt19937 rng(3);
  const std::string alphabet = "aeinrst ETAO_-.0123\xC3\xA9\xE4\xB8\xAD";
  for (int round = 0; round < 3000; ++round) {
    std::string piece;
    size_t length = 2 + rng() % 60;
    for (size_t i = 0; i < length; ++i) piece += alphabet[rng() % alphabet.size()];
    std::vector<TokenId> small, tree;
    BytePairEncodeTree(ranks, piece, &tree);
    if (piece.size() <= kMaxSmallPieceBytes) {
      BytePairEncodeSmall(ranks, piece, &small);
      ASSERT_EQ(small, tree) << piece;
    }
    if (round % 10 == 0) {
      ASSERT_EQ(tree, NaiveMerge(ranks, piece)) << piece;
    }
  }
}

TEST(BpeTest, LongPieceIsExactAndRoundTrips) {
  const BpeRanks& ranks = KimiRanks();
  std::mt19937 rng(5);
  std::string piece;
  for (int i = 0; i < 200000; ++i) piece += static_cast<char>('a' + rng() % 26);
  std::vector<TokenId> ids;
  BytePairEncode(ranks, piece, &ids);
  std::string back;
  for (TokenId id : ids) back += ranks.Bytes(id);
  EXPECT_EQ(back, piece);
  std::vector<TokenId> naive_prefix = NaiveMerge(ranks, piece.substr(0, 3000));
  std::vector<TokenId> tree_prefix;
  BytePairEncodeTree(ranks, piece.substr(0, 3000), &tree_prefix);
  EXPECT_EQ(tree_prefix, naive_prefix);
}

}  // namespace
}  // namespace k3::text
