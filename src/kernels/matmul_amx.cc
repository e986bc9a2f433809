// AMX-BF16 GEMM kernels (tdpbf16ps) for GemmPrecision::kBf16. Compiled with AMX and AVX-512 BF16
// flags and called only after MatMulHasAmx() (CPU bits, XCR0 and the Linux tile-data grant);
// follows the ODR rule of matmul_simd_base.h. Shares Transpose16x16, the E2M1 table and the lane
// masks with the AVX-512 kernels (matmul_vec_avx512.h).
//
// Tile facts used (Intel SDM, palette 1): 8 tile registers of up to 16 rows x 64 bytes.
// tdpbf16ps C, A, B: C[m][n] (fp32) += sum_p A[m][2p] * B[p][2n] + A[m][2p + 1] * B[p][2n + 1]
// over p < 16, with A and B rows of 32 BF16, the BF16 products exact in fp32, and fp32 sums
// (denormal inputs and outputs flushed to zero). So with A = 16 tokens x 32 columns of x and
// C = 16 tokens x 16 weight rows, B row p holds, for each weight row n, the pair W[n][2p, 2p + 1]:
// a 16 x 16 transpose of the weight rows viewed as 32-bit pairs.
//
// Blocking: a panel is 32 weight rows (two C tiles wide). Per kGemmKc columns the panel is packed
// once (16 KiB of BF16, stays in L1) and every block of 32 tokens (16 for the last odd block)
// runs over it with C in tiles 0-3, A in 4-5 and B in 6-7: per 32 columns, 4 tile loads and 4
// tdpbf16ps (16 x 16 x 32 multiply-adds each). C round-trips through a float buffer between
// column blocks (exact), and is copied to y at the end of the panel. Packing moves BF16 weights
// as they are, looks MXFP4 up straight into BF16, and has the AVX-512 code dequantise the other
// formats to float first; it costs about as much as the tile work at 16 tokens, little at 256.
#include <cstdint>

#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

constexpr int kPanelRows = 32;            // two C tiles of 16 weight rows
constexpr int kTileRows = 16;             // tokens per A/C tile, weight rows per C tile
constexpr int kStep = 32;                 // BF16 columns per A row (64 bytes)
constexpr int64_t kKc = kGemmKc;          // columns per packed panel block (multiple of kStep)
constexpr int64_t kTileBytes = 64;        // bytes per tile row
constexpr int64_t kPackedStep = 2 * 256;  // uint32 pairs per kStep of a packed panel (2 B tiles)

// GCC's AMX intrinsics are asm statements that do not tell the compiler they read memory (its
// ldtilecfg names only 8 bytes of the config); this makes pending stores visible to them.
K3_INLINE void MemoryBarrier() { asm volatile("" ::: "memory"); }

// 32 floats (lo = columns 0..15, hi = 16..31) as 32 BF16 in column order, i.e. 16 column pairs.
K3_INLINE __m512i ToBf16Pairs(__m512 lo, __m512 hi) {
  const __m512bh v = _mm512_cvtne2ps_pbh(hi, lo);  // RNE; the second operand fills the low half
  __m512i bits;
  __builtin_memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The 64-byte tile configuration (palette 1): every tile 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// Tile configuration is per thread (XSAVE state), so each pool thread loads it on its first
// panel. Nothing else in the process configures or releases tiles, so once loaded it stays.
void ConfigureTiles() {
  thread_local bool configured = false;
  if (configured) return;
  TileConfig config = {};
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = kTileBytes;
    config.rows[t] = kTileRows;
  }
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
  configured = true;
}

void PackTokens(const AmxGemmArgs& a, const float* x, int64_t t0, int64_t t1) {
  const int64_t cols = a.w->cols;
  for (int64_t t = t0; t < t1; ++t) {
    const float* src = x + t * cols;
    uint16_t* dst = a.xb + t * a.ldx;
    const bool valid = t < a.tokens;
    for (int64_t c = 0; c < a.ldx; c += kStep) {
      const __m512 lo =
          valid ? _mm512_maskz_loadu_ps(Avx512::LaneMask(cols - c), src + c) : _mm512_setzero_ps();
      const __m512 hi = valid ? _mm512_maskz_loadu_ps(Avx512::LaneMask(cols - c - 16), src + c + 16)
                              : _mm512_setzero_ps();
      _mm512_storeu_si512(dst + c, ToBf16Pairs(lo, hi));
    }
  }
}

