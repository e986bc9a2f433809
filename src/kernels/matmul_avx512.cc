// AVX-512 (F, BW, VL) kernels. Compiled with AVX-512 flags and called only after the CPU check in
// matmul.cc; see matmul_kernels.h for why this file uses no standard-library code.
// GCC 12.2's AVX-512 headers trip -Wuninitialized on their own `__Y = __Y` idiom (GCC PR 105593);
// silence it for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // a GCC-only warning group
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/matmul_kernels.h"

namespace k3::kernels::detail {
namespace {

#define K3_INLINE [[gnu::always_inline]] inline

constexpr int kLanes = 16;
constexpr int kRows = kDecodeRowGroup;
constexpr int kPanelRows = 32;
constexpr int kMaxTileTokens = 14;
constexpr int kMaxDecodeTokens = 6;      // tokens per decode register tile
constexpr int kMaxDecodeTokensFp4 = 4;   // fewer for MXFP4: it holds two weight vectors per row
constexpr int64_t kKcRounded = kGemmKc;  // kGemmKc is a multiple of 16

alignas(64) constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

K3_INLINE int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

K3_INLINE __mmask16 TailMask(int64_t n) {
  return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (n > 0 ? n : 0)) - 1);
}

// E4M3 bytes -> their values / 256, exactly. E4M3 with a zero bit put above its exponent is an F16
// worth 2^-8 times as much (subnormals included), and widening F16 never yields a float subnormal
// (a microcode assist in the multiplies that follow). NaN codes come out as 480 / 256.
K3_INLINE __m512 E4M3Over256(__m128i bytes) {
  __m256i h = _mm256_slli_epi16(_mm256_cvtepi8_epi16(bytes), 7);  // the sign lands in bits 15, 14
  h = _mm256_and_si256(h, _mm256_set1_epi16(static_cast<short>(0xBF80)));
  return _mm512_cvtph_ps(h);
}

// 16 weights of one row from column c as floats; masked lanes read nothing and yield 0.
template <WeightFormat F, bool kMasked>
K3_INLINE __m512 LoadWeights(const void* row, int64_t c, __mmask16 m, __m512 fp8_scale) {
  if constexpr (F == WeightFormat::kF32) {
    const float* p = static_cast<const float*>(row) + c;
    return kMasked ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
  } else if constexpr (F == WeightFormat::kBF16 || F == WeightFormat::kF16) {
    const uint16_t* p = static_cast<const uint16_t*>(row) + c;
    __m256i h = kMasked ? _mm256_maskz_loadu_epi16(m, p)
                        : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (F == WeightFormat::kF16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    static_assert(F == WeightFormat::kFp8Block);
    const uint8_t* p = static_cast<const uint8_t*>(row) + c;
    __m128i b =
        kMasked ? _mm_maskz_loadu_epi8(m, p) : _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm512_mul_ps(E4M3Over256(b), fp8_scale);  // fp8_scale: tile scale * 256
  }
}

template <WeightFormat F>
struct ElementOf {
  using Type = uint8_t;
};
template <>
struct ElementOf<WeightFormat::kF32> {
  using Type = float;
};
template <>
struct ElementOf<WeightFormat::kBF16> {
  using Type = uint16_t;
};
template <>
struct ElementOf<WeightFormat::kF16> {
  using Type = uint16_t;
};
template <WeightFormat F>
using Element = typename ElementOf<F>::Type;

// How far ahead of each weight row's read position the decode kernels prefetch. With the rows of
// a group adjacent, this keeps about 16 KiB of the stream in flight per thread.
constexpr int64_t kPrefetchBytes = 16384;

K3_INLINE void Prefetch(const void* base, int64_t offset) {
  _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
}

// [sum(a), sum(b), sum(c), sum(d)].
K3_INLINE __m128 HorizontalSum4(__m512 a, __m512 b, __m512 c, __m512 d) {
  auto half = [](__m512 v) {
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return _mm256_add_ps(_mm512_castps512_ps256(v), hi);
  };
  __m256 ab = _mm256_hadd_ps(half(a), half(b));
  __m256 cd = _mm256_hadd_ps(half(c), half(d));
  __m256 abcd = _mm256_hadd_ps(ab, cd);
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int TB>
K3_INLINE void StoreTile(__m512 (&acc)[kRows][TB], float* y, int64_t ldy, int nr) {
  const __mmask8 m = static_cast<__mmask8>((1u << nr) - 1);
#pragma GCC unroll 8
  for (int t = 0; t < TB; ++t) {
    _mm_mask_storeu_ps(y + t * ldy, m, HorizontalSum4(acc[0][t], acc[1][t], acc[2][t], acc[3][t]));
  }
}

// One 16-column step of a kRows x TB decode tile.
template <WeightFormat F, int TB, bool kMasked>
K3_INLINE void DecodeStep(const void* const* rows, const __m512* scale, const float* x, int64_t ldx,
                          int64_t c, __mmask16 m, int64_t ahead, __m512 (&acc)[kRows][TB]) {
  __m512 w[kRows];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    Prefetch(rows[i], c * static_cast<int64_t>(sizeof(Element<F>)) + ahead);
    w[i] = LoadWeights<F, kMasked>(rows[i], c, m, scale[i]);
  }
#pragma GCC unroll 8
  for (int t = 0; t < TB; ++t) {
    const float* xp = x + t * ldx + c;
    __m512 xv = kMasked ? _mm512_maskz_loadu_ps(m, xp) : _mm512_loadu_ps(xp);
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) acc[i][t] = _mm512_fmadd_ps(w[i], xv, acc[i][t]);
  }
}

