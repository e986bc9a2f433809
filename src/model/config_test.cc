// ParseModelConfig on the real published configs in ../shared/kimi: the values the spec lists
// (spec/model.md §1, §3.1) must come out, including the 1-based layer lists.
#include "model/config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernels/matmul.h"
#include "model/weight_quant.h"
#include "testing/paths.h"

namespace k3::model {
namespace {

ModelConfig Parse(const std::string& folder) {
  auto config = ParseModelConfig(
      k3::testing::ReadFileOrDie(k3::testing::SharedDir() + "/kimi/" + folder + "/config.json"));
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : ModelConfig{};
}

TEST(ModelConfig, KimiK3) {
  ModelConfig c = Parse("k3");
  EXPECT_EQ(c.family, Family::kKimiK3);
  EXPECT_EQ(c.hidden, 7168);
  EXPECT_EQ(c.num_layers, 93);
  EXPECT_EQ(c.num_kda_layers(), 69);
  EXPECT_EQ(c.num_mla_layers(), 24);
  // 1-based full_attn_layers 4, 8, ..., 92, 93 are 0-based 3, 7, ..., 91, 92; layer 0 is KDA.
  EXPECT_EQ(c.layer_kinds[0], LayerKind::kKda);
  EXPECT_EQ(c.layer_kinds[3], LayerKind::kMla);
  EXPECT_EQ(c.layer_kinds[90], LayerKind::kKda);
  EXPECT_EQ(c.layer_kinds[91], LayerKind::kMla);
  EXPECT_EQ(c.layer_kinds[92], LayerKind::kMla);
  EXPECT_EQ(c.kda.num_heads, 96);
  EXPECT_EQ(c.kda.head_dim, 128);
  EXPECT_TRUE(c.kda.lower_bound_gate);
  EXPECT_FLOAT_EQ(c.kda.gate_lower_bound, -5.0f);
  EXPECT_TRUE(c.kda.full_rank_output_gate);
  EXPECT_EQ(c.mla.q_lora_rank, 1536);
  EXPECT_EQ(c.mla.cache_dim(), 576);
  EXPECT_TRUE(c.mla.output_gate);
  EXPECT_FALSE(c.mla.rope.enabled);
  EXPECT_FLOAT_EQ(c.mla.kv_norm_eps, 1e-5f);
  EXPECT_EQ(c.moe.num_experts, 896);
  EXPECT_EQ(c.moe.top_k, 16);
  EXPECT_EQ(c.moe.num_shared, 2);
  EXPECT_EQ(c.moe.latent_dim, 3584);
  EXPECT_TRUE(c.moe.latent_norm);
  EXPECT_FLOAT_EQ(c.moe.routed_scaling, 1.0f);
  EXPECT_EQ(c.activation, Activation::kSitu);
  EXPECT_EQ(c.attn_res_block_size, 12);
  EXPECT_TRUE(c.mxfp4_experts);
  EXPECT_EQ(c.first_k_dense, 1);
  EXPECT_EQ(c.eos_id, 163586);
  EXPECT_EQ(c.max_position, 1048576);
}

TEST(ModelConfig, KimiK25IsDeepseekV3WithYarnAndInt4Experts) {
  // The real K2.5 config: the text model under text_config, routed experts compressed-tensors
  // "pack-quantized" INT4 (checkpoints.md A1.1).
  std::string text = k3::testing::ReadFileOrDie(k3::testing::SharedDir() + "/kimi/k25/config.json");
  auto parsed = ParseModelConfig(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ModelConfig c = *parsed;
  EXPECT_EQ(c.family, Family::kDeepseekV3);
  EXPECT_TRUE(c.int4_experts);
  EXPECT_FALSE(c.mxfp4_experts);
  EXPECT_EQ(c.fp8_block, 0);
  EXPECT_EQ(c.num_layers, 61);
  EXPECT_EQ(c.num_mla_layers(), 61);
  EXPECT_EQ(c.mla.num_heads, 64);
  EXPECT_TRUE(c.mla.rope.enabled);
  EXPECT_TRUE(c.mla.rope.yarn);
  EXPECT_DOUBLE_EQ(c.mla.rope.theta, 50000.0);
  EXPECT_DOUBLE_EQ(c.mla.rope.factor, 64.0);
  EXPECT_DOUBLE_EQ(c.mla.rope.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(c.mla.rope.beta_slow, 1.0);
  EXPECT_EQ(c.mla.rope.original_max_position, 4096);
  EXPECT_EQ(c.moe.num_experts, 384);
  EXPECT_EQ(c.moe.top_k, 8);
  EXPECT_FLOAT_EQ(c.moe.routed_scaling, 2.827f);
}

TEST(ModelConfig, Int4SchemesWeCannotDecodeAreRefusedByName) {
  const std::string text =
      k3::testing::ReadFileOrDie(k3::testing::SharedDir() + "/kimi/k25/config.json");
  const struct {
    const char* field;
    nlohmann::json value;
  } cases[] = {{"num_bits", 8},   {"group_size", 128},     {"symmetric", false},
               {"type", "float"}, {"strategy", "channel"}, {"actorder", "group"},
               {"dynamic", true}};
  for (const auto& bad : cases) {
    auto json = nlohmann::json::parse(text);
    json["text_config"]["quantization_config"]["config_groups"]["group_0"]["weights"][bad.field] =
        bad.value;
    auto refused = ParseModelConfig(json.dump());
    ASSERT_FALSE(refused.ok()) << bad.field;
    EXPECT_EQ(refused.status().code(), base::StatusCode::kUnimplemented) << bad.field;
    EXPECT_NE(refused.status().message().find(bad.field), std::string::npos)
        << refused.status().message();
  }
}

TEST(ModelConfig, ErrorsNameTheField) {
  auto missing = ParseModelConfig(R"({"model_type": "kimi_linear", "vocab_size": 10})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("hidden_size"), std::string::npos);
  auto wrong_type = ParseModelConfig(R"({"model_type": "kimi_k2", "hidden_size": "big"})");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_FALSE(ParseModelConfig("not json").ok());
  EXPECT_FALSE(ParseModelConfig(R"({"model_type": "llama"})").ok());
}

TEST(WeightQuantTest, ParsesEveryValueAndNamesABadOne) {
  EXPECT_EQ(*ParseWeightQuant("none"), WeightQuant::kNone);
  EXPECT_EQ(*ParseWeightQuant("int8"), WeightQuant::kInt8);
  EXPECT_EQ(*ParseWeightQuant("bf16-panels"), WeightQuant::kBf16Panels);
  EXPECT_EQ(*ParseWeightQuant("auto"), WeightQuant::kAuto);
  for (WeightQuant q :
       {WeightQuant::kAuto, WeightQuant::kNone, WeightQuant::kInt8, WeightQuant::kBf16Panels}) {
    EXPECT_EQ(*ParseWeightQuant(WeightQuantName(q)), q);
    if (q != WeightQuant::kAuto) {
      EXPECT_EQ(ResolveWeightQuant(q), q);
    }
  }
  // auto: panels exactly where their tiles run, unless BF16 GEMM products were asked for.
  EXPECT_EQ(ResolveWeightQuant(WeightQuant::kAuto),
            kernels::Bf16PanelsRunFast() ? WeightQuant::kBf16Panels : WeightQuant::kNone);
  const kernels::GemmPrecision saved = kernels::GetGemmPrecision();
  kernels::SetGemmPrecision(kernels::GemmPrecision::kBf16);
  EXPECT_EQ(ResolveWeightQuant(WeightQuant::kAuto), WeightQuant::kNone);
  kernels::SetGemmPrecision(saved);
  const auto bad = ParseWeightQuant("panels");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("'panels'"), std::string::npos);
}

}  // namespace
}  // namespace k3::model
