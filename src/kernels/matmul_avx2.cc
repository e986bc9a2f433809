// AVX2 + FMA + F16C kernels. Compiled with those flags and called only after the CPU check in
// matmul.cc; see matmul_kernels.h for why this file uses no standard-library code.
#include <immintrin.h>

#include <cstdint>

#include "kernels/matmul_kernels.h"

namespace k3::kernels::detail {
namespace {

#define K3_INLINE [[gnu::always_inline]] inline

constexpr int kLanes = 8;
constexpr int kRows = kDecodeRowGroup;
constexpr int kPanelRows = 16;
constexpr int kMaxTileTokens = 6;
constexpr int kMaxDecodeTokens = 3;
constexpr int64_t kKcRounded = kGemmKc;  // a multiple of 8

alignas(32) constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

K3_INLINE int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

int64_t ElementBytes(WeightFormat f) {
  switch (f) {
    case WeightFormat::kF32:
      return 4;
    case WeightFormat::kBF16:
    case WeightFormat::kF16:
      return 2;
    default:
      return 1;
  }
}

// All-ones in the first n (0..8) lanes.
K3_INLINE __m256i LaneMask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Copies n (< 32) bytes into a zeroed 32-byte block, so partial vectors are read in bounds.
struct alignas(32) TailBytes {
  uint8_t bytes[32];
  TailBytes(const uint8_t* p, int64_t n) {
    for (int i = 0; i < 32; ++i) bytes[i] = i < n ? p[i] : 0;
  }
};

// The low 8 E4M3 bytes -> their values / 256, exactly (see matmul_avx512.cc).
K3_INLINE __m256 E4M3Over256(__m128i bytes) {
  __m128i h = _mm_slli_epi16(_mm_cvtepi8_epi16(bytes), 7);
  return _mm256_cvtph_ps(_mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0xBF80))));
}

// 8 weights from element pointer p (already offset to the column).
template <WeightFormat F>
K3_INLINE __m256 LoadWeights(const uint8_t* p, __m256 fp8_scale) {
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
    return _mm256_mul_ps(E4M3Over256(b), fp8_scale);  // fp8_scale: tile scale * 256
  }
}

// 8 weights of `row` from column c; n < 8 reads only n and zero-fills the rest.
template <WeightFormat F, bool kPartial>
K3_INLINE __m256 LoadRow(const void* row, int64_t c, int64_t n, __m256 fp8_scale) {
  const uint8_t* p = static_cast<const uint8_t*>(row) + c * ElementBytes(F);
  if constexpr (kPartial) {
    TailBytes tail(p, n * ElementBytes(F));
    return LoadWeights<F>(tail.bytes, fp8_scale);
  }
  return LoadWeights<F>(p, fp8_scale);
}

K3_INLINE __m128 HorizontalSum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int TB>
K3_INLINE void StoreTile(__m256 (&acc)[kRows][TB], float* y, int64_t ldy, int nr) {
  const __m128i m = _mm256_castsi256_si128(LaneMask(nr));
#pragma GCC unroll 4
  for (int t = 0; t < TB; ++t) {
    _mm_maskstore_ps(y + t * ldy, m, HorizontalSum4(acc[0][t], acc[1][t], acc[2][t], acc[3][t]));
  }
}

// How far ahead of each weight row's read position the decode kernels prefetch (see
// matmul_avx512.cc).
constexpr int64_t kPrefetchBytes = 16384;

K3_INLINE void Prefetch(const void* base, int64_t offset) {
  _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
}

template <WeightFormat F, int TB, bool kPartial>
K3_INLINE void DecodeStep(const void* const* rows, const __m256* scale, const float* x, int64_t ldx,
                          int64_t c, int64_t n, __m256 (&acc)[kRows][TB]) {
  const __m256i m = LaneMask(n);
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    if (!kPartial) Prefetch(rows[i], c * ElementBytes(F) + kPrefetchBytes);
    __m256 w = LoadRow<F, kPartial>(rows[i], c, n, scale[i]);
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) {
      const float* xp = x + t * ldx + c;
      __m256 xv = kPartial ? _mm256_maskload_ps(xp, m) : _mm256_loadu_ps(xp);
      acc[i][t] = _mm256_fmadd_ps(w, xv, acc[i][t]);
    }
  }
}