// One 32-column BF16 group of a kRows x TB decode tile. x holds the group's even columns, then its
// odd ones: each 32-bit pair of BF16 weights yields the odd one by masking and the even one by a
// byte shuffle, with no shift (shifts and FMAs share one port on many AVX-512 cores).
template <int TB>
K3_INLINE void DecodeBf16Pair(const void* const* rows, const float* x, int64_t ldx, int64_t c,
                              int64_t ahead, __m512 (&acc)[kRows][TB]) {
  const __m512i low_to_high = _mm512_set4_epi32(0x0D0C8080, 0x09088080, 0x05048080, 0x01008080);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
#pragma GCC unroll 2
  for (int half = 0; half < 2; ++half) {
    __m512 w[kRows];
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      if (half == 0) Prefetch(rows[i], 2 * c + ahead);
      __m512i v = _mm512_loadu_si512(static_cast<const uint16_t*>(rows[i]) + c);
      w[i] = _mm512_castsi512_ps(half == 0 ? _mm512_shuffle_epi8(v, low_to_high)
                                           : _mm512_and_si512(v, high));
    }
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      __m512 xv = _mm512_loadu_ps(x + t * ldx + c + half * kLanes);
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) acc[i][t] = _mm512_fmadd_ps(w[i], xv, acc[i][t]);
    }
  }
}

