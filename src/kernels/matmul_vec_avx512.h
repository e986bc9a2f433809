// Vector traits for AVX-512 F + BW + VL (16 floats per vector, 32 registers, mask registers):
// what the shared MatMul drivers (matmul_simd.h) need from an ISA, plus the 16 x 16 transpose and
// E2M1 table the AMX kernels (matmul_amx.cc) share. Included only by matmul_avx512.cc and
// matmul_amx.cc; follows the ODR rule of matmul_simd_base.h.
#pragma once

#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__)
#error "matmul_vec_avx512.h needs the AVX-512 flags of its translation unit"
#endif

#include <cstdint>
#include <limits>

#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// E2M1 code -> value (OCP MX: sign bit 3, then 2 exponent bits and 1 mantissa bit).
alignas(64) constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
// kE2M1 times every E8M0 scale: row e is what E2M1ScaleOf(kE8M0.value[e]) computes (the same
// float products, rounded once, here at compile time), 256 x 16 floats = 16 KiB. A decode tile of
// 4 or more tokens loads its block's row (E2M1TableOf) instead of multiplying: that frees an
// arithmetic slot per block and row; only the rows of the scales a matrix uses are read.
// Measured: kernels_benchmark Decode/MXFP4 at 8 and 32 tokens, see ScaleOf in
// matmul_simd_base.h.
struct E2M1ScaledTables {
  alignas(64) float row[256][16];
};
constexpr E2M1ScaledTables MakeE2M1ScaledTables() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  E2M1ScaledTables t{};
  // Overflow and NaN are not constant expressions (GCC and Clang refuse arithmetic that yields
  // them), so they are written as the float multiply yields them: the NaN scale's row is its NaN,
  // and of the rest the double product is exact and any finite one fits a float exactly.
  for (int k = 0; k < 16; ++k) t.row[255][k] = kE8M0.value[255];
  for (int e = 0; e < 255; ++e) {
    for (int k = 0; k < 16; ++k) {
      const double product = double{kE2M1[k]} * kE8M0.value[e];
      const bool overflows = product > std::numeric_limits<float>::max() ||
                             product < -std::numeric_limits<float>::max();
      t.row[e][k] = overflows ? (product < 0 ? -kInf : kInf) : static_cast<float>(product);
    }
  }
  return t;
}
alignas(64) constexpr E2M1ScaledTables kE2M1Scaled = MakeE2M1ScaledTables();

// compressed-tensors INT4 nibble u -> u - 8.
alignas(64) constexpr float kInt4Values[16] = {-8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f,
                                               -2.0f, -1.0f, 0.0f,  1.0f,  2.0f,  3.0f,
                                               4.0f,  5.0f,  6.0f,  7.0f};

// The 32-bit element moves of Transpose16x16, for float and integer vectors alike (pure data
// moves: the float forms keep NaN payloads), so each caller stays in its own domain.
K3_INLINE __m512 Unpack32Lo(__m512 a, __m512 b) { return _mm512_unpacklo_ps(a, b); }
K3_INLINE __m512 Unpack32Hi(__m512 a, __m512 b) { return _mm512_unpackhi_ps(a, b); }
K3_INLINE __m512i Unpack32Lo(__m512i a, __m512i b) { return _mm512_unpacklo_epi32(a, b); }
K3_INLINE __m512i Unpack32Hi(__m512i a, __m512i b) { return _mm512_unpackhi_epi32(a, b); }
K3_INLINE __m512 Unpack64Lo(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
K3_INLINE __m512 Unpack64Hi(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
K3_INLINE __m512i Unpack64Lo(__m512i a, __m512i b) { return _mm512_unpacklo_epi64(a, b); }
K3_INLINE __m512i Unpack64Hi(__m512i a, __m512i b) { return _mm512_unpackhi_epi64(a, b); }
template <int kImm>
K3_INLINE __m512 Shuffle128(__m512 a, __m512 b) {
  return _mm512_shuffle_f32x4(a, b, kImm);
}
template <int kImm>
K3_INLINE __m512i Shuffle128(__m512i a, __m512i b) {
  return _mm512_shuffle_i32x4(a, b, kImm);
}

// In-register transpose of 16 x 16 32-bit elements: r[i][j] -> r[j][i]. T is __m512 (the GEMM
// packing) or __m512i (the AMX B tiles of BF16 pairs).
template <typename T>
K3_INLINE void Transpose16x16(T (&r)[16]) {
  T u[16], v[16];
#pragma GCC unroll 8
  for (int p = 0; p < 8; ++p) {
    u[2 * p] = Unpack32Lo(r[2 * p], r[2 * p + 1]);
    u[2 * p + 1] = Unpack32Hi(r[2 * p], r[2 * p + 1]);
  }
  // u[2p] lane L = (r[2p][4L], r[2p+1][4L], r[2p][4L+1], r[2p+1][4L+1]), u[2p+1] the rest.
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    v[4 * q] = Unpack64Lo(u[4 * q], u[4 * q + 2]);
    v[4 * q + 1] = Unpack64Hi(u[4 * q], u[4 * q + 2]);
    v[4 * q + 2] = Unpack64Lo(u[4 * q + 1], u[4 * q + 3]);
    v[4 * q + 3] = Unpack64Hi(u[4 * q + 1], u[4 * q + 3]);
  }
  // v[4q + m] lane L holds r[4q..4q+3][4L + m]; transpose the 4x4 grid of 128-bit lanes.
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const T s0 = Shuffle128<0x88>(v[m], v[4 + m]);
    const T s1 = Shuffle128<0xDD>(v[m], v[4 + m]);
    const T s2 = Shuffle128<0x88>(v[8 + m], v[12 + m]);
    const T s3 = Shuffle128<0xDD>(v[8 + m], v[12 + m]);
    r[m] = Shuffle128<0x88>(s0, s2);
    r[4 + m] = Shuffle128<0x88>(s1, s3);
    r[8 + m] = Shuffle128<0xDD>(s0, s2);
    r[12 + m] = Shuffle128<0xDD>(s1, s3);
  }
}

