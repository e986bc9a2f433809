#include "model/model_weights.h"

#include <string>

#include "tensor/numeric.h"

namespace k3::model {
namespace {

using tensor::DType;
using tensor::TensorView;

// Binds tensors by name with the checks every load must make; `prefix` is "" or
// "language_model." (K3 and K2.5 nest the text model).
class Binder {
 public:
  Binder(const weights::Checkpoint& checkpoint, const ModelConfig& config, std::string prefix)
      : checkpoint_(checkpoint), config_(config), prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }

  // A [rows, cols] Linear weight named `base` (".weight", or ".weight_packed" + ".weight_scale"
  // for MXFP4, or F8_E4M3 ".weight" + ".weight_scale_inv" for block FP8).
  base::Status Matrix(const std::string& base, int64_t rows, int64_t cols, WeightMatrix* out) {
    const std::string name = prefix_ + base;
    out->rows = rows;
    out->cols = cols;
    if (checkpoint_.Contains(name + ".weight_packed")) return Mxfp4(name, out);
    K3_ASSIGN_OR_RETURN(TensorView view, checkpoint_.Get(name + ".weight"));
    const std::vector<int64_t> shape = {rows, cols};
    if (view.shape != shape) {
      return base::InvalidArgument("tensor '" + name + ".weight' has shape " +
                                   tensor::ShapeToString(view.shape) + ", expected " +
                                   tensor::ShapeToString(shape));
    }
    out->data = view.bytes.data();
    switch (view.dtype) {
      case DType::kF32:
        out->format = kernels::WeightFormat::kF32;
        return base::Status::Ok();
      case DType::kBF16:
        out->format = kernels::WeightFormat::kBF16;
        return base::Status::Ok();
      case DType::kF16:
        out->format = kernels::WeightFormat::kF16;
        return base::Status::Ok();
      case DType::kF8E4M3:
        return Fp8Scales(name, out);
      default:
        return base::InvalidArgument("tensor '" + name + ".weight' has unsupported dtype " +
                                     std::string(tensor::DTypeName(view.dtype)));
    }
  }

  // A float vector of `n` elements (any shape with that many elements, BF16/F16/F32).
  base::Status Vector(const std::string& base, int64_t n, std::vector<float>* out,
                      bool allow_longer = false) {
    const std::string name = prefix_ + base;
    K3_ASSIGN_OR_RETURN(TensorView view, checkpoint_.Get(name));
    if (view.numel() != n && !(allow_longer && view.numel() > n)) {
      return base::InvalidArgument("tensor '" + name + "' has shape " +
                                   tensor::ShapeToString(view.shape) + ", expected " +
                                   std::to_string(n) + " elements");
    }
    out->resize(n);
    for (int64_t i = 0; i < n; ++i) {
      switch (view.dtype) {
        case DType::kF32:
          (*out)[i] = view.data<float>()[i];
          break;
        case DType::kBF16:
          (*out)[i] = tensor::Bf16ToFloat(view.data<uint16_t>()[i]);
          break;
        case DType::kF16:
          (*out)[i] = tensor::F16ToFloat(view.data<uint16_t>()[i]);
          break;
        default:
          return base::InvalidArgument("tensor '" + name + "' has unsupported dtype " +
                                       std::string(tensor::DTypeName(view.dtype)));
      }
    }
    return base::Status::Ok();
  }

 private:
  base::Status Mxfp4(const std::string& name, WeightMatrix* out) {
    if (out->cols % 32 != 0) {
      return base::InvalidArgument("tensor '" + name + "': MXFP4 needs a multiple of 32 columns");
    }
    const std::vector<int64_t> packed_shape = {out->rows, out->cols / 2};
    const std::vector<int64_t> scale_shape = {out->rows, out->cols / 32};
    K3_ASSIGN_OR_RETURN(TensorView packed,
                        checkpoint_.Get(name + ".weight_packed", DType::kU8, packed_shape));
    K3_ASSIGN_OR_RETURN(TensorView scales,
                        checkpoint_.Get(name + ".weight_scale", DType::kU8, scale_shape));
    out->format = kernels::WeightFormat::kMxfp4;
    out->data = packed.bytes.data();
    out->mx_scales = scales.data<uint8_t>();
    return base::Status::Ok();
  }

  base::Status Fp8Scales(const std::string& name, WeightMatrix* out) {
    const int64_t block = config_.fp8_block;
    if (block <= 0) {
      return base::InvalidArgument("tensor '" + name +
                                   ".weight' is F8_E4M3 but config.json has no weight_block_size");
    }
    const std::vector<int64_t> shape = {(out->rows + block - 1) / block,
                                        (out->cols + block - 1) / block};
    K3_ASSIGN_OR_RETURN(TensorView scales,
                        checkpoint_.Get(name + ".weight_scale_inv", DType::kF32, shape));
    out->format = kernels::WeightFormat::kFp8Block;
    out->block_scales = scales.data<float>();
    out->block = block;
    return base::Status::Ok();
  }

