#include "model/tensor_schema.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace k3::model {
namespace {

using S = TensorStorage;
using R = TensorRole;

// Names and storages for one config under one prefix. Storage rules (as the Hugging Face
// checkpoints and reference/make_checkpoint.py): with FP8 block weights (DeepSeek-V3 / K2) every
// attention, MLP and expert Linear is FP8, the router BF16; otherwise routed experts are MXFP4
// or INT4 when the config says so and every other matrix is BF16. Embeddings and lm_head are always
// BF16; norms BF16; conv taps, A_log, dt_bias and the router bias F32.
class SchemaBuilder {
 public:
  SchemaBuilder(const ModelConfig& config, std::string_view prefix) : c_(config), prefix_(prefix) {}

  const ModelConfig& config() const { return c_; }
  S layer_storage() const { return c_.fp8_block > 0 ? S::kFp8Block : S::kDense; }
  S expert_storage() const {
    if (c_.fp8_block > 0) return S::kFp8Block;
    if (c_.int4_experts) return S::kInt4;
    return c_.mxfp4_experts ? S::kMxfp4 : S::kDense;
  }

  TensorSpec Matrix(const std::string& base, int64_t rows, int64_t cols, S storage = S::kDense,
                    R role = R::kLinear) const {
    return {prefix_ + base, storage, role, {rows, cols}, 0, false};
  }
  // A float vector of `elements`, stored with `shape` (default: [elements]).
  TensorSpec Vector(const std::string& name, R role, int64_t elements,
                    std::vector<int64_t> shape = {}) const {
    const S storage = role == R::kNorm || role == R::kResidualQuery ? S::kBf16 : S::kF32;
    if (shape.empty()) shape = {elements};
    return {prefix_ + name, storage, role, std::move(shape), elements, false};
  }
  TensorSpec Norm(const std::string& name, int64_t n) const { return Vector(name, R::kNorm, n); }
  AttnResTensors AttnRes(const std::string& site) const {
    return {Norm(site + "_norm.weight", c_.hidden),
            Vector(site + "_proj.weight", R::kResidualQuery, c_.hidden, {1, c_.hidden})};
  }
  MlpTensors Mlp(const std::string& base, const char* const names[3], int64_t width, int64_t inner,
                 S storage) const {
    return {Matrix(base + names[0], inner, width, storage),
            Matrix(base + names[1], inner, width, storage),
            Matrix(base + names[2], width, inner, storage)};
  }