// Transposes 16 rows of 16 column pairs (t[n] = weight row n) into B tile `tile`.
K3_INLINE void StoreBTile(__m512i (&t)[16], uint32_t* tile) {
  Transpose16x16(t);
#pragma GCC unroll 16
  for (int p = 0; p < kTileRows; ++p) _mm512_store_si512(tile + p * 16, t[p]);
}

// PackPanel for BF16 weights: the stored pairs are already the tile's elements.
void PackPanelBf16(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, uint32_t* bp) {
  const auto* base = static_cast<const uint16_t*>(w.data);
  for (int64_t s = 0; s * kStep < kn; ++s) {
    const int64_t left = kn - s * kStep;
    const __mmask32 m = left >= kStep ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kTileRows; ++n) {
        const int64_t row = r0 + half * kTileRows + n;
        t[n] = row < w.rows ? _mm512_maskz_loadu_epi16(m, base + row * w.cols + k0 + s * kStep)
                            : _mm512_setzero_si512();
      }
      StoreBTile(t, bp + s * kPackedStep + half * 256);
    }
  }
}

// PackPanel for MXFP4: per 32-column block, the 16 E2M1 values times the block's scale as BF16
// (exact: 2 significant bits; the float product's overflow to inf and NaN scales carry over),
// looked up by nibble. Byte i holds columns 2i (low nibble) and 2i + 1, so dword i of the index
// vector is (low nibble, high nibble): the lookup lands the 32 columns in order, as pairs.
void PackPanelMxfp4(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, uint32_t* bp) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  const __m512 lut = _mm512_load_ps(kE2M1);
  const __m512i low = _mm512_set1_epi32(0x0F), high = _mm512_set1_epi32(0xF0);
  for (int64_t s = 0; s * kStep < kn; ++s) {
    const int64_t block = (k0 + s * kStep) / 32;
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kTileRows; ++n) {
        const int64_t row = r0 + half * kTileRows + n;
        if (row >= w.rows) {
          t[n] = _mm512_setzero_si512();
          continue;
        }
        const float scale = kE8M0.value[w.mx_scales[row * (w.cols / 32) + block]];
        const __m512 scaled = _mm512_mul_ps(lut, _mm512_set1_ps(scale));
        const __m512i table = ToBf16Pairs(scaled, scaled);  // lanes 0..15 used
        const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(
            reinterpret_cast<const __m128i*>(base + row * (w.cols / 2) + block * 16)));
        const __m512i index = _mm512_or_si512(_mm512_and_si512(bytes, low),
                                              _mm512_slli_epi32(_mm512_and_si512(bytes, high), 12));
        t[n] = _mm512_permutexvar_epi16(index, table);
      }
      StoreBTile(t, bp + s * kPackedStep + half * 256);
    }
  }
}

// Packs W[r0 .. r0 + 32, k0 .. k0 + kn) into bp: per kStep s, two B tiles (weight rows 0-15 and
// 16-31), each [16 column pairs][16 rows] of uint32. Rows past the matrix and columns past kn
// (up to the next multiple of kStep) are zero. rowbuf: [32][kKc] floats.
void PackPanel(const AmxGemmArgs& a, int64_t r0, int64_t k0, int64_t kn, float* rowbuf,
               uint32_t* bp) {
  const WeightMatrix& w = *a.w;
  if (w.format == WeightFormat::kBF16) return PackPanelBf16(w, r0, k0, kn, bp);
  if (w.format == WeightFormat::kMxfp4) return PackPanelMxfp4(w, r0, k0, kn, bp);
  const int64_t kr = (kn + kStep - 1) / kStep * kStep;
  for (int i = 0; i < kPanelRows; ++i) {
    float* dst = rowbuf + i * kKc;
    int64_t filled = 0;
    if (r0 + i < w.rows) {
      a.dequantize_range(w, r0 + i, k0, k0 + kn, dst);
      filled = kn;
    }
    for (int64_t c = filled; c < kr; ++c) dst[c] = 0.0f;
  }
  for (int64_t s = 0; s < kr / kStep; ++s) {
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kTileRows; ++n) {
        const float* row = rowbuf + (half * kTileRows + n) * kKc + s * kStep;
        t[n] = ToBf16Pairs(_mm512_load_ps(row), _mm512_load_ps(row + 16));
      }
      StoreBTile(t, bp + s * kPackedStep + half * 256);
    }
  }
}

