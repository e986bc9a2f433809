#include "model/config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace k3::model {
namespace {

using nlohmann::json;

// Reads a required numeric field; a missing or non-numeric one is an error naming it.
template <typename T>
base::Status Require(const json& object, const char* name, T* out) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number()) {
    return base::InvalidArgument(std::string("config.json: missing numeric field '") + name + "'");
  }
  *out = it->get<T>();
  return base::Status::Ok();
}

template <typename T>
T Optional(const json& object, const char* name, T fallback) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return fallback;
  return it->get<T>();
}

base::Status ParseLayerKinds(const json& text, ModelConfig* config) {
  config->layer_kinds.assign(config->num_layers, LayerKind::kMla);
  if (config->family == Family::kDeepseekV3) return base::Status::Ok();
  auto linear = text.find("linear_attn_config");
  if (linear == text.end() || !linear->is_object()) {
    return base::InvalidArgument("config.json: missing 'linear_attn_config'");
  }
  std::vector<bool> seen(config->num_layers, false);
  for (const char* list : {"kda_layers", "full_attn_layers"}) {
    auto it = linear->find(list);
    if (it == linear->end() || !it->is_array()) {
      return base::InvalidArgument(std::string("config.json: missing '") + list + "'");
    }
    for (const json& entry : *it) {
      // The lists are 1-based (spec/model.md §1, §13.8).
      int layer = entry.is_number_integer() ? entry.get<int>() - 1 : -1;
      if (layer < 0 || layer >= config->num_layers || seen[layer]) {
        return base::InvalidArgument(std::string("config.json: bad layer ") + entry.dump() +
                                     " in '" + list + "'");
      }
      seen[layer] = true;
      config->layer_kinds[layer] = list[0] == 'k' ? LayerKind::kKda : LayerKind::kMla;
    }
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    return base::InvalidArgument(
        "config.json: kda_layers + full_attn_layers do not cover every layer");
  }
  KdaConfig& kda = config->kda;
  K3_RETURN_IF_ERROR(Require(*linear, "num_heads", &kda.num_heads));
  K3_RETURN_IF_ERROR(Require(*linear, "head_dim", &kda.head_dim));
  kda.conv_kernel = Optional<int>(*linear, "short_conv_kernel_size", 4);
  if (linear->contains("gate_lower_bound") && !(*linear)["gate_lower_bound"].is_null()) {
    kda.lower_bound_gate = true;
    kda.gate_lower_bound = (*linear)["gate_lower_bound"].get<float>();
  }
  kda.full_rank_output_gate = Optional<bool>(*linear, "use_full_rank_gate", false);
  return base::Status::Ok();
}

base::Status ParseMla(const json& text, ModelConfig* config) {
  MlaConfig& mla = config->mla;
  K3_RETURN_IF_ERROR(Require(text, "num_attention_heads", &mla.num_heads));
  mla.q_lora_rank = Optional<int>(text, "q_lora_rank", 0);
  K3_RETURN_IF_ERROR(Require(text, "kv_lora_rank", &mla.kv_lora_rank));
  K3_RETURN_IF_ERROR(Require(text, "qk_nope_head_dim", &mla.qk_nope_dim));
  K3_RETURN_IF_ERROR(Require(text, "qk_rope_head_dim", &mla.qk_rope_dim));
  K3_RETURN_IF_ERROR(Require(text, "v_head_dim", &mla.v_head_dim));
  mla.output_gate = Optional<bool>(text, "mla_use_output_gate", false);
  // Norm eps (spec §13.2): K3 uses rms_norm_eps everywhere; Kimi-Linear's HF code builds the MLA
  // kv_a_layernorm with the RMSNorm default 1e-6; DeepSeek-V3 uses rms_norm_eps.
  mla.q_norm_eps = config->rms_eps;
  mla.kv_norm_eps = config->family == Family::kKimiLinear ? 1e-6f : config->rms_eps;
  RopeConfig& rope = mla.rope;
  rope.enabled =
      config->family == Family::kDeepseekV3 && !Optional<bool>(text, "mla_use_nope", false);
  if (!rope.enabled) return base::Status::Ok();
  rope.theta = Optional<double>(text, "rope_theta", 10000.0);
  auto scaling = text.find("rope_scaling");
  if (scaling != text.end() && scaling->is_object()) {
    std::string type =
        Optional<std::string>(*scaling, "type", Optional<std::string>(*scaling, "rope_type", ""));
    if (type != "yarn") return base::Unimplemented("config.json: rope_scaling type '" + type + "'");
    rope.yarn = true;
    K3_RETURN_IF_ERROR(Require(*scaling, "factor", &rope.factor));
    rope.beta_fast = Optional<double>(*scaling, "beta_fast", 32.0);
    rope.beta_slow = Optional<double>(*scaling, "beta_slow", 1.0);
    rope.mscale = Optional<double>(*scaling, "mscale", 1.0);
    rope.mscale_all_dim = Optional<double>(*scaling, "mscale_all_dim", 0.0);
    rope.original_max_position =
        Optional<int64_t>(*scaling, "original_max_position_embeddings", 4096);
  }
  return base::Status::Ok();
}

