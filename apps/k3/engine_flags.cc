#include "apps/k3/engine_flags.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "base/log.h"
#include "kernels/matmul.h"

namespace k3::app {

base::Result<int64_t> ParseByteSize(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KiB" || unit == "k") {
    scale = 1 << 10;
  } else if (unit == "M" || unit == "MiB") {
    scale = 1 << 20;
  } else if (unit == "G" || unit == "GiB") {
    scale = double(1 << 30);
  } else {
    return base::InvalidArgument("cannot read the size '" + text + "' (use e.g. 512MiB or 4GiB)");
  }
  if (end == text.c_str() || !(value > 0) || !std::isfinite(value)) {
    return base::InvalidArgument("cannot read the size '" + text + "' (use e.g. 512MiB or 4GiB)");
  }
  return static_cast<int64_t>(value * scale);
}

base::Status ApplyGemmPrecision(const std::string& name) {
  if (name == "fp32") {
    kernels::SetGemmPrecision(kernels::GemmPrecision::kFp32);
  } else if (name == "bf16") {
    kernels::SetGemmPrecision(kernels::GemmPrecision::kBf16);
    const std::string path = kernels::MatMulBf16Path();
    if (path == "amx") {
      K3_LOG(kInfo) << "--gemm-precision bf16: batched products run on AMX-BF16 tiles";
    } else if (path == "avx512-bf16") {
      K3_LOG(kInfo) << "--gemm-precision bf16: batched products run on AVX512-BF16 (vdpbf16ps; "
                       "no AMX here), and BF16-weight batches of 8..64 tokens too";
    } else {
      K3_LOG(kWarning) << "--gemm-precision bf16: this CPU (or OS) has neither AMX-BF16 nor "
                          "AVX512-BF16; products stay FP32";
    }
  } else {
    return base::InvalidArgument("--gemm-precision must be fp32 or bf16, not '" + name + "'");
  }
  return base::Status::Ok();
}

base::Status ApplyExpertActivations(const std::string& name) {
  if (name == "fp32") {
    kernels::SetFourBitActivations(kernels::FourBitActivations::kFp32);
  } else if (name == "int8") {
    kernels::SetFourBitActivations(kernels::FourBitActivations::kInt8);
    if (!kernels::MatMulHasInt8Dot()) {
      K3_LOG(kWarning) << "--expert-activations int8: this CPU has no AVX2; 4-bit expert "
                          "products stay FP32";
    }
  } else {
    return base::InvalidArgument("--expert-activations must be fp32 or int8, not '" + name + "'");
  }
  return base::Status::Ok();
}

base::Result<kernels::LatentDtype> ParseKvCacheDtype(const std::string& name) {
  if (name == "auto" || name == "bf16" || name == "bfloat16") return kernels::LatentDtype::kBf16;
  if (name == "fp32" || name == "float32") return kernels::LatentDtype::kF32;
  if (name == "fp8_e4m3" || name == "fp8") return kernels::LatentDtype::kFp8E4m3;
  return base::InvalidArgument("--kv-cache-dtype must be auto, bf16, fp32 or fp8_e4m3, not '" +
                               name + "'");
}

base::Status EngineFlags::Finish() {
  K3_ASSIGN_OR_RETURN(config.cache_memory_bytes, ParseByteSize(cache_memory));
  K3_ASSIGN_OR_RETURN(kv_cache_dtype, ParseKvCacheDtype(kv_cache_dtype_name));
  config.enable_prefix_caching = !no_prefix_caching;
  K3_RETURN_IF_ERROR(ApplyExpertActivations(expert_activations));
  K3_ASSIGN_OR_RETURN(weight_quant, model::ParseWeightQuant(weight_quant_name));
  return ApplyGemmPrecision(gemm_precision);
}

