// The AVX512-VNNI kernels of the integer-activation path (matmul_int8.h): per 128-column chunk a
// weight row's 64 bytes become two vectors of unsigned integer bytes (low and high nibbles, MXFP4
// through a 16-byte table), two vpdpbusd per token sum them against the int8 activations
// starting from the precomputed offset correction, and the 16 int32 lanes (4 per block) are
// scaled (weight scale x activation scale) into float32 accumulators. Compiled with the AVX-512 +
// VNNI flags (CMakeLists.txt), reached only after CpuHasAvx512Vnni(); follows the ODR rule of
// matmul_simd_base.h.
#include <cstring>

#include "kernels/matmul_int8.h"
#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// MXFP4 nibble -> 2 * E2M1 value + 12, in each 128-bit lane (vpshufb looks up per lane).
#define K3_MXFP4_BYTES 12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0
alignas(64) constexpr int8_t kMxfp4Bytes[64] = {K3_MXFP4_BYTES, K3_MXFP4_BYTES, K3_MXFP4_BYTES,
                                                K3_MXFP4_BYTES};
#undef K3_MXFP4_BYTES

// Tokens per tile: 4 rows x 4 tokens = 16 accumulators; each row's weights and scales are made
// once per chunk and applied to every token of the tile.
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

// The 4 rows of a decode row group (rows past nr repeat the last valid one).
struct Rows {
  const uint8_t* bytes[kDecodeRowGroup];
  const void* scales[kDecodeRowGroup];
  int nr;
};

// y[t0 + t, r + i] for t < TB, i < g.nr.
template <WeightFormat F, int TB>
void Tile(const Int8DecodeArgs& a, const Rows& g, int64_t t0, int64_t r) {
  constexpr int kR = kDecodeRowGroup;
  constexpr int64_t kChunkBytes = F == WeightFormat::kInt8Block ? 128 : 64;
  const int64_t chunks = a.x.chunks, blocks = a.w->cols / 32;
  __m512 acc[kR][TB];
#pragma GCC unroll 4
  for (int i = 0; i < kR; ++i) {
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  if (t0 == 0) PrefetchScalesAhead<F>(g.scales[0], a.w->cols, kR);
  for (int64_t k = 0; k < chunks; ++k) {
    const int in_chunk = static_cast<int>(Min(kInt8ChunkBlocks, blocks - k * kInt8ChunkBlocks));
    const __mmask64 m = in_chunk == 4 ? ~__mmask64{0} : (__mmask64{1} << (16 * in_chunk)) - 1;
#pragma GCC unroll 4
    for (int i = 0; i < kR; ++i) {
      Prefetch(g.bytes[i], k * kChunkBytes + kPrefetchBytes);
      if constexpr (kChunkBytes > 64) Prefetch(g.bytes[i], k * kChunkBytes + 64 + kPrefetchBytes);
      __m512i lo, hi;
      ChunkWeights<F>(g.bytes[i] + k * kChunkBytes, in_chunk, m, &lo, &hi);
      const __m512 sw = WeightScales<F>(g.scales[i], k, in_chunk);
#pragma GCC unroll 4
      for (int t = 0; t < TB; ++t) {
        const int64_t at = (t0 + t) * chunks + k;
        const __m512i correction = _mm512_loadu_si512(a.x.correction + at * 16);
        __m512i dot = _mm512_dpbusd_epi32(correction, lo, _mm512_loadu_si512(a.x.q + at * 128));
        dot = _mm512_dpbusd_epi32(dot, hi, _mm512_loadu_si512(a.x.q + at * 128 + 64));
        const __m512 scale = _mm512_mul_ps(sw, _mm512_loadu_ps(a.x.scale + at * 16));
        acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[i][t]);
      }
    }
  }
  const int64_t ldy = a.w->rows;
#pragma GCC unroll 4
  for (int t = 0; t < TB; ++t) {
    for (int i = 0; i < g.nr; ++i) a.y[(t0 + t) * ldy + r + i] = _mm512_reduce_add_ps(acc[i][t]);
  }
}

template <WeightFormat F>
void DecodeRowsIn(const Int8DecodeArgs& a, int64_t r0, int64_t r1) {
  const WeightMatrix& w = *a.w;
  const auto* base = static_cast<const uint8_t*>(w.data);
  const int64_t row_bytes = F == WeightFormat::kInt8Block ? w.cols : w.cols / 2;
  PrefetchHead(base + r0 * row_bytes, (r1 - r0) * row_bytes);
  PrefetchHead(FourBitScaleRow(w, r0),
               Min(r1 - r0, 4 * kDecodeRowGroup) * ScaleRowBytes<F>(w.cols));
  for (int64_t r = r0; r < r1; r += kDecodeRowGroup) {
    Rows g;
    g.nr = static_cast<int>(Min(kDecodeRowGroup, r1 - r));
    for (int i = 0; i < kDecodeRowGroup; ++i) {
      const int64_t row = r + Min(i, g.nr - 1);
      g.bytes[i] = base + row * row_bytes;
      g.scales[i] = FourBitScaleRow(w, row);
    }
    for (int64_t t0 = 0; t0 < a.x.tokens; t0 += kMaxTokens) {
      switch (Min(kMaxTokens, a.x.tokens - t0)) {
        case 1:
          Tile<F, 1>(a, g, t0, r);
          break;
        case 2:
          Tile<F, 2>(a, g, t0, r);
          break;
        case 3:
          Tile<F, 3>(a, g, t0, r);
          break;
        default:
          Tile<F, 4>(a, g, t0, r);
          break;
      }
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

constexpr Int8Kernels kKernels = {&DecodeRows};

}  // namespace

const Int8Kernels& VnniKernels() { return kKernels; }

}  // namespace k3::kernels::detail