// y[t, r + i] for t < TB, i < nr, where rows[i] points at row r + i (rows[i >= nr] repeat a valid
// row). For kFp8Block, fp8_scales[i] is row r + i's row of block scales. Weight bytes `ahead`
// past the ones in use are prefetched (the next row group's, when rows are contiguous).
template <WeightFormat F, int TB>
void DecodeTile(const void* const* rows, const float* const* fp8_scales, int64_t block,
                const float* x, int64_t cols, float* y, int64_t ldy, int nr, int64_t ahead) {
  __m512 acc[kRows][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  __m512 scale[kRows] = {};
  if constexpr (F == WeightFormat::kFp8Block) {
    for (int64_t cb = 0, bi = 0; cb < cols; cb += block, ++bi) {
      for (int i = 0; i < kRows; ++i) scale[i] = _mm512_set1_ps(fp8_scales[i][bi] * 256.0f);
      const int64_t end = Min(cb + block, cols);
      int64_t c = cb;
      for (; c + kLanes <= end; c += kLanes) {
        DecodeStep<F, TB, false>(rows, scale, x, cols, c, 0xFFFF, ahead, acc);
      }
      if (c < end) DecodeStep<F, TB, true>(rows, scale, x, cols, c, TailMask(end - c), ahead, acc);
    }
  } else {
    int64_t c = 0;
    if constexpr (F == WeightFormat::kBF16) {
      for (; c + 2 * kLanes <= cols; c += 2 * kLanes)
        DecodeBf16Pair<TB>(rows, x, cols, c, ahead, acc);
    }
    for (; c + kLanes <= cols; c += kLanes) {
      DecodeStep<F, TB, false>(rows, scale, x, cols, c, 0xFFFF, ahead, acc);
    }
    if (c < cols) DecodeStep<F, TB, true>(rows, scale, x, cols, c, TailMask(cols - c), ahead, acc);
  }
  StoreTile<TB>(acc, y, ldy, nr);
}

// MXFP4 decode tile. x is permuted per 32 columns: the 16 even columns, then the 16 odd ones.
// Each 32-column block is 16 bytes; byte i holds column 2i (low nibble) and 2i + 1 (high).
template <int TB>
void DecodeTileMxfp4(const void* const* rows, const uint8_t* const* scales, const float* x,
                     int64_t cols, float* y, int64_t ldy, int nr, int64_t ahead) {
  __m512 acc[kRows][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  const __m512 lut = _mm512_load_ps(kE2M1);
  const int64_t blocks = cols / 32;
  for (int64_t b = 0; b < blocks; ++b) {
    __m512 even[kRows], odd[kRows];
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      const uint8_t* p = static_cast<const uint8_t*>(rows[i]) + b * 16;
      if (b % 4 == 0) Prefetch(p, ahead);
      __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      __m512 scaled = _mm512_mul_ps(lut, _mm512_set1_ps(kE8M0.value[scales[i][b]]));
      even[i] = _mm512_permutexvar_ps(v, scaled);  // uses the index's low 4 bits
      odd[i] = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), scaled);
    }
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      __m512 xe = _mm512_loadu_ps(x + t * cols + b * 32);
      __m512 xo = _mm512_loadu_ps(x + t * cols + b * 32 + 16);
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) {
        acc[i][t] = _mm512_fmadd_ps(even[i], xe, acc[i][t]);
        acc[i][t] = _mm512_fmadd_ps(odd[i], xo, acc[i][t]);
      }
    }
  }
  StoreTile<TB>(acc, y, ldy, nr);
}

// Whether any of the n E4M3 bytes is a NaN code (0x7F or 0xFF).
bool HasE4M3Nan(const uint8_t* p, int64_t n) {
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

void DequantizeRangeImpl(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);

// Splits `tokens` into near-equal tiles of at most `max_tb` and runs `tile(t0, tb)` for each.
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
                 const DecodeArgs& a, int64_t r, int nr, int64_t ahead) {
  const int64_t cols = a.w->cols, ldy = a.w->rows;
  ForEachTokenTile(a.tokens, kMaxDecodeTokens, [&](int64_t t0, int tb) {
    const float* x = a.x + t0 * cols;
    float* y = a.y + t0 * ldy + r;
    switch (tb) {
      case 1:
        return DecodeTile<F, 1>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
      case 2:
        return DecodeTile<F, 2>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
      case 3:
        return DecodeTile<F, 3>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
      case 4:
        return DecodeTile<F, 4>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
      case 5:
        return DecodeTile<F, 5>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
      default:
        return DecodeTile<F, 6>(rows, fp8_scales, block, x, cols, y, ldy, nr, ahead);
    }
  });
}

