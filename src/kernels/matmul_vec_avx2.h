// Vector traits for AVX2 + FMA + F16C (8 floats per vector, 16 registers): what the shared
// MatMul drivers (matmul_simd.h) need from an ISA. Included only by matmul_avx2.cc; follows the
// ODR rule of matmul_simd_base.h (anonymous namespace, no standard-library templates).
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// Copies n (< 32) bytes into a zeroed 32-byte block, so partial vectors are read in bounds (AVX2
// has masked loads of 32-bit lanes only).
struct alignas(32) TailBytes {
  uint8_t bytes[32];
  TailBytes(const uint8_t* p, int64_t n) {
    for (int i = 0; i < 32; ++i) bytes[i] = i < n ? p[i] : 0;
  }
};

// E2M1 magnitudes by the code's low 3 bits (the sign is bit 3).
alignas(32) constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

struct Avx2 {
  using Vec = __m256;
  using Mask = __m256i;      // all-ones lanes are read and written
  using Sum4 = __m128;       // the four row sums of a decode tile column
  using SumMask = __m128i;   // which of them are stored
  using Pairs = __m256i;     // 8 pairs of BF16 weights
  using E2M1Scale = __m256;  // kE2M1Magnitudes times a block's scale

  static constexpr int kLanes = 8;
  // GEMM: two vectors of weight rows per panel; a 6-token tile keeps 12 accumulators, 2 panel
  // vectors and a broadcast in the 16 registers.
  static constexpr int kPanelRows = 16;
  static constexpr int kMaxTileTokens = 6;
  // Decode: 4 rows x 3 tokens = 12 accumulators.
  static constexpr int kMaxDecodeTokens = 3;
  static constexpr int kMaxDecodeTokensFp4 = 3;
  // E4M3 weights are widened through F16 (Weights), never looked up 64 at a time
  // (matmul_simd_decode.h, DecodeFp8Chunk: that needs AVX512-VBMI's two-register byte permute).
  static constexpr int kFp8LutMaxTokens = 0;
  // Decode order: one row's weights at a time, applied to every token (all rows' weights at once
  // would not fit next to the accumulators).
  static constexpr bool kWeightsFirst = false;
  // BF16 pairs are split into even and odd weights in one pass (see Avx512).
  static constexpr bool kBf16TwoPasses = false;
  // Partial weight vectors need a byte copy (TailBytes), so full ones take the plain load.
  static constexpr bool kMaskedLoads = false;
  // An MXFP4 block (32 columns) is 2 groups of (8 even, 8 odd) weights.
  static constexpr int kE2M1Groups = 2;
  // No two-group 1-token 4-bit tile: its eight rows would not fit in 16 registers.
  static constexpr bool kFourBitPairedRows = false;
  static constexpr int kFmaChains = 12;  // independent FMA chains of the peak-rate loop

