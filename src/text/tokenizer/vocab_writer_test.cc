// The vocabulary writer: byte-pair training (bytes first, every merge made of two earlier tokens,
// deterministic), tiktoken.model text, K3's tokenizer_config.json layout; and the written files
// load with the project's tokenizer, reach their merges and round-trip text.
#include "text/tokenizer/vocab_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/paths.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

constexpr std::string_view kWords = "the of and to in is you that it he was for on are with";

TEST(VocabWriterTest, TrainsMergesOfEarlierTokensDeterministically) {
  const std::vector<std::string> tokens = TrainBpeVocabulary(kWords, 40);
  ASSERT_EQ(tokens.size(), 256u + 40u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(tokens[b], std::string(1, static_cast<char>(b)));
  std::set<std::string> seen(tokens.begin(), tokens.end());
  EXPECT_EQ(seen.size(), tokens.size()) << "duplicate tokens";
  // Each merge is the concatenation of two tokens of lower rank.
  for (size_t rank = 256; rank < tokens.size(); ++rank) {
    const std::string& t = tokens[rank];
    bool split = false;
    for (size_t cut = 1; cut < t.size() && !split; ++cut) {
      const std::set<std::string> earlier(tokens.begin(), tokens.begin() + rank);
      split = earlier.count(t.substr(0, cut)) && earlier.count(t.substr(cut));
    }
    EXPECT_TRUE(split) << "token " << rank << " '" << t << "'";
  }
  // Weights: the i-th word 10000 / (i + 10) after a space, a third (+1) bare. The heaviest pair
  // is "th" (the, that, with: 1000 + 334 + 588 + 197 + 416 + 139 = 2674); then " i" (in, is, it:
  // 714 + 666 + 555 = 1935) beats " th" (1000 + 588 once "th" is one token).
  EXPECT_EQ(tokens[256], "th");
  EXPECT_EQ(tokens[257], " i");
  EXPECT_EQ(TrainBpeVocabulary(kWords, 40), tokens);
}

TEST(VocabWriterTest, StopsWhenEveryWordIsOneToken) {
  // " ab" (weight 1000) and "ab" (334): "ab" (1334) beats " a" (1000), then " ab"; then every
  // piece is one token.
  const std::vector<std::string> tokens = TrainBpeVocabulary("ab", 100);
  ASSERT_EQ(tokens.size(), 256u + 2u);
  EXPECT_EQ(tokens[256], "ab");
  EXPECT_EQ(tokens[257], " ab");
  EXPECT_EQ(TrainBpeVocabulary("", 10).size(), 256u);
}

TEST(VocabWriterTest, TiktokenTextIsBase64AndRank) {
  const std::string text =
      TiktokenModelText(std::vector<std::string>{std::string(1, '\0'), "a", " the"});
  EXPECT_EQ(text, std::string("AA== 0\nYQ== 1\nIHRoZQ== 2\n"));
}

TEST(VocabWriterTest, TokenizerConfigShiftsK3Specials) {
  const auto config = nlohmann::json::parse(K3TokenizerConfigJson(1000, 4096));
  const auto& added = config["added_tokens_decoder"];
  EXPECT_EQ(added["1000"]["content"], "[BOS]");
  EXPECT_EQ(added["1002"]["content"], "<|end_of_msg|>");
  EXPECT_EQ(added["1003"]["content"], "<|open|>");
  EXPECT_EQ(added["1003"]["special"], false);
  EXPECT_EQ(added["1021"]["content"], "<|media_pad|>");
  EXPECT_EQ(added["1255"]["content"], "[PAD]");
  EXPECT_EQ(config["model_max_length"], 4096);
  EXPECT_EQ(config["eos_token"], "[EOS]");
}

// The same table as Kimi K3's own tokenizer_config.json, shifted to the demo's first special id.
TEST(VocabWriterTest, TokenizerConfigMatchesK3Shifted) {
  const std::string k3_path = k3::testing::SharedDir() + "/kimi/k3/tokenizer_config.json";
  if (!std::filesystem::exists(k3_path)) GTEST_SKIP() << "no " << k3_path;
  const auto k3 = nlohmann::json::parse(k3::testing::ReadFileOrDie(k3_path));
  const int64_t first = 300, shift = first - 163584;
  const auto ours = nlohmann::json::parse(K3TokenizerConfigJson(first, 4096));
  ASSERT_EQ(ours["added_tokens_decoder"].size(), k3["added_tokens_decoder"].size());
  for (const auto& [id, entry] : k3["added_tokens_decoder"].items()) {
    EXPECT_EQ(ours["added_tokens_decoder"][std::to_string(std::stoll(id) + shift)], entry) << id;
  }
  EXPECT_EQ(ours["additional_special_tokens"], k3["additional_special_tokens"]);
}

class WrittenVocabularyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokens_ = new std::vector<std::string>(TrainBpeVocabulary(kWords, 60));
    const int64_t first = static_cast<int64_t>(tokens_->size());
    auto loaded =
        Tokenizer::FromKimiFiles(TiktokenModelText(*tokens_), K3TokenizerConfigJson(first, 4096));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    tokenizer_ = loaded->release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete tokens_;
  }
  static inline std::vector<std::string>* tokens_ = nullptr;
  static inline Tokenizer* tokenizer_ = nullptr;
};