void DecodeGroupMxfp4(const void* const* rows, const uint8_t* const* scales, const DecodeArgs& a,
                      int64_t r, int nr, int64_t ahead) {
  const int64_t cols = a.w->cols, ldy = a.w->rows;
  ForEachTokenTile(a.tokens, kMaxDecodeTokensFp4, [&](int64_t t0, int tb) {
    const float* x = a.x + t0 * cols;
    float* y = a.y + t0 * ldy + r;
    switch (tb) {
      case 1:
        return DecodeTileMxfp4<1>(rows, scales, x, cols, y, ldy, nr, ahead);
      case 2:
        return DecodeTileMxfp4<2>(rows, scales, x, cols, y, ldy, nr, ahead);
      case 3:
        return DecodeTileMxfp4<3>(rows, scales, x, cols, y, ldy, nr, ahead);
      default:
        return DecodeTileMxfp4<4>(rows, scales, x, cols, y, ldy, nr, ahead);
    }
  });
}

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
      DecodeGroupMxfp4(rows, scales, a, r, nr, kPrefetchBytes);
      continue;
    }
    if (w.format == WeightFormat::kFp8Block && !a.fp8_fast) {
      for (int i = 0; i < nr; ++i) DequantizeRangeImpl(w, r + i, 0, cols, scratch + i * cols);
      for (int i = 0; i < kRows; ++i) rows[i] = scratch + Min(i, nr - 1) * cols;
      DecodeGroup<WeightFormat::kF32>(rows, nullptr, 0, a, r, nr, 0);
      continue;
    }
    const int64_t row_bytes = cols * ElementBytes(w.format);
    for (int i = 0; i < kRows; ++i) rows[i] = base + (r + Min(i, nr - 1)) * row_bytes;
    switch (w.format) {
      case WeightFormat::kF32:
        DecodeGroup<WeightFormat::kF32>(rows, nullptr, 0, a, r, nr, kPrefetchBytes);
        break;
      case WeightFormat::kBF16:
        DecodeGroup<WeightFormat::kBF16>(rows, nullptr, 0, a, r, nr, kPrefetchBytes);
        break;
      case WeightFormat::kF16:
        DecodeGroup<WeightFormat::kF16>(rows, nullptr, 0, a, r, nr, kPrefetchBytes);
        break;
      case WeightFormat::kFp8Block: {
        const int64_t scale_cols = (cols + w.block - 1) / w.block;
        const float* scales[kRows];
        for (int i = 0; i < kRows; ++i) {
          scales[i] = w.block_scales + (r + Min(i, nr - 1)) / w.block * scale_cols;
        }
        DecodeGroup<WeightFormat::kFp8Block>(rows, scales, w.block, a, r, nr, kPrefetchBytes);
        // E4M3 NaN codes decode as 480 above; a row holding one yields NaN, as in the reference.
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

// ---- Dequantisation (GEMM packing and the decode fallback) ----

const void* RowPointer(const WeightMatrix& w, int64_t row) {
  const int64_t row_bytes =
      w.format == WeightFormat::kMxfp4 ? w.cols / 2 : w.cols * ElementBytes(w.format);
  return static_cast<const uint8_t*>(w.data) + row * row_bytes;
}

const float* Fp8ScaleRow(const WeightMatrix& w, int64_t row) {
  return w.block_scales + row / w.block * ((w.cols + w.block - 1) / w.block);
}

// 16 weights of `row` from column c exactly as the scalar definitions give them (E4M3 NaN codes
// included); masked lanes read nothing. kFp8Block: `scale` is the tile's scale.
template <WeightFormat F>
K3_INLINE __m512 LoadExact(const void* row, int64_t c, __mmask16 m, __m512 scale) {
  if constexpr (F == WeightFormat::kFp8Block) {
    const __m512i k7f = _mm512_set1_epi32(0x7F);
    __m128i b = _mm_maskz_loadu_epi8(m, static_cast<const uint8_t*>(row) + c);
    // Exact: times 256 restores the E4M3 value; times the scale rounds once.
    __m512 v = _mm512_mul_ps(_mm512_mul_ps(E4M3Over256(b), _mm512_set1_ps(256.0f)), scale);
    __m512i code = _mm512_and_si512(_mm512_cvtepu8_epi32(b), k7f);
    return _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(code, k7f),
                              _mm512_set1_ps(__builtin_nanf("")));
  } else {
    return LoadWeights<F, true>(row, c, m, scale);
  }
}

template <WeightFormat F>
void ConvertRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const void* p = RowPointer(w, row);
  if constexpr (F == WeightFormat::kFp8Block) {
    const float* scales = Fp8ScaleRow(w, row);
    for (int64_t c = c0; c < c1;) {
      const int64_t bi = c / w.block;
      const int64_t end = Min((bi + 1) * w.block, c1);
      const __m512 scale = _mm512_set1_ps(scales[bi]);
      for (; c < end; c += kLanes) {
        const __mmask16 m = TailMask(end - c);
        _mm512_mask_storeu_ps(out + (c - c0), m, LoadExact<F>(p, c, m, scale));
      }
      c = end;
    }
  } else {
    for (int64_t c = c0; c < c1; c += kLanes) {
      const __mmask16 m = TailMask(c1 - c);
      _mm512_mask_storeu_ps(out + (c - c0), m, LoadExact<F>(p, c, m, __m512()));
    }
  }
}

