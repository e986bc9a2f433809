// AVX512-BF16 kernels (vdpbf16ps) for GemmPrecision::kBf16 where AMX is absent (Dpbf16Kernels in
// matmul_kernels.h). Compiled with -mavx512bf16 and the AVX-512 flags (CMakeLists.txt), reached
// only after CpuHasAvx512Bf16(); follows the ODR rule of matmul_simd_base.h.
//
// vdpbf16ps acc, a, b: per fp32 lane n, acc[n] += a[2n] * b[2n] + a[2n + 1] * b[2n + 1], the BF16
// products exact in fp32, the sums rounded to fp32 (nearest even), BF16 denormal inputs and fp32
// denormal results flushed to zero whatever MXCSR says. With b = 16 weight rows' pairs
// W[n][2p, 2p + 1] (one packed panel row) and a = a token's pair x[t][2p, 2p + 1] in every lane,
// lane n gains the two terms of y[t][n] for columns 2p, 2p + 1.
//
// GEMM micro-kernel: MR <= 14 tokens x 32 rows = 28 accumulators, 2 panel vectors and a broadcast
// in the 32 zmm registers; per column pair two aligned panel loads, MR 32-bit broadcasts and
// 2 MR vdpbf16ps (64 MR flops), the shape of the FP32 kernel at twice the flops per instruction.
// Per panel and kGemmKc columns the weights are packed once (matmul_bf16_pack.h; 16 KiB, stays
// in L1) and every token tile runs over them; after the first column block the accumulators
// start from y, so every output is one fp32 running sum in column order whatever the threads.
#include <cstdint>

#include "kernels/matmul_bf16_pack.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

constexpr int kMaxTileTokens = 14;   // GEMM: 2 x 14 accumulators
constexpr int kMaxDecodeTokens = 6;  // decode: kDecodeRowGroup (4) rows x 6 tokens
constexpr int kPairsPerStep = kBf16Step / 2;

// vdpbf16ps on integer-typed pair vectors (__m512bh differs between GCC and clang versions).
K3_INLINE __m512 Dot(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, __builtin_bit_cast(__m512bh, a), __builtin_bit_cast(__m512bh, b));
}

// 32 floats of x from column c (fewer at the end; the rest is zero) as 16 BF16 pairs.
K3_INLINE __m512i PairsAt(const float* row, int64_t c, int64_t cols) {
  const __m512 lo = _mm512_maskz_loadu_ps(Avx512::LaneMask(cols - c), row + c);
  const __m512 hi = _mm512_maskz_loadu_ps(Avx512::LaneMask(cols - c - 16), row + c + 16);
  return ToBf16Pairs(lo, hi);
}

// ---- GEMM ----

// One micro-kernel call: y[i, 0..32) (+)= the tile's token i times the packed panel block.
struct MicroTile {
  const uint32_t* xp = nullptr;  // [steps * 16][MR] pairs of the tile, at the block's first pair
  const uint32_t* bp = nullptr;  // the packed panel block (matmul_bf16_pack.h)
  int64_t steps = 0;             // 32-column steps of the block
  float* y = nullptr;            // y[t0, r0], row stride ldy
  int64_t ldy = 0;
  __mmask16 m0 = 0, m1 = 0;  // valid rows of the panel's halves
  bool accumulate = false;   // start from y (every column block after the first)
};

// The GEMM regime's inner body: 2 * MR accumulators stay in registers over the block.
template <int MR>
void GemmMicro(const MicroTile& a) {
  const uint32_t* xp = a.xp;
  const uint32_t* bp = a.bp;
  float* const y = a.y;
  const int64_t ldy = a.ldy, steps = a.steps;
  const __mmask16 m0 = a.m0, m1 = a.m1;
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    c0[i] = a.accumulate ? _mm512_maskz_loadu_ps(m0, y + i * ldy) : _mm512_setzero_ps();
    c1[i] = a.accumulate ? _mm512_maskz_loadu_ps(m1, y + i * ldy + 16) : _mm512_setzero_ps();
  }
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 2
    for (int p = 0; p < kPairsPerStep; ++p) {
      const __m512i b0 = _mm512_load_si512(bp + p * 16);
      const __m512i b1 = _mm512_load_si512(bp + 256 + p * 16);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512i xa = _mm512_set1_epi32(static_cast<int>(xp[p * MR + i]));
        c0[i] = Dot(c0[i], xa, b0);
        c1[i] = Dot(c1[i], xa, b1);
      }
    }
    bp += kBf16PackedStep;
    xp += kPairsPerStep * MR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(y + i * ldy, m0, c0[i]);
    _mm512_mask_storeu_ps(y + i * ldy + 16, m1, c1[i]);
  }
}

