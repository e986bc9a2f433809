// The integer-activation path (matmul_int8.h) on 256-bit vectors, for CPUs without AVX512-VNNI:
// included by two ISA translation units, each with its own Dot policy and flags (the ODR rule of
// matmul_simd_base.h: everything here has internal linkage):
//  - matmul_avxvnni.cc: VEX vpdpbusd (AVX-VNNI: Alder Lake and later Intel cores, Zen 5);
//  - matmul_int8_avx2.cc: vpmaddubsw + vpmaddwd (any AVX2 core), as llama.cpp's AVX2 dots.
//
// Layout: each 128-column chunk of Int8Activations (and of a weight row) is taken in two halves
// of 32 bytes; half h holds slots 2h and 2h + 1, so lane 4j + m of the 512-bit kernels' vectors is
// lane 4(j - 2h) + m of half h, and every lane's integer is the same exact sum of k * q over its 8
// columns. These kernels read only the signed form (Int8Kernels::takes_biased is false): weights
// as the unsigned k + offset, the dot starting from the activations' correction.
#pragma once

#include "kernels/matmul_int8.h"
#include "kernels/matmul_int8_rows.h"
#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// Tiles of 4 rows x up to 2 tokens, or from 3 tokens 2 rows x up to 4: 8 accumulators beside one
// row's weights and scales fill the 16 vector registers of an AVX2 core; the wider tiles decode
// each row's weights once per 4 tokens instead of 2.
constexpr int kAvx2MaxTokens = 2, kAvx2PairMaxTokens = 4;

// MXFP4 nibble -> 2 * E2M1 value + 12, per 128-bit lane (vpshufb looks up per lane).
#define K3_MXFP4_U 12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0
alignas(32) constexpr int8_t kMxfp4Unsigned[32] = {K3_MXFP4_U, K3_MXFP4_U};
#undef K3_MXFP4_U

// One half of a row's chunk: the unsigned weights of its even columns (lo) and odd ones (hi).
struct HalfWeights {
  __m256i lo, hi;
};

// The first `bytes` (a multiple of 4, <= 32) bytes at p, the rest zero, reading nothing past them.
K3_INLINE __m256i LoadPart(const uint8_t* p, int bytes) {
  if (bytes >= 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if (bytes <= 0) return _mm256_setzero_si256();
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(bytes / 4), lanes);
  return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), mask);
}

// Row chunk k's two halves as unsigned weights (k + the format's offset). 4-bit: 64 bytes per
// chunk, 16 per block; low nibbles are the even columns. kInt8Block: Int8BlockOffset's order,
// the evens of the chunk's blocks, then their odds (16 bytes per block each).
template <WeightFormat F>
K3_INLINE void ChunkHalves(const uint8_t* row, int64_t k, int blocks, HalfWeights* w) {
  if constexpr (F == WeightFormat::kInt8Block) {
    const uint8_t* p = row + k * 128;
    for (int h = 0; h < 2; ++h) {
      w[h].lo = LoadPart(p + 32 * h, 16 * blocks - 32 * h);
      w[h].hi = LoadPart(p + 16 * blocks + 32 * h, 16 * blocks - 32 * h);
    }
    return;
  }
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  for (int h = 0; h < 2; ++h) {
    const __m256i raw = LoadPart(row + k * 64 + 32 * h, 16 * blocks - 32 * h);
    __m256i lo = _mm256_and_si256(raw, nibble);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);
    if constexpr (F == WeightFormat::kMxfp4) {
      const __m256i table = _mm256_load_si256(reinterpret_cast<const __m256i*>(kMxfp4Unsigned));
      lo = _mm256_shuffle_epi8(table, lo);
      hi = _mm256_shuffle_epi8(table, hi);
    }
    w[h] = {lo, hi};
  }
}

// The MXFP4 weight scale s_w of E8M0 byte e: the E8M0 scale halved, 2^(e - 128), subnormal for
// e <= 1, NaN for 255 (as the AVX-512 kernels).
constexpr float Mxfp4BlockScale(uint32_t e) {
  const uint32_t bits = e == 0     ? 0x00200000u
                        : e == 1   ? 0x00400000u
                        : e == 255 ? 0x7FC00000u
                                   : (e - 1) << 23;
  return __builtin_bit_cast(float, bits);
}

