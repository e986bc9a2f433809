// The decode regime's tiles for the 4-bit formats (MXFP4, INT4) over vector traits V: the
// general kRows x TB tile, and for a single token a tile of two row groups at once. Follows the
// ODR rule of matmul_simd_base.h.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_simd_tile.h"

namespace k3::kernels::detail {
namespace {

// Blocks per scale staging of the 4-bit tiles (kStageBlocks floats per row on the stack).
constexpr int kStageBlocks = 64;

// staged[i][k] = block b0 + k's scale as a float, for the n rows whose FourBitScaleRow is
// scale_rows[i] and k < nb (<= kStageBlocks): one vector operation per V::kLanes blocks, so each
// block's table is then one multiply by a broadcast from memory.
template <class V, WeightFormat F, int n>
K3_INLINE void StageRowScales(const void* const* scale_rows, int64_t b0, int nb,
                              float (*staged)[kStageBlocks]) {
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < nb; k += V::kLanes) {
      FourBit<V, F>::StageScales(scale_rows[i], b0 + k, static_cast<int>(Min(V::kLanes, nb - k)),
                                 staged[i] + k);
    }
  }
}

// DecodeTile for MXFP4 and INT4 (F). x is permuted per 2 * V::kLanes columns (the even ones, then
// the odd ones); each 32-column block is 16 bytes and V::kE2M1Groups such column groups. Each
// block's table: MXFP4 looked up or multiplied (FourBit::ScaleOf); INT4 on the row-pair traits
// multiplied from scales staged as floats (StageRowScales), not widened from their BF16 bits one
// block at a time (a scalar load, shift, move and register broadcast per block and row):
// kernels_benchmark Decode/INT4/avx512 best calls, three interleaved runs (2-core Zen 5):
// tokens:8 297 / 296 / 305 -> 312 / 310 / 314 GFLOP/s, tokens:32 320 / 316 / 320 -> 325 / 335 /
// 333.
template <class V, WeightFormat F, int TB>
void DecodeTileFourBit(const RowGroup& g, const float* x, int64_t cols, float* y, int64_t ldy) {
  using Vec = typename V::Vec;
  constexpr bool kStaged = F == WeightFormat::kInt4 && V::kFourBitPairedRows;
  DecodeAcc<V, TB> acc;
  ZeroTile<V, TB>(acc);
  PrefetchScalesAhead<F>(g.fourbit_scales[0], cols, kRows);
  const int64_t blocks = cols / 32;
  alignas(64) float staged[kStaged ? kRows : 1][kStageBlocks];
  for (int64_t b0 = 0; b0 < blocks; b0 += kStageBlocks) {
    const int nb = static_cast<int>(Min(kStageBlocks, blocks - b0));
    if constexpr (kStaged) StageRowScales<V, F, kRows>(g.fourbit_scales, b0, nb, staged);
    for (int k = 0; k < nb; ++k) {
      const int64_t b = b0 + k;
      auto rows = [&](int i) K3_INLINE_LAMBDA {
        const uint8_t* p = static_cast<const uint8_t*>(g.rows[i]) + b * 16;
        if (b % 4 == 0) Prefetch(p, kPrefetchBytes);
        typename V::E2M1Scale scale;
        if constexpr (kStaged) {
          scale = FourBit<V, F>::TableOf(staged[i][k]);
        } else {
          scale = FourBit<V, F>::template ScaleOf<(TB >= 2)>(g.fourbit_scales[i], b);
        }
        return [=](int c, Vec* w) K3_INLINE_LAMBDA { FourBit<V, F>::Decode(p, scale, c, w); };
      };
      auto xs = [&](int t, int s)
                    K3_INLINE_LAMBDA { return V::Load(x + t * cols + b * 32 + s * V::kLanes); };
      FmaRows<V, V::kE2M1Groups, 2, TB>(rows, xs, acc);
    }
  }
  StoreTile<V, TB>(acc, y, ldy, g.nr);
}