// GemmMicro<MR> by MR (entry 0 unused).
struct MicroTable {
  void (*fn[kMaxTileTokens + 1])(const MicroTile&) = {};
};
template <int MR>
constexpr void FillMicroTable(MicroTable& table) {
  table.fn[MR] = GemmMicro<MR>;
  if constexpr (MR > 1) FillMicroTable<MR - 1>(table);
}
constexpr MicroTable MakeMicroTable() {
  MicroTable table;
  FillMicroTable<kMaxTileTokens>(table);
  return table;
}
constexpr MicroTable kMicro = MakeMicroTable();

// scratch: rowbuf [32][kGemmKc] floats, then the packed panel block [kGemmKc / 2][32] uint32.
constexpr int64_t kGemmScratch = kBf16PanelRows * kGemmKc + kGemmKc / 2 * kBf16PanelRows;

void GemmPanel(const Dpbf16GemmArgs& a, int64_t r0, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t nr = Min(kBf16PanelRows, rows - r0);
  float* rowbuf = scratch;
  auto* bp = reinterpret_cast<uint32_t*>(scratch + kBf16PanelRows * kGemmKc);
  MicroTile tile;
  tile.bp = bp;
  tile.ldy = rows;
  tile.m0 = Avx512::LaneMask(nr);
  tile.m1 = Avx512::LaneMask(nr - kBf16HalfRows);
  for (int64_t k0 = 0; k0 < cols; k0 += kGemmKc) {
    const int64_t kn = Min(kGemmKc, cols - k0);
    PackBf16Panel(w, a.dequantize_range, r0, k0, kn, rowbuf, bp);
    tile.steps = (kn + kBf16Step - 1) / kBf16Step;
    tile.accumulate = k0 > 0;
    for (int64_t j = 0; j < a.num_tiles; ++j) {
      const int64_t t0 = a.tile_start[j], mr = a.tile_start[j + 1] - t0;
      tile.xp = a.xpacked + t0 * a.pairs + k0 / 2 * mr;
      tile.y = a.y + t0 * rows + r0;
      kMicro.fn[mr](tile);
    }
  }
}

void PackTokens(const float* x, int64_t cols, int64_t mr, uint32_t* dst) {
  const __mmask16 lanes = Avx512::LaneMask(mr);
  for (int64_t c = 0; c < cols; c += kBf16Step) {
    __m512i t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      t[i] = i < mr ? PairsAt(x + i * cols, c, cols) : _mm512_setzero_si512();
    Transpose16x16(t);  // t[p] lane i: pair p of token i
#pragma GCC unroll 16
    for (int p = 0; p < kPairsPerStep; ++p) {
      _mm512_mask_storeu_epi32(dst + (c / 2 + p) * mr, lanes, t[p]);
    }
  }
}

// ---- Decode (BF16 weights) ----

void PackRows(const float* x, int64_t cols, int64_t tokens, uint32_t* dst) {
  const int64_t pairs = (cols + kBf16Step - 1) / kBf16Step * kPairsPerStep;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t c = 0; c < cols; c += kBf16Step) {
      _mm512_storeu_si512(dst + t * pairs + c / 2, PairsAt(x + t * cols, c, cols));
    }
  }
}

