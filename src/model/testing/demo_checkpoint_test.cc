// The demo checkpoint: its tokenizer loads with K3's special layout, the model loads and generates,
// writing is deterministic and idempotent, and an incomplete folder is repaired.
#include "model/testing/demo_checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "model/greedy.h"
#include "model/model.h"
#include "testing/paths.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::model::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A fresh folder under the temp directory, removed with the test suite.
fs::path TempRoot() {
  static const fs::path root =
      fs::temp_directory_path() / ("k3_demo_test_" + std::to_string(getpid()));
  return root;
}

std::map<std::string, std::string> ReadAllFiles(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = k3::testing::ReadFileOrDie(entry.path().string());
  }
  return files;
}

class DemoCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(TempRoot());
    dir_ = TempRoot() / "demo";
    const auto start = Clock::now();
    base::Status status = WriteDemoCheckpoint(dir_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    std::printf("[ demo     ] WriteDemoCheckpoint: %.1f ms\n", MsSince(start));
  }
  static void TearDownTestSuite() { fs::remove_all(TempRoot()); }

  static std::unique_ptr<text::Tokenizer> LoadTokenizer() {
    auto tokenizer = text::Tokenizer::FromKimiDirectory(dir_.string());
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
  }

  static inline fs::path dir_;
};

TEST_F(DemoCheckpointTest, FolderHasEveryFile) {
  EXPECT_TRUE(HasDemoCheckpoint(dir_));
  for (const char* name : {"config.json", "generation_config.json", "tiktoken.model",
                           "tokenizer_config.json", "model.safetensors.index.json"}) {
    EXPECT_TRUE(fs::is_regular_file(dir_ / name)) << name;
  }
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".staging")) << "staging left over";
  }
}

TEST_F(DemoCheckpointTest, TokenizerRoundTripsAndKnowsK3Specials) {
  auto tokenizer = LoadTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  const auto first = static_cast<text::TokenId>(tokenizer->ranks().size());
  EXPECT_GT(first, 256u);  // merges beyond the single bytes
  EXPECT_EQ(tokenizer->vocab_size(), first + 256u);

  auto ids = tokenizer->Encode("<|open|>message<|sep|>", text::SpecialMode::kAll);
  ASSERT_TRUE(ids.ok());
  ASSERT_GE(ids->size(), 3u);
  EXPECT_EQ(ids->front(), first + 3);  // <|open|>
  EXPECT_EQ(ids->back(), first + 5);   // <|sep|>
  for (size_t i = 1; i + 1 < ids->size(); ++i) EXPECT_LT((*ids)[i], first);
  auto decoded = tokenizer->Decode(*ids);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, "<|open|>message<|sep|>");

  auto end = tokenizer->Encode("<|end_of_msg|><|close|>[BOS][PAD]", text::SpecialMode::kAll);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, (std::vector<text::TokenId>{first + 2, first + 4, first, first + 255}));

  auto plain = tokenizer->Encode("<|open|>", text::SpecialMode::kNone);
  ASSERT_TRUE(plain.ok());
  for (text::TokenId id : *plain) EXPECT_LT(id, first);
}

TEST_F(DemoCheckpointTest, TokenizerMergesEnglishAndEncodesAnyText) {
  auto tokenizer = LoadTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  const std::string english = "Hello, the model would like to write a new story about people.";
  auto ids = tokenizer->Encode(english);
  ASSERT_TRUE(ids.ok());
  std::printf("[ demo     ] %zu ranks; %zu bytes of English -> %zu tokens\n",
              tokenizer->ranks().size(), english.size(), ids->size());
  EXPECT_LT(ids->size(), english.size() / 2);
  for (const std::string& text : {english, std::string("h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C 42"),
                                  std::string("  tabs\tand\nnewlines\r\n")}) {
    auto encoded = tokenizer->Encode(text);
    ASSERT_TRUE(encoded.ok());
    auto back = tokenizer->Decode(*encoded);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, text);
  }
}

// Every named special of K3's tokenizer_config.json sits at the same offset after the ranks.
TEST_F(DemoCheckpointTest, SpecialsMatchK3Shifted) {
  const std::string k3_path = k3::testing::SharedDir() + "/kimi/k3/tokenizer_config.json";
  if (!fs::exists(k3_path)) GTEST_SKIP() << "no " << k3_path;
  const auto k3 = nlohmann::json::parse(k3::testing::ReadFileOrDie(k3_path));
  const auto demo =
      nlohmann::json::parse(k3::testing::ReadFileOrDie((dir_ / "tokenizer_config.json").string()));
  auto tokenizer = LoadTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  const int64_t shift = static_cast<int64_t>(tokenizer->ranks().size()) - 163584;
  ASSERT_EQ(demo["added_tokens_decoder"].size(), k3["added_tokens_decoder"].size());
  for (const auto& [id, entry] : k3["added_tokens_decoder"].items()) {
    const std::string demo_id = std::to_string(std::stoll(id) + shift);
    ASSERT_TRUE(demo["added_tokens_decoder"].contains(demo_id)) << id;
    EXPECT_EQ(demo["added_tokens_decoder"][demo_id], entry) << id;
  }
  for (const char* key : {"additional_special_tokens", "bos_token", "eos_token", "pad_token",
                          "unk_token", "tokenizer_class", "clean_up_tokenization_spaces"}) {
    EXPECT_EQ(demo[key], k3[key]) << key;
  }
}