struct Avx512 {
  using Vec = __m512;
  using Mask = __mmask16;    // lanes read and written
  using Sum4 = __m128;       // the four row sums of a decode tile column
  using SumMask = __mmask8;  // which of them are stored
  using Pairs = __m512i;     // 16 pairs of BF16 weights
  using E2M1Scale = __m512;  // kE2M1 times a block's scale

  static constexpr int kLanes = 16;
  // GEMM: two vectors of weight rows per panel; a 14-token tile keeps 28 accumulators, 2 panel
  // vectors and a broadcast in the 32 registers.
  static constexpr int kPanelRows = 32;
  static constexpr int kMaxTileTokens = 14;
  // Decode: 4 rows x 6 tokens = 24 accumulators. MXFP4 / INT4 too: their two weight vectors per
  // row still fit beside them (kernels_benchmark Decode MXFP4 / INT4 at 12-32 tokens, tiles of 6
  // against 4: 1.01-1.13x, two runs).
  static constexpr int kMaxDecodeTokens = 6;
  static constexpr int kMaxDecodeTokensFp4 = 6;
  // E4M3 weights are widened through F16, 16 at a time (Weights); Avx512Vbmi
  // (matmul_avx512_vbmi.cc) looks them up 64 at a time in small tiles (DecodeFp8Chunk).
  static constexpr int kFp8LutMaxTokens = 0;
  // Decode order: every row's weights first, then each token's activations are loaded once for
  // all rows.
  static constexpr bool kWeightsFirst = true;
  // BF16 pairs are split in two passes (even weights, then odd ones, re-reading the 64 bytes from
  // L1), so only 4 weight vectors are live next to the 24 accumulators.
  static constexpr bool kBf16TwoPasses = true;
  // Masked loads cost what plain ones do: partial and full vectors take the same path.
  static constexpr bool kMaskedLoads = true;
  // An MXFP4 block (32 columns) is 1 group of (16 even, 16 odd) weights.
  static constexpr int kE2M1Groups = 1;
  // At one token, MXFP4 / INT4 rows go two row groups at a time (DecodeOneTokenFourBitPair).
  static constexpr bool kFourBitPairedRows = true;
  static constexpr int kFmaChains = 16;  // independent FMA chains of the peak-rate loop

