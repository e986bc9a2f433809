// The exact dequantisation and the GEMM-regime driver of MatMul, written once over a
// vector-traits type V (matmul_vec_*.h) and instantiated by each ISA translation unit
// (matmul_simd.h); follows the ODR rule of matmul_simd_base.h.
//
// GEMM: a panel of V::kPanelRows (two vectors of) weight rows is converted and transposed kGemmKc
// columns at a time into [k][V::kPanelRows] floats, and a micro-kernel accumulates a tile of up
// to V::kMaxTileTokens tokens x V::kPanelRows rows in registers: per k, two vector loads of the
// panel, one broadcast per token, two FMAs per token.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// ---- Dequantisation (GEMM packing and the decode fallback) ----

// W[row, c0 .. c1) exactly as the scalar definitions give it, V::kLanes columns at a time.
template <class V, WeightFormat F>
void ConvertRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  const void* p = RowPointer(w, row);
  [[maybe_unused]] const float* scales = nullptr;
  if constexpr (F == WeightFormat::kFp8Block) scales = Fp8ScaleRow(w, row);
  for (int64_t c = c0; c < c1;) {
    int64_t end = c1;
    Vec scale = V::Zero();
    if constexpr (F == WeightFormat::kFp8Block) {  // one tile scale per span
      end = Min((c / w.block + 1) * w.block, c1);
      scale = V::Set1(scales[c / w.block]);
    }
    if constexpr (!V::kMaskedLoads) {
      for (; c + kLanes <= end; c += kLanes) {
        V::Store(out + (c - c0), V::template ExactWeights<F, false>(p, c, kLanes, scale));
      }
    }
    for (; c < end; c += kLanes) {
      const typename V::Mask m = V::LaneMask(end - c);
      V::MaskedStore(out + (c - c0), m, V::template ExactWeights<F, true>(p, c, end - c, scale));
    }
    c = end;
  }
}

// ConvertRange for MXFP4 and INT4 (F; c0 and c1 are multiples of 32): per 32-column block, the
// traits' 4-bit decode (FourBit<V, F>), interleaved back to column order.
template <class V, WeightFormat F>
void ConvertRangeFourBit(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const auto* bytes = static_cast<const uint8_t*>(RowPointer(w, row));
  const void* scales = FourBitScaleRow(w, row);
  for (int64_t c = c0; c < c1; c += 32) {
    const typename V::E2M1Scale scale = FourBit<V, F>::ScaleOf(scales, c / 32);
#pragma GCC unroll 2
    for (int g = 0; g < V::kE2M1Groups; ++g) {
      typename V::Vec pair[2];
      FourBit<V, F>::Decode(bytes + c / 2, scale, g, pair);
      V::StoreInterleaved(out + (c - c0) + g * 2 * V::kLanes, pair[0], pair[1]);
    }
  }
}

// IsaKernels::dequantize_range.
template <class V>
void DequantizeRangeImpl(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  switch (w.format) {
    case WeightFormat::kF32:
      return ConvertRange<V, WeightFormat::kF32>(w, row, c0, c1, out);
    case WeightFormat::kBF16:
      return ConvertRange<V, WeightFormat::kBF16>(w, row, c0, c1, out);
    case WeightFormat::kF16:
      return ConvertRange<V, WeightFormat::kF16>(w, row, c0, c1, out);
    case WeightFormat::kFp8Block:
      return ConvertRange<V, WeightFormat::kFp8Block>(w, row, c0, c1, out);
    case WeightFormat::kMxfp4:
      return ConvertRangeFourBit<V, WeightFormat::kMxfp4>(w, row, c0, c1, out);
    case WeightFormat::kInt4:
      return ConvertRangeFourBit<V, WeightFormat::kInt4>(w, row, c0, c1, out);
    case WeightFormat::kInt8Block:
    case WeightFormat::kBf16Panels:  // MatMul runs its own kernels (matmul_panels.h)
      return DequantizeRange(w, row, c0, c1, out);
  }
}