// Mxfp4BlockScale by byte, so a block's scale is a byte load and a broadcast load.
struct Mxfp4ScaleTable {
  float value[256];
};
constexpr Mxfp4ScaleTable MakeMxfp4ScaleTable() {
  Mxfp4ScaleTable t{};
  for (uint32_t e = 0; e < 256; ++e) t.value[e] = Mxfp4BlockScale(e);
  return t;
}
alignas(64) constexpr Mxfp4ScaleTable kMxfp4Scales = MakeMxfp4ScaleTable();

// The weight scale s_w of block b of a scale row (matmul_int8.h): BF16 bits, or Mxfp4BlockScale.
template <WeightFormat F>
K3_INLINE float BlockScale(const void* scales, int64_t b) {
  if constexpr (F == WeightFormat::kMxfp4) {
    return Mxfp4BlockScale(static_cast<const uint8_t*>(scales)[b]);
  }
  return __builtin_bit_cast(float, uint32_t{static_cast<const uint16_t*>(scales)[b]} << 16);
}

// Chunk k's weight scales per half: slot 2h + s in lanes 4s .. 4s + 3 (0 past the row's blocks).
// A whole chunk takes no scalar conversions (at one token they were a third of the work): MXFP4
// as four table broadcasts, BF16 as one widening of its four 16-bit scales spread by permutes.
template <WeightFormat F>
K3_INLINE void ChunkHalfScales(const void* scales, int64_t k, int blocks, __m256* sw) {
  if (blocks == kInt8ChunkBlocks) {
    if constexpr (F == WeightFormat::kMxfp4) {
      const uint8_t* e = static_cast<const uint8_t*>(scales) + k * kInt8ChunkBlocks;
      const float* t = kMxfp4Scales.value;
      sw[0] = _mm256_set_m128(_mm_broadcast_ss(t + e[1]), _mm_broadcast_ss(t + e[0]));
      sw[1] = _mm256_set_m128(_mm_broadcast_ss(t + e[3]), _mm_broadcast_ss(t + e[2]));
    } else {
      const uint16_t* h = static_cast<const uint16_t*>(scales) + k * kInt8ChunkBlocks;
      const __m128i bits = _mm_slli_epi32(
          _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(h))), 16);
      const __m256 four = _mm256_castps128_ps256(_mm_castsi128_ps(bits));
      sw[0] = _mm256_permutevar8x32_ps(four, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
      sw[1] = _mm256_permutevar8x32_ps(four, _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3));
    }
    return;
  }
  float s[kInt8ChunkBlocks] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int j = 0; j < blocks; ++j) s[j] = BlockScale<F>(scales, k * kInt8ChunkBlocks + j);
  sw[0] = _mm256_set_m128(_mm_set1_ps(s[1]), _mm_set1_ps(s[0]));
  sw[1] = _mm256_set_m128(_mm_set1_ps(s[3]), _mm_set1_ps(s[2]));
}

