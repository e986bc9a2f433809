// BF16 pair packing shared by the GemmPrecision::kBf16 kernels: AMX tiles (matmul_amx.cc) and
// AVX512-BF16 vdpbf16ps (matmul_avx512_bf16.cc). Both multiply pairs along the reduction dim:
//   tdpbf16ps / vdpbf16ps: C[n] (fp32) += A[2p] * B[p][2n] + A[2p + 1] * B[p][2n + 1],
// so a packed panel holds, per pair p of columns (2p, 2p + 1) and weight row n, the 32-bit pair
// W[n][2p, 2p + 1] as BF16 (nearest even). Included only by translation units compiled with
// AVX512-BF16; follows the ODR rule of matmul_simd_base.h.
//
// Panel layout (what both kernels read): a panel is kBf16PanelRows = 32 weight rows, packed
// kGemmKc columns at a time. Per step s of kBf16Step = 32 columns (16 pairs), 512 uint32 at
// bp + s * kBf16PackedStep: rows 0-15 as [16 pairs][16 rows] (one AMX B tile; for vdpbf16ps,
// one zmm of 16 rows per pair), then rows 16-31 likewise. Rows past the matrix and columns past
// the block (up to the next multiple of 32) are zero.
//
// Cost per 32 x 32 block: BF16 weights are moved as they are (16 masked loads and a 16 x 16
// transpose of 32-bit pairs); MXFP4 is looked up straight into BF16 (exact: 2 significant bits);
// every other format is dequantised to float32 by the AVX-512 code first and rounded to BF16.
#pragma once

#if !defined(__AVX512BF16__)
#error "matmul_bf16_pack.h needs the AVX512-BF16 flags of its translation unit"
#endif

#include <cstdint>

#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

constexpr int kBf16PanelRows = 32;            // weight rows per packed panel
constexpr int kBf16HalfRows = 16;             // rows per half (one zmm of fp32 outputs)
constexpr int kBf16Step = 32;                 // columns per packed step (16 pairs)
constexpr int64_t kBf16PackedStep = 2 * 256;  // uint32 pairs per step (two halves)

// Exact float32 conversion of W[row, c0..c1) (the AVX-512 one).
using DequantizeFn = void (*)(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                              float* out);

// 32 floats (lo = columns 0..15, hi = 16..31) as 32 BF16 in column order, i.e. 16 column pairs.
// Nearest even; float32 subnormal inputs become zero (vcvtne2ps2bf16 treats them as zero).
K3_INLINE __m512i ToBf16Pairs(__m512 lo, __m512 hi) {
  const __m512bh v = _mm512_cvtne2ps_pbh(hi, lo);  // the second operand fills the low half
  __m512i bits;
  __builtin_memcpy(&bits, &v, sizeof bits);
  return bits;
}

// Transposes 16 rows of 16 column pairs (t[n] = weight row n) into [16 pairs][16 rows] at half.
K3_INLINE void StorePairHalf(__m512i (&t)[16], uint32_t* half) {
  Transpose16x16(t);
#pragma GCC unroll 16
  for (int p = 0; p < kBf16HalfRows; ++p) _mm512_store_si512(half + p * 16, t[p]);
}

// BF16 weights: the stored pairs are already the packed elements.
inline void PackBf16PanelBf16(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn,
                              uint32_t* bp) {
  const auto* base = static_cast<const uint16_t*>(w.data);
  for (int64_t s = 0; s * kBf16Step < kn; ++s) {
    const int64_t left = kn - s * kBf16Step;
    const __mmask32 m = left >= kBf16Step ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kBf16HalfRows; ++n) {
        const int64_t row = r0 + half * kBf16HalfRows + n;
        t[n] = row < w.rows ? _mm512_maskz_loadu_epi16(m, base + row * w.cols + k0 + s * kBf16Step)
                            : _mm512_setzero_si512();
      }
      StorePairHalf(t, bp + s * kBf16PackedStep + half * 256);
    }
  }
}

// MXFP4: per 32-column block, the 16 E2M1 values times the block's scale as BF16 (exact: 2
// significant bits; the float product's overflow to inf and NaN scales carry over), looked up by
// nibble. Byte i holds columns 2i (low nibble) and 2i + 1, so dword i of the index vector is
// (low nibble, high nibble): the lookup lands the 32 columns in order, as pairs.
inline void PackBf16PanelMxfp4(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn,
                               uint32_t* bp) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  const __m512 lut = _mm512_load_ps(kE2M1);
  const __m512i low = _mm512_set1_epi32(0x0F), high = _mm512_set1_epi32(0xF0);
  for (int64_t s = 0; s * kBf16Step < kn; ++s) {
    const int64_t block = (k0 + s * kBf16Step) / 32;
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kBf16HalfRows; ++n) {
        const int64_t row = r0 + half * kBf16HalfRows + n;
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
      StorePairHalf(t, bp + s * kBf16PackedStep + half * 256);
    }
  }
}

// Packs W[r0 .. r0 + 32, k0 .. k0 + kn) (kn <= kGemmKc) into bp (layout above). rowbuf:
// [32][kGemmKc] floats, 64-byte aligned, used by the formats dequantised through float32; bp
// 64-byte aligned.
inline void PackBf16Panel(const WeightMatrix& w, DequantizeFn dequantize, int64_t r0, int64_t k0,
                          int64_t kn, float* rowbuf, uint32_t* bp) {
  if (w.format == WeightFormat::kBF16) return PackBf16PanelBf16(w, r0, k0, kn, bp);
  if (w.format == WeightFormat::kMxfp4) return PackBf16PanelMxfp4(w, r0, k0, kn, bp);
  const int64_t kr = (kn + kBf16Step - 1) / kBf16Step * kBf16Step;
  for (int i = 0; i < kBf16PanelRows; ++i) {
    float* dst = rowbuf + i * kGemmKc;
    int64_t filled = 0;
    if (r0 + i < w.rows) {
      dequantize(w, r0 + i, k0, k0 + kn, dst);
      filled = kn;
    }
    for (int64_t c = filled; c < kr; ++c) dst[c] = 0.0f;
  }
  for (int64_t s = 0; s < kr / kBf16Step; ++s) {
    for (int half = 0; half < 2; ++half) {
      __m512i t[16];
#pragma GCC unroll 16
      for (int n = 0; n < kBf16HalfRows; ++n) {
        const float* row = rowbuf + (half * kBf16HalfRows + n) * kGemmKc + s * kBf16Step;
        t[n] = ToBf16Pairs(_mm512_load_ps(row), _mm512_load_ps(row + 16));
      }
      StorePairHalf(t, bp + s * kBf16PackedStep + half * 256);
    }
  }
}

}  // namespace
}  // namespace k3::kernels::detail