  K3_INLINE static Vec Zero() { return _mm512_setzero_ps(); }
  K3_INLINE static Vec Set1(float v) { return _mm512_set1_ps(v); }
  K3_INLINE static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  K3_INLINE static Vec LoadAligned(const float* p) { return _mm512_load_ps(p); }
  K3_INLINE static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  K3_INLINE static void StoreAligned(float* p, Vec v) { _mm512_store_ps(p, v); }
  K3_INLINE static Vec Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  K3_INLINE static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  K3_INLINE static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  K3_INLINE static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }

  // The first n lanes (none for n <= 0, all for n >= 16).
  K3_INLINE static Mask LaneMask(int64_t n) {
    return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (n > 0 ? n : 0)) - 1);
  }
  K3_INLINE static Vec MaskedLoad(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  K3_INLINE static void MaskedStore(float* p, Mask m, Vec v) { _mm512_mask_storeu_ps(p, m, v); }

  // E4M3 bytes -> their values / 256, exactly. E4M3 with a zero bit put above its exponent is an
  // F16 worth 2^-8 times as much (subnormals included), and widening F16 never yields a float
  // subnormal (a microcode assist in the multiplies that follow). NaN codes come out as 480 / 256.
  K3_INLINE static Vec E4M3Over256(__m128i bytes) {
    __m256i h = _mm256_slli_epi16(_mm256_cvtepi8_epi16(bytes), 7);  // the sign lands in bits 15, 14
    h = _mm256_and_si256(h, _mm256_set1_epi16(static_cast<short>(0xBF80)));
    return _mm512_cvtph_ps(h);
  }

  // 16 weights of `row` from column c for the decode kernels; kPartial reads only the first n
  // (masked lanes read nothing and yield 0). kFp8Block: the E4M3 values / 256, unscaled (the
  // decode driver folds each tile's scale * 256 into the activations), NaN codes as finite values
  // (the driver patches them).
  template <WeightFormat F, bool kPartial>
  K3_INLINE static Vec Weights(const void* row, int64_t c, int64_t n) {
    const Mask m = kPartial ? LaneMask(n) : Mask(0xFFFF);
    if constexpr (F == WeightFormat::kF32) {
      const float* p = static_cast<const float*>(row) + c;
      return kPartial ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
    } else if constexpr (F == WeightFormat::kBF16 || F == WeightFormat::kF16) {
      const uint16_t* p = static_cast<const uint16_t*>(row) + c;
      __m256i h = kPartial ? _mm256_maskz_loadu_epi16(m, p)
                           : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      if constexpr (F == WeightFormat::kF16) return _mm512_cvtph_ps(h);
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      static_assert(F == WeightFormat::kFp8Block);
      const uint8_t* p = static_cast<const uint8_t*>(row) + c;
      __m128i b = kPartial ? _mm_maskz_loadu_epi8(m, p)
                           : _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      return E4M3Over256(b);
    }
  }

  // 16 weights of `row` from column c exactly as the scalar definitions give them (E4M3 NaN codes
  // included); see Weights for kPartial. kFp8Block: `scale` is the tile's scale.
  template <WeightFormat F, bool kPartial>
  K3_INLINE static Vec ExactWeights(const void* row, int64_t c, int64_t n, Vec scale) {
    if constexpr (F == WeightFormat::kFp8Block) {
      const __m512i k7f = _mm512_set1_epi32(0x7F);
      const uint8_t* p = static_cast<const uint8_t*>(row) + c;
      __m128i b = kPartial ? _mm_maskz_loadu_epi8(LaneMask(n), p)
                           : _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Exact: times 256 restores the E4M3 value; times the scale rounds once.
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(E4M3Over256(b), _mm512_set1_ps(256.0f)), scale);
      __m512i code = _mm512_and_si512(_mm512_cvtepu8_epi32(b), k7f);
      return _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(code, k7f),
                                _mm512_set1_ps(__builtin_nanf("")));
    } else {
      return Weights<F, kPartial>(row, c, n);
    }
  }

  // BF16 pairs: the odd weight is the high half of each 32-bit pair (a mask), the even one the low
  // half moved up by a byte shuffle, not a shift (shifts and FMAs share one port on many AVX-512
  // cores).
  K3_INLINE static Pairs LoadBf16Pairs(const uint16_t* p) { return _mm512_loadu_si512(p); }
  K3_INLINE static Vec Bf16Even(Pairs v) {
    const __m512i low_to_high = _mm512_set4_epi32(0x0D0C8080, 0x09088080, 0x05048080, 0x01008080);
    return _mm512_castsi512_ps(_mm512_shuffle_epi8(v, low_to_high));
  }
  K3_INLINE static Vec Bf16Odd(Pairs v) {
    const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
    return _mm512_castsi512_ps(_mm512_and_si512(v, high));
  }

  // MXFP4: the 16-entry table times the block's scale, looked up by nibble: w[0] = the 16 even
  // columns' values, w[1] = the 16 odd ones' (byte i holds columns 2i and 2i + 1). g is always 0.
  K3_INLINE static E2M1Scale E2M1ScaleOf(float scale) {
    return _mm512_mul_ps(_mm512_load_ps(kE2M1), _mm512_set1_ps(scale));
  }
  // kE2M1Scaled's row for an E8M0 byte: the same table E2M1ScaleOf makes from its float.
  static constexpr bool kE2M1TableLoads = true;
  K3_INLINE static E2M1Scale E2M1TableOf(uint8_t e8m0) {
    return _mm512_load_ps(kE2M1Scaled.row[e8m0]);
  }
  K3_INLINE static void DecodeE2M1(const uint8_t* block, E2M1Scale scaled, int g, Vec* w) {
    __m512i v =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * g)));
    w[0] = _mm512_permutexvar_ps(v, scaled);  // uses the index's low 4 bits
    w[1] = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), scaled);
  }
  // INT4: the same lookup over the values u - 8 (-8 .. 7) times the block's scale.
  K3_INLINE static E2M1Scale Int4ScaleOf(float scale) {
    return _mm512_mul_ps(_mm512_load_ps(kInt4Values), _mm512_set1_ps(scale));
  }
  K3_INLINE static void DecodeInt4(const uint8_t* block, E2M1Scale scaled, int g, Vec* w) {
    DecodeE2M1(block, scaled, g, w);
  }
  // The float scales of n <= 16 consecutive blocks: E8M0 bytes as kE8M0 decodes them (0 is
  // 2^-127, 0xFF NaN) and BF16 bits widened; both exact.
  K3_INLINE static void E8M0Scales(const uint8_t* e8m0, int n, float* out) {
    const __m512i e = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(LaneMask(n), e8m0));
    __m512i bits = _mm512_slli_epi32(e, 23);
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()),
                                 _mm512_set1_epi32(0x00400000));
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(0xFF)),
                                 _mm512_set1_epi32(0x7FC00000));
    _mm512_mask_storeu_ps(out, LaneMask(n), _mm512_castsi512_ps(bits));
  }
  K3_INLINE static void Bf16Scales(const uint16_t* bf16, int n, float* out) {
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(LaneMask(n), bf16));
    _mm512_mask_storeu_ps(out, LaneMask(n), _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
  }
  // out[2j] = even[j], out[2j + 1] = odd[j] for j < 16.
  K3_INLINE static void StoreInterleaved(float* out, Vec even, Vec odd) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi =
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    _mm512_storeu_ps(out, _mm512_permutex2var_ps(even, lo, odd));
    _mm512_storeu_ps(out + 16, _mm512_permutex2var_ps(even, hi, odd));
  }

  // Whether any of the n E4M3 bytes is a NaN code (0x7F or 0xFF).
  [[gnu::noinline]] static bool HasE4M3Nan(const uint8_t* p, int64_t n) {
    const __m512i k7f = _mm512_set1_epi8(0x7F);
    __mmask64 any = 0;
    int64_t c = 0;
    for (; c + 64 <= n; c += 64) {
      __m512i v = _mm512_loadu_si512(p + c);
      any |= _mm512_cmpeq_epi8_mask(_mm512_and_si512(v, k7f), k7f);
    }
    if (c < n) {
      __mmask64 m = (uint64_t{1} << (n - c)) - 1;
      __m512i v = _mm512_maskz_loadu_epi8(m, p + c);
      any |= _mm512_mask_cmpeq_epi8_mask(m, _mm512_and_si512(v, k7f), k7f);
    }
    return any != 0;
  }

  // [sum(a), sum(b), sum(c), sum(d)].
  K3_INLINE static Sum4 HorizontalSum4(Vec a, Vec b, Vec c, Vec d) {
    auto half = [](__m512 v) {
      __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
      return _mm256_add_ps(_mm512_castps512_ps256(v), hi);
    };
    __m256 ab = _mm256_hadd_ps(half(a), half(b));
    __m256 cd = _mm256_hadd_ps(half(c), half(d));
    __m256 abcd = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
  }
  K3_INLINE static SumMask RowMask(int nr) { return static_cast<__mmask8>((1u << nr) - 1); }
  K3_INLINE static void StoreSum4(float* y, SumMask m, Sum4 s) { _mm_mask_storeu_ps(y, m, s); }

  K3_INLINE static void Transpose(Vec (&r)[16]) { Transpose16x16(r); }

  K3_INLINE static float ReduceAdd(Vec v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace
}  // namespace k3::kernels::detail