// ---- GEMM ----

// One micro-kernel call: y[i, 0 .. kPanelRows) (+)= sum_k xp[k * MR + i] * bp[k * kPanelRows + ..]
// for i < MR; m0 / m1 mask the panel's two halves (rows past the matrix).
template <class V>
struct MicroTile {
  const float* xp = nullptr;  // [kn][MR] packed tokens
  const float* bp = nullptr;  // [kn][V::kPanelRows] packed weights
  int64_t kn = 0;
  float* y = nullptr;  // y[0, r0] of the panel, row stride ldy
  int64_t ldy = 0;
  typename V::Mask m0{}, m1{};
  bool accumulate = false;  // add to y (every column block after the first)
};

// The GEMM regime's inner body: 2 * MR accumulators stay in registers over kn columns.
template <class V, int MR>
void GemmMicro(const MicroTile<V>& a) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  // Locals, not a's fields: the stores to y could alias a (its masks are may_alias vectors).
  const float* xp = a.xp;
  const float* bp = a.bp;
  const int64_t kn = a.kn, ldy = a.ldy;
  float* const y = a.y;
  const typename V::Mask m0 = a.m0, m1 = a.m1;
  const bool accumulate = a.accumulate;
  Vec c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) c0[i] = c1[i] = V::Zero();
  for (int64_t k = 0; k < kn; ++k) {
    const Vec b0 = V::LoadAligned(bp);
    const Vec b1 = V::LoadAligned(bp + kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const Vec x = V::Broadcast(xp + i);
      c0[i] = V::Fma(x, b0, c0[i]);
      c1[i] = V::Fma(x, b1, c1[i]);
    }
    bp += V::kPanelRows;
    xp += MR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* yi = y + i * ldy;
    if (accumulate) {
      c0[i] = V::Add(c0[i], V::MaskedLoad(yi, m0));
      c1[i] = V::Add(c1[i], V::MaskedLoad(yi + kLanes, m1));
    }
    V::MaskedStore(yi, m0, c0[i]);
    V::MaskedStore(yi + kLanes, m1, c1[i]);
  }
}

// GemmMicro<V, MR> by MR (entry 0 unused).
template <class V>
struct MicroTable {
  void (*fn[V::kMaxTileTokens + 1])(const MicroTile<V>&) = {};
};
template <class V, int MR>
constexpr void FillMicroTable(MicroTable<V>& table) {
  table.fn[MR] = GemmMicro<V, MR>;
  if constexpr (MR > 1) FillMicroTable<V, MR - 1>(table);
}
template <class V>
constexpr MicroTable<V> MakeMicroTable() {
  MicroTable<V> table;
  FillMicroTable<V, V::kMaxTileTokens>(table);
  return table;
}
template <class V>
constexpr MicroTable<V> kMicro = MakeMicroTable<V>();

// t holds kLanes rows x kLanes columns (from column kk) of row group g: transposed into the
// panel as bp[kk + j][g * kLanes ..].
template <class V>
K3_INLINE void StoreTransposed(typename V::Vec (&t)[V::kLanes], float* bp, int64_t kk, int g) {
  V::Transpose(t);
#pragma GCC unroll 16
  for (int j = 0; j < V::kLanes; ++j) {
    V::StoreAligned(bp + (kk + j) * V::kPanelRows + g * V::kLanes, t[j]);
  }
}