TEST_F(WrittenVocabularyTest, LoadsWithK3SpecialsAfterTheRanks) {
  ASSERT_NE(tokenizer_, nullptr);
  const auto first = static_cast<TokenId>(tokens_->size());
  EXPECT_EQ(tokenizer_->ranks().size(), first);
  EXPECT_EQ(tokenizer_->vocab_size(), first + kK3NumReservedSpecials);
  auto ids = tokenizer_->Encode("[BOS]<|end_of_msg|>[PAD]");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<TokenId>{first + kK3BosOffset, first + kK3EndOfMsgOffset,
                                        first + kK3PadOffset}));
}

// Every word of the training list, after a space, encodes to fewer tokens than bytes, and each
// learned token that is a whole word (" the") encodes to itself: the merges are reachable.
TEST_F(WrittenVocabularyTest, MergesAreReachable) {
  ASSERT_NE(tokenizer_, nullptr);
  std::set<std::string> words;
  std::istringstream in{std::string(kWords)};
  for (std::string w; in >> w;) words.insert(" " + w);
  int whole_words = 0;
  for (size_t rank = 256; rank < tokens_->size(); ++rank) {
    const std::string& t = (*tokens_)[rank];
    if (!words.count(t)) continue;
    ++whole_words;
    auto ids = tokenizer_->Encode(t, SpecialMode::kNone);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, std::vector<TokenId>{static_cast<TokenId>(rank)}) << "'" << t << "'";
  }
  EXPECT_GE(whole_words, 5);
  auto ids = tokenizer_->Encode(" the of and to in is you that", SpecialMode::kNone);
  ASSERT_TRUE(ids.ok());
  EXPECT_LT(ids->size(), 16u);
}

TEST_F(WrittenVocabularyTest, RoundTripsAnyText) {
  ASSERT_NE(tokenizer_, nullptr);
  for (const std::string text : {"Hello, the world is with you.", "h\xC3\xA9llo \xE4\xB8\x96 42",
                                 "  tabs\tand\nnewlines\r\n", "zzz qqq"}) {
    auto ids = tokenizer_->Encode(text, SpecialMode::kNone);
    ASSERT_TRUE(ids.ok());
    auto back = tokenizer_->Decode(*ids);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, text);
  }
}

// Corpus training: pieces weigh their counts and merges never cross a piece boundary, so the
// pieces that occur most become one token each (and encode to it), the first merges come from
// the frequent pieces, and the written vocabulary decodes the corpus's encoding back exactly.
TEST(VocabWriterTest, TrainsOnCorpusPiecesByCount) {
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += "Weather in Paris? call tool=\"get_weather\" 2026-07-14. ";
  for (int i = 0; i < 3; ++i) corpus += "zyx vbk ";
  std::vector<int> progress;
  const std::vector<std::string> tokens =
      TrainBpeVocabularyOnText(corpus, 300, [&](int merges) { progress.push_back(merges); });
  ASSERT_GT(tokens.size(), 256u);
  ASSERT_LT(tokens.size(), 256u + 300u) << "stops once every piece is one token";
  EXPECT_EQ(TrainBpeVocabularyOnText(corpus, 300), tokens) << "deterministic";
  std::set<std::string> seen(tokens.begin(), tokens.end());
  EXPECT_EQ(seen.size(), tokens.size()) << "duplicate tokens";
  for (const char* piece :
       {" Paris", "Weather", " call", " tool", "=\"", "get", "_weather", " in"}) {
    EXPECT_TRUE(seen.count(piece)) << "'" << piece << "' is not one token";
  }
  for (const std::string& t : tokens) {
    EXPECT_EQ(t.find(" Paris?"), std::string::npos) << "a merge crossed a piece boundary: " << t;
  }
  const int64_t first = static_cast<int64_t>(tokens.size());
  auto loaded =
      Tokenizer::FromKimiFiles(TiktokenModelText(tokens), K3TokenizerConfigJson(first, 4096));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto ids = (*loaded)->Encode(" Paris", SpecialMode::kNone);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->size(), 1u);
  auto back = (*loaded)->Decode(*(*loaded)->Encode(corpus, SpecialMode::kNone));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, corpus);
  EXPECT_TRUE(progress.empty() || progress.front() == 256);
  // Counts weigh: the first merges come from the 40-times pieces, none from the 3-times ones.
  const std::vector<std::string> first_merges = TrainBpeVocabularyOnText(corpus, 8);
  for (size_t rank = 256; rank < first_merges.size(); ++rank) {
    const std::string& t = first_merges[rank];
    EXPECT_TRUE(corpus.substr(0, corpus.find("zyx")).find(t) != std::string::npos) << t;
    EXPECT_EQ(std::string(" zyx vbk").find(t), std::string::npos) << t;
  }
}

}  // namespace
}  // namespace k3::text