// The multi-tile form of DecodeTileFourBit (DecodeArgs::widen_once), for calls of more tokens than
// one tile holds. The group's rows are taken kWideBlocks blocks at a time: the first token tile
// decodes them as DecodeTileFourBit does and keeps the floats in an L1 buffer (8 KiB), the other
// tiles read them back, and every tile parks its accumulators between chunks. Each accumulator
// gets DecodeTileFourBit's products in its order, so the bits are the same. The conversion (4
// µops per 32 weights) is paid once per call instead of once per tile, which pays where it shares
// the two vector ports with the FMAs (Intel). kernels_benchmark Widening/<4-bit>, 4096 x 2048
// streamed, Emerald Rapids VM, 2 threads, per tile -> once (GFLOP/s): MXFP4 8 tokens 212 -> 236,
// 12 235 -> 261, 16 235 -> 275, 32 244 -> 280; INT4 199 -> 217, 223 -> 237, 230 -> 249, 235 ->
// 287; the K3 and K2.5 bench models' batch-32 decode 1.02-1.08x. The tiles are then held by the
// activations' loads from L2 (a 4-row group reloads every token's activations), not the
// conversion.
constexpr int kWideBlocks = 16;
constexpr int kWideMaxTiles = 11;  // 66 tokens on AVX-512, beyond the 4-bit decode regime's 64

using WideRows = float[kRows][kWideBlocks * 32];

// One token tile's products over blocks b0 .. b0 + nb of the group. kWiden: the weights are
// decoded from the rows and kept in `wide`; else they are read back from it.
template <class V, WeightFormat F, int TB, bool kWiden>
K3_INLINE void WideChunkTile(const RowGroup& g, const float* x, int64_t cols, int64_t b0, int nb,
                             WideRows& wide, DecodeAcc<V, TB>& acc) {
  using Vec = typename V::Vec;
  constexpr int kPer = 2;  // FourBit::Decode's vectors per column group
  for (int k = 0; k < nb; ++k) {
    const int64_t b = b0 + k;
    auto rows = [&](int i) K3_INLINE_LAMBDA {
      float* kept = wide[i] + k * 32;
      if constexpr (kWiden) {
        const uint8_t* p = static_cast<const uint8_t*>(g.rows[i]) + b * 16;
        if (b % 4 == 0) Prefetch(p, kPrefetchBytes);
        const typename V::E2M1Scale scale =
            FourBit<V, F>::template ScaleOf<true>(g.fourbit_scales[i], b);
        return [=](int gr, Vec* w) K3_INLINE_LAMBDA {
          FourBit<V, F>::Decode(p, scale, gr, w);
          for (int s = 0; s < kPer; ++s) V::StoreAligned(kept + (gr * kPer + s) * V::kLanes, w[s]);
        };
      } else {
        return [=](int gr, Vec* w) K3_INLINE_LAMBDA {
          for (int s = 0; s < kPer; ++s) w[s] = V::LoadAligned(kept + (gr * kPer + s) * V::kLanes);
        };
      }
    };
    auto xs = [&](int t, int s)
                  K3_INLINE_LAMBDA { return V::Load(x + t * cols + b * 32 + s * V::kLanes); };
    FmaRows<V, V::kE2M1Groups, kPer, TB>(rows, xs, acc);
  }
}

// y[t, r + i] for t < tokens (kMax < tokens <= kWideMaxTiles * kMax), i < g.nr.
template <class V, WeightFormat F>
void DecodeTilesFourBitWidened(const RowGroup& g, const float* x, int64_t tokens, int64_t cols,
                               float* y, int64_t ldy) {
  using Vec = typename V::Vec;
  constexpr int kMax = V::kMaxDecodeTokensFp4;
  const int64_t blocks = cols / 32;
  PrefetchScalesAhead<F>(g.fourbit_scales[0], cols, kRows);
  alignas(64) WideRows wide;
  alignas(64) Vec parked[kWideMaxTiles][kRows][kMax];
  for (int64_t b0 = 0; b0 < blocks; b0 += kWideBlocks) {
    const int nb = static_cast<int>(Min(kWideBlocks, blocks - b0));
    const bool first = b0 == 0, last = b0 + nb >= blocks;
    auto tile = [&]<int TB, bool kWiden>(int j, int64_t t0) {
      DecodeAcc<V, TB> acc;
      for (int i = 0; i < kRows; ++i) {
        for (int t = 0; t < TB; ++t) acc[i][t] = first ? V::Zero() : parked[j][i][t];
      }
      WideChunkTile<V, F, TB, kWiden>(g, x + t0 * cols, cols, b0, nb, wide, acc);
      if (last) return StoreTile<V, TB>(acc, y + t0 * ldy, ldy, g.nr);
      for (int i = 0; i < kRows; ++i) {
        for (int t = 0; t < TB; ++t) parked[j][i][t] = acc[i][t];
      }
    };
    int j = 0;
    ForEachTokenTile(tokens, kMax, [&](int64_t t0, int tb) {
      WithTileTokens<kMax>(tb, [&]<int TB>() {
        if (j == 0) return tile.template operator()<TB, true>(j, t0);
        tile.template operator()<TB, false>(j, t0);
      });
      ++j;
    });
  }
}