// Row staging for the packings: bytes of columns [k0, k0 + kn) of the panel's `count` rows from
// r0, to stage + i * kGemmKc * element bytes. A matrix's rows lie a power of two apart, so a
// panel's 32 rows fall in one or two L1 sets (of 12 ways) next to the 32 KB packed panel; read in
// place, every kLanes-column step missed L1 again. Staged a kGemmKc row apart they spread over
// all sets, and the copy reads whole lines. (kernels_benchmark's FP8 GEMM at 32 tokens, perf
// shares: the pack took 0.8x the micro-kernels' time before staging and PackPanelFp8Folded, ~0.5x
// after.)
// Formats of at most 2 bytes (the stage is GemmPanel's rowbuf: kLanes * kGemmKc floats).
inline constexpr bool IsStagedFormat(WeightFormat f) {
  return f == WeightFormat::kBF16 || f == WeightFormat::kF16 || f == WeightFormat::kFp8Block;
}
template <class V>
K3_INLINE void StageRows(const WeightMatrix& w, int64_t r0, int count, int64_t k0, int64_t kn,
                         uint8_t* stage) {
  static_assert(V::kPanelRows * kGemmKc * 2 <= V::kLanes * kGemmKc * 4);
  constexpr int64_t kVecBytes = V::kLanes * 4;
  const int64_t element = ElementBytes(w.format);
  const int64_t bytes = kn * element;
  for (int i = 0; i < count; ++i) {
    const auto* src = static_cast<const uint8_t*>(RowPointer(w, r0 + i)) + k0 * element;
    uint8_t* dst = stage + i * kGemmKc * element;
    int64_t c = 0;
    for (; c + kVecBytes <= bytes; c += kVecBytes) {  // raw bits through float moves
      V::Store(reinterpret_cast<float*>(dst + c), V::Load(reinterpret_cast<const float*>(src + c)));
    }
    for (; c < bytes; ++c) dst[c] = src[c];
  }
}

// Packs W[r0 .. r0 + kPanelRows, k0 .. k0 + kn) as bp[k][kPanelRows] (rows past the matrix are
// 0), converting kLanes x kLanes blocks in registers. Needs a format that is not 4-bit, and for
// kFp8Block a block that is a multiple of kLanes (so a kLanes-column chunk has one scale).
template <class V, WeightFormat F>
[[gnu::noinline]] void PackPanelDirect(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn,
                                       float* bp, uint8_t* stage) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  constexpr bool kStaged = IsStagedFormat(F);
  // Staged rows start at column k0: the loads below index from `col0`.
  const int64_t col0 = kStaged ? 0 : k0;
  if constexpr (kStaged) {
    StageRows<V>(w, r0, static_cast<int>(Min(V::kPanelRows, w.rows - r0)), k0, kn, stage);
  }
  for (int g = 0; g < V::kPanelRows / kLanes; ++g) {
    const void* rows[kLanes] = {};
    const float* scales[kLanes] = {};
    int valid = 0;
    for (int i = 0; i < kLanes; ++i) {
      const int64_t row = r0 + g * kLanes + i;
      if (row >= w.rows) break;
      rows[i] = kStaged ? stage + (g * kLanes + i) * kGemmKc * ElementBytes(F) : RowPointer(w, row);
      if constexpr (F == WeightFormat::kFp8Block) scales[i] = Fp8ScaleRow(w, row);
      valid = i + 1;
    }
    for (int64_t kk = 0; kk < kn; kk += kLanes) {
      const int64_t n = Min(kLanes, kn - kk);
      Vec t[kLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) {
        Vec scale = V::Zero();
        if constexpr (F == WeightFormat::kFp8Block) {
          if (i < valid) scale = V::Set1(scales[i][(k0 + kk) / w.block]);
        }
        if (i >= valid) {
          t[i] = V::Zero();
        } else if (V::kMaskedLoads || n < kLanes) {
          t[i] = V::template ExactWeights<F, true>(rows[i], col0 + kk, n, scale);
        } else {
          t[i] = V::template ExactWeights<F, false>(rows[i], col0 + kk, n, scale);
        }
      }
      StoreTransposed<V>(t, bp, kk, g);
    }
  }
}