  const weights::Checkpoint& checkpoint_;
  const ModelConfig& config_;
  std::string prefix_;
};

base::Status LoadMlp(Binder& b, const std::string& base, const char* gate, const char* up,
                     const char* down, int64_t in, int64_t hidden, MlpWeights* out) {
  K3_RETURN_IF_ERROR(b.Matrix(base + gate, hidden, in, &out->gate));
  K3_RETURN_IF_ERROR(b.Matrix(base + up, hidden, in, &out->up));
  return b.Matrix(base + down, in, hidden, &out->down);
}

base::Status LoadKda(Binder& b, const ModelConfig& c, const std::string& p, KdaWeights* w) {
  const int64_t d = c.hidden, h = c.kda.num_heads, k = c.kda.head_dim, pd = h * k;
  const int64_t taps = c.kda.conv_kernel;
  K3_RETURN_IF_ERROR(b.Matrix(p + "q_proj", pd, d, &w->q));
  K3_RETURN_IF_ERROR(b.Matrix(p + "k_proj", pd, d, &w->k));
  K3_RETURN_IF_ERROR(b.Matrix(p + "v_proj", pd, d, &w->v));
  K3_RETURN_IF_ERROR(b.Vector(p + "q_conv1d.weight", pd * taps, &w->q_conv));
  K3_RETURN_IF_ERROR(b.Vector(p + "k_conv1d.weight", pd * taps, &w->k_conv));
  K3_RETURN_IF_ERROR(b.Vector(p + "v_conv1d.weight", pd * taps, &w->v_conv));
  K3_RETURN_IF_ERROR(b.Matrix(p + "f_a_proj", k, d, &w->f_a));
  K3_RETURN_IF_ERROR(b.Matrix(p + "f_b_proj", pd, k, &w->f_b));
  K3_RETURN_IF_ERROR(b.Matrix(p + "b_proj", h, d, &w->beta));
  // K3 stores A_log with head_dim entries and uses the first num_heads (spec §13.5).
  K3_RETURN_IF_ERROR(b.Vector(p + "A_log", h, &w->a_log, /*allow_longer=*/true));
  K3_RETURN_IF_ERROR(b.Vector(p + "dt_bias", pd, &w->dt_bias));
  if (c.kda.full_rank_output_gate) {
    K3_RETURN_IF_ERROR(b.Matrix(p + "g_proj", pd, d, &w->g));
  } else {
    K3_RETURN_IF_ERROR(b.Matrix(p + "g_a_proj", k, d, &w->g_a));
    K3_RETURN_IF_ERROR(b.Matrix(p + "g_b_proj", pd, k, &w->g_b));
  }
  K3_RETURN_IF_ERROR(b.Vector(p + "o_norm.weight", k, &w->o_norm));
  return b.Matrix(p + "o_proj", d, pd, &w->o);
}

base::Status LoadMla(Binder& b, const ModelConfig& c, const std::string& p, MlaWeights* w) {
  const MlaConfig& m = c.mla;
  const int64_t d = c.hidden, h = m.num_heads;
  if (m.q_lora_rank > 0) {
    K3_RETURN_IF_ERROR(b.Matrix(p + "q_a_proj", m.q_lora_rank, d, &w->q_a));
    K3_RETURN_IF_ERROR(b.Vector(p + "q_a_layernorm.weight", m.q_lora_rank, &w->q_a_norm));
    K3_RETURN_IF_ERROR(b.Matrix(p + "q_b_proj", h * m.qk_dim(), m.q_lora_rank, &w->q_b));
  } else {
    K3_RETURN_IF_ERROR(b.Matrix(p + "q_proj", h * m.qk_dim(), d, &w->q));
  }
  K3_RETURN_IF_ERROR(b.Matrix(p + "kv_a_proj_with_mqa", m.cache_dim(), d, &w->kv_a));
  K3_RETURN_IF_ERROR(b.Vector(p + "kv_a_layernorm.weight", m.kv_lora_rank, &w->kv_a_norm));
  const int64_t kv_b_rows = h * (m.qk_nope_dim + m.v_head_dim);
  K3_RETURN_IF_ERROR(b.Matrix(p + "kv_b_proj", kv_b_rows, m.kv_lora_rank, &w->kv_b));
  w->kv_b_f32.resize(kv_b_rows * m.kv_lora_rank);
  for (int64_t r = 0; r < kv_b_rows; ++r) {
    kernels::DequantizeRow(w->kv_b, r, w->kv_b_f32.data() + r * m.kv_lora_rank);
  }
  if (m.output_gate) K3_RETURN_IF_ERROR(b.Matrix(p + "g_proj", h * m.v_head_dim, d, &w->g));
  return b.Matrix(p + "o_proj", d, h * m.v_head_dim, &w->o);
}

base::Status LoadMoe(Binder& b, const ModelConfig& c, const std::string& p, MoeWeights* w) {
  const MoeConfig& m = c.moe;
  const bool kimi = c.family != Family::kDeepseekV3;
  const std::string moe = p + (kimi ? "block_sparse_moe." : "mlp.");
  K3_RETURN_IF_ERROR(b.Matrix(moe + "gate", m.num_experts, c.hidden, &w->router));
  K3_RETURN_IF_ERROR(
      b.Vector(moe + "gate.e_score_correction_bias", m.num_experts, &w->correction_bias));
  const int64_t width = m.latent_dim > 0 ? m.latent_dim : c.hidden;
  w->experts.resize(m.num_experts);
  for (int e = 0; e < m.num_experts; ++e) {
    const std::string base = moe + "experts." + std::to_string(e) + ".";
    K3_RETURN_IF_ERROR(
        kimi ? LoadMlp(b, base, "w1", "w3", "w2", width, m.intermediate, &w->experts[e])
             : LoadMlp(b, base, "gate_proj", "up_proj", "down_proj", width, m.intermediate,
                       &w->experts[e]));
  }
  w->has_shared = m.num_shared > 0;
  if (w->has_shared) {
    K3_RETURN_IF_ERROR(LoadMlp(b, moe + "shared_experts.", "gate_proj", "up_proj", "down_proj",
                               c.hidden, int64_t{m.intermediate} * m.num_shared, &w->shared));
  }
  if (m.latent_dim > 0) {
    K3_RETURN_IF_ERROR(
        b.Matrix(moe + "routed_expert_down_proj", m.latent_dim, c.hidden, &w->latent_down));
    K3_RETURN_IF_ERROR(
        b.Matrix(moe + "routed_expert_up_proj", c.hidden, m.latent_dim, &w->latent_up));
    if (m.latent_norm) {
      K3_RETURN_IF_ERROR(
          b.Vector(moe + "routed_expert_norm.weight", m.latent_dim, &w->latent_norm));
    }
  }
  return base::Status::Ok();
}

// Folds an AttnRes site's RMSNorm weight and pseudo-query projection into one score vector.
base::Status LoadAttnResScore(Binder& b, const std::string& site, int64_t d,
                              std::vector<float>* score) {
  std::vector<float> norm, proj;
  K3_RETURN_IF_ERROR(b.Vector(site + "_norm.weight", d, &norm));
  K3_RETURN_IF_ERROR(b.Vector(site + "_proj.weight", d, &proj));
  score->resize(d);
  for (int64_t i = 0; i < d; ++i) (*score)[i] = norm[i] * proj[i];
  return base::Status::Ok();
}

base::Status LoadLayer(Binder& b, const ModelConfig& c, int layer, int kind_index,
                       LayerWeights* w) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  w->kind = c.layer_kinds[layer];
  w->kind_index = kind_index;
  K3_RETURN_IF_ERROR(b.Vector(p + "input_layernorm.weight", c.hidden, &w->input_norm));
  K3_RETURN_IF_ERROR(b.Vector(p + "post_attention_layernorm.weight", c.hidden, &w->post_norm));
  if (w->kind == LayerKind::kKda) {
    K3_RETURN_IF_ERROR(LoadKda(b, c, p + "self_attn.", &w->kda));
  } else {
    K3_RETURN_IF_ERROR(LoadMla(b, c, p + "self_attn.", &w->mla));
  }
  w->moe = c.is_moe_layer(layer);
  if (w->moe) {
    K3_RETURN_IF_ERROR(LoadMoe(b, c, p, &w->moe_weights));
  } else {
    K3_RETURN_IF_ERROR(LoadMlp(b, p + "mlp.", "gate_proj", "up_proj", "down_proj", c.hidden,
                               c.dense_intermediate, &w->dense));
  }
  if (c.attn_res_block_size > 0) {
    K3_RETURN_IF_ERROR(LoadAttnResScore(b, p + "self_attention_res", c.hidden, &w->attn_res_score));
    K3_RETURN_IF_ERROR(LoadAttnResScore(b, p + "mlp_res", c.hidden, &w->mlp_res_score));
  }
  return base::Status::Ok();
}

}  // namespace

base::Result<ModelWeights> LoadModelWeights(const weights::Checkpoint& checkpoint,
                                            const ModelConfig& config) {
  const std::string prefix =
      checkpoint.Contains("language_model.model.embed_tokens.weight") ? "language_model." : "";
  Binder b(checkpoint, config, prefix);
  ModelWeights w;
  K3_RETURN_IF_ERROR(b.Matrix("model.embed_tokens", config.vocab, config.hidden, &w.embed));
  K3_RETURN_IF_ERROR(b.Vector("model.norm.weight", config.hidden, &w.final_norm));
  K3_RETURN_IF_ERROR(b.Matrix("lm_head", config.vocab, config.hidden, &w.lm_head));
  if (config.attn_res_block_size > 0) {
    K3_RETURN_IF_ERROR(
        LoadAttnResScore(b, "model.output_attn_res", config.hidden, &w.output_res_score));
  }
  w.layers.resize(config.num_layers);
  int kda_index = 0, mla_index = 0;
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const bool kda = config.layer_kinds[layer] == LayerKind::kKda;
    K3_RETURN_IF_ERROR(
        LoadLayer(b, config, layer, kda ? kda_index++ : mla_index++, &w.layers[layer]));
  }
  return w;
}

}  // namespace k3::model