// One 16-column BF16 group; x holds its 8 even columns, then its 8 odd ones (see matmul_avx512.cc).
template <int TB>
K3_INLINE void DecodeBf16Pair(const void* const* rows, const float* x, int64_t ldx, int64_t c,
                              __m256 (&acc)[kRows][TB]) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    Prefetch(rows[i], 2 * c + kPrefetchBytes);
    __m256i v = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(rows[i]) + c));
    __m256 even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    __m256 odd = _mm256_castsi256_ps(_mm256_and_si256(v, high));
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) {
      const float* xp = x + t * ldx + c;
      acc[i][t] = _mm256_fmadd_ps(even, _mm256_loadu_ps(xp), acc[i][t]);
      acc[i][t] = _mm256_fmadd_ps(odd, _mm256_loadu_ps(xp + kLanes), acc[i][t]);
    }
  }
}

template <WeightFormat F, int TB>
void DecodeTile(const void* const* rows, const float* const* fp8_scales, int64_t block,
                const float* x, int64_t cols, float* y, int64_t ldy, int nr) {
  __m256 acc[kRows][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm256_setzero_ps();
  }
  __m256 scale[kRows] = {};
  if constexpr (F == WeightFormat::kFp8Block) {
    for (int64_t cb = 0, bi = 0; cb < cols; cb += block, ++bi) {
      for (int i = 0; i < kRows; ++i) scale[i] = _mm256_set1_ps(fp8_scales[i][bi] * 256.0f);
      const int64_t end = Min(cb + block, cols);
      int64_t c = cb;
      for (; c + kLanes <= end; c += kLanes) {
        DecodeStep<F, TB, false>(rows, scale, x, cols, c, kLanes, acc);
      }
      if (c < end) DecodeStep<F, TB, true>(rows, scale, x, cols, c, end - c, acc);
    }
  } else {
    int64_t c = 0;
    if constexpr (F == WeightFormat::kBF16) {
      for (; c + 2 * kLanes <= cols; c += 2 * kLanes) DecodeBf16Pair<TB>(rows, x, cols, c, acc);
    }
    for (; c + kLanes <= cols; c += kLanes)
      DecodeStep<F, TB, false>(rows, scale, x, cols, c, kLanes, acc);
    if (c < cols) DecodeStep<F, TB, true>(rows, scale, x, cols, c, cols - c, acc);
  }
  StoreTile<TB>(acc, y, ldy, nr);
}

// The 8 E2M1 values in the low (kShift 0) or high (kShift 4) nibble of each 32-bit lane of d, times
// the scale already folded into `magnitudes`.
template <int kShift>
K3_INLINE __m256 DecodeNibbles(__m256i d, __m256 magnitudes) {
  __m256i index = kShift ? _mm256_srli_epi32(d, kShift) : d;  // permute uses bits 2..0
  __m256 mag = _mm256_permutevar8x32_ps(magnitudes, index);
  __m256i sign = _mm256_and_si256(_mm256_slli_epi32(d, 28 - kShift),
                                  _mm256_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm256_xor_ps(mag, _mm256_castsi256_ps(sign));
}

// MXFP4 decode tile; x is permuted per 16 columns (8 even, then 8 odd).
template <int TB>
void DecodeTileMxfp4(const void* const* rows, const uint8_t* const* scales, const float* x,
                     int64_t cols, float* y, int64_t ldy, int nr) {
  __m256 acc[kRows][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm256_setzero_ps();
  }
  const __m256 lut = _mm256_load_ps(kE2M1Magnitudes);
  const int64_t blocks = cols / 32;
  for (int64_t b = 0; b < blocks; ++b) {
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      const uint8_t* p = static_cast<const uint8_t*>(rows[i]) + b * 16;
      if (b % 4 == 0) Prefetch(p, kPrefetchBytes);
      const __m256 mag = _mm256_mul_ps(lut, _mm256_set1_ps(kE8M0.value[scales[i][b]]));
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m256i d =
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * h)));
        __m256 even = DecodeNibbles<0>(d, mag), odd = DecodeNibbles<4>(d, mag);
