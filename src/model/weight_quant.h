// Load-time conversions of a model's dense projections. --weight-quant int8 (opt-in): every
// BF16/F16/F32/FP8-block projection of the attention blocks (KDA, MLA but kv_b, whose absorbed
// form reads a float copy), the shared experts, the dense MLPs, the latent MoE projections and
// lm_head becomes kernels::WeightFormat::kInt8Block (int8 per 32 columns with a BF16 scale: 8.5
// bits per weight instead of 16), held in memory the ModelWeights own. Routed experts stored at
// 8 bits or more are converted too: FP8 blocks (Kimi K2 / DeepSeek-V3) and BF16 (Kimi-Linear), so
// those run on the same integer kernels as llama.cpp runs them as Q8_0: E4M3 values that are small
// against their block's largest lose bits there (each weight within its new scale / 2, like any
// other). The router (whose top-k decisions are sensitive), the embedding (row lookups) and 4-bit
// routed experts are kept. On any AVX2 core the products run with int8 activations (W8A8,
// kernels/matmul_int8.h); on a scalar-only one the weights are dequantised per row group. Converted
// matrices live in memory the ModelWeights own; Model::Load then releases the checkpoint memory the
// model no longer reads (weights::Checkpoint::ReleaseExcept), so the originals do not stay beside
// them.
//
// --weight-quant bf16-panels, what the default (auto) picks on AVX-512, keeps every value: the
// same BF16 matrices (the list above, routed experts included where they are BF16) are repacked
// into kernels::WeightFormat::kBf16Panels, whose products run down the columns in a fixed order
// (each output one fma chain), so results differ from the row-major kernels' by float32 rounding
// only and never depend on batch size or threads. On AVX-512 these products run ~1.5x faster at
// 8-32 tokens, ~1.27x in prefill and as fast at one token (whole models: 1.13-1.33x batch-32
// decode); without AVX-512 they would run on slow scalar chains, so the loader keeps the
// row-major matrices there (docs/model.md).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/thread_pool.h"
#include "model/model_weights.h"

namespace k3::model {

// kAuto (the command line's default) is kBf16Panels where their tiles run (AVX-512) and no
// --gemm-precision bf16 asks for BF16 products of the row-major matrices, else kNone: the panels
// keep every value and were measured no slower at batch 1 and faster at 8-32 tokens and in
// prefill on every family (docs/model.md, "BF16 panels").
enum class WeightQuant { kNone, kInt8, kBf16Panels, kAuto };

// "auto", "none", "int8" or "bf16-panels"; INVALID_ARGUMENT naming the value otherwise.
base::Result<WeightQuant> ParseWeightQuant(std::string_view name);
std::string_view WeightQuantName(WeightQuant quant);
// What kAuto means on this CPU with the process's GEMM precision (kernels::GetGemmPrecision, so
// resolve after setting it); any other value is returned as it is.
WeightQuant ResolveWeightQuant(WeightQuant quant);
// "--weight-quant auto: <choice> (<why>)", for the log of whoever resolves it.
std::string DescribeAutoWeightQuant();

// Re-quantises the projections listed above in place; returns how many matrices changed. A
// matrix whose column count is not a multiple of 32 stays as it is. `layer_done` (optional) runs
// after each layer's matrices and after lm_head: the loader releases the originals as it goes
// (MatrixBytes), so that loading never holds more than the model and one layer's copies.
int QuantizeDenseWeights(ModelWeights* weights, base::ThreadPool* pool,
                         const std::function<void()>& layer_done = {});

// Repacks the same matrices that are BF16 (with an even column count) into BF16 panels; returns
// how many changed. `layer_done` as above.
int PackDenseWeightsIntoPanels(ModelWeights* weights, base::ThreadPool* pool,
                               const std::function<void()>& layer_done = {});

// The bytes of every matrix `weights` reads (elements and scales, wherever they live): what a
// checkpoint keeps when the rest is released (weights::Checkpoint::ReleaseExcept).
std::vector<std::span<const std::byte>> MatrixBytes(const ModelWeights& weights);

}  // namespace k3::model
