// The tokenizer against the goldens in ../shared/goldens/tokenizer, which were produced with the
// official tiktoken Rust core (native and WASM builds agreeing) and Moonshot's tokenization_kimi.py
// chunking. See ../shared/goldens/README.md for how each file was made.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/utf8.h"
#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"
#include "text/tokenizer/moonshot_chunking.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

using nlohmann::json;

const Tokenizer& K25() { return testing::KimiTokenizer("k25"); }
const Tokenizer& K3() { return testing::KimiTokenizer("k3"); }
std::string Golden(const std::string& name) {
  return testing::SharedDir() + "/goldens/tokenizer/" + name;
}
std::vector<TokenId> Ids(const json& j) { return j.get<std::vector<TokenId>>(); }

TEST(TokenizerGoldenTest, KimiVocabularyShape) {
  EXPECT_EQ(K25().ranks().num_tokens(), 163584u);
  EXPECT_EQ(K25().vocab_size(), 163840u);
  EXPECT_EQ(*K25().specials().IdOf("<|im_end|>"), 163586u);
  EXPECT_EQ(*K3().specials().IdOf("<|end_of_msg|>"), 163586u);
  EXPECT_EQ(*K3().specials().IdOf("<|reserved_token_163600|>"), 163600u);
  EXPECT_FALSE(K3().specials().IdOf("<|im_end|>").has_value());
}

TEST(TokenizerGoldenTest, EncodeAllowedSpecial) {
  auto cases = testing::ReadJsonLines(Golden("kimi_encode.jsonl"));
  ASSERT_GE(cases.size(), 300u);
  for (const json& c : cases) {
    std::string text = c["text"];
    auto ids = K25().Encode(text, SpecialMode::kAll);
    ASSERT_TRUE(ids.ok()) << c["id"] << ": " << ids.status().ToString();
    EXPECT_EQ(*ids, Ids(c["ids"])) << c["id"];
    auto ids_k3 = K3().Encode(text, SpecialMode::kAll);
    EXPECT_EQ(*ids_k3, Ids(c.contains("ids_k3") ? c["ids_k3"] : c["ids"])) << c["id"];
  }
}

TEST(TokenizerGoldenTest, EncodeNoSpecial) {
  for (const json& c : testing::ReadJsonLines(Golden("kimi_encode_nospecial.jsonl"))) {
    std::string text = c["text"];
    EXPECT_EQ(*K25().Encode(text, SpecialMode::kNone), Ids(c["ids"])) << c["id"];
    EXPECT_EQ(*K3().Encode(text, SpecialMode::kNone), Ids(c["ids"])) << c["id"];
    EXPECT_EQ(*K25().Encode(text, SpecialMode::kAll), Ids(c["ids_allowed_special"])) << c["id"];
  }
}

TEST(TokenizerGoldenTest, EncodeLongWithMoonshotChunking) {
  auto cases = testing::ReadJsonLines(Golden("kimi_encode_long.jsonl"));
  ASSERT_EQ(cases.size(), 5u);
  for (const json& c : cases) {
    std::string text = c.contains("text") ? c["text"].get<std::string>()
                                          : testing::ReadFileOrDie(Golden("long_mixed_500k.txt"));
    auto ids = K25().Encode(text, SpecialMode::kAll);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, Ids(c["ids"])) << c["id"];
    base::ThreadPool pool(4);
    std::vector<TokenId> parallel;
    ASSERT_TRUE(K25().Encode(text, EncodeOptions{SpecialMode::kAll, &pool}, &parallel).ok());
    EXPECT_EQ(parallel, Ids(c["ids"])) << c["id"] << " (parallel)";
  }
}

TEST(TokenizerGoldenTest, MoonshotChunkLengthsInCodePoints) {
  for (const json& c : testing::ReadJsonLines(Golden("kimi_encode_long.jsonl"))) {
    std::string text = c.contains("text") ? c["text"].get<std::string>()
                                          : testing::ReadFileOrDie(Golden("long_mixed_500k.txt"));
    std::vector<size_t> lengths;
    size_t begin = 0;
    for (size_t end : MoonshotChunkEnds(text)) {
      lengths.push_back(base::CountCodePoints(std::string_view(text).substr(begin, end - begin)));
      begin = end;
    }
    EXPECT_EQ(lengths, c["chunk_char_lengths"].get<std::vector<size_t>>()) << c["id"];
  }
}

