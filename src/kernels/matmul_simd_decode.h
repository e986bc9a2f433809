// The decode-regime driver of MatMul, written once over a vector-traits type V (matmul_vec_*.h)
// and instantiated by each ISA translation unit (matmul_simd.h says how); follows the ODR rule of
// matmul_simd_base.h.
//
// A thread walks its rows in groups of kRows, streams each row once (prefetching kPrefetchBytes
// ahead), converts V::kLanes weights at a time in registers and applies them to a tile of up to
// V::kMaxDecodeTokens tokens, with one accumulator per row and token and a horizontal sum at the
// end. More tokens take more tiles over the same, now cached, rows. Every accumulator receives its
// products in column order whatever the loop order (V::kWeightsFirst, V::kBf16TwoPasses), so the
// loop order is a register-allocation choice, never a numerical one.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_simd_fourbit.h"
#include "kernels/matmul_simd_tile.h"

namespace k3::kernels::detail {
namespace {

// One V::kLanes-column step at column c; kPartial: only n < V::kLanes columns remain.
// kPrefetch: prefetch each row kPrefetchBytes ahead (callers that step through a whole cache line
// prefetch once per line themselves).
template <class V, WeightFormat F, int TB, bool kPartial, bool kPrefetch = true>
K3_INLINE void DecodeStep(const TileInput& in, int64_t c, int64_t n, DecodeAcc<V, TB>& acc) {
  using Vec = typename V::Vec;
  const RowGroup& g = *in.group;
  const typename V::Mask m = V::LaneMask(n);
  auto rows = [&](int i) K3_INLINE_LAMBDA {
    if constexpr (kPrefetch) Prefetch(g.rows[i], c * ElementBytes(F) + kPrefetchBytes);
    const Vec w = V::template Weights<F, kPartial>(g.rows[i], c, n);
    return [=](int, Vec* out) K3_INLINE_LAMBDA { out[0] = w; };
  };
  auto xs = [&](int t, int) K3_INLINE_LAMBDA {
    const float* xp = in.x + t * in.ldx + c;
    return kPartial ? V::MaskedLoad(xp, m) : V::Load(xp);
  };
  FmaRows<V, 1, 1, TB>(rows, xs, acc);
}

// One 2 * V::kLanes-column BF16 step at column c: x holds its V::kLanes even columns, then its odd
// ones, so each 32-bit pair of weights is split without shuffling it back. V::kBf16TwoPasses: the
// even weights of every row go to every token first, then the odd ones (fewer live registers);
// every accumulator adds its even product before its odd one either way.
template <class V, int TB>
K3_INLINE void DecodeBf16Pair(const TileInput& in, int64_t c, DecodeAcc<V, TB>& acc) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  const RowGroup& g = *in.group;
  auto pairs = [&](int i) K3_INLINE_LAMBDA {
    return V::LoadBf16Pairs(static_cast<const uint16_t*>(g.rows[i]) + c);
  };
  if constexpr (V::kBf16TwoPasses) {
    auto even = [&](int i) K3_INLINE_LAMBDA {
      Prefetch(g.rows[i], 2 * c + kPrefetchBytes);
      const typename V::Pairs v = pairs(i);
      return [=](int, Vec* w) K3_INLINE_LAMBDA { w[0] = V::Bf16Even(v); };
    };
    auto odd = [&](int i) K3_INLINE_LAMBDA {
      const typename V::Pairs v = pairs(i);
      return [=](int, Vec* w) K3_INLINE_LAMBDA { w[0] = V::Bf16Odd(v); };
    };
    auto x_even = [&](int t, int) K3_INLINE_LAMBDA { return V::Load(in.x + t * in.ldx + c); };
    auto x_odd = [&](int t, int)
                     K3_INLINE_LAMBDA { return V::Load(in.x + t * in.ldx + c + kLanes); };
    FmaRows<V, 1, 1, TB>(even, x_even, acc);
    FmaRows<V, 1, 1, TB>(odd, x_odd, acc);
  } else {
    auto both = [&](int i) K3_INLINE_LAMBDA {
      Prefetch(g.rows[i], 2 * c + kPrefetchBytes);
      const typename V::Pairs v = pairs(i);
      return [=](int, Vec* w) K3_INLINE_LAMBDA {
        w[0] = V::Bf16Even(v);
        w[1] = V::Bf16Odd(v);
      };
    };
    auto xs = [&](int t, int s)
                  K3_INLINE_LAMBDA { return V::Load(in.x + t * in.ldx + c + s * kLanes); };
    FmaRows<V, 1, 2, TB>(both, xs, acc);
  }
}

// kFp8Block in tiles of at most V::kFp8LutMaxTokens tokens (traits with a table decode): 4 *
// V::kLanes columns at column c, each row's 64 E4M3 bytes looked up into four vectors of value /
// 256 (V::E4M3x64Over256, NaN codes as NaN) and applied to every token. Column c + s * kLanes + l
// lands in lane l of vector s, so every accumulator adds its products in the order of four
// DecodeSteps: the same bits as the widening path. One row's vectors are live at a time next to
// the 5 table registers, and each row reloads the activations: past a few tokens those loads, not
// the conversion, set the pace, and the widening path (weights first) is faster.
template <class V, int TB>
K3_INLINE void DecodeFp8Chunk(const TileInput& in, const typename V::Fp8Lut& lut, int64_t c,
                              DecodeAcc<V, TB>& acc) {
  using Vec = typename V::Vec;
  const RowGroup& g = *in.group;
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(g.rows[i]) + c;
    Prefetch(p, kPrefetchBytes);
    Vec w[4];
    V::E4M3x64Over256(p, lut, w);
#pragma GCC unroll 16
    for (int t = 0; t < TB; ++t) {
      const float* xp = in.x + t * in.ldx + c;
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) acc[i][t] = V::Fma(w[s], V::Load(xp + s * V::kLanes), acc[i][t]);
    }
  }
}

