// Internal consistency of the forward pass on the tiny generated checkpoints, independent of the
// reference: prefill of N tokens == N single-token decodes; a prompt split into chunks == one
// prefill; a batch of sequences == each alone; bad input is refused with nothing written; a wrong
// checkpoint fails at load naming the tensor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "model/model.h"
#include "model/model_test_util.h"

namespace k3::model {
namespace {

using testing::FamilyDir;

class ConsistencyTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto loaded = Model::Load(FamilyDir(GetParam()) + "/model", &pool_);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    model_ = std::move(*loaded);
    prompt_ = testing::LoadReference(GetParam()).prompt;
  }

  // Logits for every prompt position, feeding the prompt in pieces of the given sizes.
  std::vector<float> RunInPieces(const std::vector<int>& piece_sizes, const ForwardOptions& opt) {
    const auto& c = model_->config();
    KdaStatePool states(c, 2);
    MlaCache cache(c, 8, 16);
    std::vector<int32_t> pages = {5, 2, 7, 0, 1, 3};  // deliberately out of order
    std::vector<float> logits;
    int64_t pos = 0;
    for (int n : piece_sizes) {
      SequenceInput seq{{prompt_.data() + pos, static_cast<size_t>(n)}, pos, 1, pages, n};
      ForwardResult out;
      EXPECT_TRUE(model_->Forward({&seq, 1}, opt, states, cache, &out).ok());
      logits.insert(logits.end(), out.logits.begin(), out.logits.end());
      pos += n;
    }
    return logits;
  }

  base::ThreadPool pool_{2};
  std::unique_ptr<Model> model_;
  std::vector<int32_t> prompt_;
};

double MaxRelative(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return diff / scale;
}

TEST_P(ConsistencyTest, PrefillEqualsTokenByTokenDecode) {
  const int n = static_cast<int>(prompt_.size());
  ForwardOptions opt;
  auto whole = RunInPieces({n}, opt);
  auto singles = RunInPieces(std::vector<int>(n, 1), opt);
  ASSERT_EQ(whole.size(), singles.size());
  EXPECT_LT(MaxRelative(singles, whole), 1e-4);
}

TEST_P(ConsistencyTest, ChunkedPrefillEqualsOnePrefill) {
  const int n = static_cast<int>(prompt_.size());
  ForwardOptions opt;
  opt.kda_mode = KdaMode::kChunked;
  opt.kda_chunk = 8;
  opt.mla_gemm_rows = 4;  // later pieces attend to earlier ones through the GEMM form too
  auto whole = RunInPieces({n}, opt);
  auto pieces = RunInPieces({5, 11, n - 16}, opt);
  EXPECT_LT(MaxRelative(pieces, whole), 1e-4);
}

TEST_P(ConsistencyTest, BatchedSequencesEqualEachAlone) {
  const auto& c = model_->config();
  ForwardOptions opt;
  std::vector<int32_t> a(prompt_.begin(), prompt_.begin() + 9), b(prompt_.rbegin(), prompt_.rend());
  auto alone = [&](const std::vector<int32_t>& ids) {
    KdaStatePool states(c, 1);
    MlaCache cache(c, 4, 16);
    std::vector<int32_t> pages = {0, 1, 2, 3};
    SequenceInput seq{ids, 0, 0, pages, static_cast<int64_t>(ids.size())};
    ForwardResult out;
    EXPECT_TRUE(model_->Forward({&seq, 1}, opt, states, cache, &out).ok());
    return out.logits;
  };
  KdaStatePool states(c, 3);
  MlaCache cache(c, 8, 16);
  std::vector<int32_t> pages_a = {6, 1}, pages_b = {0, 3, 5};
  SequenceInput batch[2] = {{a, 0, 2, pages_a, static_cast<int64_t>(a.size())},
                            {b, 0, 0, pages_b, static_cast<int64_t>(b.size())}};
  ForwardResult out;
  ASSERT_TRUE(model_->Forward(batch, opt, states, cache, &out).ok());
  std::vector<float> expected = alone(a), second = alone(b);
  expected.insert(expected.end(), second.begin(), second.end());
  // Matrix products over different row counts may sum in a different order: float rounding only.
  EXPECT_LT(MaxRelative(out.logits, expected), 1e-4);
}