#pragma GCC unroll 4
        for (int t = 0; t < TB; ++t) {
          const float* xp = x + t * cols + b * 32 + h * 16;
          acc[i][t] = _mm256_fmadd_ps(even, _mm256_loadu_ps(xp), acc[i][t]);
          acc[i][t] = _mm256_fmadd_ps(odd, _mm256_loadu_ps(xp + 8), acc[i][t]);
        }
      }
    }
  }
  StoreTile<TB>(acc, y, ldy, nr);
}

bool HasE4M3Nan(const uint8_t* p, int64_t n) {
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

void DequantizeRangeImpl(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);

template <typename Fn>
K3_INLINE void ForEachTokenTile(int64_t tokens, int max_tb, Fn tile) {
  const int64_t tiles = (tokens + max_tb - 1) / max_tb;
  int64_t t0 = 0;
  for (int64_t j = 0; j < tiles; ++j) {
    int64_t tb = tokens / tiles + (j < tokens % tiles ? 1 : 0);
    tile(t0, static_cast<int>(tb));
    t0 += tb;
  }
}

template <WeightFormat F>
void DecodeGroup(const void* const* rows, const float* const* fp8_scales, int64_t block,
                 const DecodeArgs& a, int64_t r, int nr) {
  const int64_t cols = a.w->cols, ldy = a.w->rows;
  ForEachTokenTile(a.tokens, kMaxDecodeTokens, [&](int64_t t0, int tb) {
    const float* x = a.x + t0 * cols;
    float* y = a.y + t0 * ldy + r;
    switch (tb) {
      case 1:
        return DecodeTile<F, 1>(rows, fp8_scales, block, x, cols, y, ldy, nr);
      case 2:
        return DecodeTile<F, 2>(rows, fp8_scales, block, x, cols, y, ldy, nr);
      default:
        return DecodeTile<F, 3>(rows, fp8_scales, block, x, cols, y, ldy, nr);
    }
  });
}

void DecodeGroupMxfp4(const void* const* rows, const uint8_t* const* scales, const DecodeArgs& a,
                      int64_t r, int nr) {
  const int64_t cols = a.w->cols, ldy = a.w->rows;
  ForEachTokenTile(a.tokens, kMaxDecodeTokens, [&](int64_t t0, int tb) {
    const float* x = a.x + t0 * cols;
    float* y = a.y + t0 * ldy + r;
    switch (tb) {
      case 1:
        return DecodeTileMxfp4<1>(rows, scales, x, cols, y, ldy, nr);
      case 2:
        return DecodeTileMxfp4<2>(rows, scales, x, cols, y, ldy, nr);
      default:
        return DecodeTileMxfp4<3>(rows, scales, x, cols, y, ldy, nr);
    }
  });
}

void DecodeRows(const DecodeArgs& a, int64_t r0, int64_t r1, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t cols = w.cols;
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t r = r0; r < r1; r += kRows) {
    const int nr = static_cast<int>(Min(kRows, r1 - r));
    const void* rows[kRows];
    if (w.format == WeightFormat::kMxfp4) {
      const uint8_t* scales[kRows];
      for (int i = 0; i < kRows; ++i) {
        int64_t rr = r + Min(i, nr - 1);
        rows[i] = base + rr * (cols / 2);
        scales[i] = w.mx_scales + rr * (cols / 32);
      }
      DecodeGroupMxfp4(rows, scales, a, r, nr);
      continue;
    }
    if (w.format == WeightFormat::kFp8Block && !a.fp8_fast) {
      for (int i = 0; i < nr; ++i) DequantizeRangeImpl(w, r + i, 0, cols, scratch + i * cols);
      for (int i = 0; i < kRows; ++i) rows[i] = scratch + Min(i, nr - 1) * cols;
      DecodeGroup<WeightFormat::kF32>(rows, nullptr, 0, a, r, nr);
      continue;
    }
    const int64_t row_bytes = cols * ElementBytes(w.format);
    for (int i = 0; i < kRows; ++i) rows[i] = base + (r + Min(i, nr - 1)) * row_bytes;
    switch (w.format) {
      case WeightFormat::kF32:
        DecodeGroup<WeightFormat::kF32>(rows, nullptr, 0, a, r, nr);
        break;
      case WeightFormat::kBF16:
        DecodeGroup<WeightFormat::kBF16>(rows, nullptr, 0, a, r, nr);
        break;
      case WeightFormat::kF16:
        DecodeGroup<WeightFormat::kF16>(rows, nullptr, 0, a, r, nr);
        break;
      case WeightFormat::kFp8Block: {
        const int64_t scale_cols = (cols + w.block - 1) / w.block;
        const float* scales[kRows];
        for (int i = 0; i < kRows; ++i) {
          scales[i] = w.block_scales + (r + Min(i, nr - 1)) / w.block * scale_cols;
        }
        DecodeGroup<WeightFormat::kFp8Block>(rows, scales, w.block, a, r, nr);
        for (int i = 0; i < nr; ++i) {
          if (!HasE4M3Nan(static_cast<const uint8_t*>(rows[i]), cols)) continue;
          for (int64_t t = 0; t < a.tokens; ++t) a.y[t * w.rows + r + i] = __builtin_nanf("");
        }
        break;
      }
      default:
        break;
    }
  }
}

