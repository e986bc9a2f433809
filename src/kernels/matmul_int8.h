// The integer-activation path of MatMul for 4-bit weights (FourBitActivations::kInt8): x is
// quantised per 32 columns to int8 once per call, and each block's product is an exact integer
// dot (VNNI vpdpbusd) scaled by weight scale x activation scale in float32. Baseline code sees
// only this header; the kernels live in the ISA-flagged matmul_vnni.cc.
//
// Integer form of a 4-bit block (checkpoints.md A1.6): every weight is an integer k times the
// block's weight scale s_w, with k stored as the unsigned byte k + offset:
//   INT4:  k = u - 8 (u the nibble, stored as u: offset 8), s_w = the BF16 scale;
//   MXFP4: k = 2 * E2M1 value in {0, ±1, ±2, ±3, ±4, ±6, ±8, ±12} (offset 12, by a 16-byte
//          table), s_w = E8M0 scale / 2.
// The activation block is q * d with d = amax / 127 and q = round(x / d) in [-127, 127]. So
//   sum_c W[r, c] x[c] ~ sum_blocks s_w d (sum_c (k_c + offset) q_c - offset sum_c q_c),
// where the first sum is vpdpbusd's (unsigned x signed bytes) and the second is precomputed per
// token and block. All integer sums are exact (|partial| < 2^16).
#pragma once

#include <cstdint>

#include "base/arena.h"
#include "kernels/matmul.h"

namespace k3::kernels::detail {

// Blocks of 32 columns per chunk: one 64-byte load of 4-bit weights.
inline constexpr int64_t kInt8ChunkBlocks = 4;

// x quantised for the kernels, per token and per 128-column chunk k (blocks 4k .. 4k + 3, slot j =
// block - 4k; blocks past cols / 32 in the last chunk are all zero).
struct Int8Activations {
  // [tokens][chunks][128] bytes: the even columns of slots 0..3 (16 bytes each), then their odd
  // columns: the order the kernels split a 64-byte row chunk into low and high nibbles.
  const int8_t* q = nullptr;
  // [tokens][chunks][16]: lane 4j = -offset * sum(q of slot j), other lanes 0 (the starting
  // accumulator of the chunk's integer dot).
  const int32_t* correction = nullptr;
  // [tokens][chunks][16]: d of slot j in lanes 4j .. 4j + 3 (the lanes vpdpbusd sums slot j's
  // products into).
  const float* scale = nullptr;
  int64_t tokens = 0;
  int64_t chunks = 0;
};

// Quantises x [tokens, cols] (cols % 32 == 0) for weights of `format` into arena memory. A block
// with a non-finite value gets scale NaN (its products are NaN, as the exact path's would be).
Int8Activations QuantizeActivationsInt8(const float* x, int64_t tokens, int64_t cols,
                                        WeightFormat format, base::Arena& arena);

struct Int8DecodeArgs {
  Int8Activations x;
  const WeightMatrix* w = nullptr;  // kMxfp4 or kInt4
  float* y = nullptr;               // [tokens, rows]
};

struct Int8Kernels {
  // y[:, r0 .. r1) for every token.
  void (*decode_rows)(const Int8DecodeArgs& args, int64_t r0, int64_t r1);
};

// AVX512-VNNI kernels; call only when CpuHasAvx512Vnni().
const Int8Kernels& VnniKernels();
bool CpuHasAvx512Vnni();

// The integer form above computed in double from the same quantised activations: what the
// kernels compute up to float32 accumulation (tests).
void MatMulInt8Definition(const float* x, int64_t tokens, const WeightMatrix& w, float* y);

// MatMul's decode regime with int8 activations (requires CpuHasAvx512Vnni() and 4-bit w).
void MatMulInt8Decode(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                      base::ThreadPool* pool, base::Arena& scratch);

}  // namespace k3::kernels::detail
