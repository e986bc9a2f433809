// Products against a matrix given as a table of row pointers (RowTableArgs, matmul_kernels.h;
// row_table.h is the public side), written once over a vector-traits type V and instantiated by
// each ISA translation unit through MakeIsaKernels; follows the ODR rule of matmul_simd_base.h.
//
// Dots run the decode tiles (matmul_simd_decode.h) over row groups taken from the table: up to
// V::kMaxDecodeTokens x 4 accumulators, each row converted once per token tile. Combine is the GEMM
// micro-kernel's shape without the packing: a row's 2 * V::kLanes columns are already the
// contiguous panel vectors, so each step loads two of them and broadcasts one x value per token
// into up to V::kMaxTileTokens x 2 accumulators.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_simd_decode.h"

namespace k3::kernels::detail {
namespace {

// y[t, j] = x[t] . R[j] for every token t and row j < n, one row group at a time.
template <class V, WeightFormat F>
void RowTableDotsIn(const RowTableArgs& a) {
  constexpr int kMax = V::kMaxDecodeTokens;
  for (int64_t j = 0; j < a.n; j += kRows) {
    RowGroup g;
    g.nr = static_cast<int>(Min(kRows, a.n - j));
    for (int i = 0; i < kRows; ++i) g.rows[i] = a.rows[j + Min(i, g.nr - 1)];
    ForEachTokenTile(a.tokens, kMax, [&](int64_t t0, int tb) {
      WithTileTokens<kMax>(tb, [&]<int TB>() {
        DecodeTile<V, F, TB>(g, a.x + t0 * a.cols, a.cols, a.y + t0 * a.ldy + j, a.ldy);
      });
    });
  }
}

template <class V>
void RowTableDots(const RowTableArgs& a) {
  switch (a.format) {
    case WeightFormat::kF32:
      return RowTableDotsIn<V, WeightFormat::kF32>(a);
    case WeightFormat::kBF16:
      return RowTableDotsIn<V, WeightFormat::kBF16>(a);
    default:
      return RowTableDotsIn<V, WeightFormat::kF16>(a);
  }
}

// y[t0 + t, c .. c + kVecs * V::kLanes) for t < TB (kPartial: kVecs == 1 and only nc columns):
// every accumulator adds x[t, j] R[j, c'] by an FMA in increasing j.
template <class V, WeightFormat F, int TB, int kVecs, bool kPartial>
void CombineTile(const RowTableArgs& a, int64_t t0, int64_t c, int64_t nc) {
  static_assert(!kPartial || kVecs == 1);
  using Vec = typename V::Vec;
  Vec acc[TB][kVecs];
#pragma GCC unroll 16
  for (int t = 0; t < TB; ++t) {
#pragma GCC unroll 2
    for (int v = 0; v < kVecs; ++v) acc[t][v] = V::Zero();
  }
  const float* x = a.x + t0 * a.ldx;
  for (int64_t j = 0; j < a.n; ++j) {
    Vec w[kVecs];
#pragma GCC unroll 2
    for (int v = 0; v < kVecs; ++v) {
      w[v] = V::template Weights<F, kPartial>(a.rows[j], c + v * V::kLanes, nc);
    }
#pragma GCC unroll 16
    for (int t = 0; t < TB; ++t) {
      const Vec b = V::Broadcast(x + t * a.ldx + j);
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) acc[t][v] = V::Fma(w[v], b, acc[t][v]);
    }
  }
  float* y = a.y + t0 * a.ldy + c;
#pragma GCC unroll 16
  for (int t = 0; t < TB; ++t) {
    if constexpr (kPartial) {
      V::MaskedStore(y + t * a.ldy, V::LaneMask(nc), acc[t][0]);
    } else {
#pragma GCC unroll 2
      for (int v = 0; v < kVecs; ++v) V::Store(y + t * a.ldy + v * V::kLanes, acc[t][v]);
    }
  }
}

// Every column tile of one token tile of TB tokens from t0.
template <class V, WeightFormat F, int TB>
void CombineTokens(const RowTableArgs& a, int64_t t0) {
  constexpr int kLanes = V::kLanes;
  int64_t c = 0;
  for (; c + 2 * kLanes <= a.cols; c += 2 * kLanes) CombineTile<V, F, TB, 2, false>(a, t0, c, 0);
  if (c + kLanes <= a.cols) {
    CombineTile<V, F, TB, 1, false>(a, t0, c, 0);
    c += kLanes;
  }
  if (c < a.cols) CombineTile<V, F, TB, 1, true>(a, t0, c, a.cols - c);
}

template <class V, WeightFormat F>
void RowTableCombineIn(const RowTableArgs& a) {
  constexpr int kMax = V::kMaxTileTokens;
  ForEachTokenTile(a.tokens, kMax, [&](int64_t t0, int tb) {
    WithTileTokens<kMax>(tb, [&]<int TB>() { CombineTokens<V, F, TB>(a, t0); });
  });
}

template <class V>
void RowTableCombine(const RowTableArgs& a) {
  switch (a.format) {
    case WeightFormat::kF32:
      return RowTableCombineIn<V, WeightFormat::kF32>(a);
    case WeightFormat::kBF16:
      return RowTableCombineIn<V, WeightFormat::kBF16>(a);
    default:
      return RowTableCombineIn<V, WeightFormat::kF16>(a);
  }
}

}  // namespace
}  // namespace k3::kernels::detail