void AddWeightQuantFlag(CLI::App& app, std::string* value) {
  app.add_option("--weight-quant", *value,
                 "auto: bf16-panels on AVX-512 unless --gemm-precision bf16, else none; "
                 "none: the checkpoint's matrices as stored; bf16-panels: the BF16 projections "
                 "repacked into column-pair panels at load (the same values; faster batched "
                 "decode and prefill on AVX-512, as fast at batch 1); int8: the dense BF16 "
                 "projections (attention, shared experts, dense MLP, lm_head) re-quantised to "
                 "int8 per 32 at load, W8A8 on integer dots (AVX512-VNNI, AVX-VNNI or AVX2). The "
                 "originals' memory is released "
                 "after conversion (docs/model.md: error, speed, memory)")
      ->capture_default_str();
}

void AddMmapWeightsFlag(CLI::App& app, bool* value) {
  app.add_flag("--mmap-weights", *value,
               "Map the checkpoint files (4 KiB page-cache pages: instant start, memory shared "
               "between processes) instead of reading them into 2 MiB pages, which decode "
               "streams ~1.3x faster (docs/model.md, \"Weight pages\")");
}

void AddKvCacheDtypeFlag(CLI::App& app, std::string* value) {
  app.add_option("--kv-cache-dtype", *value,
                 "Latent (MLA) cache element type: auto (= bf16), bf16, fp32, or fp8_e4m3 with a "
                 "scale per token and layer; KDA states stay fp32 (docs/model.md, \"Latent cache "
                 "precision\": errors and bytes per token)")
      ->capture_default_str();
}

void AddExpertActivationsFlag(CLI::App& app, std::string* value) {
  app.add_option("--expert-activations", *value,
                 "fp32, or int8: decode-regime products of 4-bit (MXFP4/INT4) expert weights with "
                 "activations quantised to int8 per 32 (AVX512-VNNI, AVX-VNNI or AVX2 dots; error "
                 "<= 1/254 of "
                 "sum |x w| per block, see docs/model.md)")
      ->capture_default_str();
}

void AddGemmPrecisionFlag(CLI::App& app, std::string* value) {
  app.add_option("--gemm-precision", *value,
                 "fp32, or bf16: batched products (prefill, large decode batches) with "
                 "BF16-rounded inputs and FP32 sums (~1e-2 relative per product) on AMX-BF16 "
                 "tiles, else AVX512-BF16 (vdpbf16ps); logs which ran")
      ->capture_default_str();
}

void AddEngineFlags(CLI::App& app, EngineFlags* f) {
  auto& c = f->config;
  app.add_option("--cache-memory", f->cache_memory,
                 "Memory for the latent cache, running KDA states and KDA checkpoints together")
      ->capture_default_str();
  app.add_option("--block-size", c.block_size, "Tokens per latent-cache block")
      ->capture_default_str();
  app.add_option("--max-running", c.max_running, "Sequences decoded together at most")
      ->capture_default_str();
  app.add_option("--max-batched-tokens", c.max_batched_tokens,
                 "Token budget of one step (decode tokens + prefill chunks)")
      ->capture_default_str();
  app.add_option("--state-checkpoint-interval", c.state_checkpoint_interval,
                 "Keep a KDA state checkpoint every N tokens for prefix hits (multiple of the "
                 "block size; 0 = only at prompt ends)")
      ->capture_default_str();
  app.add_option("--checkpoint-memory-fraction", c.checkpoint_memory_fraction,
                 "Share of the cache memory (after running states) kept for KDA checkpoints")
      ->capture_default_str();
  app.add_flag("--no-prefix-caching", f->no_prefix_caching, "Never reuse cached prefixes");
  AddGemmPrecisionFlag(app, &f->gemm_precision);
  AddExpertActivationsFlag(app, &f->expert_activations);
  AddWeightQuantFlag(app, &f->weight_quant_name);
  AddMmapWeightsFlag(app, &f->mmap_weights);
  AddKvCacheDtypeFlag(app, &f->kv_cache_dtype_name);
  app.add_option("--max-model-len", c.max_model_len,
                 "Longest prompt + output in tokens (0 = what the model and cache allow)")
      ->capture_default_str();
}

}  // namespace k3::app
