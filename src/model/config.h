// The text-model configuration of a Kimi-family checkpoint, parsed from its config.json. Three
// families share one description: Kimi K3 (KDA + gated NoPE MLA + Attention Residuals + latent
// MoE), Kimi-Linear (KDA + NoPE MLA + MoE) and DeepSeek-V3 / Kimi K2 (MLA with YaRN RoPE + MoE).
// Layer kinds come from the config's 1-based kda_layers/full_attn_layers, never from tensor names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::model {

enum class Family { kKimiK3, kKimiLinear, kDeepseekV3 };
std::string_view FamilyName(Family family);

enum class LayerKind { kKda, kMla };
enum class Activation { kSilu, kSitu };

struct KdaConfig {
  int num_heads = 0;
  int head_dim = 0;  // K = V
  int conv_kernel = 4;
  bool lower_bound_gate = false;  // K3: g = lb * sigmoid(exp(A) * (raw + dt_bias))
  float gate_lower_bound = 0.0f;
  bool full_rank_output_gate = false;  // K3: g_proj [P, D]; Kimi-Linear: g_b_proj(g_a_proj(x))
  int projection_dim() const { return num_heads * head_dim; }
};

struct RopeConfig {
  bool enabled = false;  // false = NoPE (Kimi-Linear, K3)
  double theta = 10000.0;
  bool yarn = false;
  double factor = 1.0;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 1.0;
  double mscale_all_dim = 0.0;
  int64_t original_max_position = 4096;
};

struct MlaConfig {
  int num_heads = 0;
  int q_lora_rank = 0;  // 0: plain q_proj (Kimi-Linear)
  int kv_lora_rank = 0;
  int qk_nope_dim = 0;
  int qk_rope_dim = 0;
  int v_head_dim = 0;
  bool output_gate = false;  // K3: attn_out *= sigmoid(x W_g^T) before o_proj
  float q_norm_eps = 1e-6f;
  float kv_norm_eps = 1e-6f;
  RopeConfig rope;
  int qk_dim() const { return qk_nope_dim + qk_rope_dim; }
  int cache_dim() const { return kv_lora_rank + qk_rope_dim; }  // latent + shared key part
};

struct MoeConfig {
  int num_experts = 0;
  int top_k = 0;
  int num_shared = 0;
  int intermediate = 0;
  int latent_dim = 0;  // K3 routed_expert_hidden_size; 0 = experts at full width
  bool latent_norm = false;
  int num_groups = 1;
  int topk_groups = 1;
  bool renormalize = true;
  float routed_scaling = 1.0f;
};

struct ModelConfig {
  Family family = Family::kKimiLinear;
  int hidden = 0;
  int vocab = 0;
  int num_layers = 0;
  int dense_intermediate = 0;
  int first_k_dense = 0;
  float rms_eps = 1e-6f;
  Activation activation = Activation::kSilu;
  float situ_beta = 4.0f;
  float situ_linear_beta = 25.0f;
  int attn_res_block_size = 0;  // 0: plain residual stream
  std::vector<LayerKind> layer_kinds;
  KdaConfig kda;
  MlaConfig mla;
  MoeConfig moe;
  int fp8_block = 0;           // DeepSeek-style FP8 weights with this tile size; 0 = none
  bool mxfp4_experts = false;  // compressed-tensors mxfp4-pack-quantized routed experts
  // compressed-tensors pack-quantized symmetric INT4 routed experts, group 32 (K2-Thinking, K2.5)
  bool int4_experts = false;
  int64_t bos_id = -1;
  int64_t eos_id = -1;
  int64_t max_position = 0;  // max_position_embeddings; 0 = not given

  bool is_moe_layer(int layer) const { return layer >= first_k_dense; }
  int num_kda_layers() const;
  int num_mla_layers() const;
};

// Parses config.json text. Errors name the missing or invalid field.
base::Result<ModelConfig> ParseModelConfig(std::string_view config_json);

}  // namespace k3::model
