#include "model/testing/bench_checkpoint.h"

#include <cstdint>
#include <string>

#include "base/log.h"
#include "model/testing/synthetic_checkpoint.h"

namespace k3::model::testing {

using nlohmann::json;

json BenchModelConfig(const BenchModelShape& s) {
  json kda_layers = json::array(), mla_layers = json::array();
  for (int i = 1; i <= s.layers; ++i) (i % 4 == 0 ? mla_layers : kda_layers).push_back(i);
  json text = {{"model_type", "kimi_linear"},
               {"hidden_size", s.hidden},
               {"vocab_size", s.vocab},
               {"num_hidden_layers", s.layers},
               {"intermediate_size", s.dense_intermediate},
               {"first_k_dense_replace", 1},
               {"rms_norm_eps", 1e-5},
               {"hidden_act", "situ"},
               {"activation_situ_beta", 4.0},
               {"activation_situ_linear_beta", 25.0},
               {"attn_res_block_size", s.attn_res_block},
               {"num_attention_heads", s.mla_heads},
               {"q_lora_rank", 512},
               {"kv_lora_rank", 512},
               {"qk_nope_head_dim", 128},
               {"qk_rope_head_dim", 64},
               {"v_head_dim", 128},
               {"mla_use_nope", true},
               {"mla_use_output_gate", true},
               {"num_experts", s.experts},
               {"num_experts_per_token", s.top_k},
               {"num_shared_experts", s.shared},
               {"moe_intermediate_size", s.moe_intermediate},
               {"routed_expert_hidden_size", s.latent},
               {"latent_moe_use_norm", true},
               {"moe_renormalize", true},
               {"routed_scaling_factor", 1.0},
               {"moe_router_activation_func", "sigmoid"},
               {"num_expert_group", 1},
               {"topk_group", 1},
               {"bos_token_id", 1},
               {"eos_token_id", 2},
               {"linear_attn_config",
                {{"num_heads", s.kda_heads},
                 {"head_dim", 128},
                 {"short_conv_kernel_size", 4},
                 {"gate_lower_bound", -5.0},
                 {"use_full_rank_gate", true},
                 {"kda_layers", kda_layers},
                 {"full_attn_layers", mla_layers}}}};
  if (s.mxfp4_experts) {
    text["quantization_config"] = {{"quant_method", "compressed-tensors"},
                                   {"format", "mxfp4-pack-quantized"}};
  }
  return {{"model_type", "kimi_k3"},
          {"architectures", {"KimiK3ForConditionalGeneration"}},
          {"text_config", text}};
}

void TouchAllWeights(const model::Model& m) {
  volatile uint8_t sink = 0;
  for (const std::string& name : m.checkpoint().TensorNames()) {
    auto view = m.checkpoint().Get(name);
    if (!view.ok()) continue;
    for (size_t i = 0; i < view->bytes.size(); i += 4096) {
      sink = sink + static_cast<uint8_t>(view->bytes[i]);
    }
  }
}

std::string BenchFamilyDir(BenchFamily family) {
  return family == BenchFamily::kK3 ? "k3-mxfp4" : std::string(BenchFamilyName(family));
}

base::Result<std::unique_ptr<model::Model>> LoadOrMakeBenchModel(const std::filesystem::path& dir,
                                                                 BenchFamily family,
                                                                 base::ThreadPool* pool,
                                                                 model::LoadOptions options) {
  if (!std::filesystem::exists(dir / "config.json")) {
    K3_LOG(kInfo) << "generating the " << BenchFamilyName(family) << " benchmark model in "
                  << dir.string() << " (once)";
    K3_RETURN_IF_ERROR(WriteSyntheticCheckpoint(BenchFamilyConfig(family).dump(2), dir));
  }
  K3_ASSIGN_OR_RETURN(auto model, model::Model::Load(dir, pool, options));
  TouchAllWeights(*model);
  return model;
}

}  // namespace k3::model::testing