// PackPanelDirect for kFp8Block under GemmArgs::fp8_folded: the same floats, cheaper. A group
// of kLanes rows lies in one block row (block % kLanes == 0) and a kLanes-column chunk in one
// block column, so one scale serves the whole kLanes x kLanes tile; E4M3 / 256 times (scale * 256)
// is the one rounding of value * scale that ExactWeights' (value / 256 * 256) * scale makes (both
// factors exact), and NaN-free rows need no NaN patch. Per 16 weights: a load, the widening
// through F16 and one multiply (ExactWeights: 11 operations), no division per chunk, from rows
// staged in `stage` (StageRows).
template <class V>
[[gnu::noinline]] void PackPanelFp8Folded(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn,
                                          float* bp, uint8_t* stage) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  const int valid_rows = static_cast<int>(Min(V::kPanelRows, w.rows - r0));
  StageRows<V>(w, r0, valid_rows, k0, kn, stage);
  for (int g = 0; g < V::kPanelRows / kLanes; ++g) {
    const int valid = static_cast<int>(Min(kLanes, valid_rows - g * kLanes));
    if (valid <= 0) {  // a group wholly past the matrix: zeros (its outputs are masked)
      for (int64_t k = 0; k < kn; ++k) {
        V::StoreAligned(bp + k * V::kPanelRows + g * kLanes, V::Zero());
      }
      continue;
    }
    const uint8_t* rows = stage + g * kLanes * kGemmKc;  // one byte per weight
    const float* scales = Fp8ScaleRow(w, r0 + g * kLanes);
    for (int64_t kk = 0; kk < kn; kk += kLanes) {
      const int64_t n = Min(kLanes, kn - kk);
      const Vec scale = V::Set1(scales[(k0 + kk) / w.block] * 256.0f);
      Vec t[kLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) {
        // Rows past the matrix repeat the last one: GemmMicro masks their outputs.
        const uint8_t* row = rows + Min(i, valid - 1) * kGemmKc;
        t[i] = n == kLanes ? V::template Weights<WeightFormat::kFp8Block, false>(row, kk, n)
                           : V::template Weights<WeightFormat::kFp8Block, true>(row, kk, n);
        t[i] = V::Mul(t[i], scale);
      }
      StoreTransposed<V>(t, bp, kk, g);
    }
  }
}

// The general packing: dequantise rows into rowbuf [kLanes][kGemmKc], then transpose.
template <class V>
void PackPanelViaRows(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, float* bp,
                      float* rowbuf) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  const int64_t kr = (kn + kLanes - 1) / kLanes * kLanes;
  for (int g = 0; g < V::kPanelRows / kLanes; ++g) {
    for (int i = 0; i < kLanes; ++i) {
      const int64_t row = r0 + g * kLanes + i;
      float* dst = rowbuf + i * kGemmKc;
      int64_t filled = 0;
      if (row < w.rows) {
        DequantizeRangeImpl<V>(w, row, k0, k0 + kn, dst);
        filled = kn;
      }
      for (int64_t c = filled; c < kr; ++c) dst[c] = 0.0f;
    }
    for (int64_t kk = 0; kk < kr; kk += kLanes) {
      Vec t[kLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) t[i] = V::LoadAligned(rowbuf + i * kGemmKc + kk);
      StoreTransposed<V>(t, bp, kk, g);
    }
  }
}