 private:
  const ModelConfig& c_;
  std::string prefix_;
};

constexpr const char* kGlu[3] = {"gate_proj", "up_proj", "down_proj"};
constexpr const char* kKimiExpert[3] = {"w1", "w3", "w2"};

KdaTensors Kda(const SchemaBuilder& b, const std::string& p) {
  const ModelConfig& c = b.config();
  const int64_t d = c.hidden, h = c.kda.num_heads, k = c.kda.head_dim, pd = h * k;
  const S s = b.layer_storage();
  KdaTensors t;
  t.q = b.Matrix(p + "q_proj", pd, d, s);
  t.k = b.Matrix(p + "k_proj", pd, d, s);
  t.v = b.Matrix(p + "v_proj", pd, d, s);
  const std::vector<int64_t> taps = {pd, 1, c.kda.conv_kernel};
  t.q_conv = b.Vector(p + "q_conv1d.weight", R::kConvTaps, pd * c.kda.conv_kernel, taps);
  t.k_conv = b.Vector(p + "k_conv1d.weight", R::kConvTaps, pd * c.kda.conv_kernel, taps);
  t.v_conv = b.Vector(p + "v_conv1d.weight", R::kConvTaps, pd * c.kda.conv_kernel, taps);
  t.f_a = b.Matrix(p + "f_a_proj", k, d, s);
  t.f_b = b.Matrix(p + "f_b_proj", pd, k, s);
  t.beta = b.Matrix(p + "b_proj", h, d, s);
  // K3 (lower-bound gate) stores A_log with head_dim entries; Kimi-Linear as [1, 1, H, 1].
  t.a_log =
      b.Vector(p + "A_log", R::kDecay, h,
               c.kda.lower_bound_gate ? std::vector<int64_t>{k} : std::vector<int64_t>{1, 1, h, 1});
  t.a_log.may_be_longer = true;
  t.dt_bias = b.Vector(p + "dt_bias", R::kBias, pd);
  if (c.kda.full_rank_output_gate) {
    t.g = b.Matrix(p + "g_proj", pd, d, s);
  } else {
    t.g_a = b.Matrix(p + "g_a_proj", k, d, s);
    t.g_b = b.Matrix(p + "g_b_proj", pd, k, s);
  }
  t.o_norm = b.Norm(p + "o_norm.weight", k);
  t.o = b.Matrix(p + "o_proj", d, pd, s);
  return t;
}

MlaTensors Mla(const SchemaBuilder& b, const std::string& p) {
  const ModelConfig& c = b.config();
  const MlaConfig& m = c.mla;
  const int64_t d = c.hidden, h = m.num_heads;
  const S s = b.layer_storage();
  MlaTensors t;
  if (m.q_lora_rank > 0) {
    t.q_a = b.Matrix(p + "q_a_proj", m.q_lora_rank, d, s);
    t.q_a_norm = b.Norm(p + "q_a_layernorm.weight", m.q_lora_rank);
    t.q_b = b.Matrix(p + "q_b_proj", h * m.qk_dim(), m.q_lora_rank, s);
  } else {
    t.q = b.Matrix(p + "q_proj", h * m.qk_dim(), d, s);
  }
  t.kv_a = b.Matrix(p + "kv_a_proj_with_mqa", m.cache_dim(), d, s);
  t.kv_a_norm = b.Norm(p + "kv_a_layernorm.weight", m.kv_lora_rank);
  t.kv_b = b.Matrix(p + "kv_b_proj", h * (m.qk_nope_dim + m.v_head_dim), m.kv_lora_rank, s);
  if (m.output_gate) t.g = b.Matrix(p + "g_proj", h * m.v_head_dim, d, s);
  t.o = b.Matrix(p + "o_proj", d, h * m.v_head_dim, s);
  return t;
}

MoeTensors Moe(const SchemaBuilder& b, const std::string& p) {
  const ModelConfig& c = b.config();
  const MoeConfig& m = c.moe;
  const bool kimi = c.family != Family::kDeepseekV3;
  const std::string moe = p + (kimi ? "block_sparse_moe." : "mlp.");
  MoeTensors t;
  t.router = b.Matrix(moe + "gate", m.num_experts, c.hidden);
  t.correction_bias = b.Vector(moe + "gate.e_score_correction_bias", R::kBias, m.num_experts);
  if (m.latent_dim > 0) {
    t.latent_down = b.Matrix(moe + "routed_expert_down_proj", m.latent_dim, c.hidden);
    if (m.latent_norm) t.latent_norm = b.Norm(moe + "routed_expert_norm.weight", m.latent_dim);
    t.latent_up = b.Matrix(moe + "routed_expert_up_proj", c.hidden, m.latent_dim);
  }
  if (m.num_shared > 0) {
    t.shared = b.Mlp(moe + "shared_experts.", kGlu, c.hidden,
                     int64_t{m.intermediate} * m.num_shared, b.layer_storage());
  }
  const int64_t width = m.latent_dim > 0 ? m.latent_dim : c.hidden;
  t.experts.reserve(m.num_experts);
  for (int e = 0; e < m.num_experts; ++e) {
    t.experts.push_back(b.Mlp(moe + "experts." + std::to_string(e) + ".", kimi ? kKimiExpert : kGlu,
                              width, m.intermediate, b.expert_storage()));
  }
  return t;
}

void Append(const MlpTensors& t, std::vector<const TensorSpec*>* out) {
  for (const TensorSpec* s : {&t.gate, &t.up, &t.down}) {
    if (s->present()) out->push_back(s);
  }
}

void AppendAll(std::initializer_list<const TensorSpec*> specs,
               std::vector<const TensorSpec*>* out) {
  for (const TensorSpec* s : specs) {
    if (s->present()) out->push_back(s);
  }
}

}  // namespace

std::string_view CheckpointPrefix(Family family) {
  return family == Family::kKimiK3 ? "language_model." : "";
}

OuterTensors OuterTensorsOf(const ModelConfig& config, std::string_view prefix) {
  const SchemaBuilder b(config, prefix);
  OuterTensors t;
  t.embed = b.Matrix("model.embed_tokens", config.vocab, config.hidden, S::kDense, R::kEmbedding);
  t.lm_head = b.Matrix("lm_head", config.vocab, config.hidden);
  t.final_norm = b.Norm("model.norm.weight", config.hidden);
  if (config.attn_res_block_size > 0) t.output_res = b.AttnRes("model.output_attn_res");
  return t;
}

