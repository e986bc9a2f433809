// The tensors of a Kimi-family checkpoint, described once for a ModelConfig: every name (with the
// checkpoint's prefix), shape and storage. The loader (model_weights.cc) binds these names and
// checks these shapes; the synthetic writers (model/testing) write exactly these tensors, in the
// order listed by Ordered(). tensor_schema_test checks the schema against checkpoints written by
// the independent Python writer (reference/make_checkpoint.py) for all three families.
//
// Names follow the Hugging Face checkpoints (spec model.md §2.5 KDA, §3 MLA, §4 MoE, §5 AttnRes,
// §7.2 MXFP4). Shapes use D = hidden, V = vocab, H = heads, K = KDA head_dim, P = H * K,
// I = intermediate, W = expert width (the latent width when K3's latent MoE is on, else D).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "tensor/dtype.h"

namespace k3::model {

// How a checkpoint of a given config stores a tensor. The loader takes any matrix storage it
// finds (it looks at the checkpoint, not at this field); writers and checks use it.
enum class TensorStorage : uint8_t {
  kDense,  // matrix NAME.weight [rows, cols], BF16 (the loader also takes F32 and F16)
  kMxfp4,  // matrix NAME.weight_packed U8 [rows, cols / 2] + NAME.weight_scale U8 [rows, cols / 32]
  kFp8Block,  // matrix NAME.weight F8_E4M3 [rows, cols] + NAME.weight_scale_inv F32
              //   [ceil(rows / block), ceil(cols / block)]
  kInt4,      // matrix NAME.weight_packed I32 [rows, cols / 8] + NAME.weight_scale BF16
              //   [rows, cols / 32] + NAME.weight_shape I32 [2] (compressed-tensors INT4)
  kBf16,      // vector NAME, BF16 of `shape`
  kF32,       // vector NAME, F32 of `shape`
};

// What a tensor is for; synthetic writers choose its values by it.
enum class TensorRole : uint8_t {
  kLinear,         // a projection [rows, cols]
  kEmbedding,      // token embeddings [V, D]
  kNorm,           // an RMSNorm weight
  kResidualQuery,  // an Attention Residual pseudo-query [1, D]
  kConvTaps,       // a KDA short-convolution kernel [P, 1, taps]
  kDecay,          // KDA A_log
  kBias,           // KDA dt_bias, the router's score correction bias
};

struct TensorSpec {
  // The full name, prefix included; a matrix's base name (its storage adds ".weight", ...).
  // Empty: the config has no such tensor.
  std::string name;
  TensorStorage storage = TensorStorage::kDense;
  TensorRole role = TensorRole::kLinear;
  std::vector<int64_t> shape;  // matrix: [rows, cols]; vector: as stored
  int64_t elements = 0;        // vector: the elements the model reads
  // Vector only: the stored tensor may hold more than `elements`, of which the first are read
  // (K3 stores A_log with head_dim entries and uses the first num_heads, spec §13.5).
  bool may_be_longer = false;

  bool present() const { return !name.empty(); }
  bool is_matrix() const { return storage <= TensorStorage::kInt4; }
  int64_t rows() const { return shape[0]; }
  int64_t cols() const { return shape[1]; }
};

struct MlpTensors {
  TensorSpec gate, up, down;  // [I, W], [I, W], [W, I]
};

struct KdaTensors {
  TensorSpec q, k, v;                 // [P, D]
  TensorSpec g;                       // full-rank output gate [P, D] (K3)
  TensorSpec q_conv, k_conv, v_conv;  // F32 [P, 1, taps]
  TensorSpec f_a, f_b;                // [K, D], [P, K]
  TensorSpec beta;                    // b_proj [H, D]
  TensorSpec a_log;                   // F32 [1, 1, H, 1], or K3's [K] (first H used)
  TensorSpec dt_bias;                 // F32 [P]
  TensorSpec g_a, g_b;                // low-rank output gate [K, D], [P, K] (Kimi-Linear)
  TensorSpec o_norm;                  // [K]
  TensorSpec o;                       // [D, P]
};

struct MlaTensors {
  TensorSpec q_a, q_a_norm, q_b;  // q_lora path [q_lora, D], [q_lora], [H (dn + dr), q_lora]
  TensorSpec q;                   // or a plain q_proj [H (dn + dr), D]
  TensorSpec kv_a;                // [r + dr, D]
  TensorSpec kv_a_norm;           // [r]
  TensorSpec kv_b;                // [H (dn + dv), r]
  TensorSpec g;                   // K3 output gate [H dv, D]
  TensorSpec o;                   // [D, H dv]
};

struct MoeTensors {
  TensorSpec router;                // gate [E, D]
  TensorSpec correction_bias;       // F32 [E]
  TensorSpec latent_down;           // K3 latent MoE [W, D]
  TensorSpec latent_norm;           // [W]
  TensorSpec latent_up;             // [D, W]
  MlpTensors shared;                // at full width, I * num_shared; absent when num_shared = 0
  std::vector<MlpTensors> experts;  // [E], at width W
};

// An Attention Residual site: its RMSNorm weight and pseudo-query, both [D] as used.
struct AttnResTensors {
  TensorSpec norm, proj;
};

struct LayerTensors {
  LayerKind kind = LayerKind::kKda;
  bool moe = false;
  TensorSpec input_norm, post_norm;  // [D]
  AttnResTensors attn_res, mlp_res;  // with Attention Residuals only
  KdaTensors kda;                    // when kind is kKda
  MlaTensors mla;                    // when kind is kMla
  MlpTensors dense;                  // when !moe, [I, D] at full width
  MoeTensors moe_tensors;            // when moe
};

// The tensors outside the layers.
struct OuterTensors {
  TensorSpec embed;           // [V, D]
  TensorSpec lm_head;         // [V, D]
  TensorSpec final_norm;      // [D]
  AttnResTensors output_res;  // with Attention Residuals only
};

// The prefix of every tensor name in a checkpoint of `family` as Hugging Face ships it:
// "language_model." for K3 (which nests the text model), "" otherwise.
std::string_view CheckpointPrefix(Family family);

OuterTensors OuterTensorsOf(const ModelConfig& config, std::string_view prefix);
LayerTensors LayerTensorsOf(const ModelConfig& config, std::string_view prefix, int layer);

// The present tensors in checkpoint order (the order the synthetic writers write them in).
std::vector<const TensorSpec*> Ordered(const OuterTensors& tensors);
std::vector<const TensorSpec*> Ordered(const LayerTensors& tensors);

// The stored (name, dtype name, shape) entries of one spec: one for a vector or dense matrix, two
// for MXFP4 and FP8 block matrices. `fp8_block` sizes the FP8 scale grid.
struct StoredTensor {
  std::string name;
  tensor::DType dtype;
  std::vector<int64_t> shape;
};
std::vector<StoredTensor> StoredTensors(const TensorSpec& spec, int fp8_block);

}  // namespace k3::model
