// The AVX512-VNNI kernels of the integer-activation path (matmul_int8.h): per 128-column chunk a
// weight row's 64 bytes become two vectors of integer bytes (low and high nibbles, 4-bit formats
// through a 16-byte table), two vpdpbusd per token sum them against the int8 activations from
// the starting value of Int8Activations' form, and the 16 int32 lanes (4 per block) are scaled
// (weight scale x activation scale) into float32 accumulators. Compiled with the AVX-512 + VNNI
// flags (CMakeLists.txt), reached only after CpuHasAvx512Vnni(); follows the ODR rule of
// matmul_simd_base.h.
#include <cstring>
#include <limits>

#include "kernels/matmul_int8.h"
#include "kernels/matmul_int8_rows.h"
#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// MXFP4 nibble -> 2 * E2M1 value + 12 (the signed form's unsigned weights), and -> 2 * E2M1 value
// and INT4 nibble -> u - 8 (the biased form's signed weights), in each 128-bit lane (vpshufb
// looks up per lane).
#define K3_MXFP4_BYTES 12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0
#define K3_MXFP4_SIGNED 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12
#define K3_INT4_SIGNED -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7
alignas(64) constexpr int8_t kMxfp4Bytes[64] = {K3_MXFP4_BYTES, K3_MXFP4_BYTES, K3_MXFP4_BYTES,
                                                K3_MXFP4_BYTES};
alignas(64) constexpr int8_t kMxfp4Signed[64] = {K3_MXFP4_SIGNED, K3_MXFP4_SIGNED, K3_MXFP4_SIGNED,
                                                 K3_MXFP4_SIGNED};
alignas(64) constexpr int8_t kInt4Signed[64] = {K3_INT4_SIGNED, K3_INT4_SIGNED, K3_INT4_SIGNED,
                                                K3_INT4_SIGNED};
#undef K3_MXFP4_BYTES
#undef K3_MXFP4_SIGNED
#undef K3_INT4_SIGNED

// Tokens per tile of the biased form: 4 rows x 4 tokens = 16 accumulators; each row's weights,
// scales and correction are made once per chunk and applied to every token of the tile.
constexpr int kMaxTokens = 4;

// The chunk's 4 weight scales s_w (matmul_int8.h) in lanes 4j .. 4j + 3 for slot j; `blocks`
// (1..4) of them exist.
template <WeightFormat F>
K3_INLINE __m512 ChunkScales(const void* scales, int64_t chunk, int blocks) {
  const __mmask8 m = static_cast<__mmask8>((1u << blocks) - 1);
  __m128i bits;
  if constexpr (F != WeightFormat::kMxfp4) {  // BF16: the high half of a float
    const auto* p = static_cast<const uint16_t*>(scales) + chunk * kInt8ChunkBlocks;
    bits = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_maskz_loadu_epi16(m, p)), 16);
  } else {  // E8M0 e, halved: 2^(e - 128), subnormal for e <= 1, NaN for 255
    const auto* p = static_cast<const uint8_t*>(scales) + chunk * kInt8ChunkBlocks;
    const __m128i e = _mm_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p));
    const __m128i one = _mm_set1_epi32(1);
    bits = _mm_slli_epi32(_mm_sub_epi32(e, one), 23);
    bits = _mm_mask_mov_epi32(bits, _mm_cmpeq_epi32_mask(e, _mm_setzero_si128()),
                              _mm_set1_epi32(0x00200000));
    bits = _mm_mask_mov_epi32(bits, _mm_cmpeq_epi32_mask(e, one), _mm_set1_epi32(0x00400000));
    bits = _mm_mask_mov_epi32(bits, _mm_cmpeq_epi32_mask(e, _mm_set1_epi32(255)),
                              _mm_set1_epi32(0x7FC00000));
  }
  const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  return _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_castsi128_ps(bits)));
}

// Whether all four E8M0 bytes of a full MXFP4 chunk (little-endian in `e`) lie in [2, 254], where
// the halved scale 2^(e - 128) is the normal float with exponent field e - 1. Integer (SWAR) test
// on a general register, so it takes no vector issue slot: a byte below 2 makes (b - 2) borrow
// into bit 7 with b's own bit 7 clear; a byte 255 is a byte 0 of ~e.
K3_INLINE bool NormalE8M0(uint32_t e) {
  constexpr uint32_t kHigh = 0x80808080u;
  const uint32_t below_two = (e - 0x02020202u) & ~e & kHigh;
  const uint32_t all_ones = (~e - 0x01010101u) & e & kHigh;
  return (below_two | all_ones) == 0;
}

