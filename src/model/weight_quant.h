// Opt-in load-time re-quantisation of a model's dense projections (--weight-quant int8): every
// BF16/F16/F32 projection of the attention blocks (KDA, MLA but kv_b, whose absorbed form reads a
// float copy), the shared experts, the dense MLPs, the latent MoE projections and lm_head becomes
// kernels::WeightFormat::kInt8Block (int8 per 32 columns with a BF16 scale: 8.5 bits per weight
// instead of 16), held in memory the ModelWeights own. The router (whose top-k decisions are
// sensitive), the embedding (row lookups) and the routed experts (stored 4-bit, or BF16 in
// Kimi-Linear, left exact) are kept. On AVX512-VNNI the products run with int8 activations
// (W8A8, kernels/matmul_int8.h); elsewhere the weights are dequantised per row group.
#pragma once

#include <string_view>

#include "base/result.h"
#include "base/thread_pool.h"
#include "model/model_weights.h"

namespace k3::model {

enum class WeightQuant { kNone, kInt8 };

// "none" or "int8"; INVALID_ARGUMENT naming the value otherwise.
base::Result<WeightQuant> ParseWeightQuant(std::string_view name);

// Re-quantises the projections listed above in place; returns how many matrices changed. A matrix
// whose column count is not a multiple of 32 stays as it is.
int QuantizeDenseWeights(ModelWeights* weights, base::ThreadPool* pool);

}  // namespace k3::model