// y[t, r + i] for t < TB, i < nr (y points at y[0, r]), x: [TB][cols]. The decode regime's inner
// body: the kRows x TB accumulators live in registers for the whole row.
template <class V, WeightFormat F, int TB>
void DecodeTile(const RowGroup& g, const float* x, int64_t cols, float* y, int64_t ldy) {
  constexpr int kLanes = V::kLanes;
  DecodeAcc<V, TB> acc;
  ZeroTile<V, TB>(acc);
  const TileInput in{&g, x, cols};
  int64_t c = 0;
  if constexpr (F == WeightFormat::kBF16) {
    for (; c + 2 * kLanes <= cols; c += 2 * kLanes) DecodeBf16Pair<V, TB>(in, c, acc);
  }
  if constexpr (F == WeightFormat::kFp8Block && TB <= V::kFp8LutMaxTokens) {
    const typename V::Fp8Lut lut = V::MakeFp8Lut();
    for (; c + 4 * kLanes <= cols; c += 4 * kLanes) DecodeFp8Chunk<V, TB>(in, lut, c, acc);
  }
  // Whole cache lines of every row first, one prefetch per row and line (kLineSteps steps).
  constexpr int64_t kStepBytes = kLanes * ElementBytes(F);
  constexpr int kLineSteps = kStepBytes >= 64 ? 1 : static_cast<int>(64 / kStepBytes);
  for (; c + kLineSteps * kLanes <= cols; c += kLineSteps * kLanes) {
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) Prefetch(g.rows[i], c * ElementBytes(F) + kPrefetchBytes);
#pragma GCC unroll 8
    for (int s = 0; s < kLineSteps; ++s) {
      DecodeStep<V, F, TB, false, false>(in, c + s * kLanes, kLanes, acc);
    }
  }
  for (; c + kLanes <= cols; c += kLanes) DecodeStep<V, F, TB, false>(in, c, kLanes, acc);
  if (c < cols) DecodeStep<V, F, TB, true>(in, c, cols - c, acc);
  StoreTile<V, TB>(acc, y, ldy, g.nr);
}

// DecodeTile for kBF16 and one token, with the rows' accumulators kept in memory: a rolled loop
// over the group's rows loads, updates and stores each row's vector every step. The same FMAs in
// the same order as DecodeTile<V, kBF16, 1>, so the same bits; but the register-resident form GCC
// unrolls DecodeTile into streams memory markedly slower on the Zen 5 development VM, for reasons
// the profiles do not show (both wait on the weight loads). Measured, BF16 4096 x 2048 products
// through MatMul on 2 threads, interleaved: 34-37 -> 47-50 GB/s (a stand-alone loop of each form:
// 39-42 vs 48-51); the K2.5 and K3 bench models' batch-1 decode 1.14-1.21x (three rounds each).
template <class V>
[[gnu::noinline]] void DecodeBf16OneToken(const RowGroup& g, const float* x, int64_t cols, float* y,
                                          int64_t ldy) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  alignas(64) float sums[kRows][kLanes];
  for (int i = 0; i < kRows; ++i) V::StoreAligned(sums[i], V::Zero());
  int64_t c = 0;
  for (; c + 2 * kLanes <= cols; c += 2 * kLanes) {
    const Vec even = V::Load(x + c), odd = V::Load(x + c + kLanes);
#pragma GCC unroll 1
    for (int i = 0; i < kRows; ++i) {
      const typename V::Pairs v = V::LoadBf16Pairs(static_cast<const uint16_t*>(g.rows[i]) + c);
      Prefetch(g.rows[i], 2 * c + kPrefetchBytes);
      Vec a = V::LoadAligned(sums[i]);
      a = V::Fma(V::Bf16Even(v), even, a);
      a = V::Fma(V::Bf16Odd(v), odd, a);
      V::StoreAligned(sums[i], a);
    }
  }
  DecodeAcc<V, 1> acc;
  for (int i = 0; i < kRows; ++i) acc[i][0] = V::LoadAligned(sums[i]);
  const TileInput in{&g, x, cols};
  for (; c + kLanes <= cols; c += kLanes) {
    DecodeStep<V, WeightFormat::kBF16, 1, false>(in, c, kLanes, acc);
  }
  if (c < cols) DecodeStep<V, WeightFormat::kBF16, 1, true>(in, c, cols - c, acc);
  StoreTile<V, 1>(acc, y, ldy, g.nr);
}

