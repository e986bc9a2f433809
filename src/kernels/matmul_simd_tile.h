// The register tile of the decode regime, shared by matmul_simd_decode.h and matmul_simd_fourbit.h:
// a row group, its accumulators and the order in which they receive their products. Follows the
// ODR rule of matmul_simd_base.h.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// The weight rows of one decode row group: row r + i for i < nr; rows[i >= nr] repeat the last
// valid row, so every tile computes kRows rows and stores nr. Only the members the format reads
// are set.
struct RowGroup {
  const void* rows[kRows];
  const void* fourbit_scales[kRows];  // kMxfp4 / kInt4: row r + i's FourBitScaleRow
  int nr;
};

template <class V, int TB>
using DecodeAcc = typename V::Vec[kRows][TB];

// What one decode tile reads: its row group and x [TB][ldx] (kBF16 and kMxfp4: permuted per
// 2 * V::kLanes columns, see DecodeArgs; kFp8Block: scaled per tile, see DecodeRowsIn).
struct TileInput {
  const RowGroup* group;
  const float* x;
  int64_t ldx;
};

// acc[i][t] += w[i][s] * xs(t, s) for every row i < kRows, token t < TB and sub-vector
// s < kGroups * kPer, in increasing s for every accumulator. rows(i) returns row i's weight
// source, and source(g, w) writes its sub-vectors g * kPer .. g * kPer + kPer - 1 to w.
// V::kWeightsFirst: every row's weights are made first, then each token's activations are loaded
// once for all rows. Otherwise one row at a time, each group applied to every token before the
// next is made (fewer live registers).
template <class V, int kGroups, int kPer, int TB, class RowFn, class XFn>
K3_INLINE void FmaRows(RowFn rows, XFn xs, DecodeAcc<V, TB>& acc) {
  using Vec = typename V::Vec;
  if constexpr (V::kWeightsFirst) {
    Vec w[kRows][kGroups * kPer];
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      auto source = rows(i);
#pragma GCC unroll 4
      for (int g = 0; g < kGroups; ++g) source(g, w[i] + g * kPer);
    }
#pragma GCC unroll 16
    for (int t = 0; t < TB; ++t) {
      Vec xv[kGroups * kPer];
#pragma GCC unroll 4
      for (int s = 0; s < kGroups * kPer; ++s) xv[s] = xs(t, s);
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
        for (int s = 0; s < kGroups * kPer; ++s) acc[i][t] = V::Fma(w[i][s], xv[s], acc[i][t]);
      }
    }
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      auto source = rows(i);
#pragma GCC unroll 4
      for (int g = 0; g < kGroups; ++g) {
        Vec w[kPer];
        source(g, w);
#pragma GCC unroll 16
        for (int t = 0; t < TB; ++t) {
#pragma GCC unroll 4
          for (int s = 0; s < kPer; ++s) {
            acc[i][t] = V::Fma(w[s], xs(t, g * kPer + s), acc[i][t]);
          }
        }
      }
    }
  }
}

// y[t, r + i] for t < TB, i < nr from the accumulators' horizontal sums.
template <class V, int TB>
K3_INLINE void StoreTile(DecodeAcc<V, TB>& acc, float* y, int64_t ldy, int nr) {
  const typename V::SumMask m = V::RowMask(nr);
#pragma GCC unroll 16
  for (int t = 0; t < TB; ++t) {
    V::StoreSum4(y + t * ldy, m, V::HorizontalSum4(acc[0][t], acc[1][t], acc[2][t], acc[3][t]));
  }
}

template <class V, int TB>
K3_INLINE void ZeroTile(DecodeAcc<V, TB>& acc) {
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 16
    for (int t = 0; t < TB; ++t) acc[i][t] = V::Zero();
  }
}

// Calls fn.template operator()<TB>() with TB = min(tb, kMax), for 1 <= tb.
template <int kMax, class Fn>
K3_INLINE void WithTileTokens(int tb, const Fn& fn) {
  if constexpr (kMax > 1) {
    if (tb < kMax) return WithTileTokens<kMax - 1>(tb, fn);
  }
  fn.template operator()<kMax>();
}

}  // namespace
}  // namespace k3::kernels::detail
