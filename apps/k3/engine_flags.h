// The engine's command-line flags, shared by `k3 serve` and `k3 bench engine`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "base/result.h"
#include "engine/engine_config.h"
#include "model/weight_quant.h"

namespace k3::app {

struct EngineFlags {
  engine::EngineConfig config;
  std::string cache_memory = "2GiB";
  bool no_prefix_caching = false;
  std::string gemm_precision = "fp32";
  std::string expert_activations = "fp32";
  std::string weight_quant_name = "none";
  model::WeightQuant weight_quant = model::WeightQuant::kNone;  // from weight_quant_name
  // Parses cache_memory and fills config, applies --gemm-precision and --expert-activations
  // (process-wide); INVALID_ARGUMENT on a bad value.
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

// "512MiB", "4GiB", "1.5G", "1048576" -> bytes.
base::Result<int64_t> ParseByteSize(const std::string& text);

}  // namespace k3::app
