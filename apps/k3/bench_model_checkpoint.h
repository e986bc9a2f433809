// A synthetic K3-shaped checkpoint for `k3 bench model`: real tensor names, layouts and dtypes
// (BF16 dense weights, MXFP4 or BF16 routed experts), random values of sensible scale. Only speed
// is measured on it; its outputs mean nothing.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "base/result.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"

namespace k3::app {

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

// Writes config.json, one safetensors shard per layer and the index into `dir` (created).
base::Status WriteBenchModel(const BenchModelShape& shape, const std::filesystem::path& dir);

// Loads the benchmark model from `dir`, writing it first if missing, and touches every weight page.
base::Result<std::unique_ptr<model::Model>> LoadOrMakeBenchModel(const std::string& dir, bool mxfp4,
                                                                 base::ThreadPool* pool);
// Reads one byte of every page of the weights (first-touch faults happen here, not when timed).
void TouchAllWeights(const model::Model& m);

}  // namespace k3::app