// C (32 tokens x 32 rows; tiles 0-3) over `steps` column steps. c: [32][32] floats, loaded
// first when `accumulate`. xa: the block's first token row at the panel block's first column.
K3_INLINE void Block32(const uint16_t* xa, int64_t ldx_bytes, const uint32_t* bp, int64_t steps,
                       float* c, bool accumulate) {
  constexpr int64_t kLdc = kPanelRows * 4;
  if (accumulate) {
    _tile_loadd(0, c, kLdc);
    _tile_loadd(1, c + 16, kLdc);
    _tile_loadd(2, c + 16 * kPanelRows, kLdc);
    _tile_loadd(3, c + 16 * kPanelRows + 16, kLdc);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  const uint16_t* xb = xa + 16 * (ldx_bytes / 2);
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, xa + s * kStep, ldx_bytes);
    _tile_loadd(6, bp + s * kPackedStep, kTileBytes);
    _tile_loadd(7, bp + s * kPackedStep + 256, kTileBytes);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, xb + s * kStep, ldx_bytes);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, kLdc);
  _tile_stored(1, c + 16, kLdc);
  _tile_stored(2, c + 16 * kPanelRows, kLdc);
  _tile_stored(3, c + 16 * kPanelRows + 16, kLdc);
}

// Block32 for a last block of 16 tokens (tiles 0-1).
K3_INLINE void Block16(const uint16_t* xa, int64_t ldx_bytes, const uint32_t* bp, int64_t steps,
                       float* c, bool accumulate) {
  constexpr int64_t kLdc = kPanelRows * 4;
  if (accumulate) {
    _tile_loadd(0, c, kLdc);
    _tile_loadd(1, c + 16, kLdc);
  } else {
    _tile_zero(0);
    _tile_zero(1);
  }
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, xa + s * kStep, ldx_bytes);
    _tile_loadd(6, bp + s * kPackedStep, kTileBytes);
    _tile_loadd(7, bp + s * kPackedStep + 256, kTileBytes);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
  }
  _tile_stored(0, c, kLdc);
  _tile_stored(1, c + 16, kLdc);
}

int64_t GemmScratch(int64_t tokens) {
  const int64_t padded = (tokens + kTileRows - 1) / kTileRows * kTileRows;
  // rowbuf [32][kKc] floats, packed panel [kKc / 2][32] uint32, C [padded][32] floats.
  return kPanelRows * kKc + kKc / 2 * kPanelRows + padded * kPanelRows;
}

// scratch: see GemmScratch. Every offset is a multiple of 16 floats, so tiles stay 64-byte
// aligned when scratch is.
void GemmPanel(const AmxGemmArgs& a, int64_t r0, float* scratch) {
  ConfigureTiles();
  const WeightMatrix& w = *a.w;
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t padded = (a.tokens + kTileRows - 1) / kTileRows * kTileRows;
  const int64_t ldx_bytes = a.ldx * 2;
  float* rowbuf = scratch;
  auto* bp = reinterpret_cast<uint32_t*>(scratch + kPanelRows * kKc);
  float* cbuf = scratch + kPanelRows * kKc + kKc / 2 * kPanelRows;
  for (int64_t k0 = 0; k0 < cols; k0 += kKc) {
    const int64_t kn = Min(kKc, cols - k0);
    const int64_t steps = (kn + kStep - 1) / kStep;
    PackPanel(a, r0, k0, kn, rowbuf, bp);
    MemoryBarrier();
    for (int64_t t = 0; t < padded; t += 2 * kTileRows) {
      const uint16_t* xa = a.xb + t * a.ldx + k0;
      if (padded - t >= 2 * kTileRows) {
        Block32(xa, ldx_bytes, bp, steps, cbuf + t * kPanelRows, k0 > 0);
      } else {
        Block16(xa, ldx_bytes, bp, steps, cbuf + t * kPanelRows, k0 > 0);
      }
    }
  }
  const int64_t nr = Min(kPanelRows, rows - r0);
  const __mmask16 m0 = Avx512::LaneMask(nr), m1 = Avx512::LaneMask(nr - 16);
  for (int64_t t = 0; t < a.tokens; ++t) {
    const float* c = cbuf + t * kPanelRows;
    float* y = a.y + t * rows + r0;
    _mm512_mask_storeu_ps(y, m0, _mm512_load_ps(c));
    _mm512_mask_storeu_ps(y + 16, m1, _mm512_load_ps(c + 16));
  }
}

constexpr AmxKernels kKernels = {
    .panel_rows = kPanelRows,
    .gemm_scratch = GemmScratch,
    .pack_tokens = PackTokens,
    .gemm_panel = GemmPanel,
};

}  // namespace

const AmxKernels& AmxBf16Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
