// How a forward batch lays its tokens out: all sequences' new tokens are stacked into one
// [rows, hidden] activation; each sequence owns a contiguous row range.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/op_args.h"

namespace k3::model {

struct SequenceRows {
  int64_t row_begin = 0;           // first row of this sequence in the batch activation
  int64_t rows = 0;                // new tokens
  int64_t start_position = 0;      // tokens already processed (in the cache / state)
  int state_slot = 0;              // KDA state slot
  std::span<const int32_t> pages;  // MLA cache pages covering [0, start_position + rows)
};

enum class KdaMode { kAuto, kRecurrent, kChunked };
enum class MlaMode { kAuto, kNaive, kAbsorbed };

struct ForwardOptions {
  KdaMode kda_mode = KdaMode::kAuto;
  int kda_chunk =
      16;  // K3: 16 x -5 >= -80 keeps every chunk on the factorised path (docs/model.md)
  MlaMode mla_mode = MlaMode::kAuto;
  // Naive-form attention of a sequence with at least this many new tokens runs as two matrix
  // products per head (GEMM kernels) instead of per-pair dot products.
  int mla_gemm_rows = 64;
  bool mxfp8_experts = false;  // quantise routed-expert inputs to MXFP8 (E4M3, block 32)
  // The element type of the latent caches made for these options (GreedyGenerate,
  // engine::K3ModelRunner::AllocateCache); Forward reads whatever type the MlaCache it is given
  // stores. The library default stays fp32, the exact path the float64 parity tests hold to
  // 1e-4; the CLI defaults to bf16 (apps/k3/engine_flags.h: --kv-cache-dtype).
  kernels::LatentDtype cache_dtype = kernels::LatentDtype::kF32;
};

}  // namespace k3::model
