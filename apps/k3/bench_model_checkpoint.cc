#include "apps/k3/bench_model_checkpoint.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/result.h"
#include "tensor/numeric.h"
#include "weights/safetensors.h"

namespace k3::app {
namespace {

using nlohmann::json;
using tensor::DType;

// Tensors of one shard, owning their bytes.
class ShardBuilder {
 public:
  explicit ShardBuilder(uint64_t seed) : rng_(seed) {
    std::normal_distribution<float> normal;
    for (float& v : normal_table_) v = normal(rng_);
  }

  // BF16 [rows, cols] with standard deviation scale/sqrt(cols).
  void Bf16(const std::string& name, std::vector<int64_t> shape, float scale = 1.0f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const float std_dev = scale / std::sqrt(static_cast<float>(shape.back()));
    std::vector<std::byte> bytes(n * 2);
    auto* out = reinterpret_cast<uint16_t*>(bytes.data());
    for (int64_t i = 0; i < n; ++i) {
      out[i] = tensor::FloatToBf16(std_dev * normal_table_[Next() & 4095]);
    }
    Add(name, DType::kBF16, std::move(shape), std::move(bytes));
  }
  void Constant(const std::string& name, DType dtype, std::vector<int64_t> shape, float value) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<std::byte> bytes(n * tensor::DTypeSize(dtype));
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(&bytes[i * 4], &value, 4);
      } else {
        uint16_t b = tensor::FloatToBf16(value);
        std::memcpy(&bytes[i * 2], &b, 2);
      }
    }
    Add(name, dtype, std::move(shape), std::move(bytes));
  }
  // MXFP4 [rows, cols]: uniform random nibbles, scales giving values of about 1/sqrt(cols).
  void Mxfp4(const std::string& name, int64_t rows, int64_t cols) {
    std::vector<std::byte> packed(rows * cols / 2), scales(rows * cols / 32);
    for (auto& b : packed) b = static_cast<std::byte>(Next());
    // E2M1 values have RMS ~3.2; 2^(e-127) * 3.2 ~ 1/sqrt(cols).
    const int e = 127 + static_cast<int>(std::lround(std::log2(1.0 / (3.2 * std::sqrt(cols)))));
    for (auto& s : scales) s = static_cast<std::byte>(e);
    Add(name + ".weight_packed", DType::kU8, {rows, cols / 2}, std::move(packed));
    Add(name + ".weight_scale", DType::kU8, {rows, cols / 32}, std::move(scales));
  }

  base::Status Write(const std::filesystem::path& path, json* weight_map) {
    std::vector<weights::TensorToWrite> tensors;
    for (auto& t : tensors_) {
      tensors.push_back({t.name, t.dtype, t.shape, t.bytes});
      (*weight_map)[t.name] = path.filename().string();
    }
    return weights::WriteSafetensors(path, tensors);
  }

 private:
  struct Owned {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
  };
  void Add(const std::string& name, DType dtype, std::vector<int64_t> shape,
           std::vector<std::byte> bytes) {
    tensors_.push_back({name, dtype, std::move(shape), std::move(bytes)});
  }
  uint32_t Next() {  // xorshift32: fast enough to fill gigabytes
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  std::mt19937 rng_;
  uint32_t state_ = 2463534242u;
  float normal_table_[4096];
  std::vector<Owned> tensors_;
};

