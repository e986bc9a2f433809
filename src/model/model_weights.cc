#include "model/model_weights.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <string_view>

#include "kernels/op_args.h"
#include "model/tensor_schema.h"
#include "tensor/numeric.h"

namespace k3::model {
namespace {

using tensor::DType;
using tensor::TensorView;

// tensor::AnyE4M3Nan in 256 KiB pieces over `pool` (when given): a real K2 holds ~1 TB of FP8.
bool AnyE4M3Nan(const uint8_t* bytes, size_t n, base::ThreadPool* pool) {
  constexpr size_t kPiece = size_t{1} << 18;
  const size_t pieces = (n + kPiece - 1) / kPiece;
  if (pool == nullptr || pieces < 2) return tensor::AnyE4M3Nan(bytes, n);
  std::atomic<bool> found{false};
  pool->ParallelFor(pieces, [&](size_t i) {
    const size_t begin = i * kPiece;
    if (tensor::AnyE4M3Nan(bytes + begin, std::min(kPiece, n - begin))) {
      found.store(true, std::memory_order_relaxed);
    }
  });
  return found.load();
}

// Binds the schema's tensors (tensor_schema.h) with the checks every load must make.
class Binder {
 public:
  Binder(const weights::Checkpoint& checkpoint, const ModelConfig& config, base::ThreadPool* pool)
      : checkpoint_(checkpoint), config_(config), pool_(pool) {}