// rowbuf doubles as the staging area of the direct packings (StageRows).
template <class V>
void PackPanel(const GemmArgs& a, int64_t r0, int64_t k0, int64_t kn, float* bp, float* rowbuf) {
  const WeightMatrix& w = *a.w;
  uint8_t* stage = reinterpret_cast<uint8_t*>(rowbuf);
  if (a.fp8_folded) return PackPanelFp8Folded<V>(w, r0, k0, kn, bp, stage);
  switch (w.format) {
    case WeightFormat::kF32:
      return PackPanelDirect<V, WeightFormat::kF32>(w, r0, k0, kn, bp, stage);
    case WeightFormat::kBF16:
      return PackPanelDirect<V, WeightFormat::kBF16>(w, r0, k0, kn, bp, stage);
    case WeightFormat::kF16:
      return PackPanelDirect<V, WeightFormat::kF16>(w, r0, k0, kn, bp, stage);
    case WeightFormat::kFp8Block:
      if (w.block % V::kLanes == 0) {
        return PackPanelDirect<V, WeightFormat::kFp8Block>(w, r0, k0, kn, bp, stage);
      }
      return PackPanelViaRows<V>(w, r0, k0, kn, bp, rowbuf);
    case WeightFormat::kMxfp4:
    case WeightFormat::kInt4:
    case WeightFormat::kInt8Block:
    case WeightFormat::kBf16Panels:
      return PackPanelViaRows<V>(w, r0, k0, kn, bp, rowbuf);
  }
}

// Floats of scratch GemmPanel needs: bp [kGemmKc][kPanelRows], then rowbuf [kLanes][kGemmKc].
template <class V>
constexpr int64_t GemmScratch() {
  return kGemmKc * V::kPanelRows + V::kLanes * kGemmKc;
}

// IsaKernels::gemm_panel: y[:, r0 .. r0 + kPanelRows) (clipped to rows) for every token tile.
template <class V>
void GemmPanel(const GemmArgs& a, int64_t r0, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t nr = Min(V::kPanelRows, rows - r0);
  MicroTile<V> tile;
  tile.m0 = V::LaneMask(nr);
  tile.m1 = V::LaneMask(nr - V::kLanes);
  tile.bp = scratch;
  tile.ldy = rows;
  float* rowbuf = scratch + kGemmKc * V::kPanelRows;
  for (int64_t k0 = 0; k0 < cols; k0 += kGemmKc) {
    tile.kn = Min(kGemmKc, cols - k0);
    tile.accumulate = k0 > 0;
    PackPanel<V>(a, r0, k0, tile.kn, scratch, rowbuf);
    for (int64_t j = 0; j < a.num_tiles; ++j) {
      const int64_t t0 = a.tile_start[j], mr = a.tile_start[j + 1] - t0;
      tile.xp = a.xpacked + t0 * cols + k0 * mr;
      tile.y = a.y + t0 * rows + r0;
      kMicro<V>.fn[mr](tile);
    }
  }
}

// IsaKernels::pack_tokens: dst[c * mr + i] = x[i * cols + c] for i < mr (<= kLanes), c < cols.
template <class V>
void PackTokens(const float* x, int64_t cols, int64_t mr, float* dst) {
  using Vec = typename V::Vec;
  constexpr int kLanes = V::kLanes;
  const typename V::Mask lanes = V::LaneMask(mr);
  for (int64_t c = 0; c < cols; c += kLanes) {
    const int64_t n = Min(kLanes, cols - c);
    const typename V::Mask m = V::LaneMask(n);
    Vec t[kLanes];
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) {
      t[i] = i < mr ? V::MaskedLoad(x + i * cols + c, m) : V::Zero();
    }
    V::Transpose(t);
    for (int64_t j = 0; j < n; ++j) V::MaskedStore(dst + (c + j) * mr, lanes, t[j]);
  }
}

// ---- Roofline ----

// IsaKernels::fma_loop: `iterations` of V::kFmaChains register-resident FMA chains.
template <class V>
double FmaLoop(int64_t iterations) {
  using Vec = typename V::Vec;
  constexpr int kChains = V::kFmaChains;
  Vec acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = V::Set1(1.0f + 0.001f * i);
  const Vec mul = V::Set1(0.999999f), add = V::Set1(1e-6f);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = V::Fma(acc[i], mul, add);
  }
  Vec sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) sum = V::Add(sum, acc[i]);
  volatile float sink = V::ReduceAdd(sum);
  (void)sink;
  return static_cast<double>(iterations) * kChains * V::kLanes * 2;
}

}  // namespace
}  // namespace k3::kernels::detail