json MakeConfig(const BenchModelShape& s) {
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

void AddLayer(const BenchModelShape& s, int layer, ShardBuilder& b) {
  const std::string p = "language_model.model.layers." + std::to_string(layer) + ".";
  const int64_t d = s.hidden;
  for (const char* norm :
       {"input_layernorm", "post_attention_layernorm", "self_attention_res_norm", "mlp_res_norm"}) {
    b.Constant(p + norm + ".weight", DType::kBF16, {d}, 1.0f);
  }
  b.Bf16(p + "self_attention_res_proj.weight", {1, d});
  b.Bf16(p + "mlp_res_proj.weight", {1, d});
  const std::string a = p + "self_attn.";
  if ((layer + 1) % 4 == 0) {  // MLA
    const int64_t h = s.mla_heads;
    b.Bf16(a + "q_a_proj.weight", {512, d});
    b.Constant(a + "q_a_layernorm.weight", DType::kBF16, {512}, 1.0f);
    b.Bf16(a + "q_b_proj.weight", {h * 192, 512});
    b.Bf16(a + "kv_a_proj_with_mqa.weight", {576, d});
    b.Constant(a + "kv_a_layernorm.weight", DType::kBF16, {512}, 1.0f);
    b.Bf16(a + "kv_b_proj.weight", {h * 256, 512});
    b.Bf16(a + "g_proj.weight", {h * 128, d});
    b.Bf16(a + "o_proj.weight", {d, h * 128});
  } else {  // KDA
    const int64_t pd = int64_t{s.kda_heads} * 128;
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "g_proj"}) {
      b.Bf16(a + proj + ".weight", {pd, d});
    }
    for (const char* conv : {"q_conv1d", "k_conv1d", "v_conv1d"}) {
      b.Constant(a + conv + ".weight", DType::kF32, {pd, 1, 4}, 0.5f);
    }
    b.Bf16(a + "f_a_proj.weight", {128, d});
    b.Bf16(a + "f_b_proj.weight", {pd, 128});
    b.Bf16(a + "b_proj.weight", {s.kda_heads, d});
    b.Constant(a + "A_log", DType::kF32, {128}, 0.0f);
    b.Constant(a + "dt_bias", DType::kF32, {pd}, 0.0f);
    b.Constant(a + "o_norm.weight", DType::kBF16, {128}, 1.0f);
    b.Bf16(a + "o_proj.weight", {d, pd});
  }
  if (layer == 0) {
    b.Bf16(p + "mlp.gate_proj.weight", {s.dense_intermediate, d});
    b.Bf16(p + "mlp.up_proj.weight", {s.dense_intermediate, d});
    b.Bf16(p + "mlp.down_proj.weight", {d, s.dense_intermediate});
    return;
  }
  const std::string m = p + "block_sparse_moe.";
  b.Bf16(m + "gate.weight", {s.experts, d});
  b.Constant(m + "gate.e_score_correction_bias", DType::kF32, {s.experts}, 0.0f);
  b.Bf16(m + "routed_expert_down_proj.weight", {s.latent, d});
  b.Constant(m + "routed_expert_norm.weight", DType::kBF16, {s.latent}, 1.0f);
  b.Bf16(m + "routed_expert_up_proj.weight", {d, s.latent});
  const int64_t shared_i = int64_t{s.moe_intermediate} * s.shared;
  b.Bf16(m + "shared_experts.gate_proj.weight", {shared_i, d});
  b.Bf16(m + "shared_experts.up_proj.weight", {shared_i, d});
  b.Bf16(m + "shared_experts.down_proj.weight", {d, shared_i});
  for (int e = 0; e < s.experts; ++e) {
    const std::string x = m + "experts." + std::to_string(e) + ".";
    if (s.mxfp4_experts) {
      b.Mxfp4(x + "w1", s.moe_intermediate, s.latent);
      b.Mxfp4(x + "w3", s.moe_intermediate, s.latent);
      b.Mxfp4(x + "w2", s.latent, s.moe_intermediate);
    } else {
      b.Bf16(x + "w1.weight", {s.moe_intermediate, s.latent});
      b.Bf16(x + "w3.weight", {s.moe_intermediate, s.latent});
      b.Bf16(x + "w2.weight", {s.latent, s.moe_intermediate});
    }
  }
}

}  // namespace

base::Status WriteBenchModel(const BenchModelShape& s, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return base::Internal("cannot create " + dir.string() + ": " + ec.message());
  json weight_map = json::object();
  const int shards = s.layers + 1;
  auto shard_name = [&](int i) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", i + 1, shards);
    return dir / name;
  };
  {
    ShardBuilder b(1);
    b.Bf16("language_model.model.embed_tokens.weight", {s.vocab, s.hidden}, 16.0f);
    b.Bf16("language_model.lm_head.weight", {s.vocab, s.hidden});
    b.Constant("language_model.model.norm.weight", DType::kBF16, {s.hidden}, 1.0f);
    b.Constant("language_model.model.output_attn_res_norm.weight", DType::kBF16, {s.hidden}, 1.0f);
    b.Bf16("language_model.model.output_attn_res_proj.weight", {1, s.hidden});
    K3_RETURN_IF_ERROR(b.Write(shard_name(0), &weight_map));
  }
  for (int layer = 0; layer < s.layers; ++layer) {
    K3_LOG(kInfo) << "writing layer " << layer + 1 << "/" << s.layers << " to " << dir.string();
    ShardBuilder b(100 + layer);
    AddLayer(s, layer, b);
    K3_RETURN_IF_ERROR(b.Write(shard_name(layer + 1), &weight_map));
  }
  std::ofstream(dir / "model.safetensors.index.json")
      << json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump(1);
  std::ofstream config(dir / "config.json");
  config << MakeConfig(s).dump(2);
  if (!config) return base::Internal("cannot write " + (dir / "config.json").string());
  return base::Status::Ok();
}

// Reads one byte of every page of every tensor, so timed runs do not pay first-touch page faults
// of the memory-mapped weights (a server pays them once, at warm-up).
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

base::Result<std::unique_ptr<model::Model>> LoadOrMakeBenchModel(const std::string& dir, bool mxfp4,
                                                                 base::ThreadPool* pool) {
  if (!std::filesystem::exists(std::filesystem::path(dir) / "config.json")) {
    BenchModelShape shape;
    shape.mxfp4_experts = mxfp4;
    K3_LOG(kInfo) << "generating the " << (mxfp4 ? "MXFP4" : "BF16")
                  << "-expert benchmark model in " << dir << " (once)";
    K3_RETURN_IF_ERROR(WriteBenchModel(shape, dir));
  }
  K3_ASSIGN_OR_RETURN(auto model, model::Model::Load(dir, pool));
  TouchAllWeights(*model);
  return model;
}

}  // namespace k3::app