// ---- Dequantisation ----

const void* RowPointer(const WeightMatrix& w, int64_t row) {
  const int64_t row_bytes =
      w.format == WeightFormat::kMxfp4 ? w.cols / 2 : w.cols * ElementBytes(w.format);
  return static_cast<const uint8_t*>(w.data) + row * row_bytes;
}

const float* Fp8ScaleRow(const WeightMatrix& w, int64_t row) {
  return w.block_scales + row / w.block * ((w.cols + w.block - 1) / w.block);
}

// 8 weights of `row` from column c (n of them when kPartial; the rest 0) exactly as the scalar
// definitions give them, E4M3 NaN codes included. kFp8Block: `scale` is the tile's scale.
template <WeightFormat F, bool kPartial>
K3_INLINE __m256 LoadExact(const void* row, int64_t c, int64_t n, __m256 scale) {
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
    return LoadRow<F, kPartial>(row, c, n, scale);
  }
}

template <WeightFormat F>
void ConvertRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const void* p = RowPointer(w, row);
  const int64_t step = F == WeightFormat::kFp8Block ? w.block : c1 - c0;
  const float* scales = F == WeightFormat::kFp8Block ? Fp8ScaleRow(w, row) : nullptr;
  for (int64_t c = c0; c < c1;) {
    const int64_t end = F == WeightFormat::kFp8Block ? Min((c / step + 1) * step, c1) : c1;
    const __m256 scale = F == WeightFormat::kFp8Block ? _mm256_set1_ps(scales[c / step]) : __m256();
    for (; c + kLanes <= end; c += kLanes) {
      _mm256_storeu_ps(out + (c - c0), LoadExact<F, false>(p, c, kLanes, scale));
    }
    if (c < end) {
      _mm256_maskstore_ps(out + (c - c0), LaneMask(end - c),
                          LoadExact<F, true>(p, c, end - c, scale));
      c = end;
    }
  }
}