// ChunkScales<kMxfp4> for a full chunk whose scales are all normal (NormalE8M0): the four bytes,
// each less one, are broadcast to every 128-bit lane, byte j is moved to the top byte of dwords
// 4j .. 4j + 3 and shifted down into the exponent field. Two vector instructions instead of ten.
K3_INLINE __m512 NormalChunkScales(uint32_t e) {
  const __m512i spread = _mm512_set_epi32(  // lane j (128 bits) keeps byte j, in its top byte
      0x03808080, 0x03808080, 0x03808080, 0x03808080, 0x02808080, 0x02808080, 0x02808080,
      0x02808080, 0x01808080, 0x01808080, 0x01808080, 0x01808080, 0x00808080, 0x00808080,
      0x00808080, 0x00808080);
  const __m512i bytes =
      _mm512_shuffle_epi8(_mm512_set1_epi32(static_cast<int>(e - 0x01010101u)), spread);
  return _mm512_castsi512_ps(_mm512_srli_epi32(bytes, 1));
}

// ChunkScales<kInt4> for a full chunk: its four BF16 scales (8 bytes, broadcast to every 128-bit
// lane), scale j moved into the top half of dwords 4j .. 4j + 3, which makes it a float exactly.
K3_INLINE __m512 Bf16ChunkScales(const void* scales, int64_t chunk) {
  int64_t bits;
  std::memcpy(&bits, static_cast<const uint16_t*>(scales) + chunk * kInt8ChunkBlocks, 8);
  const __m512i spread = _mm512_set_epi32(  // lane j keeps bytes 2j, 2j + 1, in its top half
      0x07068080, 0x07068080, 0x07068080, 0x07068080, 0x05048080, 0x05048080, 0x05048080,
      0x05048080, 0x03028080, 0x03028080, 0x03028080, 0x03028080, 0x01008080, 0x01008080,
      0x01008080, 0x01008080);
  return _mm512_castsi512_ps(_mm512_shuffle_epi8(_mm512_set1_epi64(bits), spread));
}

// The chunk's weight scales s_w as ChunkScales gives them, by the shortcuts above where they apply
// (full chunks; MXFP4 only when all four scales are normal).
template <WeightFormat F>
K3_INLINE __m512 WeightScales(const void* scales, int64_t chunk, int blocks) {
  if (blocks == kInt8ChunkBlocks) {
    if constexpr (F != WeightFormat::kMxfp4) return Bf16ChunkScales(scales, chunk);
    uint32_t e;
    std::memcpy(&e, static_cast<const uint8_t*>(scales) + chunk * kInt8ChunkBlocks, 4);
    if (NormalE8M0(e)) return NormalChunkScales(e);
  }
  return ChunkScales<F>(scales, chunk, blocks);
}

// The chunk's weights as the unsigned integers k + offset: lo = the even columns of slots 0..3,
// hi = the odd ones. 4-bit: 64 bytes (16 per block at the row's end), low and high nibbles;
// kInt8Block: 128 bytes (32 per block), evens then odds (Int8BlockOffset), taken as they are.
template <WeightFormat F>
K3_INLINE void ChunkWeights(const uint8_t* p, int blocks, __mmask64 m, __m512i* lo, __m512i* hi) {
  if constexpr (F == WeightFormat::kInt8Block) {
    *lo = _mm512_maskz_loadu_epi8(m, p);
    *hi = _mm512_maskz_loadu_epi8(m, p + 16 * blocks);
    return;
  }
  const __m512i w = _mm512_maskz_loadu_epi8(m, p);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  *lo = _mm512_and_si512(w, nibble);
  *hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), nibble);
  if constexpr (F == WeightFormat::kMxfp4) {
    const __m512i table = _mm512_load_si512(kMxfp4Bytes);
    *lo = _mm512_shuffle_epi8(table, *lo);
    *hi = _mm512_shuffle_epi8(table, *hi);
  }
}