TEST_F(DemoCheckpointTest, ModelLoadsAndGenerates) {
  auto tokenizer = LoadTokenizer();
  ASSERT_NE(tokenizer, nullptr);
  base::ThreadPool pool(2);
  const auto start = Clock::now();
  auto loaded = model::Model::Load(dir_, &pool);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::printf("[ demo     ] Model::Load: %.1f ms, %.2f MB mapped\n", MsSince(start),
              (*loaded)->checkpoint().mapped_bytes() / 1e6);
  const model::Model& m = **loaded;
  const model::ModelConfig& c = m.config();
  const auto first = static_cast<int64_t>(tokenizer->ranks().size());
  EXPECT_EQ(c.family, model::Family::kKimiK3);
  EXPECT_EQ(c.vocab, static_cast<int>(tokenizer->vocab_size()));
  EXPECT_EQ(c.bos_id, first);
  EXPECT_EQ(c.eos_id, first + 2);  // <|end_of_msg|>
  EXPECT_EQ(c.max_position, 131072);
  EXPECT_EQ(c.num_kda_layers(), 3);
  EXPECT_EQ(c.num_mla_layers(), 1);
  EXPECT_TRUE(c.mxfp4_experts);

  auto prompt = tokenizer->Encode("<|open|>user<|sep|>Hello there<|end_of_msg|>");
  ASSERT_TRUE(prompt.ok());
  const std::vector<int32_t> ids(prompt->begin(), prompt->end());
  model::GreedyOptions options;
  options.max_tokens = 8;
  options.stop_at_eos = false;
  const auto gen_start = Clock::now();
  auto result = model::GreedyGenerate(m, ids, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::printf("[ demo     ] %zu prompt tokens + 8 generated: %.1f ms\n", ids.size(),
              MsSince(gen_start));
  ASSERT_EQ(result->generated.size(), 8u);
  for (float v : result->step_logits) ASSERT_TRUE(std::isfinite(v));
  std::vector<text::TokenId> generated(result->generated.begin(), result->generated.end());
  for (text::TokenId id : generated) EXPECT_LT(id, tokenizer->vocab_size());
  auto text = tokenizer->Decode(generated);
  ASSERT_TRUE(text.ok());
  std::printf("[ demo     ] generated (noise): \"%s\"\n", text->c_str());
}

TEST_F(DemoCheckpointTest, SecondWriteIsANoOp) {
  std::map<std::string, fs::file_time_type> times;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    times[entry.path().filename().string()] = entry.last_write_time();
  }
  const auto start = Clock::now();
  ASSERT_TRUE(WriteDemoCheckpoint(dir_).ok());
  std::printf("[ demo     ] second WriteDemoCheckpoint: %.2f ms\n", MsSince(start));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(times[entry.path().filename().string()], entry.last_write_time())
        << entry.path().filename();
  }
}

TEST_F(DemoCheckpointTest, WritingIsDeterministic) {
  const fs::path other = TempRoot() / "again";
  ASSERT_TRUE(WriteDemoCheckpoint(other).ok());
  EXPECT_TRUE(ReadAllFiles(dir_) == ReadAllFiles(other)) << "the two writes differ";
}

TEST_F(DemoCheckpointTest, IncompleteFolderIsRewritten) {
  const fs::path broken = TempRoot() / "broken";
  ASSERT_TRUE(WriteDemoCheckpoint(broken).ok());
  fs::resize_file(broken / "tiktoken.model", 10);  // a truncated file
  EXPECT_FALSE(HasDemoCheckpoint(broken));
  ASSERT_TRUE(WriteDemoCheckpoint(broken).ok());
  EXPECT_TRUE(HasDemoCheckpoint(broken));
  fs::remove(broken / "model-00002-of-00005.safetensors");  // a missing shard
  EXPECT_FALSE(HasDemoCheckpoint(broken));
  ASSERT_TRUE(WriteDemoCheckpoint(broken).ok());
  EXPECT_TRUE(ReadAllFiles(dir_) == ReadAllFiles(broken));
}

TEST(DemoCacheDirTest, UsesXdgCacheHomeThenHome) {
  const fs::path root = TempRoot() / "env";
  DemoDirEnvironment env{(root / "xdg").string(), (root / "home").string(), root / "tmp"};
  EXPECT_EQ(DemoCacheDir(env), root / "xdg" / "k3serve" / "demo-v3");
  env.xdg_cache_home = "relative";  // the XDG spec ignores relative paths
  EXPECT_EQ(DemoCacheDir(env), root / "home" / ".cache" / "k3serve" / "demo-v3");
  env.xdg_cache_home.clear();
  env.home.clear();
  EXPECT_EQ(DemoCacheDir(env), root / "tmp" / "k3serve" / "demo-v3");
  fs::remove_all(TempRoot());
}

}  // namespace
}  // namespace k3::model::testing