LayerTensors LayerTensorsOf(const ModelConfig& config, std::string_view prefix, int layer) {
  const SchemaBuilder b(config, prefix);
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  LayerTensors t;
  t.kind = config.layer_kinds[layer];
  t.moe = config.is_moe_layer(layer);
  t.input_norm = b.Norm(p + "input_layernorm.weight", config.hidden);
  t.post_norm = b.Norm(p + "post_attention_layernorm.weight", config.hidden);
  if (config.attn_res_block_size > 0) {
    t.attn_res = b.AttnRes(p + "self_attention_res");
    t.mlp_res = b.AttnRes(p + "mlp_res");
  }
  if (t.kind == LayerKind::kKda) {
    t.kda = Kda(b, p + "self_attn.");
  } else {
    t.mla = Mla(b, p + "self_attn.");
  }
  if (t.moe) {
    t.moe_tensors = Moe(b, p);
  } else {
    t.dense = b.Mlp(p + "mlp.", kGlu, config.hidden, config.dense_intermediate, b.layer_storage());
  }
  return t;
}

std::vector<const TensorSpec*> Ordered(const OuterTensors& t) {
  std::vector<const TensorSpec*> out;
  AppendAll({&t.embed, &t.lm_head, &t.final_norm, &t.output_res.norm, &t.output_res.proj}, &out);
  return out;
}

std::vector<const TensorSpec*> Ordered(const LayerTensors& t) {
  std::vector<const TensorSpec*> out;
  AppendAll({&t.input_norm, &t.post_norm, &t.attn_res.norm, &t.mlp_res.norm, &t.attn_res.proj,
             &t.mlp_res.proj},
            &out);
  if (t.kind == LayerKind::kKda) {
    const KdaTensors& a = t.kda;
    AppendAll({&a.q, &a.k, &a.v, &a.g, &a.q_conv, &a.k_conv, &a.v_conv, &a.f_a, &a.f_b, &a.beta,
               &a.a_log, &a.dt_bias, &a.g_a, &a.g_b, &a.o_norm, &a.o},
              &out);
  } else {
    const MlaTensors& a = t.mla;
    AppendAll({&a.q_a, &a.q_a_norm, &a.q_b, &a.q, &a.kv_a, &a.kv_a_norm, &a.kv_b, &a.g, &a.o},
              &out);
  }
  if (!t.moe) {
    Append(t.dense, &out);
    return out;
  }
  const MoeTensors& m = t.moe_tensors;
  AppendAll({&m.router, &m.correction_bias, &m.latent_down, &m.latent_norm, &m.latent_up}, &out);
  Append(m.shared, &out);
  for (const MlpTensors& e : m.experts) Append(e, &out);
  return out;
}

std::vector<StoredTensor> StoredTensors(const TensorSpec& spec, int fp8_block) {
  const std::string& n = spec.name;
  switch (spec.storage) {
    case S::kDense:
      return {{n + ".weight", tensor::DType::kBF16, spec.shape}};
    case S::kMxfp4:
      return {{n + ".weight_packed", tensor::DType::kU8, {spec.rows(), spec.cols() / 2}},
              {n + ".weight_scale", tensor::DType::kU8, {spec.rows(), spec.cols() / 32}}};
    case S::kInt4:
      return {{n + ".weight_packed", tensor::DType::kI32, {spec.rows(), spec.cols() / 8}},
              {n + ".weight_scale", tensor::DType::kBF16, {spec.rows(), spec.cols() / 32}},
              {n + ".weight_shape", tensor::DType::kI32, {2}}};
    case S::kFp8Block: {
      const int64_t b = fp8_block;
      return {{n + ".weight", tensor::DType::kF8E4M3, spec.shape},
              {n + ".weight_scale_inv",
               tensor::DType::kF32,
               {(spec.rows() + b - 1) / b, (spec.cols() + b - 1) / b}}};
    }
    case S::kBf16:
      return {{n, tensor::DType::kBF16, spec.shape}};
    case S::kF32:
      return {{n, tensor::DType::kF32, spec.shape}};
  }
  return {};
}

}  // namespace k3::model