void ConvertRangeMxfp4(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const auto* bytes = static_cast<const uint8_t*>(RowPointer(w, row));
  const uint8_t* scales = w.mx_scales + row * (w.cols / 32);
  const __m256 lut = _mm256_load_ps(kE2M1Magnitudes);
  for (int64_t c = c0; c < c1; c += 16) {
    const __m256 mag = _mm256_mul_ps(lut, _mm256_set1_ps(kE8M0.value[scales[c / 32]]));
    __m256i d =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + c / 2)));
    __m256 even = DecodeNibbles<0>(d, mag), odd = DecodeNibbles<4>(d, mag);
    __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
    _mm256_storeu_ps(out + (c - c0), _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(out + (c - c0) + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}

void DequantizeRangeImpl(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  switch (w.format) {
    case WeightFormat::kF32:
      return ConvertRange<WeightFormat::kF32>(w, row, c0, c1, out);
    case WeightFormat::kBF16:
      return ConvertRange<WeightFormat::kBF16>(w, row, c0, c1, out);
    case WeightFormat::kF16:
      return ConvertRange<WeightFormat::kF16>(w, row, c0, c1, out);
    case WeightFormat::kFp8Block:
      return ConvertRange<WeightFormat::kFp8Block>(w, row, c0, c1, out);
    case WeightFormat::kMxfp4:
      return ConvertRangeMxfp4(w, row, c0, c1, out);
  }
}

// ---- GEMM ----

K3_INLINE void Transpose8x8(__m256 (&r)[8]) {
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

template <int MR>
void GemmMicro(const float* xp, const float* bp, int64_t kn, float* y, int64_t ldy, __m256i m0,
               __m256i m1, bool accumulate) {
  __m256 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) c0[i] = c1[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kn; ++k) {
    __m256 b0 = _mm256_load_ps(bp);
    __m256 b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      __m256 a = _mm256_broadcast_ss(xp + i);
      c0[i] = _mm256_fmadd_ps(a, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(a, b1, c1[i]);
    }
    bp += kPanelRows;
    xp += MR;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* yi = y + i * ldy;
    if (accumulate) {
      c0[i] = _mm256_add_ps(c0[i], _mm256_maskload_ps(yi, m0));
      c1[i] = _mm256_add_ps(c1[i], _mm256_maskload_ps(yi + 8, m1));
    }
    _mm256_maskstore_ps(yi, m0, c0[i]);
    _mm256_maskstore_ps(yi + 8, m1, c1[i]);
  }
}

using MicroFn = void (*)(const float*, const float*, int64_t, float*, int64_t, __m256i, __m256i,
                         bool);
constexpr MicroFn kMicro[kMaxTileTokens + 1] = {
    nullptr, GemmMicro<1>, GemmMicro<2>, GemmMicro<3>, GemmMicro<4>, GemmMicro<5>, GemmMicro<6>};

// Packs W[r0 .. r0 + 16, k0 .. k0 + kn) as bp[k][16] (rows past the matrix are 0), converting
// 8 x 8 blocks in registers. Needs F != kMxfp4, and for kFp8Block a block that is a multiple of 8.
template <WeightFormat F>
void PackPanelDirect(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, float* bp) {
  for (int g = 0; g < kPanelRows / kLanes; ++g) {
    const void* rows[kLanes] = {};
    const float* scales[kLanes] = {};
    int valid = 0;
    for (int i = 0; i < kLanes; ++i) {
      const int64_t row = r0 + g * kLanes + i;
      if (row >= w.rows) break;
      rows[i] = RowPointer(w, row);
      if constexpr (F == WeightFormat::kFp8Block) scales[i] = Fp8ScaleRow(w, row);
      valid = i + 1;
    }
    for (int64_t kk = 0; kk < kn; kk += kLanes) {
      const int64_t n = Min(kLanes, kn - kk);
      __m256 t[8];
#pragma GCC unroll 8
      for (int i = 0; i < kLanes; ++i) {
        __m256 scale = __m256();
        if constexpr (F == WeightFormat::kFp8Block) {
          if (i < valid) scale = _mm256_set1_ps(scales[i][(k0 + kk) / w.block]);
        }
        if (i >= valid) {
          t[i] = _mm256_setzero_ps();
        } else if (n == kLanes) {
          t[i] = LoadExact<F, false>(rows[i], k0 + kk, n, scale);
        } else {
          t[i] = LoadExact<F, true>(rows[i], k0 + kk, n, scale);
        }
      }
      Transpose8x8(t);
#pragma GCC unroll 8
      for (int j = 0; j < kLanes; ++j) {
        _mm256_store_ps(bp + (kk + j) * kPanelRows + g * kLanes, t[j]);
      }
    }
  }
}

// The general packing: dequantise rows into rowbuf [8][kKcRounded], then transpose.
void PackPanelViaRows(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, float* bp,
                      float* rowbuf) {
  const int64_t kr = (kn + kLanes - 1) / kLanes * kLanes;
  for (int g = 0; g < kPanelRows / kLanes; ++g) {
    for (int i = 0; i < kLanes; ++i) {
      const int64_t row = r0 + g * kLanes + i;
      float* dst = rowbuf + i * kKcRounded;
      int64_t filled = 0;
      if (row < w.rows) {
        DequantizeRangeImpl(w, row, k0, k0 + kn, dst);
        filled = kn;
      }
      for (int64_t c = filled; c < kr; ++c) dst[c] = 0.0f;
    }
    for (int64_t kk = 0; kk < kr; kk += kLanes) {
      __m256 t[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) t[i] = _mm256_load_ps(rowbuf + i * kKcRounded + kk);
      Transpose8x8(t);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) _mm256_store_ps(bp + (kk + j) * kPanelRows + g * kLanes, t[j]);
    }
  }
}