  // A [rows, cols] Linear weight: NAME.weight (F32/BF16/F16, or F8_E4M3 + NAME.weight_scale_inv
  // for block FP8), or NAME.weight_packed + NAME.weight_scale for MXFP4 (U8 packed) or
  // compressed-tensors INT4 (I32 packed; whichever the checkpoint holds).
  base::Status Matrix(const TensorSpec& spec, WeightMatrix* out) {
    const std::string& name = spec.name;
    out->rows = spec.rows();
    out->cols = spec.cols();
    if (checkpoint_.Contains(name + ".weight_packed")) return FourBit(name, out);
    K3_ASSIGN_OR_RETURN(TensorView view, checkpoint_.Get(name + ".weight"));
    if (view.shape != spec.shape) {
      return base::InvalidArgument("tensor '" + name + ".weight' has shape " +
                                   tensor::ShapeToString(view.shape) + ", expected " +
                                   tensor::ShapeToString(spec.shape));
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

  // A float vector of spec.elements elements (any shape with that many, or more when the spec
  // allows a longer one; BF16/F16/F32).
  base::Status Vector(const TensorSpec& spec, std::vector<float>* out) {
    const std::string& name = spec.name;
    const int64_t n = spec.elements;
    K3_ASSIGN_OR_RETURN(TensorView view, checkpoint_.Get(name));
    if (view.numel() != n && !(spec.may_be_longer && view.numel() > n)) {
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
  base::Status FourBit(const std::string& name, WeightMatrix* out) {
    if (out->cols % 32 != 0) {
      return base::InvalidArgument("tensor '" + name +
                                   "': 4-bit weights need a multiple of 32 columns");
    }
    K3_ASSIGN_OR_RETURN(TensorView packed, checkpoint_.Get(name + ".weight_packed"));
    if (packed.dtype == DType::kI32) return Int4(name, out);
    return Mxfp4(name, out);
  }

  // compressed-tensors pack-quantized INT4 (checkpoints.md A1.2-A1.3): the little-endian I32 words
  // viewed as bytes hold element 2j in the low nibble of byte j, as WeightFormat::kInt4 reads them.
  base::Status Int4(const std::string& name, WeightMatrix* out) {
    if (!config_.int4_experts) {
      return base::InvalidArgument("tensor '" + name +
                                   ".weight_packed' is INT4 but config.json declares no "
                                   "pack-quantized quantization_config");
    }
    TensorView packed, scales;
    K3_RETURN_IF_ERROR(PackedViews(name, *out, {DType::kI32, 8, DType::kBF16}, &packed, &scales));
    K3_RETURN_IF_ERROR(CheckWeightShape(name, *out));
    out->format = kernels::WeightFormat::kInt4;
    out->data = packed.bytes.data();
    out->group_scales = scales.data<uint16_t>();
    return base::Status::Ok();
  }

  // NAME.weight_shape, when present, is the unpacked [rows, cols] (I32 or I64: compressed-tensors
  // has written both).
  base::Status CheckWeightShape(const std::string& name, const WeightMatrix& w) {
    const std::string shape_name = name + ".weight_shape";
    if (!checkpoint_.Contains(shape_name)) return base::Status::Ok();
    K3_ASSIGN_OR_RETURN(TensorView shape, checkpoint_.Get(shape_name));
    int64_t dims[2] = {-1, -1};
    if (shape.numel() == 2 && shape.dtype == DType::kI32) {
      for (int i = 0; i < 2; ++i) dims[i] = ReadLittle<int32_t>(shape, i);
    } else if (shape.numel() == 2 && shape.dtype == DType::kI64) {
      for (int i = 0; i < 2; ++i) dims[i] = ReadLittle<int64_t>(shape, i);
    }
    if (dims[0] != w.rows || dims[1] != w.cols) {
      return base::InvalidArgument("tensor '" + shape_name + "' does not hold [" +
                                   std::to_string(w.rows) + ", " + std::to_string(w.cols) + "]");
    }
    return base::Status::Ok();
  }

  template <typename T>
  static int64_t ReadLittle(const TensorView& view, int i) {
    T value;
    std::memcpy(&value, view.bytes.data() + i * sizeof(T), sizeof(T));
    return value;
  }

  // How a 4-bit format stores NAME.weight_packed [rows, cols / per_item] and NAME.weight_scale
  // [rows, cols / 32].
  struct PackedLayout {
    DType packed;
    int64_t per_item;  // weights per stored item of weight_packed
    DType scale;
  };
  base::Status PackedViews(const std::string& name, const WeightMatrix& m, PackedLayout layout,
                           TensorView* packed, TensorView* scales) {
    const std::vector<int64_t> packed_shape = {m.rows, m.cols / layout.per_item};
    const std::vector<int64_t> scale_shape = {m.rows, m.cols / 32};
    K3_ASSIGN_OR_RETURN(*packed,
                        checkpoint_.Get(name + ".weight_packed", layout.packed, packed_shape));
    K3_ASSIGN_OR_RETURN(*scales,
                        checkpoint_.Get(name + ".weight_scale", layout.scale, scale_shape));
    return base::Status::Ok();
  }

  base::Status Mxfp4(const std::string& name, WeightMatrix* out) {
    TensorView packed, scales;
    K3_RETURN_IF_ERROR(PackedViews(name, *out, {DType::kU8, 2, DType::kU8}, &packed, &scales));
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
    // One pass at load (memory speed, over the pool) saves the decode kernels a per-row check.
    out->fp8_nan_free = !AnyE4M3Nan(static_cast<const uint8_t*>(out->data),
                                    static_cast<size_t>(out->rows * out->cols), pool_);
    return base::Status::Ok();
  }

  const weights::Checkpoint& checkpoint_;
  const ModelConfig& config_;
  base::ThreadPool* pool_;
};

base::Status LoadMlp(Binder& b, const MlpTensors& t, MlpWeights* out) {
  K3_RETURN_IF_ERROR(b.Matrix(t.gate, &out->gate));
  K3_RETURN_IF_ERROR(b.Matrix(t.up, &out->up));
  return b.Matrix(t.down, &out->down);
}

base::Status LoadKda(Binder& b, const ModelConfig& c, const KdaTensors& t, KdaWeights* w) {
  K3_RETURN_IF_ERROR(b.Matrix(t.q, &w->q));
  K3_RETURN_IF_ERROR(b.Matrix(t.k, &w->k));
  K3_RETURN_IF_ERROR(b.Matrix(t.v, &w->v));
  K3_RETURN_IF_ERROR(b.Vector(t.q_conv, &w->q_conv));
  K3_RETURN_IF_ERROR(b.Vector(t.k_conv, &w->k_conv));
  K3_RETURN_IF_ERROR(b.Vector(t.v_conv, &w->v_conv));
  K3_RETURN_IF_ERROR(b.Matrix(t.f_a, &w->f_a));
  K3_RETURN_IF_ERROR(b.Matrix(t.f_b, &w->f_b));
  K3_RETURN_IF_ERROR(b.Matrix(t.beta, &w->beta));
  K3_RETURN_IF_ERROR(b.Vector(t.a_log, &w->a_log));
  K3_RETURN_IF_ERROR(b.Vector(t.dt_bias, &w->dt_bias));
  if (c.kda.full_rank_output_gate) {
    K3_RETURN_IF_ERROR(b.Matrix(t.g, &w->g));
  } else {
    K3_RETURN_IF_ERROR(b.Matrix(t.g_a, &w->g_a));
    K3_RETURN_IF_ERROR(b.Matrix(t.g_b, &w->g_b));
  }
  K3_RETURN_IF_ERROR(b.Vector(t.o_norm, &w->o_norm));
  return b.Matrix(t.o, &w->o);
}

base::Status LoadMla(Binder& b, const ModelConfig& c, const MlaTensors& t, MlaWeights* w) {
  const MlaConfig& m = c.mla;
  if (m.q_lora_rank > 0) {
    K3_RETURN_IF_ERROR(b.Matrix(t.q_a, &w->q_a));
    K3_RETURN_IF_ERROR(b.Vector(t.q_a_norm, &w->q_a_norm));
    K3_RETURN_IF_ERROR(b.Matrix(t.q_b, &w->q_b));
  } else {
    K3_RETURN_IF_ERROR(b.Matrix(t.q, &w->q));
  }
  K3_RETURN_IF_ERROR(b.Matrix(t.kv_a, &w->kv_a));
  K3_RETURN_IF_ERROR(b.Vector(t.kv_a_norm, &w->kv_a_norm));
  K3_RETURN_IF_ERROR(b.Matrix(t.kv_b, &w->kv_b));
  const kernels::MlaShape shape{m.num_heads,  m.qk_nope_dim,  m.qk_rope_dim,
                                m.v_head_dim, m.kv_lora_rank, 1.0f};
  w->kv_b_absorbed = kernels::AbsorbedKvBStorage(w->kv_b, shape);
  if (m.output_gate) K3_RETURN_IF_ERROR(b.Matrix(t.g, &w->g));
  return b.Matrix(t.o, &w->o);
}

base::Status LoadMoe(Binder& b, const ModelConfig& c, const MoeTensors& t, MoeWeights* w) {
  const MoeConfig& m = c.moe;
  K3_RETURN_IF_ERROR(b.Matrix(t.router, &w->router));
  K3_RETURN_IF_ERROR(b.Vector(t.correction_bias, &w->correction_bias));
  w->experts.resize(m.num_experts);
  for (int e = 0; e < m.num_experts; ++e) {
    K3_RETURN_IF_ERROR(LoadMlp(b, t.experts[e], &w->experts[e]));
  }
  w->has_shared = m.num_shared > 0;
  if (w->has_shared) K3_RETURN_IF_ERROR(LoadMlp(b, t.shared, &w->shared));
  if (m.latent_dim > 0) {
    K3_RETURN_IF_ERROR(b.Matrix(t.latent_down, &w->latent_down));
    K3_RETURN_IF_ERROR(b.Matrix(t.latent_up, &w->latent_up));
    if (m.latent_norm) K3_RETURN_IF_ERROR(b.Vector(t.latent_norm, &w->latent_norm));
  }
  return base::Status::Ok();
}

// Folds an AttnRes site's RMSNorm weight and pseudo-query projection into one score vector.
base::Status LoadAttnResScore(Binder& b, const AttnResTensors& t, std::vector<float>* score) {
  std::vector<float> norm, proj;
  K3_RETURN_IF_ERROR(b.Vector(t.norm, &norm));
  K3_RETURN_IF_ERROR(b.Vector(t.proj, &proj));
  score->resize(norm.size());
  for (size_t i = 0; i < norm.size(); ++i) (*score)[i] = norm[i] * proj[i];
  return base::Status::Ok();
}

base::Status LoadLayer(Binder& b, const ModelConfig& c, std::string_view prefix, int layer,
                       int kind_index, LayerWeights* w) {
  const LayerTensors t = LayerTensorsOf(c, prefix, layer);
  w->kind = t.kind;
  w->kind_index = kind_index;
  K3_RETURN_IF_ERROR(b.Vector(t.input_norm, &w->input_norm));
  K3_RETURN_IF_ERROR(b.Vector(t.post_norm, &w->post_norm));
  if (w->kind == LayerKind::kKda) {
    K3_RETURN_IF_ERROR(LoadKda(b, c, t.kda, &w->kda));
  } else {
    K3_RETURN_IF_ERROR(LoadMla(b, c, t.mla, &w->mla));
  }
  w->moe = t.moe;
  if (w->moe) {
    K3_RETURN_IF_ERROR(LoadMoe(b, c, t.moe_tensors, &w->moe_weights));
  } else {
    K3_RETURN_IF_ERROR(LoadMlp(b, t.dense, &w->dense));
  }
  if (c.attn_res_block_size > 0) {
    K3_RETURN_IF_ERROR(LoadAttnResScore(b, t.attn_res, &w->attn_res_score));
    K3_RETURN_IF_ERROR(LoadAttnResScore(b, t.mlp_res, &w->mlp_res_score));
  }
  return base::Status::Ok();
}

// K3 and K2.5 nest the text model under "language_model."; the others use no prefix. Told apart
// by where the embedding is, so either spelling loads for any family.
std::string_view DetectPrefix(const weights::Checkpoint& checkpoint, const ModelConfig& config) {
  const std::string_view nested = CheckpointPrefix(Family::kKimiK3);
  const bool is_nested = checkpoint.Contains(OuterTensorsOf(config, nested).embed.name + ".weight");
  return is_nested ? nested : "";
}

}  // namespace

base::Result<ModelWeights> LoadModelWeights(const weights::Checkpoint& checkpoint,
                                            const ModelConfig& config, base::ThreadPool* pool) {
  const std::string_view prefix = DetectPrefix(checkpoint, config);
  Binder b(checkpoint, config, pool);
  const OuterTensors outer = OuterTensorsOf(config, prefix);
  ModelWeights w;
  K3_RETURN_IF_ERROR(b.Matrix(outer.embed, &w.embed));
  K3_RETURN_IF_ERROR(b.Vector(outer.final_norm, &w.final_norm));
  K3_RETURN_IF_ERROR(b.Matrix(outer.lm_head, &w.lm_head));
  if (config.attn_res_block_size > 0) {
    K3_RETURN_IF_ERROR(LoadAttnResScore(b, outer.output_res, &w.output_res_score));
  }
  w.layers.resize(config.num_layers);
  int kda_index = 0, mla_index = 0;
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const bool kda = config.layer_kinds[layer] == LayerKind::kKda;
    K3_RETURN_IF_ERROR(
        LoadLayer(b, config, prefix, layer, kda ? kda_index++ : mla_index++, &w.layers[layer]));
  }
  return w;
}

}  // namespace k3::model