base::Status ParseMoe(const json& text, ModelConfig* config) {
  MoeConfig& moe = config->moe;
  const bool deepseek = config->family == Family::kDeepseekV3;
  K3_RETURN_IF_ERROR(
      Require(text, deepseek ? "n_routed_experts" : "num_experts", &moe.num_experts));
  K3_RETURN_IF_ERROR(
      Require(text, deepseek ? "num_experts_per_tok" : "num_experts_per_token", &moe.top_k));
  moe.num_shared = Optional<int>(text, deepseek ? "n_shared_experts" : "num_shared_experts", 0);
  K3_RETURN_IF_ERROR(Require(text, "moe_intermediate_size", &moe.intermediate));
  moe.latent_dim = Optional<int>(text, "routed_expert_hidden_size", 0);
  moe.latent_norm = Optional<bool>(text, "latent_moe_use_norm", false);
  moe.num_groups = Optional<int>(text, deepseek ? "n_group" : "num_expert_group", 1);
  moe.topk_groups = Optional<int>(text, "topk_group", 1);
  moe.renormalize = Optional<bool>(text, deepseek ? "norm_topk_prob" : "moe_renormalize", true);
  moe.routed_scaling = Optional<float>(text, "routed_scaling_factor", 1.0f);
  std::string scoring = Optional<std::string>(
      text, deepseek ? "scoring_func" : "moe_router_activation_func", "sigmoid");
  if (scoring != "sigmoid") return base::Unimplemented("config.json: router '" + scoring + "'");
  if (moe.num_experts <= 0 || moe.top_k <= 0 || moe.top_k > moe.num_experts ||
      moe.num_groups <= 0 || moe.num_experts % moe.num_groups != 0 ||
      moe.topk_groups > moe.num_groups) {
    return base::InvalidArgument("config.json: inconsistent expert counts / groups");
  }
  return base::Status::Ok();
}

// compressed-tensors pack-quantized: only the scheme K2-Thinking / K2.5 publish (checkpoints.md
// A1.1) is decoded: weights int, 4 bits, groups of 32, symmetric (no zero point), static. Anything
// else is refused naming the field rather than decoded wrongly.
base::Status CheckInt4Scheme(const json& q) {
  auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object() || groups->empty()) {
    return base::Unimplemented("config.json: pack-quantized without config_groups");
  }
  for (const auto& [name, group] : groups->items()) {
    const std::string where = "config.json: config_groups." + name + ".weights.";
    auto weights = group.find("weights");
    if (weights == group.end() || !weights->is_object()) {
      return base::Unimplemented(where + " missing");
    }
    const json& w = *weights;
    if (Optional<std::string>(w, "type", "") != "int") {
      return base::Unimplemented(where + "type must be \"int\"");
    }
    if (Optional<int>(w, "num_bits", 0) != 4)
      return base::Unimplemented(where + "num_bits must be 4");
    if (Optional<int>(w, "group_size", 0) != 32) {
      return base::Unimplemented(where + "group_size must be 32");
    }
    if (!Optional<bool>(w, "symmetric", false)) {
      return base::Unimplemented(where + "symmetric must be true (zero points are not supported)");
    }
    if (Optional<std::string>(w, "strategy", "group") != "group") {
      return base::Unimplemented(where + "strategy must be \"group\"");
    }
    if (Optional<bool>(w, "dynamic", false)) return base::Unimplemented(where + "dynamic");
    auto order = w.find("actorder");
    if (order != w.end() && !order->is_null()) {
      return base::Unimplemented(where + "actorder (g_idx) is not supported");
    }
  }
  return base::Status::Ok();
}

