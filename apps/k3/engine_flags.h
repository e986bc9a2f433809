// The engine's command-line flags, shared by `k3 serve` and `k3 bench engine`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "base/result.h"
#include "engine/engine_config.h"
#include "kernels/op_args.h"
#include "model/batch.h"
#include "model/model.h"
#include "model/weight_quant.h"

namespace k3::app {

// Model::Load's options for --weight-quant's value and --mmap-weights.
inline model::LoadOptions LoadOptionsOf(model::WeightQuant quant, bool mmap_weights) {
  model::LoadOptions options(quant);
  options.pages =
      mmap_weights ? weights::MappedFile::Pages::kFile : weights::MappedFile::Pages::kHuge;
  return options;
}

struct EngineFlags {
  engine::EngineConfig config;
  std::string cache_memory = "2GiB";
  bool no_prefix_caching = false;
  std::string gemm_precision = "fp32";
  std::string expert_activations = "fp32";
  std::string weight_quant_name = "auto";
  model::WeightQuant weight_quant = model::WeightQuant::kAuto;  // from weight_quant_name
  bool mmap_weights = false;
  model::LoadOptions load_options() const { return LoadOptionsOf(weight_quant, mmap_weights); }
  std::string kv_cache_dtype_name = "auto";
  kernels::LatentDtype kv_cache_dtype = kernels::LatentDtype::kBf16;  // from kv_cache_dtype_name
  // The runner's options these flags select (the latent cache's dtype).
  model::ForwardOptions runner_options() const {
    model::ForwardOptions options;
    options.cache_dtype = kv_cache_dtype;
    return options;
  }
  // Parses cache_memory and kv_cache_dtype_name and fills config, applies --gemm-precision and
  // --expert-activations (process-wide); INVALID_ARGUMENT on a bad value.
  base::Status Finish();
};

void AddEngineFlags(CLI::App& app, EngineFlags* flags);
// --gemm-precision alone (for commands without an engine) and applying it.
void AddGemmPrecisionFlag(CLI::App& app, std::string* value);
base::Status ApplyGemmPrecision(const std::string& name);
// --expert-activations alone and applying it (a warning says when this CPU cannot run int8).
void AddExpertActivationsFlag(CLI::App& app, std::string* value);
base::Status ApplyExpertActivations(const std::string& name);
// --weight-quant alone.
void AddWeightQuantFlag(CLI::App& app, std::string* value);
// --mmap-weights: map the checkpoint files instead of reading them into 2 MiB pages.
void AddMmapWeightsFlag(CLI::App& app, bool* value);
// --kv-cache-dtype alone and its values (vLLM's and SGLang's spelling): fp32, bf16, fp8_e4m3
// (also fp8), or auto = bf16. The CLI default is bf16, what a BF16 model's user expects and half
// fp32's bytes per token; the library default (model::ForwardOptions) stays fp32, and the tests
// that hold the runtime to the float64 reference ask for fp32 explicitly.
void AddKvCacheDtypeFlag(CLI::App& app, std::string* value);
base::Result<kernels::LatentDtype> ParseKvCacheDtype(const std::string& name);

// "512MiB", "4GiB", "1.5G", "1048576" -> bytes.
base::Result<int64_t> ParseByteSize(const std::string& text);

}  // namespace k3::app
