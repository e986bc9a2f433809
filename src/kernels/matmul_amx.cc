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
// column blocks (exact), and is copied to y at the end of the panel. Packing (matmul_bf16_pack.h,
// shared with the vdpbf16ps kernels) moves BF16 weights as they are, looks MXFP4 up straight into
// BF16, and has the AVX-512 code dequantise the other formats to float first; it costs about as
// much as the tile work at 16 tokens, little at 256.
#include <cstdint>

#include "kernels/matmul_bf16_pack.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

constexpr int kPanelRows = kBf16PanelRows;        // two C tiles of 16 weight rows
constexpr int kTileRows = kBf16HalfRows;          // tokens per A/C tile, weight rows per C tile
constexpr int kStep = kBf16Step;                  // BF16 columns per A row (64 bytes)
constexpr int64_t kKc = kGemmKc;                  // columns per packed panel block
constexpr int64_t kTileBytes = 64;                // bytes per tile row
constexpr int64_t kPackedStep = kBf16PackedStep;  // uint32 pairs per kStep (2 B tiles)

// GCC's AMX intrinsics are asm statements that do not tell the compiler they read memory (its
// ldtilecfg names only 8 bytes of the config); this makes pending stores visible to them.
K3_INLINE void MemoryBarrier() { asm volatile("" ::: "memory"); }

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
    PackBf16Panel(w, a.dequantize_range, r0, k0, kn, rowbuf, bp);
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

// Four accumulating tiles over two A and two B tiles, as Block32 issues them but without loads
// (zeros: the tiles' timing does not depend on the values). Each tdpbf16ps is 16 x 16 x 32 BF16
// products, 16384 flops.
double DotLoop(int64_t iterations) {
  ConfigureTiles();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  for (int64_t n = 0; n < iterations; ++n) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  return static_cast<double>(iterations) * 4 * 16 * 16 * 32 * 2;
}

constexpr AmxKernels kKernels = {
    .panel_rows = kPanelRows,
    .gemm_scratch = GemmScratch,
    .pack_tokens = PackTokens,
    .gemm_panel = GemmPanel,
    .dot_loop = DotLoop,
};

}  // namespace

const AmxKernels& AmxBf16Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