void PackPanel(const WeightMatrix& w, int64_t r0, int64_t k0, int64_t kn, float* bp,
               float* rowbuf) {
  switch (w.format) {
    case WeightFormat::kF32:
      return PackPanelDirect<WeightFormat::kF32>(w, r0, k0, kn, bp);
    case WeightFormat::kBF16:
      return PackPanelDirect<WeightFormat::kBF16>(w, r0, k0, kn, bp);
    case WeightFormat::kF16:
      return PackPanelDirect<WeightFormat::kF16>(w, r0, k0, kn, bp);
    case WeightFormat::kFp8Block:
      if (w.block % kLanes == 0) {
        return PackPanelDirect<WeightFormat::kFp8Block>(w, r0, k0, kn, bp);
      }
      return PackPanelViaRows(w, r0, k0, kn, bp, rowbuf);
    case WeightFormat::kMxfp4:
      return PackPanelViaRows(w, r0, k0, kn, bp, rowbuf);
  }
}

// scratch: bp [kKcRounded][16], then rowbuf [8][kKcRounded].
void GemmPanel(const GemmArgs& a, int64_t r0, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t nr = Min(kPanelRows, rows - r0);
  const __m256i m0 = LaneMask(Min(nr, kLanes)), m1 = LaneMask(nr > kLanes ? nr - kLanes : 0);
  float* bp = scratch;
  float* rowbuf = scratch + kKcRounded * kPanelRows;
  for (int64_t k0 = 0; k0 < cols; k0 += kGemmKc) {
    const int64_t kn = Min(kGemmKc, cols - k0);
    PackPanel(w, r0, k0, kn, bp, rowbuf);
    for (int64_t j = 0; j < a.num_tiles; ++j) {
      const int64_t t0 = a.tile_start[j], mr = a.tile_start[j + 1] - t0;
      kMicro[mr](a.xpacked + t0 * cols + k0 * mr, bp, kn, a.y + t0 * rows + r0, rows, m0, m1,
                 k0 > 0);
    }
  }
}

// dst[c * mr + i] = x[i * cols + c] for i < mr (<= 8), c < cols.
void PackTokens(const float* x, int64_t cols, int64_t mr, float* dst) {
  const __m256i lanes = LaneMask(mr);
  for (int64_t c = 0; c < cols; c += kLanes) {
    const int64_t n = Min(kLanes, cols - c);
    const __m256i m = LaneMask(n);
    __m256 t[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      t[i] = i < mr ? _mm256_maskload_ps(x + i * cols + c, m) : _mm256_setzero_ps();
    }
    Transpose8x8(t);
    for (int64_t j = 0; j < n; ++j) _mm256_maskstore_ps(dst + (c + j) * mr, lanes, t[j]);
  }
}

double FmaLoop(int64_t iterations) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
#pragma GCC unroll 12
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.001f * i);
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], mul, add);
  }
  __m256 sum = acc[0];
#pragma GCC unroll 12
  for (int i = 1; i < kChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  volatile float sink = _mm_cvtss_f32(_mm_hadd_ps(_mm_hadd_ps(s4, s4), s4));
  (void)sink;
  return static_cast<double>(iterations) * kChains * kLanes * 2;
}

constexpr IsaKernels kKernels = {
    .lanes = kLanes,
    .pair_group = 16,
    .panel_rows = kPanelRows,
    .max_tile_tokens = kMaxTileTokens,
    .gemm_scratch = kKcRounded * kPanelRows + kLanes * kKcRounded,
    .decode_rows = DecodeRows,
    .gemm_panel = GemmPanel,
    .pack_tokens = PackTokens,
    .dequantize_range = DequantizeRangeImpl,
    .fma_loop = FmaLoop,
};

}  // namespace

const IsaKernels& Avx2Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