// DecodeTile kept out of line for kFp8Block: GCC inlined the 1-token tile into DecodeRowsIn's
// row-group loop, where the table decode's five table registers no longer fit beside the loop's
// own state and were reloaded from memory every chunk (perf annotate). Out of line (and with
// DecodeTile's one prefetch per line), the K2 bench model's batch-1 decode went 38.9 -> 48.8
// tokens/s (`k3 bench model --family k2 --batches 1,8,32 --decode-steps 48`, medians of four
// interleaved rounds; widening the 1-token tile instead gave 4-7 % less), kernels_benchmark's
// cache-resident 1-token FP8 row 54 -> 70-72 GB/s, its streamed row unchanged within noise.
template <class V, WeightFormat F, int TB>
[[gnu::noinline]] void DecodeTileOutOfLine(const RowGroup& g, const float* x, int64_t cols,
                                           float* y, int64_t ldy) {
  DecodeTile<V, F, TB>(g, x, cols, y, ldy);
}

// y[:, r .. r + nr) for every token, as token tiles over the row group g (in format F).
template <class V, WeightFormat F>
void DecodeGroup(const RowGroup& g, const DecodeArgs& a, int64_t r) {
  constexpr int kMax = IsFourBit(F) ? V::kMaxDecodeTokensFp4 : V::kMaxDecodeTokens;
  const int64_t cols = a.w->cols, ldy = a.w->rows;
  if constexpr (IsFourBit(F)) {
    if (a.widen_once && a.tokens > kMax && a.tokens <= kWideMaxTiles * kMax) {
      return DecodeTilesFourBitWidened<V, F>(g, a.x, a.tokens, cols, a.y + r, ldy);
    }
  }
  ForEachTokenTile(a.tokens, kMax, [&](int64_t t0, int tb) {
    const float* x = a.x + t0 * cols;
    float* y = a.y + t0 * ldy + r;
    WithTileTokens<kMax>(tb, [&]<int TB>() {
      if constexpr (IsFourBit(F)) {
        DecodeTileFourBit<V, F, TB>(g, x, cols, y, ldy);
      } else if constexpr (F == WeightFormat::kFp8Block) {
        DecodeTileOutOfLine<V, F, TB>(g, x, cols, y, ldy);
      } else if constexpr (F == WeightFormat::kBF16 && TB == 1) {
        DecodeBf16OneToken<V>(g, x, cols, y, ldy);
      } else {
        DecodeTile<V, F, TB>(g, x, cols, y, ldy);
      }
    });
  });
}

template <class V>
void DequantizeRangeImpl(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);

// xs[t, c] = x[t, c] * scales[c / block] * 256 for every token: x [tokens, cols], scales one FP8
// block row's tile scales.
inline void ScaleByTiles(const float* x, int64_t tokens, int64_t cols, const float* scales,
                         int64_t block, float* xs) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t cb = 0; cb < cols; cb += block) {
      const float s = scales[cb / block] * 256.0f;
      const int64_t end = Min(cb + block, cols);
      for (int64_t c = cb; c < end; ++c) xs[t * cols + c] = x[t * cols + c] * s;
    }
  }
}