// The chunk's weights as the signed integers k (the biased form), halves as ChunkWeights. Bytes
// past a partial chunk's blocks come out as some k, not 0: their activations are q = 0 (stored
// 128), so the row's correction takes back exactly what they add.
template <WeightFormat F>
K3_INLINE void SignedChunkWeights(const uint8_t* p, int blocks, __mmask64 m, __m512i* lo,
                                  __m512i* hi) {
  if constexpr (F == WeightFormat::kInt8Block) {
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    *lo = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p), bias);
    *hi = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p + 16 * blocks), bias);
    return;
  }
  const __m512i w = _mm512_maskz_loadu_epi8(m, p);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i table = _mm512_load_si512(F == WeightFormat::kMxfp4 ? kMxfp4Signed : kInt4Signed);
  *lo = _mm512_shuffle_epi8(table, _mm512_and_si512(w, nibble));
  *hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(w, 4), nibble));
}

// -128 * (the sum of each lane's 8 weights k): the biased form's starting value for one row and
// chunk, shared by every token of the tile.
K3_INLINE __m512i NegatedBiasSums(__m512i lo, __m512i hi) {
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));  // 128 as an unsigned byte
  const __m512i sums =
      _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, lo), bias, hi);
  return _mm512_sub_epi32(_mm512_setzero_si512(), sums);
}

template <WeightFormat F>
constexpr int64_t ChunkBytes() {
  return F == WeightFormat::kInt8Block ? 128 : 64;
}

// Prefetches row chunk k + kPrefetchBytes ahead (an int8 chunk is two cache lines).
template <WeightFormat F>
K3_INLINE void PrefetchChunk(const uint8_t* row, int64_t k) {
  constexpr int64_t kChunkBytes = ChunkBytes<F>();
  Prefetch(row, k * kChunkBytes + kPrefetchBytes);
  if constexpr (kChunkBytes > 64) Prefetch(row, k * kChunkBytes + 64 + kPrefetchBytes);
}

// chunk(k, blocks in it, byte mask) for the row's full chunks, then for the partial last one:
// two loops, so the main one has no per-chunk mask or branch.
template <class Fn>
K3_INLINE void ForEachChunk(int64_t blocks, const Fn& chunk) {
  const int64_t full = blocks / kInt8ChunkBlocks;
  for (int64_t k = 0; k < full; ++k) chunk(k, static_cast<int>(kInt8ChunkBlocks), ~__mmask64{0});
  if (const int rest = static_cast<int>(blocks - full * kInt8ChunkBlocks); rest > 0) {
    chunk(full, rest, (__mmask64{1} << (16 * rest)) - 1);
  }
}

// Writes the tile's sums: y[t0 + t, r + i] for t < TB, i < g.nr.
template <int TB>
K3_INLINE void StoreSums(const Int8DecodeArgs& a, const Int8Rows& g, int64_t t0, int64_t r,
                         const __m512 (&acc)[kDecodeRowGroup][TB]) {
  const int64_t ldy = a.w->rows;
  // Constant indices only (a loop to g.nr would make GCC keep acc in memory, stored every chunk).
#pragma GCC unroll 4
  for (int t = 0; t < TB; ++t) {
#pragma GCC unroll 4
    for (int i = 0; i < kDecodeRowGroup; ++i) {
      if (i < g.nr) a.y[(t0 + t) * ldy + r + i] = _mm512_reduce_add_ps(acc[i][t]);
    }
  }
}

// y[0, r + i] for i < g.nr from the signed form, which only one-token calls use.
static_assert(kBiasedFromTokens == 2);
template <WeightFormat F>
void SignedTile(const Int8DecodeArgs& a, const Int8Rows& g, int64_t r) {
  constexpr int kR = kDecodeRowGroup;
  constexpr int64_t kChunkBytes = ChunkBytes<F>();
  const int64_t blocks = a.w->cols / 32;
  __m512 acc[kR][1];
#pragma GCC unroll 4
  for (int i = 0; i < kR; ++i) acc[i][0] = _mm512_setzero_ps();
  PrefetchScalesAhead<F>(g.scales[0], a.w->cols, kR);
  auto chunk = [&](int64_t k, int in_chunk, __mmask64 m) K3_INLINE_LAMBDA {
    const __m512i q_lo = _mm512_loadu_si512(a.x.q + k * 128);
    const __m512i q_hi = _mm512_loadu_si512(a.x.q + k * 128 + 64);
    const __m512i correction = _mm512_loadu_si512(a.x.correction + k * 16);
    const __m512 d = _mm512_loadu_ps(a.x.scale + k * 16);
#pragma GCC unroll 4
    for (int i = 0; i < kR; ++i) {
      PrefetchChunk<F>(g.bytes[i], k);
      __m512i lo, hi;
      ChunkWeights<F>(g.bytes[i] + k * kChunkBytes, in_chunk, m, &lo, &hi);
      const __m512 sw = WeightScales<F>(g.scales[i], k, in_chunk);
      __m512i dot = _mm512_dpbusd_epi32(correction, lo, q_lo);
      dot = _mm512_dpbusd_epi32(dot, hi, q_hi);
      acc[i][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(sw, d), acc[i][0]);
    }
  };
  ForEachChunk(blocks, chunk);
  StoreSums<1>(a, g, 0, r, acc);
}

