// Matrix products of float32 activations with weights in their stored format. Weights are never
// converted as a whole: each kernel reads the stored bytes (BF16, F16, F32, MXFP4, block-scaled
// FP8) and accumulates in float32. Dispatch picks AVX-512, AVX2+FMA or the scalar path at run time;
// every SIMD path is tested against MatMulReference over random shapes with odd tails.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace k3::kernels {

enum class WeightFormat : uint8_t {
  kF32,
  kBF16,
  kF16,
  kMxfp4,     // OCP MXFP4: E2M1 nibbles (low nibble = even column), one E8M0 scale per 32 columns
  kFp8Block,  // E4M3 bytes, one float scale per `block` x `block` tile (DeepSeek weight_scale_inv)
};

// W is [rows, cols] ("out" x "in", torch Linear layout), viewed without copying.
struct WeightMatrix {
  WeightFormat format = WeightFormat::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  // kF32/kBF16/kF16/kFp8Block: row-major [rows, cols] elements. kMxfp4: [rows, cols / 2] bytes.
  const void* data = nullptr;
  // kMxfp4: E8M0 bytes [rows, cols / 32]. Unused otherwise.
  const uint8_t* mx_scales = nullptr;
  // kFp8Block: float32 [ceil(rows / block), ceil(cols / block)], multiplied into the tile's values.
  const float* block_scales = nullptr;
  int64_t block = 128;
};

// y[t, r] = sum_c x[t, c] * W[r, c] for t in [0, tokens). x is [tokens, cols] and y is
// [tokens, rows], both contiguous. Splits rows over `pool` when given (nullptr = calling thread).
// Requires cols % 32 == 0 for kMxfp4.
void MatMul(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
            base::ThreadPool* pool = nullptr);

// The scalar definition: dequantises each weight with tensor/numeric.h and accumulates in double.
void MatMulReference(const float* x, int64_t tokens, const WeightMatrix& w, float* y);

// Writes W[row, 0..cols) as float32.
void DequantizeRow(const WeightMatrix& w, int64_t row, float* out);

// MXFP8 activation quantisation (OCP MX v1.0): blocks of 32 share the E8M0 scale
// 2^(floor(log2 amax) - 8); elements are rounded to nearest-even E4M3 and saturated. Rewrites x in
// place with the dequantised values, so any MatMul then computes the quantised product exactly.
// Requires n % 32 == 0.
void QuantizeMxfp8InPlace(float* x, int64_t n);

// Which SIMD level MatMul uses on this machine: "avx512", "avx2" or "scalar".
const char* MatMulIsa();

}  // namespace k3::kernels
