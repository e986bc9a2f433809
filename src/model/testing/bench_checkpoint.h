// The synthetic K3-shaped checkpoint of `k3 bench model` (and `k3 bench engine` / `frontend`):
// real tensor names, layouts and dtypes (BF16 dense weights, MXFP4 or BF16 routed experts), random
// values of sensible scale (synthetic_checkpoint.h). Only speed is measured on it; its outputs
// mean nothing. The demo checkpoint of `k3 serve` is a smaller one of the same shape family.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"

namespace k3::model::testing {

struct BenchModelShape {
  int hidden = 2048;
  int vocab = 32768;
  int layers = 12;    // every 4th (1-based) is MLA, the rest KDA
  int kda_heads = 8;  // x 128
  int mla_heads = 8;
  int dense_intermediate = 2048;
  int experts = 64;
  int top_k = 16;
  int moe_intermediate = 768;
  int latent = 1024;
  int shared = 1;
  int attn_res_block = 4;
  bool mxfp4_experts = true;
};

// The checkpoint's config.json (model_type kimi_k3, the K3 text_config fields of `shape`): a
// dense first layer, KDA with a full-rank output gate, gated NoPE MLA (q_lora 512, kv_lora 512),
// latent MoE with sigmoid routing, Attention Residual blocks of `attn_res_block` layers.
nlohmann::json BenchModelConfig(const BenchModelShape& shape);

// Writes config.json (BenchModelConfig, dump(2)), one safetensors shard per layer plus one for
// the embeddings and head, and the index into `dir` (created).
base::Status WriteBenchModel(const BenchModelShape& shape, const std::filesystem::path& dir);

// Loads the benchmark model from `dir`, writing it first (default shape, MXFP4 or BF16 experts) if
// there is no config.json, and touches every weight page.
base::Result<std::unique_ptr<model::Model>> LoadOrMakeBenchModel(
    const std::filesystem::path& dir, bool mxfp4, base::ThreadPool* pool,
    model::WeightQuant quant = model::WeightQuant::kNone);

// Reads one byte of every page of the weights, so timed runs do not pay first-touch page faults
// of the memory-mapped weights (a server pays them once, at warm-up).
void TouchAllWeights(const model::Model& m);

}  // namespace k3::model::testing
