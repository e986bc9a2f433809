// The tensors of one checkpoint bound to the layers that use them. Large matrices stay in the
// memory-mapped shards (kernels::WeightMatrix views); vectors (norms, biases, conv taps) are
// converted to owned float32, and the MLA kv_b matrix gets the absorbed decode form's per-head
// layout (kernels::AbsorbedKvBStorage: its key halves transposed, in kv_b's format where exact).
// Loading checks every tensor's dtype and shape, so a wrong checkpoint fails here, naming it. The
// names and shapes come from the tensor schema (tensor_schema.h), which the writers share.
#pragma once

#include <vector>

#include "base/arena.h"
#include "base/result.h"
#include "base/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/mla_layout.h"
#include "model/config.h"
#include "weights/checkpoint.h"

namespace k3::model {

using kernels::WeightMatrix;

struct MlpWeights {
  WeightMatrix gate, up, down;  // [I, D], [I, D], [D, I]
};

struct KdaWeights {
  WeightMatrix q, k, v;                       // [P, D]
  std::vector<float> q_conv, k_conv, v_conv;  // [P, kernel]
  WeightMatrix f_a, f_b;                      // [K, D], [P, K]
  WeightMatrix beta;                          // [H, D]
  std::vector<float> a_log;                   // [H]
  std::vector<float> dt_bias;                 // [P]
  WeightMatrix g, g_a, g_b;                   // full rank [P, D] (K3) or low rank [K, D] + [P, K]
  std::vector<float> o_norm;                  // [K]
  WeightMatrix o;                             // [D, P]
};

struct MlaWeights {
  WeightMatrix q_a, q_b, q;                   // q_lora path or plain q_proj
  std::vector<float> q_a_norm;                // [q_lora]
  WeightMatrix kv_a;                          // [r + dr, D]
  std::vector<float> kv_a_norm;               // [r]
  WeightMatrix kv_b;                          // [H (dn + dv), r]
  kernels::AbsorbedKvBStorage kv_b_absorbed;  // the same, as the absorbed form reads it
  WeightMatrix g;                             // K3 output gate [H dv, D]
  WeightMatrix o;                             // [D, H dv]
};

struct MoeWeights {
  WeightMatrix router;                 // [E, D]
  std::vector<float> correction_bias;  // [E]
  std::vector<MlpWeights> experts;     // at latent width when latent_dim > 0
  bool has_shared = false;
  MlpWeights shared;                    // full width, intermediate * num_shared
  WeightMatrix latent_down, latent_up;  // [L, D], [D, L]
  std::vector<float> latent_norm;       // [L]
};

struct LayerWeights {
  LayerKind kind = LayerKind::kKda;
  int kind_index = 0;  // index among layers of the same kind (state / cache slot)
  std::vector<float> input_norm, post_norm;
  KdaWeights kda;
  MlaWeights mla;
  bool moe = false;
  MlpWeights dense;
  MoeWeights moe_weights;
  // Attention Residuals: norm.weight * proj.weight folded into one score vector per site [D].
  std::vector<float> attn_res_score, mlp_res_score;
};

struct ModelWeights {
  WeightMatrix embed;  // [V, D]
  std::vector<float> final_norm;
  WeightMatrix lm_head;  // [V, D]
  std::vector<float> output_res_score;
  std::vector<LayerWeights> layers;
  // Storage of the matrices made at load (weight_quant.h); moving the struct keeps their
  // addresses. An arena of geometrically growing blocks, those of 2 MiB or more in transparent
  // huge pages as the checkpoint's own weights are (model.h, kHuge): decode streams them with as
  // few TLB misses, and packing matrix after matrix leaves no per-matrix rounding.
  base::Arena converted;
};

// `pool` (optional) spreads the load-time scans of the weights (FP8 NaN codes) over its threads.
base::Result<ModelWeights> LoadModelWeights(const weights::Checkpoint& checkpoint,
                                            const ModelConfig& config,
                                            base::ThreadPool* pool = nullptr);

}  // namespace k3::model