// y[r .. r + 2 * kRows) of a single token (y points at y[r]) for the rows r .. r + 2 * kRows of w:
// 2 * kRows accumulators, each given its products in DecodeTileFourBit's order, so the bits equal
// two 1-token tiles. At one token a row's accumulator waits on two dependent FMAs per block, and
// each block's scale took four scalar and vector operations: here eight chains run side by side
// and the rows' scales are widened to floats kStageBlocks at a time first (one vector operation
// per 16 blocks; each block's table is then one multiply by a broadcast from memory). Measured
// with PrefetchScalesAhead on the K2.5 bench model's batch-1 decode: 1.06-1.13x over 4-row tiles
// (three interleaved pairs); kernels_benchmark's streamed 1-token INT4 / MXFP4 rows 1.05-1.2x.
// Traits with 32 vector registers only (V::kFourBitPairedRows): the eight rows' weights,
// accumulators and activations stay in registers.
template <class V, WeightFormat F>
void DecodeOneTokenFourBitPair(const WeightMatrix& w, int64_t r, const float* x, float* y) {
  static_assert(V::kE2M1Groups == 1);
  using Vec = typename V::Vec;
  constexpr int kPairRows = 2 * kRows;
  const int64_t blocks = w.cols / 32, row_bytes = w.cols / 2;
  const uint8_t* base = static_cast<const uint8_t*>(w.data) + r * row_bytes;
  alignas(64) float scales[kPairRows][kStageBlocks];
  const void* scale_rows[kPairRows];
  for (int i = 0; i < kPairRows; ++i) scale_rows[i] = FourBitScaleRow(w, r + i);
  Vec acc[kPairRows];
#pragma GCC unroll 8
  for (int i = 0; i < kPairRows; ++i) acc[i] = V::Zero();
  PrefetchScalesAhead<F>(FourBitScaleRow(w, r), w.cols, kPairRows);
  for (int64_t b0 = 0; b0 < blocks; b0 += kStageBlocks) {
    const int nb = static_cast<int>(Min(kStageBlocks, blocks - b0));
    StageRowScales<V, F, kPairRows>(scale_rows, b0, nb, scales);
    for (int k = 0; k < nb; ++k) {
      const int64_t b = b0 + k;
      Vec wv[kPairRows][2];
#pragma GCC unroll 8
      for (int i = 0; i < kPairRows; ++i) {
        const uint8_t* p = base + i * row_bytes + b * 16;
        if (b % 4 == 0) Prefetch(p, kPrefetchBytes);
        FourBit<V, F>::Decode(p, FourBit<V, F>::TableOf(scales[i][k]), 0, wv[i]);
      }
      const Vec even = V::Load(x + b * 32), odd = V::Load(x + b * 32 + V::kLanes);
#pragma GCC unroll 8
      for (int i = 0; i < kPairRows; ++i) {
        acc[i] = V::Fma(wv[i][0], even, acc[i]);
        acc[i] = V::Fma(wv[i][1], odd, acc[i]);
      }
    }
  }
  const typename V::SumMask all = V::RowMask(kRows);
  V::StoreSum4(y, all, V::HorizontalSum4(acc[0], acc[1], acc[2], acc[3]));
  V::StoreSum4(y + kRows, all, V::HorizontalSum4(acc[4], acc[5], acc[6], acc[7]));
}

}  // namespace
}  // namespace k3::kernels::detail
