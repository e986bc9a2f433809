// The configs of the non-K3 benchmark checkpoints (bench_checkpoint.h): the real configs' field
// names and proportions (../shared/kimi/k25/config.json, Kimi-Linear's config), scaled to about
// 2B parameters so that each family's bytes per token are comparable on a 24 GiB machine.
#include <string>

#include "model/testing/bench_checkpoint.h"

namespace k3::model::testing {
namespace {

using nlohmann::json;

constexpr int kHidden = 2048, kVocab = 32768, kLayers = 12;

// Kimi-Linear (48B-A3B) scaled down: every 4th layer MLA without a query bottleneck, the rest KDA
// with 16 heads of 128, sigmoid-routed experts top-8 of 32 plus a shared one, all BF16.
json KimiLinearConfig() {
  json kda = json::array(), mla = json::array();
  for (int i = 1; i <= kLayers; ++i) (i % 4 == 0 ? mla : kda).push_back(i);
  return {{"model_type", "kimi_linear"},
          {"architectures", {"KimiLinearForCausalLM"}},
          {"hidden_size", kHidden},
          {"vocab_size", kVocab},
          {"num_hidden_layers", kLayers},
          {"intermediate_size", 4096},
          {"first_k_dense_replace", 1},
          {"rms_norm_eps", 1e-5},
          {"hidden_act", "silu"},
          {"num_attention_heads", 16},
          {"q_lora_rank", nullptr},
          {"kv_lora_rank", 512},
          {"qk_nope_head_dim", 128},
          {"qk_rope_head_dim", 64},
          {"v_head_dim", 128},
          {"mla_use_nope", true},
          {"num_experts", 32},
          {"num_experts_per_token", 8},
          {"num_shared_experts", 1},
          {"moe_intermediate_size", 768},
          {"moe_renormalize", true},
          {"routed_scaling_factor", 2.446},
          {"moe_router_activation_func", "sigmoid"},
          {"num_expert_group", 1},
          {"topk_group", 1},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          {"linear_attn_config",
           {{"num_heads", 16},
            {"head_dim", 128},
            {"short_conv_kernel_size", 4},
            {"kda_layers", kda},
            {"full_attn_layers", mla}}}};
}

// Kimi K2 (DeepSeek-V3 architecture) scaled down: MLA in every layer with YaRN, a dense first
// layer, experts top-8 of 64 plus a shared one.
json K2TextConfig() {
  return {{"model_type", "kimi_k2"},
          {"architectures", {"DeepseekV3ForCausalLM"}},
          {"hidden_size", kHidden},
          {"vocab_size", kVocab},
          {"num_hidden_layers", kLayers},
          {"intermediate_size", 5632},
          {"first_k_dense_replace", 1},
          {"rms_norm_eps", 1e-5},
          {"hidden_act", "silu"},
          {"num_attention_heads", 16},
          {"q_lora_rank", 768},
          {"kv_lora_rank", 512},
          {"qk_nope_head_dim", 128},
          {"qk_rope_head_dim", 64},
          {"v_head_dim", 128},
          {"n_routed_experts", 64},
          {"num_experts_per_tok", 8},
          {"n_shared_experts", 1},
          {"moe_intermediate_size", 512},
          {"norm_topk_prob", true},
          {"routed_scaling_factor", 2.827},
          {"scoring_func", "sigmoid"},
          {"n_group", 1},
          {"topk_group", 1},
          {"rope_theta", 50000.0},
          {"max_position_embeddings", 131072},
          {"rope_scaling",
           {{"type", "yarn"},
            {"factor", 32.0},
            {"beta_fast", 32.0},
            {"beta_slow", 1.0},
            {"mscale", 1.0},
            {"mscale_all_dim", 1.0},
            {"original_max_position_embeddings", 4096}}},
          {"bos_token_id", 1},
          {"eos_token_id", 2}};
}

// K2 as published: every Linear of attention, dense MLP and experts in FP8 E4M3 with 128 x 128
// block scales; router, norms, embeddings and lm_head BF16.
json K2Config() {
  json c = K2TextConfig();
  c["quantization_config"] = {{"quant_method", "fp8"},
                              {"fmt", "e4m3"},
                              {"activation_scheme", "dynamic"},
                              {"weight_block_size", {128, 128}}};
  return c;
}

// K2.5 / K2-Thinking as published: the K2 text config under text_config, routed experts
// compressed-tensors pack-quantized INT4 (group 32, symmetric), everything else BF16.
json K25Config() {
  json text = K2TextConfig();
  const json weights = {{"type", "int"},        {"num_bits", 4},
                        {"group_size", 32},     {"strategy", "group"},
                        {"symmetric", true},    {"dynamic", false},
                        {"actorder", nullptr},  {"block_structure", nullptr},
                        {"observer", "minmax"}, {"observer_kwargs", json::object()}};
  text["quantization_config"] = {{"quant_method", "compressed-tensors"},
                                 {"format", "pack-quantized"},
                                 {"quantization_status", "compressed"},
                                 {"kv_cache_scheme", nullptr},
                                 {"ignore",
                                  {"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                                   "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"}},
                                 {"config_groups",
                                  {{"group_0",
                                    {{"targets", {"Linear"}},
                                     {"weights", weights},
                                     {"input_activations", nullptr},
                                     {"output_activations", nullptr}}}}}};
  return {{"model_type", "kimi_k25"},
          {"architectures", {"KimiK25ForConditionalGeneration"}},
          {"text_config", text}};
}

}  // namespace

std::string_view BenchFamilyName(BenchFamily f) {
  switch (f) {
    case BenchFamily::kK3:
      return "k3";
    case BenchFamily::kK3Bf16:
      return "k3-bf16";
    case BenchFamily::kKimiLinear:
      return "kimi-linear";
    case BenchFamily::kK2:
      return "k2";
    case BenchFamily::kK25:
      return "k25";
  }
  return "?";
}

base::Result<BenchFamily> ParseBenchFamily(std::string_view name) {
  for (BenchFamily f : {BenchFamily::kK3, BenchFamily::kK3Bf16, BenchFamily::kKimiLinear,
                        BenchFamily::kK2, BenchFamily::kK25}) {
    if (name == BenchFamilyName(f)) return f;
  }
  return base::InvalidArgument("unknown benchmark family '" + std::string(name) +
                               "' (k3, k3-bf16, kimi-linear, k2, k25)");
}

json BenchFamilyConfig(BenchFamily family) {
  switch (family) {
    case BenchFamily::kK3:
      return BenchModelConfig(BenchModelShape{});
    case BenchFamily::kK3Bf16: {
      BenchModelShape shape;
      shape.mxfp4_experts = false;
      return BenchModelConfig(shape);
    }
    case BenchFamily::kKimiLinear:
      return KimiLinearConfig();
    case BenchFamily::kK2:
      return K2Config();
    case BenchFamily::kK25:
      return K25Config();
  }
  return {};
}

}  // namespace k3::model::testing