void ConvertRangeMxfp4(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const auto* p = static_cast<const uint8_t*>(RowPointer(w, row));
  const uint8_t* scales = w.mx_scales + row * (w.cols / 32);
  const __m512 lut = _mm512_load_ps(kE2M1);
  // Interleave the even (a) and odd (b) columns: a0 b0 a1 b1 ...
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (int64_t c = c0; c < c1; c += 32) {
    const int64_t b = c / 32;
    __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + b * 16)));
    __m512 scaled = _mm512_mul_ps(lut, _mm512_set1_ps(kE8M0.value[scales[b]]));
    __m512 even = _mm512_permutexvar_ps(v, scaled);
    __m512 odd = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), scaled);
    _mm512_storeu_ps(out + (c - c0), _mm512_permutex2var_ps(even, lo, odd));
    _mm512_storeu_ps(out + (c - c0) + 16, _mm512_permutex2var_ps(even, hi, odd));
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

// In-register transpose: r[i][j] -> r[j][i].
K3_INLINE void Transpose16x16(__m512 (&r)[16]) {
  __m512 u[16], v[16];
#pragma GCC unroll 8
  for (int p = 0; p < 8; ++p) {
    u[2 * p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
    u[2 * p + 1] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    __m512d a = _mm512_castps_pd(u[4 * q]), b = _mm512_castps_pd(u[4 * q + 1]);
    __m512d c = _mm512_castps_pd(u[4 * q + 2]), d = _mm512_castps_pd(u[4 * q + 3]);
    v[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    v[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    v[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    v[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // v[4q + m] lane L holds A[4q..4q+3][4L + m]; transpose the 4x4 grid of 128-bit lanes.
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    __m512 s0 = _mm512_shuffle_f32x4(v[m], v[4 + m], 0x88);
    __m512 s1 = _mm512_shuffle_f32x4(v[m], v[4 + m], 0xDD);
    __m512 s2 = _mm512_shuffle_f32x4(v[8 + m], v[12 + m], 0x88);
    __m512 s3 = _mm512_shuffle_f32x4(v[8 + m], v[12 + m], 0xDD);
    r[m] = _mm512_shuffle_f32x4(s0, s2, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(s1, s3, 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(s0, s2, 0xDD);
    r[12 + m] = _mm512_shuffle_f32x4(s1, s3, 0xDD);
  }
}

// y[i, 0..32) (+)= sum_k xp[k * MR + i] * bp[k * 32 + 0..32) for i < MR; m0/m1 mask the two
// 16-row halves of the panel.
template <int MR>
void GemmMicro(const float* xp, const float* bp, int64_t kn, float* y, int64_t ldy, __mmask16 m0,
               __mmask16 m1, bool accumulate) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kn; ++k) {
    __m512 b0 = _mm512_load_ps(bp);
    __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      __m512 a = _mm512_set1_ps(xp[i]);
      c0[i] = _mm512_fmadd_ps(a, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(a, b1, c1[i]);
    }
    bp += kPanelRows;
    xp += MR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* yi = y + i * ldy;
    if (accumulate) {
      c0[i] = _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, yi));
      c1[i] = _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, yi + 16));
    }
    _mm512_mask_storeu_ps(yi, m0, c0[i]);
    _mm512_mask_storeu_ps(yi + 16, m1, c1[i]);
  }
}

using MicroFn = void (*)(const float*, const float*, int64_t, float*, int64_t, __mmask16, __mmask16,
                         bool);
constexpr MicroFn kMicro[kMaxTileTokens + 1] = {
    nullptr,       GemmMicro<1>,  GemmMicro<2>,  GemmMicro<3>,  GemmMicro<4>,
    GemmMicro<5>,  GemmMicro<6>,  GemmMicro<7>,  GemmMicro<8>,  GemmMicro<9>,
    GemmMicro<10>, GemmMicro<11>, GemmMicro<12>, GemmMicro<13>, GemmMicro<14>};

// Packs W[r0 .. r0 + 32, k0 .. k0 + kn) as bp[k][32] (rows past the matrix are 0), converting
// 16 x 16 blocks in registers. Needs F != kMxfp4, and for kFp8Block a block that is a multiple of
// 16 (so a 16-column chunk has one scale).
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
      const __mmask16 m = TailMask(kn - kk);
      __m512 t[16];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) {
        __m512 scale = __m512();
        if constexpr (F == WeightFormat::kFp8Block) {
          if (i < valid) scale = _mm512_set1_ps(scales[i][(k0 + kk) / w.block]);
        }
        t[i] = i < valid ? LoadExact<F>(rows[i], k0 + kk, m, scale) : _mm512_setzero_ps();
      }
      Transpose16x16(t);
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; ++j) {
        _mm512_store_ps(bp + (kk + j) * kPanelRows + g * kLanes, t[j]);
      }
    }
  }
}