TEST_P(ConsistencyTest, BadInputIsRefused) {
  const auto& c = model_->config();
  KdaStatePool states(c, 1);
  MlaCache cache(c, 2, 16);
  std::vector<int32_t> pages = {0, 1};
  ForwardResult out;
  std::vector<int32_t> bad_id = {1, c.vocab};
  SequenceInput seq{bad_id, 0, 0, pages, 1};
  EXPECT_EQ(model_->Forward({&seq, 1}, {}, states, cache, &out).code(),
            base::StatusCode::kOutOfRange);
  std::vector<int32_t> long_prompt(40, 1);
  seq = {long_prompt, 0, 0, pages, false};  // 40 tokens need 3 pages of 16
  EXPECT_EQ(model_->Forward({&seq, 1}, {}, states, cache, &out).code(),
            base::StatusCode::kInvalidArgument);
  std::vector<int32_t> bad_pages = {0, 9};
  seq = {prompt_, 0, 0, bad_pages, false};
  EXPECT_EQ(model_->Forward({&seq, 1}, {}, states, cache, &out).code(),
            base::StatusCode::kInvalidArgument);
  seq = {prompt_, 0, 4, pages, false};
  if (c.num_kda_layers() > 0) {
    EXPECT_EQ(model_->Forward({&seq, 1}, {}, states, cache, &out).code(),
              base::StatusCode::kInvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ConsistencyTest,
                         ::testing::Values("k3", "kimi_linear", "k2", "k25"),
                         [](const auto& info) { return info.param; });

// Copies a family's checkpoint and lets the test damage the copy.
std::filesystem::path CopyCheckpoint(const std::string& family, const std::string& name) {
  auto dst =
      std::filesystem::temp_directory_path() / ("k3_model_" + name + std::to_string(getpid()));
  std::filesystem::remove_all(dst);
  std::filesystem::copy(FamilyDir(family) + "/model", dst);
  return dst;
}

TEST(ModelLoad, MissingTensorIsNamed) {
  auto dir = CopyCheckpoint("k3", "missing");
  auto index_path = dir / "model.safetensors.index.json";
  auto index = nlohmann::json::parse(k3::testing::ReadFileOrDie(index_path));
  const std::string victim =
      "language_model.model.layers.1.block_sparse_moe.experts.3.w2.weight_scale";
  ASSERT_TRUE(index["weight_map"].contains(victim));
  index["weight_map"].erase(victim);
  std::ofstream(index_path) << index.dump();
  auto loaded = Model::Load(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(victim), std::string::npos)
      << loaded.status().ToString();
  std::filesystem::remove_all(dir);
}

TEST(ModelLoad, ShapeMismatchIsNamed) {
  auto dir = CopyCheckpoint("kimi_linear", "shape");
  auto config = nlohmann::json::parse(k3::testing::ReadFileOrDie(dir / "config.json"));
  config["moe_intermediate_size"] = 96;  // the stored experts are 64 wide
  std::ofstream(dir / "config.json") << config.dump();
  auto loaded = Model::Load(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("experts.0.w1.weight"), std::string::npos)
      << loaded.status().ToString();
  std::filesystem::remove_all(dir);
}

TEST(ModelLoad, Int4ExpertsWithoutTheirQuantizationConfigAreRefused) {
  auto dir = CopyCheckpoint("k25", "int4config");
  auto config = nlohmann::json::parse(k3::testing::ReadFileOrDie(dir / "config.json"));
  config["text_config"].erase("quantization_config");
  std::ofstream(dir / "config.json") << config.dump();
  auto loaded = Model::Load(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("pack-quantized"), std::string::npos)
      << loaded.status().ToString();
  std::filesystem::remove_all(dir);
}

// Overwrites the first int32 of tensor `name` in the shard that holds it.
void OverwriteFirstInt32(const std::filesystem::path& dir, const std::string& name, int32_t value) {
  auto index =
      nlohmann::json::parse(k3::testing::ReadFileOrDie(dir / "model.safetensors.index.json"));
  const std::filesystem::path shard = dir / index["weight_map"][name].get<std::string>();
  std::fstream file(shard, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header_bytes = 0;
  file.read(reinterpret_cast<char*>(&header_bytes), sizeof header_bytes);
  std::string header(header_bytes, '\0');
  file.read(header.data(), static_cast<std::streamsize>(header_bytes));
  const int64_t begin = nlohmann::json::parse(header)[name]["data_offsets"][0].get<int64_t>();
  file.seekp(static_cast<std::streamoff>(8 + header_bytes + begin));
  file.write(reinterpret_cast<const char*>(&value), sizeof value);
}

TEST(ModelLoad, Int4WeightShapeThatDisagreesIsNamed) {
  auto dir = CopyCheckpoint("k25", "int4shape");
  const std::string victim = "language_model.model.layers.1.mlp.experts.2.up_proj.weight_shape";
  OverwriteFirstInt32(dir, victim, 4096);
  auto loaded = Model::Load(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(victim), std::string::npos)
      << loaded.status().ToString();
  std::filesystem::remove_all(dir);
}

// The loader marks FP8 matrices without NaN codes (the decode kernels then skip their check);
// one NaN code in kv_b unmarks kv_b and its transposed key halves, and nothing else.
TEST(ModelLoad, Fp8NanCodesAreFoundAtLoad) {
  auto dir = CopyCheckpoint("k2", "fp8nan");
  OverwriteFirstInt32(dir, "model.layers.0.self_attn.kv_b_proj.weight", 0x00007F00);
  auto loaded = Model::Load(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const MlaWeights& first = (*loaded)->weights().layers[0].mla;
  const MlaWeights& second = (*loaded)->weights().layers[1].mla;
  ASSERT_EQ(first.kv_b.format, kernels::WeightFormat::kFp8Block);
  EXPECT_FALSE(first.kv_b.fp8_nan_free);
  EXPECT_FALSE(first.kv_b_absorbed.layout().keys_t.fp8_nan_free);
  EXPECT_TRUE(first.o.fp8_nan_free);
  EXPECT_TRUE(second.kv_b.fp8_nan_free);
  EXPECT_TRUE(second.kv_b_absorbed.layout().keys_t.fp8_nan_free);
  std::filesystem::remove_all(dir);
}

TEST(ModelLoad, UnknownFamilyIsRefused) {
  auto dir = CopyCheckpoint("k2", "family");
  auto config = nlohmann::json::parse(k3::testing::ReadFileOrDie(dir / "config.json"));
  config["model_type"] = "llama";
  std::ofstream(dir / "config.json") << config.dump();
  auto loaded = Model::Load(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("llama"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace k3::model