// y[t0 + t, r + i] for t < TB, i < nr: 4 x TB accumulators over the rows' 32-column chunks (one
// load per row, one per token, one vdpbf16ps per row and token), then horizontal sums.
template <int TB>
void DecodeTile(const Dpbf16DecodeArgs& a, const uint16_t* const (&rows)[kDecodeRowGroup], int nr,
                int64_t t0, int64_t r) {
  constexpr int kR = kDecodeRowGroup;
  const int64_t cols = a.w->cols, pairs = a.pairs;
  const uint32_t* x = a.xb + t0 * pairs;
  __m512 acc[kR][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kR; ++i) {
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  auto step = [&](int64_t c, __mmask32 m) K3_INLINE_LAMBDA {
    __m512i wv[kR];
#pragma GCC unroll 4
    for (int i = 0; i < kR; ++i) {
      Prefetch(rows[i], 2 * c + kPrefetchBytes);
      wv[i] = _mm512_maskz_loadu_epi16(m, rows[i] + c);
    }
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      const __m512i xv = _mm512_loadu_si512(x + t * pairs + c / 2);
#pragma GCC unroll 4
      for (int i = 0; i < kR; ++i) acc[i][t] = Dot(acc[i][t], xv, wv[i]);
    }
  };
  int64_t c = 0;
  for (; c + kBf16Step <= cols; c += kBf16Step) step(c, ~__mmask32{0});
  if (c < cols) step(c, (__mmask32{1} << (cols - c)) - 1);
  const int64_t ldy = a.w->rows;
  const __mmask8 m = static_cast<__mmask8>((1u << nr) - 1);
#pragma GCC unroll 8
  for (int t = 0; t < TB; ++t) {
    const __m128 sums = Avx512::HorizontalSum4(acc[0][t], acc[1][t], acc[2][t], acc[3][t]);
    _mm_mask_storeu_ps(a.y + (t0 + t) * ldy + r, m, sums);
  }
}

void DecodeRows(const Dpbf16DecodeArgs& a, int64_t r0, int64_t r1) {
  const auto* base = static_cast<const uint16_t*>(a.w->data);
  const int64_t cols = a.w->cols;
  // Near-equal token tiles of at most kMaxDecodeTokens.
  const int64_t tiles = (a.tokens + kMaxDecodeTokens - 1) / kMaxDecodeTokens;
  for (int64_t r = r0; r < r1; r += kDecodeRowGroup) {
    const int nr = static_cast<int>(Min(kDecodeRowGroup, r1 - r));
    const uint16_t* rows[kDecodeRowGroup];
    for (int i = 0; i < kDecodeRowGroup; ++i) rows[i] = base + (r + Min(i, nr - 1)) * cols;
    for (int64_t j = 0, t0 = 0; j < tiles; ++j) {
      const int64_t tb = a.tokens / tiles + (j < a.tokens % tiles ? 1 : 0);
      switch (tb) {
        case 1:
          DecodeTile<1>(a, rows, nr, t0, r);
          break;
        case 2:
          DecodeTile<2>(a, rows, nr, t0, r);
          break;
        case 3:
          DecodeTile<3>(a, rows, nr, t0, r);
          break;
        case 4:
          DecodeTile<4>(a, rows, nr, t0, r);
          break;
        case 5:
          DecodeTile<5>(a, rows, nr, t0, r);
          break;
        default:
          DecodeTile<6>(a, rows, nr, t0, r);
          break;
      }
      t0 += tb;
    }
  }
}

// ---- Roofline ----

double DotLoop(int64_t iterations) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.001f * i);
  // Pairs of 2^-10 (BF16 0x3A80): each step adds 2^-19 per lane, so nothing overflows.
  const __m512i a = _mm512_set1_epi32(0x3A803A80), b = _mm512_set1_epi32(0x3A803A80);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = Dot(acc[i], a, b);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return static_cast<double>(iterations) * kChains * 16 * 4;
}

constexpr Dpbf16Kernels kKernels = {
    .panel_rows = kBf16PanelRows,
    .max_tile_tokens = kMaxTileTokens,
    .gemm_scratch = kGemmScratch,
    .pack_tokens = PackTokens,
    .gemm_panel = GemmPanel,
    .pack_rows = PackRows,
    .decode_rows = DecodeRows,
    .dot_loop = DotLoop,
};

}  // namespace

const Dpbf16Kernels& Avx512Bf16Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
