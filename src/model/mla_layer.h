// Multi-head latent attention (spec/model.md §3): DeepSeek-V3/K2 with YaRN RoPE, Kimi-Linear NoPE,
// and K3 NoPE with an output gate. The cache holds, per token, only the normalised latent c_kv and
// the shared key part k_pe. Two equivalent attention forms:
// - naive: expand every cached latent into per-head keys and values with kv_b (cheap per query
//   when many queries share the expansion: prefill);
// - absorbed: fold kv_b's key half into the query and its value half after the weighted sum, so
//   each query touches only the 576-wide cache entries (decode).
#pragma once

#include <span>

#include "base/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/model_weights.h"
#include "model/rope.h"
#include "model/state.h"

namespace k3::model {

// x: normed input [rows, hidden]; out: [rows, hidden]. Writes the new tokens' cache entries into
// their pages, then attends causally over positions [0, start_position + row].
void MlaForward(const ModelConfig& config, const MlaWeights& w, int mla_layer, const Rope* rope,
                const float* x, std::span<const SequenceRows> seqs, const ForwardOptions& options,
                MlaCache& cache, base::ThreadPool* pool, float* out);

}  // namespace k3::model