// y[t0 + t, r + i] for t < TB, i < g.nr from the biased form. Full chunks and the partial last
// one are separate loops, so the main loop has no per-chunk mask or branch; the activations of
// chunk k for the tile's tokens are one stretch at q + k * tokens * 128 (constant offsets t * 128).
template <WeightFormat F, int TB>
void BiasedTile(const Int8DecodeArgs& a, const Int8Rows& g, int64_t t0, int64_t r) {
  constexpr int kR = kDecodeRowGroup;
  constexpr int64_t kChunkBytes = ChunkBytes<F>();
  const int64_t blocks = a.w->cols / 32;
  const int64_t q_step = a.x.tokens * 128, s_step = a.x.tokens * 16;
  __m512 acc[kR][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kR; ++i) {
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  if (t0 == 0) PrefetchScalesAhead<F>(g.scales[0], a.w->cols, kR);
  auto chunk = [&](int64_t k, int in_chunk, __mmask64 m) K3_INLINE_LAMBDA {
    const uint8_t* q = a.x.q + k * q_step + t0 * 128;
    const float* d = a.x.scale + k * s_step + t0 * 16;
#pragma GCC unroll 4
    for (int i = 0; i < kR; ++i) {
      PrefetchChunk<F>(g.bytes[i], k);
      __m512i lo, hi;
      SignedChunkWeights<F>(g.bytes[i] + k * kChunkBytes, in_chunk, m, &lo, &hi);
      const __m512 sw = WeightScales<F>(g.scales[i], k, in_chunk);
      const __m512i start = NegatedBiasSums(lo, hi);
#pragma GCC unroll 4
      for (int t = 0; t < TB; ++t) {
        __m512i dot = _mm512_dpbusd_epi32(start, _mm512_loadu_si512(q + t * 128), lo);
        dot = _mm512_dpbusd_epi32(dot, _mm512_loadu_si512(q + t * 128 + 64), hi);
        const __m512 scale = _mm512_mul_ps(sw, _mm512_loadu_ps(d + t * 16));
        acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[i][t]);
      }
    }
  };
  ForEachChunk(blocks, chunk);
  StoreSums<TB>(a, g, t0, r, acc);
}

template <WeightFormat F>
void BiasedTiles(const Int8DecodeArgs& a, const Int8Rows& g, int64_t r) {
  ForEachTokenTile(a.x.tokens, kMaxTokens, [&](int64_t t0, int tb) {
    switch (tb) {
      case 1:
        return BiasedTile<F, 1>(a, g, t0, r);
      case 2:
        return BiasedTile<F, 2>(a, g, t0, r);
      case 3:
        return BiasedTile<F, 3>(a, g, t0, r);
      default:
        return BiasedTile<F, 4>(a, g, t0, r);
    }
  });
}

template <WeightFormat F>
void DecodeRowsIn(const Int8DecodeArgs& a, int64_t r0, int64_t r1) {
  const WeightMatrix& w = *a.w;
  const int64_t row_bytes = Int8RowBytes<F>(w.cols);
  PrefetchHead(static_cast<const uint8_t*>(w.data) + r0 * row_bytes, (r1 - r0) * row_bytes);
  PrefetchHead(FourBitScaleRow(w, r0),
               Min(r1 - r0, 4 * kDecodeRowGroup) * ScaleRowBytes<F>(w.cols));
  for (int64_t r = r0; r < r1; r += kDecodeRowGroup) {
    const Int8Rows g = Int8RowGroup<F>(w, r, r1);
    if (a.x.biased) {
      BiasedTiles<F>(a, g, r);
    } else {
      SignedTile<F>(a, g, r);
    }
  }
}