// The general packing: dequantise rows into rowbuf [16][kKcRounded], then transpose.
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
      __m512 t[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) t[i] = _mm512_load_ps(rowbuf + i * kKcRounded + kk);
      Transpose16x16(t);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm512_store_ps(bp + (kk + j) * kPanelRows + g * kLanes, t[j]);
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

// scratch: bp [kKcRounded][32], then rowbuf [16][kKcRounded].
void GemmPanel(const GemmArgs& a, int64_t r0, float* scratch) {
  const WeightMatrix& w = *a.w;
  const int64_t rows = w.rows, cols = w.cols;
  const int64_t nr = Min(kPanelRows, rows - r0);
  const __mmask16 m0 = TailMask(nr), m1 = TailMask(nr - kLanes);
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

// dst[c * mr + i] = x[i * cols + c] for i < mr (<= 16), c < cols.
void PackTokens(const float* x, int64_t cols, int64_t mr, float* dst) {
  const __mmask16 lanes = TailMask(mr);
  for (int64_t c = 0; c < cols; c += kLanes) {
    const __mmask16 m = TailMask(cols - c);
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      t[i] = i < mr ? _mm512_maskz_loadu_ps(m, x + i * cols + c) : _mm512_setzero_ps();
    }
    Transpose16x16(t);
    const int64_t n = Min(kLanes, cols - c);
    for (int64_t j = 0; j < n; ++j) _mm512_mask_storeu_ps(dst + (c + j) * mr, lanes, t[j]);
  }
}

// ---- Roofline ----

double FmaLoop(int64_t iterations) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.001f * i);
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], mul, add);
  }
  __m512 sum = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return static_cast<double>(iterations) * kChains * kLanes * 2;
}

constexpr IsaKernels kKernels = {
    .lanes = kLanes,
    .pair_group = 32,
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

const IsaKernels& Avx512Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