base::Status ParseQuantization(const json& text, ModelConfig* config) {
  auto q = text.find("quantization_config");
  if (q == text.end() || !q->is_object()) return base::Status::Ok();
  std::string method = Optional<std::string>(*q, "quant_method", "");
  if (method == "fp8") {
    auto block = q->find("weight_block_size");
    if (block == q->end() || !block->is_array() || block->size() != 2 ||
        (*block)[0] != (*block)[1]) {
      return base::Unimplemented("config.json: fp8 needs square weight_block_size");
    }
    config->fp8_block = (*block)[0].get<int>();
  } else if (method == "compressed-tensors") {
    std::string format = Optional<std::string>(*q, "format", "");
    if (format == "mxfp4-pack-quantized") {
      config->mxfp4_experts = true;
    } else if (format == "pack-quantized") {
      K3_RETURN_IF_ERROR(CheckInt4Scheme(*q));
      config->int4_experts = true;
    } else {
      return base::Unimplemented("config.json: compressed-tensors format '" + format +
                                 "' is not supported (supported: mxfp4-pack-quantized, "
                                 "pack-quantized INT4, and fp8 block weights)");
    }
  } else {
    return base::Unimplemented("config.json: quant_method '" + method + "'");
  }
  return base::Status::Ok();
}

base::Result<Family> DetectFamily(const json& root, const json& text) {
  std::string top = Optional<std::string>(root, "model_type", "");
  std::string inner = Optional<std::string>(text, "model_type", "");
  if (top == "kimi_k3") return Family::kKimiK3;
  if (inner == "kimi_linear") return Family::kKimiLinear;
  if (inner == "kimi_k2" || inner == "deepseek_v3") return Family::kDeepseekV3;
  return base::Unimplemented(
      "config.json: model_type '" + (inner.empty() ? top : inner) +
      "' is not a supported family (kimi_k3, kimi_linear, kimi_k2, deepseek_v3)");
}

}  // namespace

std::string_view FamilyName(Family family) {
  switch (family) {
    case Family::kKimiK3:
      return "kimi_k3";
    case Family::kKimiLinear:
      return "kimi_linear";
    case Family::kDeepseekV3:
      return "deepseek_v3";
  }
  return "?";
}

int ModelConfig::num_kda_layers() const {
  return static_cast<int>(std::count(layer_kinds.begin(), layer_kinds.end(), LayerKind::kKda));
}
int ModelConfig::num_mla_layers() const { return num_layers - num_kda_layers(); }

base::Result<ModelConfig> ParseModelConfig(std::string_view config_json) {
  json root = json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return base::InvalidArgument("config.json is not a JSON object");
  const json& text =
      root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
  ModelConfig config;
  K3_ASSIGN_OR_RETURN(config.family, DetectFamily(root, text));
  try {
    K3_RETURN_IF_ERROR(Require(text, "hidden_size", &config.hidden));
    K3_RETURN_IF_ERROR(Require(text, "vocab_size", &config.vocab));
    K3_RETURN_IF_ERROR(Require(text, "num_hidden_layers", &config.num_layers));
    K3_RETURN_IF_ERROR(Require(text, "intermediate_size", &config.dense_intermediate));
    config.first_k_dense = Optional<int>(text, "first_k_dense_replace", 0);
    config.rms_eps = Optional<float>(text, "rms_norm_eps", 1e-6f);
    std::string act = Optional<std::string>(text, "hidden_act", "silu");
    if (act == "situ") {
      config.activation = Activation::kSitu;
    } else if (act != "silu") {
      return base::Unimplemented("config.json: hidden_act '" + act + "'");
    }
    config.situ_beta = Optional<float>(text, "activation_situ_beta", 4.0f);
    config.situ_linear_beta = Optional<float>(text, "activation_situ_linear_beta", 25.0f);
    config.attn_res_block_size = Optional<int>(text, "attn_res_block_size", 0);
    config.bos_id =
        Optional<int64_t>(text, "bos_token_id", Optional<int64_t>(root, "bos_token_id", -1));
    config.eos_id =
        Optional<int64_t>(text, "eos_token_id", Optional<int64_t>(root, "eos_token_id", -1));
    config.max_position = Optional<int64_t>(text, "max_position_embeddings",
                                            Optional<int64_t>(root, "max_position_embeddings", 0));
    if (config.hidden <= 0 || config.vocab <= 0 || config.num_layers <= 0) {
      return base::InvalidArgument("config.json: sizes must be positive");
    }
    K3_RETURN_IF_ERROR(ParseLayerKinds(text, &config));
    K3_RETURN_IF_ERROR(ParseMla(text, &config));
    K3_RETURN_IF_ERROR(ParseMoe(text, &config));
    K3_RETURN_IF_ERROR(ParseQuantization(text, &config));
  } catch (const json::exception& e) {
    // nlohmann reports wrongly typed fields by throwing; turn that into a Status at the boundary.
    return base::InvalidArgument(std::string("config.json: ") + e.what());
  }
  return config;
}

}  // namespace k3::model