void DecodeRows(const Int8DecodeArgs& a, int64_t r0, int64_t r1) {
  switch (a.w->format) {
    case WeightFormat::kInt4:
      return DecodeRowsIn<WeightFormat::kInt4>(a, r0, r1);
    case WeightFormat::kInt8Block:
      return DecodeRowsIn<WeightFormat::kInt8Block>(a, r0, r1);
    default:
      return DecodeRowsIn<WeightFormat::kMxfp4>(a, r0, r1);
  }
}

// Lanes of v that are NaN or infinite (all exponent bits set).
K3_INLINE __mmask16 NonFinite(__m512 v) {
  const __m512i exponent = _mm512_set1_epi32(0x7F800000);
  return _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(v), exponent), exponent);
}

// Int8Kernels::quantize_row: QuantizeBlock's arithmetic (matmul_int8.cc) on 32 columns at a time:
// amax, d = amax / 127 and the lifted 127 / amax in scalar float as there, x times it rounded to
// nearest even and clamped, even and odd columns apart; a non-finite block gets d = NaN and q = 0.
void QuantizeRow(const float* x, int64_t cols, int64_t t, int64_t tokens, int32_t offset,
                 uint8_t* q, float* scale, int32_t* correction) {
  const bool biased = correction == nullptr;
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  const __m128i bias = _mm_set1_epi8(biased ? static_cast<char>(0x80) : 0);
  for (int64_t b = 0; b < cols / 32; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + b * 32), x1 = _mm512_loadu_ps(x + b * 32 + 16);
    const bool finite = (NonFinite(x0) | NonFinite(x1)) == 0;
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
    const int64_t entry = (b / kInt8ChunkBlocks) * tokens + t, slot = b % kInt8ChunkBlocks;
    uint8_t* even = q + entry * 128 + slot * 16;
    float d = 0.0f;
    __m128i qe = _mm_setzero_si128(), qo = _mm_setzero_si128();
    if (!finite) {
      d = std::numeric_limits<float>::quiet_NaN();
    } else if (amax != 0.0f) {
      d = amax / 127.0f;
      const float lift = BlockLift(amax);
      const __m512 lifts = _mm512_set1_ps(lift), inverse = _mm512_set1_ps(127.0f / (amax * lift));
      auto quantize = [&](__m512i index) K3_INLINE_LAMBDA {
        const __m512 lifted = _mm512_mul_ps(_mm512_permutex2var_ps(x0, index, x1), lifts);
        const __m512 v = _mm512_mul_ps(lifted, inverse);
        const __m512i r =
            _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        return _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(r, lo), hi));
      };
      qe = quantize(evens);
      qo = quantize(odds);
    }
    if (!biased) {  // lane m: the 4 even and 4 odd q of columns 8m .. 8m + 7 (bytes 4m .. 4m + 3)
      const __m128i ones = _mm_set1_epi8(1);
      const __m128i sums =
          _mm_dpbusd_epi32(_mm_dpbusd_epi32(_mm_setzero_si128(), ones, qe), ones, qo);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(correction + entry * 16 + slot * 4),
                       _mm_mullo_epi32(sums, _mm_set1_epi32(-offset)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(even), _mm_xor_si128(qe, bias));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(even + 64), _mm_xor_si128(qo, bias));
    _mm_storeu_ps(scale + entry * 16 + slot * 4, _mm_set1_ps(d));
  }
}

// Int8Kernels::dot_loop: 16 independent vpdpbusd chains of 1 x 1 bytes (each step adds 4 per
// lane: a chain stays below 2^31 for up to 2^28 iterations). Counts 2 operations per multiply-add.
double DotLoop(int64_t iterations) {
  constexpr int kChains = 16;
  __m512i acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], ones, ones);
  }
  // Folded by xor into one lane: an add over all lanes and chains would pass 2^31.
  __m512i fold = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) fold = _mm512_xor_si512(fold, acc[i]);
  volatile int sink = _mm_cvtsi128_si32(_mm512_castsi512_si128(fold));
  (void)sink;
  return static_cast<double>(iterations) * kChains * 64 * 2;
}

constexpr Int8Kernels kKernels = {&DecodeRows, &QuantizeRow, &DotLoop, "avx512-vnni", true};

}  // namespace

const Int8Kernels& VnniKernels() { return kKernels; }

}  // namespace k3::kernels::detail
