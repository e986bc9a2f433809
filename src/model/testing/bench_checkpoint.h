// The synthetic K3-shaped checkpoint of `k3 bench model` (and `k3 bench engine` / `frontend`):
// real tensor names, layouts and dtypes (BF16 dense weights, MXFP4 or BF16 routed experts), random
// values of sensible scale (synthetic_checkpoint.h). Only speed is measured on it; its outputs
// mean nothing. The demo checkpoint of `k3 serve` is a smaller one of the same shape family.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

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

// The benchmark checkpoints, each about 2B parameters in its family's published formats:
//   k3          BenchModelShape{} (BF16 dense, MXFP4 routed experts)
//   k3-bf16     the same with BF16 routed experts (what MXFP4 is compared with)
//   kimi-linear Kimi-Linear: 9 KDA + 3 MLA layers, 32 experts top-8, all BF16
//   k2          Kimi K2: 12 MLA layers (YaRN), 64 experts top-8, FP8 E4M3 128x128 blocks
//   k25         K2.5 / K2-Thinking: the K2 shape with INT4 routed experts, the rest BF16
enum class BenchFamily { kK3, kK3Bf16, kKimiLinear, kK2, kK25 };
std::string_view BenchFamilyName(BenchFamily family);
base::Result<BenchFamily> ParseBenchFamily(std::string_view name);
nlohmann::json BenchFamilyConfig(BenchFamily family);
// The folder under a cache dir that holds `family`'s checkpoint ("k3-mxfp4" for kK3).
std::string BenchFamilyDir(BenchFamily family);

// Loads the benchmark model from `dir`, writing `family`'s checkpoint there first if there is no
// config.json, and touches every weight page.
base::Result<std::unique_ptr<model::Model>> LoadOrMakeBenchModel(const std::filesystem::path& dir,
                                                                 BenchFamily family,
                                                                 base::ThreadPool* pool,
                                                                 model::LoadOptions options = {});

// Reads one byte of every page of the weights, so timed runs do not pay first-touch page faults
// of the memory-mapped weights (a server pays them once, at warm-up).
void TouchAllWeights(const model::Model& m);

}  // namespace k3::model::testing
