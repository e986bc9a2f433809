// Products against a matrix R [n, cols] that is not one block of memory but a table of row
// pointers: the entries of a paged cache, read in place (the MLA absorbed decode reads its latent
// cache this way, mla_attention.cc). Rows are kF32, kBF16 or kF16. Both products run on the
// calling thread, on the MatMul kernels' register tiles (matmul_simd_rows.h) where the CPU has
// AVX2 or AVX-512, else on scalar loops.
#pragma once

#include <cstdint>

#include "base/arena.h"
#include "kernels/matmul.h"

namespace k3::kernels {

struct RowTable {
  const void* const* rows = nullptr;  // row j's `cols` elements start at rows[j]
  int64_t n = 0;
  int64_t cols = 0;
  WeightFormat format = WeightFormat::kF32;  // kF32, kBF16 or kF16
};

// y[t * ldy + j] = sum_c x[t, c] R[j, c] for t < tokens, j < R.n; x is [tokens, R.cols]
// contiguous, ldy >= R.n. A sum's order depends on the ISA, not on tokens or n; its error is
// within that of any float32 summation (|error| <= gamma_cols sum_c |x R|). Per-call buffers
// (kBF16's permuted x) come from `scratch` and go back before returning.
void RowTableDots(const float* x, int64_t tokens, const RowTable& r, float* y, int64_t ldy,
                  base::Arena& scratch);

// y[t * ldy + c] = sum_j x[t * ldx + j] R[j, c] for t < tokens, c < R.cols (ldx >= R.n,
// ldy >= R.cols): every sum is a chain of fused multiply-adds in increasing j from 0, so all
// ISAs give the same bits.
void RowTableCombine(const float* x, int64_t tokens, int64_t ldx, const RowTable& r, float* y,
                     int64_t ldy);

namespace detail {
enum class Isa : uint8_t;
// The two products on a chosen level (tests); `isa` must be supported.
void RowTableDotsWithIsa(Isa isa, const float* x, int64_t tokens, const RowTable& r, float* y,
                         int64_t ldy, base::Arena& scratch);
void RowTableCombineWithIsa(Isa isa, const float* x, int64_t tokens, int64_t ldx, const RowTable& r,
                            float* y, int64_t ldy);
}  // namespace detail

}  // namespace k3::kernels