// DecodeRows for format F: y[:, r0 .. r1) for every token, one row group at a time.
// kFp8Block (DecodeArgs::fp8_fast): the rows of a block row share their tiles' scales, so each
// tile's scale * 256 goes into the activations once per block row (fp8_x, [tokens, cols]) and the
// kernels convert E4M3 bytes to value / 256 with no multiply per weight: each product is then
// fl(w * fl(x * scale)) instead of fl(fl(w * scale) * x), one rounding moved, and still exact for
// one-hot activations. Row groups start at multiples of kRows and block % kRows == 0, so a group
// never straddles two block rows.
template <class V, WeightFormat F>
void DecodeRowsIn(const DecodeArgs& a, int64_t r0, int64_t r1, float* fp8_x = nullptr) {
  const WeightMatrix& w = *a.w;
  const int64_t cols = w.cols;
  const auto* base = static_cast<const uint8_t*>(w.data);
  const int64_t row_bytes = IsFourBit(F) ? cols / 2 : cols * ElementBytes(F);
  PrefetchHead(base + r0 * row_bytes, (r1 - r0) * row_bytes);
  if constexpr (IsFourBit(F)) {  // the first tiles' scales (PrefetchScalesAhead)
    PrefetchHead(FourBitScaleRow(w, r0), Min(r1 - r0, 4 * kRows) * ScaleRowBytes<F>(cols));
  }
  DecodeArgs args = a;
  int64_t block_row = -1;
  int64_t r = r0;
  if constexpr (IsFourBit(F) && V::kFourBitPairedRows) {
    for (; a.tokens == 1 && r + 2 * kRows <= r1; r += 2 * kRows) {
      DecodeOneTokenFourBitPair<V, F>(w, r, a.x, a.y + r);
    }
  }
  for (; r < r1; r += kRows) {
    RowGroup g;
    g.nr = static_cast<int>(Min(kRows, r1 - r));
    for (int i = 0; i < kRows; ++i) {
      const int64_t row = r + Min(i, g.nr - 1);
      g.rows[i] = base + row * row_bytes;
      if constexpr (IsFourBit(F)) g.fourbit_scales[i] = FourBitScaleRow(w, row);
    }
    if constexpr (F == WeightFormat::kFp8Block) {
      if (r / w.block != block_row) {
        block_row = r / w.block;
        ScaleByTiles(a.x, a.tokens, cols, Fp8ScaleRow(w, r), w.block, fp8_x);
        args.x = fp8_x;
      }
    }
    DecodeGroup<V, F>(g, args, r);
    if constexpr (F == WeightFormat::kFp8Block) {
      // The widening path decodes E4M3 NaN codes as 480 with the scale folded in (the table path
      // as NaN); a row holding one yields NaN, as in the reference.
      if (w.fp8_nan_free) continue;
      for (int i = 0; i < g.nr; ++i) {
        if (!V::HasE4M3Nan(static_cast<const uint8_t*>(g.rows[i]), cols)) continue;
        for (int64_t t = 0; t < a.tokens; ++t) a.y[t * w.rows + r + i] = __builtin_nanf("");
      }
    }
  }
}

// kFp8Block without the folded scale, and kInt8Block off the integer kernels: each row group is
// dequantised into scratch [kRows][cols] and run through the F32 kernels.
template <class V>
void DecodeRowsViaScratch(const DecodeArgs& a, int64_t r0, int64_t r1, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t cols = w.cols;
  for (int64_t r = r0; r < r1; r += kRows) {
    RowGroup g;
    g.nr = static_cast<int>(Min(kRows, r1 - r));
    for (int i = 0; i < g.nr; ++i) DequantizeRangeImpl<V>(w, r + i, 0, cols, scratch + i * cols);
    for (int i = 0; i < kRows; ++i) g.rows[i] = scratch + Min(i, g.nr - 1) * cols;
    DecodeGroup<V, WeightFormat::kF32>(g, a, r);
  }
}

// IsaKernels::decode_rows: y[:, r0 .. r1) for every token.
template <class V>
void DecodeRows(const DecodeArgs& a, int64_t r0, int64_t r1, float* scratch) {
  switch (a.w->format) {
    case WeightFormat::kF32:
      return DecodeRowsIn<V, WeightFormat::kF32>(a, r0, r1);
    case WeightFormat::kBF16:
      return DecodeRowsIn<V, WeightFormat::kBF16>(a, r0, r1);
    case WeightFormat::kF16:
      return DecodeRowsIn<V, WeightFormat::kF16>(a, r0, r1);
    case WeightFormat::kMxfp4:
      return DecodeRowsIn<V, WeightFormat::kMxfp4>(a, r0, r1);
    case WeightFormat::kInt4:
      return DecodeRowsIn<V, WeightFormat::kInt4>(a, r0, r1);
    case WeightFormat::kInt8Block:   // without AVX512-VNNI (matmul_int8.h)
    case WeightFormat::kBf16Panels:  // MatMul runs its own kernels (matmul_panels.h)
      return DecodeRowsViaScratch<V>(a, r0, r1, scratch);
    case WeightFormat::kFp8Block:
      if (!a.fp8_fast) return DecodeRowsViaScratch<V>(a, r0, r1, scratch);
      return DecodeRowsIn<V, WeightFormat::kFp8Block>(a, r0, r1, scratch);
  }
}

}  // namespace
}  // namespace k3::kernels::detail