// y[t0 + t, r + i0 + i] for t < TB, i < R, i0 + i < g.nr. Per chunk and row: its weights and
// scales once, then for each token and half two Dot steps from the activations' correction, the
// lanes' integers to float times s_w * d into the row's accumulator (half 0, then half 1: the same
// float steps for a token whatever the tile, so its outputs do not depend on the batch).
template <class Dot, WeightFormat F, int kR, int TB>
void Avx2Tile(const Int8DecodeArgs& a, const Int8Rows& g, int i0, int64_t t0, int64_t r) {
  const int64_t blocks = a.w->cols / 32, tokens = a.x.tokens;
  __m256 acc[kR][TB];
  for (int i = 0; i < kR; ++i) {
    for (int t = 0; t < TB; ++t) acc[i][t] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k * kInt8ChunkBlocks < blocks; ++k) {
    const int in_chunk = static_cast<int>(Min(kInt8ChunkBlocks, blocks - k * kInt8ChunkBlocks));
    const int64_t entry = k * tokens + t0;
#pragma GCC unroll 4
    for (int i = 0; i < kR; ++i) {
      const uint8_t* row = g.bytes[i0 + i];
      Prefetch(row, k * (F == WeightFormat::kInt8Block ? 128 : 64) + kPrefetchBytes);
      HalfWeights w[2];
      ChunkHalves<F>(row, k, in_chunk, w);
      __m256 sw[2];
      ChunkHalfScales<F>(g.scales[i0 + i], k, in_chunk, sw);
#pragma GCC unroll 4
      for (int t = 0; t < TB; ++t) {
        const uint8_t* q = a.x.q + (entry + t) * 128;
        const int32_t* correction = a.x.correction + (entry + t) * 16;
        const float* d = a.x.scale + (entry + t) * 16;
        for (int h = 0; h < 2; ++h) {
          __m256i dot =
              Dot::template StartsAtCorrection<F>()
                  ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(correction + 8 * h))
                  : _mm256_setzero_si256();
          dot = Dot::template AddTwo<F>(dot, w[h].lo, q + 32 * h, w[h].hi, q + 64 + 32 * h);
          const __m256 scale = _mm256_mul_ps(sw[h], _mm256_loadu_ps(d + 8 * h));
          acc[i][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[i][t]);
        }
      }
    }
  }
  const int64_t ldy = a.w->rows;
  for (int t = 0; t < TB; ++t) {
    for (int i = 0; i < kR && i0 + i < g.nr; ++i) {
      const __m256 v = acc[i][t];
      __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
      s = _mm_add_ps(s, _mm_movehl_ps(s, s));
      s = _mm_add_ss(s, _mm_movehdup_ps(s));
      a.y[(t0 + t) * ldy + r + i0 + i] = _mm_cvtss_f32(s);
    }
  }
}

template <class Dot, WeightFormat F>
void Int8RowsIn(const Int8DecodeArgs& a, int64_t r0, int64_t r1) {
  const int64_t row_bytes = Int8RowBytes<F>(a.w->cols);
  PrefetchHead(static_cast<const uint8_t*>(a.w->data) + r0 * row_bytes, (r1 - r0) * row_bytes);
  for (int64_t r = r0; r < r1; r += kDecodeRowGroup) {
    const Int8Rows g = Int8RowGroup<F>(*a.w, r, r1);
    if (a.x.tokens <= kAvx2MaxTokens) {
      ForEachTokenTile(a.x.tokens, kAvx2MaxTokens, [&](int64_t t0, int tb) {
        if (tb == 1) return Avx2Tile<Dot, F, 4, 1>(a, g, 0, t0, r);
        return Avx2Tile<Dot, F, 4, 2>(a, g, 0, t0, r);
      });
      continue;
    }
    for (int i0 = 0; i0 < g.nr; i0 += 2) {
      ForEachTokenTile(a.x.tokens, kAvx2PairMaxTokens, [&](int64_t t0, int tb) {
        switch (tb) {
          case 1:
            return Avx2Tile<Dot, F, 2, 1>(a, g, i0, t0, r);
          case 2:
            return Avx2Tile<Dot, F, 2, 2>(a, g, i0, t0, r);
          case 3:
            return Avx2Tile<Dot, F, 2, 3>(a, g, i0, t0, r);
          default:
            return Avx2Tile<Dot, F, 2, 4>(a, g, i0, t0, r);
        }
      });
    }
  }
}

// Int8Kernels::decode_rows over Dot.
template <class Dot>
void Avx2DecodeRows(const Int8DecodeArgs& a, int64_t r0, int64_t r1) {
  switch (a.w->format) {
    case WeightFormat::kInt4:
      return Int8RowsIn<Dot, WeightFormat::kInt4>(a, r0, r1);
    case WeightFormat::kInt8Block:
      return Int8RowsIn<Dot, WeightFormat::kInt8Block>(a, r0, r1);
    default:
      return Int8RowsIn<Dot, WeightFormat::kMxfp4>(a, r0, r1);
  }
}

