#include "text/tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "base/base64.h"
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

// A vocabulary of the 256 single bytes plus `tokens` at ranks 256, 257, ... in the order given.
BpeRanks SyntheticRanks(const std::vector<std::string>& tokens) {
  std::string file;
  for (int b = 0; b < 256; ++b)
    file +=
        base::Base64Encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  for (size_t i = 0; i < tokens.size(); ++i)
    file += base::Base64Encode(tokens[i]) + " " + std::to_string(256 + i) + "\n";
  return BpeRanks::Parse(file).value();
}

std::vector<TokenId> Long(const BpeRanks& ranks, std::string_view piece, bool* used_tree) {
  std::vector<TokenId> ids;
  BytePairEncodeLong(ranks, piece, &ids, used_tree);
  return ids;
}

std::vector<TokenId> Tree(const BpeRanks& ranks, std::string_view piece) {
  std::vector<TokenId> ids;
  BytePairEncodeTree(ranks, piece, &ids);
  return ids;
}

// "bcb" ranks below "bc": merging "bc" can create a pair of lower rank, which must go first.
TEST(BpeTest, LowerRankCreatedByAMergeGoesFirst) {
  const BpeRanks ranks = SyntheticRanks({"bcb", "bc"});
  bool used_tree = true;
  // Tiktoken: "bc"(257) at 0, then ("bc","b") = "bcb"(256) before the second "bc" can form.
  EXPECT_EQ(Long(ranks, "bcbc", &used_tree), (std::vector<TokenId>{256, 'c'}));
  EXPECT_FALSE(used_tree);
  EXPECT_EQ(Long(ranks, "bcbc", nullptr), NaiveMerge(ranks, "bcbc"));
}

// Every "bc" merge creates a lower-rank pair: batching would requeue the rest of the rank each
// time (quadratic), so the piece goes to the tree, with the same result.
TEST(BpeTest, InputsThatDefeatBatchingFallBackToTheTree) {
  const BpeRanks ranks = SyntheticRanks({"bcb", "bc"});
  std::string piece;
  for (int i = 0; i < 20000; ++i) piece += "bc";
  bool used_tree = false;
  std::vector<TokenId> ids = Long(ranks, piece, &used_tree);
  EXPECT_TRUE(used_tree);
  EXPECT_EQ(ids, Tree(ranks, piece));
  EXPECT_EQ(Long(ranks, piece.substr(0, 400), nullptr), NaiveMerge(ranks, piece.substr(0, 400)));
}

// Random vocabularies over a 3-letter alphabet with random ranks have many tokens whose splits
// rank above them, the case the batching must get right.
TEST(BpeTest, LongTreeAndNaiveAgreeOnRandomVocabularies) {
  std::mt19937 rng(11);
  auto random_text = [&](size_t length) {
    std::string text;
    for (size_t i = 0; i < length; ++i) text += static_cast<char>('a' + rng() % 3);
    return text;
  };
  for (int vocab = 0; vocab < 60; ++vocab) {
    std::vector<std::string> tokens;
    for (int t = 0; t < 40; ++t) {
      std::string token = random_text(2 + rng() % 4);
      if (std::find(tokens.begin(), tokens.end(), token) == tokens.end()) tokens.push_back(token);
    }
    const BpeRanks ranks = SyntheticRanks(tokens);
    for (int round = 0; round < 20; ++round) {
      const std::string piece = random_text(2 + rng() % 300);
      const std::vector<TokenId> naive = NaiveMerge(ranks, piece);
      ASSERT_EQ(Long(ranks, piece, nullptr), naive) << "vocabulary " << vocab << ": " << piece;
      ASSERT_EQ(Tree(ranks, piece), naive) << "vocabulary " << vocab << ": " << piece;
    }
  }
}

TEST(BpeTest, SmallLongAndNaiveAgreeOnRandomPieces) {
  const BpeRanks& ranks = KimiRanks();
  std::mt19937 rng(3);
  const std::string alphabet = "aeinrst ETAO_-.0123\xC3\xA9\xE4\xB8\xAD";
  for (int round = 0; round < 3000; ++round) {
    std::string piece;
    size_t length = 2 + rng() % 60;
    for (size_t i = 0; i < length; ++i) piece += alphabet[rng() % alphabet.size()];
    std::vector<TokenId> small;
    const std::vector<TokenId> long_ids = Long(ranks, piece, nullptr);
    ASSERT_EQ(long_ids, Tree(ranks, piece)) << piece;
    if (piece.size() <= kMaxSmallPieceBytes) {
      BytePairEncodeSmall(ranks, piece, &small);
      ASSERT_EQ(small, long_ids) << piece;
    }
    if (round % 10 == 0) {
      ASSERT_EQ(long_ids, NaiveMerge(ranks, piece)) << piece;
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
  bool used_tree = true;
  EXPECT_EQ(ids, Long(ranks, piece, &used_tree));
  EXPECT_FALSE(used_tree);
  EXPECT_EQ(ids, Tree(ranks, piece));
  EXPECT_EQ(Long(ranks, piece.substr(0, 3000), nullptr), NaiveMerge(ranks, piece.substr(0, 3000)));
}

}  // namespace
}  // namespace k3::text