TEST(TokenizerGoldenTest, Decode) {
  for (const json& c : testing::ReadJsonLines(Golden("kimi_decode.jsonl"))) {
    std::vector<TokenId> ids = Ids(c["ids"]);
    auto text = K25().Decode(ids);
    ASSERT_TRUE(text.ok()) << c["id"];
    EXPECT_EQ(*text, c["text"].get<std::string>()) << c["id"];
    EXPECT_EQ(base::IsValidUtf8(*K25().DecodeBytes(ids)), c["valid_utf8"].get<bool>()) << c["id"];
    std::string k3_text = c.contains("text_k3") ? c["text_k3"] : c["text"];
    EXPECT_EQ(*K3().Decode(ids), k3_text) << c["id"];
  }
}

TEST(TokenizerGoldenTest, UnknownIdsAreClearErrors) {
  std::vector<TokenId> ids = {19180, 163840};
  auto text = K25().Decode(ids);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), base::StatusCode::kOutOfRange);
  EXPECT_NE(text.status().message().find("163840"), std::string::npos);
}

TEST(TokenizerGoldenTest, RejectsMalformedUtf8WithOffset) {
  auto ids = K25().Encode("abc\xF0\x28xyz");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(ids.status().message().find("byte 3"), std::string::npos);
}

TEST(TokenizerGoldenTest, SegmentsKeepUserSpecialsAsText) {
  std::vector<Segment> segments = {
      {"<|im_user|>user<|im_middle|>", true}, {"<|im_end|>", false}, {"<|im_end|>", true}};
  auto ids = K25().EncodeSegments(segments);
  ASSERT_TRUE(ids.ok());
  std::vector<TokenId> expected = {163587, 2482, 163601, 27, 91, 348, 11129, 91, 29, 163586};
  EXPECT_EQ(*ids, expected);
}

// The parallel path must give exactly the sequential ids, with special tokens, long runs and
// Moonshot cuts falling anywhere relative to its work units.
TEST(TokenizerParallelTest, SameIdsAsSequentialOnLongMixedText) {
  std::mt19937 rng(23);
  const char* atoms[] = {"Hello",  " world",     "\n",    "\n\n",       "  ",
                         "你好",   "<|im_end|>", "1234",  "'s",         "getUserName",
                         "\u00A0", "\r\n",       "/*x*/", "\U0001F600", "<|im_user|"};
  std::string text;
  while (text.size() < 700'000) {
    if (rng() % 500 == 0) text += std::string(30'000, 'z');  // a Moonshot 25K-run cut
    text += atoms[rng() % std::size(atoms)];
  }
  base::ThreadPool pool(3);
  for (SpecialMode mode : {SpecialMode::kAll, SpecialMode::kNone}) {
    std::vector<TokenId> sequential, parallel;
    ASSERT_TRUE(K25().Encode(text, EncodeOptions{mode, nullptr}, &sequential).ok());
    ASSERT_TRUE(K25().Encode(text, EncodeOptions{mode, &pool}, &parallel).ok());
    ASSERT_EQ(parallel, sequential);
    EXPECT_EQ(*K25().Decode(sequential), text);
  }
}

// A special name with a space could straddle a safe split point; the parallel path must then keep
// chunks whole and still agree with the sequential one.
TEST(TokenizerParallelTest, SpecialNamesWithSpacesStayWhole) {
  std::string ranks = testing::ReadFileOrDie(testing::SharedDir() + "/kimi/k25/tiktoken.model");
  TokenizerOptions options;
  options.moonshot_chunking = false;
  auto tokenizer = Tokenizer::FromTiktoken(ranks, {{"hello world", 200000, true}}, options);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::string text;
  for (int i = 0; text.size() < 600'000; ++i) text += i % 3 ? "say hello world\n" : "hello ";
  base::ThreadPool pool(2);
  std::vector<TokenId> sequential, parallel;
  ASSERT_TRUE(
      (*tokenizer)->Encode(text, EncodeOptions{SpecialMode::kAll, nullptr}, &sequential).ok());
  ASSERT_TRUE((*tokenizer)->Encode(text, EncodeOptions{SpecialMode::kAll, &pool}, &parallel).ok());
  EXPECT_EQ(parallel, sequential);
  EXPECT_NE(std::find(sequential.begin(), sequential.end(), 200000u), sequential.end());
}

}  // namespace
}  // namespace k3::text