// Int8Kernels::quantize_row on 256-bit vectors: QuantizeBlock's arithmetic (matmul_int8.cc) in
// the same order (amax, d = amax / 127 and the lifted 127 / amax in scalar float, x * lift *
// inverse rounded to nearest even and clamped), so the same bytes as the portable quantizer; the
// bytes are then placed (evens, odds) and the signed form's lane sums taken from a small array.
void Avx2QuantizeRow(const float* x, int64_t cols, int64_t t, int64_t tokens, int32_t offset,
                     uint8_t* q, float* scale, int32_t* correction) {
  const __m256i exponent = _mm256_set1_epi32(0x7F800000);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const int bias = correction == nullptr ? 128 : 0;
  for (int64_t b = 0; b < cols / 32; ++b) {
    __m256 v[4];
    __m256 amax8 = _mm256_setzero_ps();
    bool finite = true;
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(x + b * 32 + 8 * i);
      const __m256i e = _mm256_and_si256(_mm256_castps_si256(v[i]), exponent);
      finite = finite && _mm256_movemask_epi8(_mm256_cmpeq_epi32(e, exponent)) == 0;
      amax8 = _mm256_max_ps(amax8, _mm256_and_ps(v[i], magnitude));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax8), _mm256_extractf128_ps(amax8, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
    alignas(32) int32_t k[32] = {};
    float d = 0.0f;
    if (!finite) {
      d = __builtin_nanf("");
    } else if (amax != 0.0f) {
      d = amax / 127.0f;
      const float lift = amax < 0x1p-64f ? 0x1p64f : 1.0f;  // BlockLift (matmul_int8.h)
      const __m256 lifts = _mm256_set1_ps(lift), inverse = _mm256_set1_ps(127.0f / (amax * lift));
      const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
      for (int i = 0; i < 4; ++i) {
        const __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_mul_ps(v[i], lifts), inverse));
        _mm256_store_si256(reinterpret_cast<__m256i*>(k + 8 * i),
                           _mm256_min_epi32(_mm256_max_epi32(r, lo), hi));
      }
    }
    const int64_t entry = (b / kInt8ChunkBlocks) * tokens + t, slot = b % kInt8ChunkBlocks;
    uint8_t* even = q + entry * 128 + slot * 16;
    for (int j = 0; j < 16; ++j) {
      even[j] = static_cast<uint8_t>(k[2 * j] + bias);
      even[64 + j] = static_cast<uint8_t>(k[2 * j + 1] + bias);
    }
    for (int lane = 0; lane < 4; ++lane) {
      scale[entry * 16 + slot * 4 + lane] = d;
      if (correction == nullptr) continue;
      int32_t sum = 0;
      for (int c = 8 * lane; c < 8 * lane + 8; ++c) sum += k[c];
      correction[entry * 16 + slot * 4 + lane] = -offset * sum;
    }
  }
}

// Int8Kernels::dot_loop over Dot (4-bit weights' form): 12 independent chains of 1 x 1 bytes,
// each step 32 multiply-adds (a chain adds 4 per lane: below 2^31 for 2^28 steps). Counts 2
// operations per multiply-add.
template <class Dot>
double Avx2DotLoop(int64_t iterations) {
  constexpr int kChains = 12;
  __m256i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_epi32(i);
  const __m256i ones = _mm256_set1_epi8(1);
  alignas(32) int8_t q[32];
  for (int8_t& v : q) v = 1;
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i)
      acc[i] = Dot::template Add<WeightFormat::kInt4>(acc[i], ones, reinterpret_cast<uint8_t*>(q));
  }
  __m256i fold = acc[0];
  for (int i = 1; i < kChains; ++i) fold = _mm256_xor_si256(fold, acc[i]);
  volatile int sink = _mm_cvtsi128_si32(_mm256_castsi256_si128(fold));
  (void)sink;
  return static_cast<double>(iterations) * kChains * 32 * 2;
}

}  // namespace
}  // namespace k3::kernels::detail