  K3_INLINE static Vec Zero() { return _mm256_setzero_ps(); }
  K3_INLINE static Vec Set1(float v) { return _mm256_set1_ps(v); }
  K3_INLINE static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  K3_INLINE static Vec LoadAligned(const float* p) { return _mm256_load_ps(p); }
  K3_INLINE static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  K3_INLINE static void StoreAligned(float* p, Vec v) { _mm256_store_ps(p, v); }
  K3_INLINE static Vec Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  K3_INLINE static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  K3_INLINE static Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  K3_INLINE static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }

  // All-ones in the first n lanes (none for n <= 0, all for n >= 8).
  K3_INLINE static Mask LaneMask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  K3_INLINE static Vec MaskedLoad(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  K3_INLINE static void MaskedStore(float* p, Mask m, Vec v) { _mm256_maskstore_ps(p, m, v); }

  // The low 8 E4M3 bytes -> their values / 256, exactly (see Avx512::E4M3Over256).
  K3_INLINE static Vec E4M3Over256(__m128i bytes) {
    __m128i h = _mm_slli_epi16(_mm_cvtepi8_epi16(bytes), 7);
    return _mm256_cvtph_ps(_mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0xBF80))));
  }

  // 8 weights from element pointer p (already offset to the column). kFp8Block: the E4M3 values /
  // 256, unscaled, and NaN codes as finite values (the decode driver patches them).
  template <WeightFormat F>
  K3_INLINE static Vec WeightsAt(const uint8_t* p) {
    if constexpr (F == WeightFormat::kF32) {
      return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    } else if constexpr (F == WeightFormat::kBF16) {
      __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else if constexpr (F == WeightFormat::kF16) {
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    } else {
      static_assert(F == WeightFormat::kFp8Block);
      __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return E4M3Over256(b);  // unscaled: the decode driver folds scale * 256 into x
    }
  }

  // 8 weights of `row` from column c for the decode kernels (see WeightsAt); kPartial reads only
  // n < 8 of them and zero-fills the rest.
  template <WeightFormat F, bool kPartial>
  K3_INLINE static Vec Weights(const void* row, int64_t c, int64_t n) {
    const uint8_t* p = static_cast<const uint8_t*>(row) + c * ElementBytes(F);
    if constexpr (kPartial) {
      TailBytes tail(p, n * ElementBytes(F));
      return WeightsAt<F>(tail.bytes);
    }
    return WeightsAt<F>(p);
  }

  // 8 weights of `row` from column c (n of them when kPartial; the rest 0) exactly as the scalar
  // definitions give them, E4M3 NaN codes included. kFp8Block: `scale` is the tile's scale.
  template <WeightFormat F, bool kPartial>
  K3_INLINE static Vec ExactWeights(const void* row, int64_t c, int64_t n, Vec scale) {
    if constexpr (F == WeightFormat::kFp8Block) {
      const __m256i k7f = _mm256_set1_epi32(0x7F);
      const uint8_t* p = static_cast<const uint8_t*>(row) + c;
      __m128i b;
      if constexpr (kPartial) {
        TailBytes tail(p, n);
        b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(tail.bytes));
      } else {
        b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      }
      // Exact: times 256 restores the E4M3 value; times the scale rounds once.
      __m256 v = _mm256_mul_ps(_mm256_mul_ps(E4M3Over256(b), _mm256_set1_ps(256.0f)), scale);
      __m256i code = _mm256_and_si256(_mm256_cvtepu8_epi32(b), k7f);
      return _mm256_blendv_ps(v, _mm256_set1_ps(__builtin_nanf("")),
                              _mm256_castsi256_ps(_mm256_cmpeq_epi32(code, k7f)));
    } else {
      return Weights<F, kPartial>(row, c, n);
    }
  }

  // BF16 pairs: the even weight is the low half of each 32-bit pair, the odd one the high half.
  K3_INLINE static Pairs LoadBf16Pairs(const uint16_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  K3_INLINE static Vec Bf16Even(Pairs v) { return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)); }
  K3_INLINE static Vec Bf16Odd(Pairs v) {
    const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    return _mm256_castsi256_ps(_mm256_and_si256(v, high));
  }

  // MXFP4: the magnitudes times the block's scale, then per group g (bytes 8g .. 8g + 7 of the
  // 16-byte block) w[0] = the 8 even columns' values and w[1] = the 8 odd ones'.
  K3_INLINE static E2M1Scale E2M1ScaleOf(float scale) {
    return _mm256_mul_ps(_mm256_load_ps(kE2M1Magnitudes), _mm256_set1_ps(scale));
  }
  // The E2M1 values in the low (kShift 0) or high (kShift 4) nibble of each 32-bit lane of d.
  template <int kShift>
  K3_INLINE static Vec Nibbles(__m256i d, E2M1Scale magnitudes) {
    __m256i index = kShift ? _mm256_srli_epi32(d, kShift) : d;  // permute uses bits 2..0
    __m256 mag = _mm256_permutevar8x32_ps(magnitudes, index);
    __m256i sign = _mm256_and_si256(_mm256_slli_epi32(d, 28 - kShift),
                                    _mm256_set1_epi32(static_cast<int>(0x80000000u)));
    return _mm256_xor_ps(mag, _mm256_castsi256_ps(sign));
  }
  K3_INLINE static void DecodeE2M1(const uint8_t* block, E2M1Scale magnitudes, int g, Vec* w) {
    __m256i d =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 8 * g)));
    w[0] = Nibbles<0>(d, magnitudes);
    w[1] = Nibbles<4>(d, magnitudes);
  }
  // INT4: E2M1Scale holds the block's scale in every lane; per group g, (u - 8) * scale of the low
  // nibbles (even columns) and the high ones (odd columns).
  K3_INLINE static E2M1Scale Int4ScaleOf(float scale) { return _mm256_set1_ps(scale); }
  K3_INLINE static void DecodeInt4(const uint8_t* block, E2M1Scale scale, int g, Vec* w) {
    const __m256i d =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 8 * g)));
    const __m256i low = _mm256_set1_epi32(0xF), eight = _mm256_set1_epi32(8);
    const __m256i even = _mm256_sub_epi32(_mm256_and_si256(d, low), eight);
    const __m256i odd = _mm256_sub_epi32(_mm256_srli_epi32(d, 4), eight);
    w[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(even), scale);
    w[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(odd), scale);
  }
  // out[2j] = even[j], out[2j + 1] = odd[j] for j < 8.
  K3_INLINE static void StoreInterleaved(float* out, Vec even, Vec odd) {
    __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
    _mm256_storeu_ps(out, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }

  // Whether any of the n E4M3 bytes is a NaN code (0x7F or 0xFF).
  [[gnu::noinline]] static bool HasE4M3Nan(const uint8_t* p, int64_t n) {
    const __m256i k7f = _mm256_set1_epi8(0x7F);
    int any = 0;
    int64_t c = 0;
    for (; c + 32 <= n; c += 32) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + c));
      any |= _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, k7f), k7f));
    }
    for (; c < n; ++c) any |= (p[c] & 0x7F) == 0x7F;
    return any != 0;
  }

  // [sum(a), sum(b), sum(c), sum(d)].
  K3_INLINE static Sum4 HorizontalSum4(Vec a, Vec b, Vec c, Vec d) {
    __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
  }
  K3_INLINE static SumMask RowMask(int nr) { return _mm256_castsi256_si128(LaneMask(nr)); }
  K3_INLINE static void StoreSum4(float* y, SumMask m, Sum4 s) { _mm_maskstore_ps(y, m, s); }

  // In-register transpose: r[i][j] -> r[j][i].
  K3_INLINE static void Transpose(Vec (&r)[8]) {
    __m256 u[8], v[8];
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      u[2 * p] = _mm256_unpacklo_ps(r[2 * p], r[2 * p + 1]);
      u[2 * p + 1] = _mm256_unpackhi_ps(r[2 * p], r[2 * p + 1]);
    }
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) {
      __m256d a = _mm256_castps_pd(u[4 * q]), b = _mm256_castps_pd(u[4 * q + 1]);
      __m256d c = _mm256_castps_pd(u[4 * q + 2]), d = _mm256_castps_pd(u[4 * q + 3]);
      v[4 * q] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, c));
      v[4 * q + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, c));
      v[4 * q + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(b, d));
      v[4 * q + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(b, d));
    }
    // v[4q + m] lane L holds A[4q..4q+3][4L + m].
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      r[m] = _mm256_permute2f128_ps(v[m], v[4 + m], 0x20);
      r[4 + m] = _mm256_permute2f128_ps(v[m], v[4 + m], 0x31);
    }
  }

  K3_INLINE static float ReduceAdd(Vec v) {
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    return _mm_cvtss_f32(_mm_hadd_ps(_mm_hadd_ps(s4, s4), s4));
  }
};

}  // namespace
}  // namespace k3::kernels::detail
