// What every ISA-flagged kernel translation unit shares: the ODR rule, the intrinsics include and
// the scalar helpers of the SIMD drivers. Included by the vector-traits headers
// (matmul_vec_avx2.h, matmul_vec_avx512.h), the drivers (matmul_simd*.h) and matmul_amx.cc; never
// by baseline code (the #error below checks the flags).
//
// The ODR rule. These headers are compiled once per ISA, each time with that ISA's flags
// (-mavx2, -mavx512f, -mamx-tile, ...). An inline function or a template instantiation with
// external linkage that two such translation units emit (or one of them and baseline code) is one
// entity to the linker, which keeps whichever copy it meets first: baseline callers could then run
// AVX-512 code on a CPU without it. So in every header an ISA TU includes:
//  - everything is declared inside an anonymous namespace (internal linkage: each TU keeps its own
//    copy, and instantiations over a traits type declared there are internal too);
//  - no standard-library template is used or instantiated (its instantiations have external
//    linkage); only intrinsics, compiler builtins and our own internal-linkage code. <cstdint>'s
//    typedefs and the constant-evaluated kE8M0 table of matmul_kernels.h emit no code.
#pragma once

#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "matmul_simd_*.h and matmul_vec_*.h belong to ISA-flagged translation units only"
#endif

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

#include "kernels/matmul.h"
#include "kernels/matmul_kernels.h"

// Forces inlining: the drivers are written as small functions and lambdas that must melt into the
// register-resident loops of their callers.
#define K3_INLINE [[gnu::always_inline]] inline
#define K3_INLINE_LAMBDA __attribute__((always_inline))

namespace k3::kernels::detail {
namespace {

// Weight rows per decode row group (each row gets one accumulator per token).
constexpr int kRows = kDecodeRowGroup;
// How far ahead of each weight row's read position the decode kernels prefetch. With the rows of
// a group adjacent, this keeps about 16 KiB of the stream in flight per thread.
constexpr int64_t kPrefetchBytes = 16384;

K3_INLINE int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// Bytes per stored element (kMxfp4, kInt4: see RowPointer). matmul.h's StoredElementBytes, repeated
// with internal linkage by the ODR rule above.
constexpr int64_t ElementBytes(WeightFormat f) {
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

// Splits `tokens` into near-equal tiles of at most `max_tb` and runs `tile(t0, tb)` for each.
template <typename Fn>
K3_INLINE void ForEachTokenTile(int64_t tokens, int max_tb, const Fn& tile) {
  const int64_t tiles = (tokens + max_tb - 1) / max_tb;
  int64_t t0 = 0;
  for (int64_t j = 0; j < tiles; ++j) {
    int64_t tb = tokens / tiles + (j < tokens % tiles ? 1 : 0);
    tile(t0, static_cast<int>(tb));
    t0 += tb;
  }
}

K3_INLINE void Prefetch(const void* base, int64_t offset) {
  _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
}

// Prefetches the first min(bytes, kPrefetchBytes) of a stream that is about to be read: the
// decode loops prefetch kPrefetchBytes ahead of where they read, so without this the head of
// every call's row range would arrive by demand misses alone.
K3_INLINE void PrefetchHead(const void* begin, int64_t bytes) {
  const char* p = static_cast<const char*>(begin);
  for (int64_t o = 0; o < Min(bytes, kPrefetchBytes); o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
}

// The first byte of W's row `row` (kMxfp4, kInt4: cols / 2 bytes per row).
inline const void* RowPointer(const WeightMatrix& w, int64_t row) {
  const int64_t row_bytes = IsFourBit(w.format) ? w.cols / 2 : w.cols * ElementBytes(w.format);
  return static_cast<const uint8_t*>(w.data) + row * row_bytes;
}

// The per-32-column scales of a 4-bit (or kInt8Block) row: E8M0 bytes (kMxfp4) or BF16 bits.
inline const void* FourBitScaleRow(const WeightMatrix& w, int64_t row) {
  if (w.format != WeightFormat::kMxfp4) return w.group_scales + row * (w.cols / 32);
  return w.mx_scales + row * (w.cols / 32);
}

// Bytes of one row's block scales (FourBitScaleRow): E8M0 bytes for kMxfp4, BF16 for kInt4 and
// kInt8Block.
template <WeightFormat F>
constexpr int64_t ScaleRowBytes(int64_t cols) {
  return cols / 32 * (F == WeightFormat::kMxfp4 ? 1 : 2);
}

// Prefetches the block scales of `rows` rows two tiles of `rows` rows ahead of the tile whose first
// row's scales are at `scale_row` (rows of `cols` columns). The scales are a stream of their own (a
// few bytes per row) that the weights' prefetch does not reach; without this every tile stalls on
// them (the K2.5 bench model's batch-1 decode: 27 % of the 4-bit tiles' time). Prefetches past the
// end of the matrix are harmless.
template <WeightFormat F>
K3_INLINE void PrefetchScalesAhead(const void* scale_row, int64_t cols, int rows) {
  const int64_t row_bytes = ScaleRowBytes<F>(cols);
  for (int64_t o = 0; o < rows * row_bytes; o += 64) Prefetch(scale_row, 2 * rows * row_bytes + o);
}

// The 4-bit formats' block decode over traits V, one specialisation per format. ScaleOf(scales,
// b): block b's values table (V::E2M1Scale) from FourBitScaleRow's row; Decode(bytes, table, g,
// w): w[0] = the even columns' weights of group g of the 16-byte block, w[1] = the odd ones'.
// Both formats decode exactly (a 4-bit value times a power of two or a BF16 scale is a float).
template <class V, WeightFormat F>
struct FourBit;
// Traits with V::kE2M1TableLoads look an MXFP4 block's table up when kLoad is set (the same
// floats, loaded instead of multiplied): the decode tiles of 2-6 tokens do, where the multiply
// and its broadcast lengthen each block's chain to the FMAs. kernels_benchmark
// Decode/MXFP4/avx512 best calls, three interleaved runs against the multiply (2-core Zen 5):
// tokens:8 (tiles of 4) 321 / 324 / 302 -> 362 / 335 / 310 GFLOP/s, tokens:32 (tiles of 5 and
// 6) 345 / 337 / 338 -> 378 / 388 / 371; `k3 bench model --family k3` batch 32 165 -> 175
// tokens/s (medians of three). Tiles of 2 and 3 tokens: on Zen 5 3 tokens -1 to +4 %; on the
// Emerald Rapids VM, where the multiply takes one of the two ports the FMAs use, a 768 x 1024
// product on one thread (K3's expert gate) 43.1 -> 40.2 us at 2 tokens and 58.4 -> 53.6 at 3
// (two of three interleaved rounds; the third was noise). The 1-token tile keeps the multiply
// (Zen 5: -8 % with the load); one token mostly runs DecodeOneTokenFourBitPair anyway.
template <class V>
concept E2M1TableLoads = V::kE2M1TableLoads;

template <class V>
struct FourBit<V, WeightFormat::kMxfp4> {
  template <bool kLoad = false>
  K3_INLINE static typename V::E2M1Scale ScaleOf(const void* scales, int64_t b) {
    const uint8_t e8m0 = static_cast<const uint8_t*>(scales)[b];
    if constexpr (kLoad && E2M1TableLoads<V>) return V::E2M1TableOf(e8m0);
    return V::E2M1ScaleOf(kE8M0.value[e8m0]);
  }
  K3_INLINE static void Decode(const uint8_t* bytes, typename V::E2M1Scale t, int g,
                               typename V::Vec* w) {
    V::DecodeE2M1(bytes, t, g, w);
  }
  // Blocks b0 .. b0 + n - 1's scales as floats (n <= V::kLanes): what ScaleOf multiplies.
  K3_INLINE static void StageScales(const void* scales, int64_t b0, int n, float* out) {
    V::E8M0Scales(static_cast<const uint8_t*>(scales) + b0, n, out);
  }
  K3_INLINE static typename V::E2M1Scale TableOf(float scale) { return V::E2M1ScaleOf(scale); }
};
template <class V>
struct FourBit<V, WeightFormat::kInt4> {
  template <bool kLoad = false>  // no table: BF16 scales take any of 2^16 values
  K3_INLINE static typename V::E2M1Scale ScaleOf(const void* scales, int64_t b) {
    const uint32_t bits = uint32_t{static_cast<const uint16_t*>(scales)[b]} << 16;
    return V::Int4ScaleOf(__builtin_bit_cast(float, bits));
  }
  K3_INLINE static void Decode(const uint8_t* bytes, typename V::E2M1Scale t, int g,
                               typename V::Vec* w) {
    V::DecodeInt4(bytes, t, g, w);
  }
  K3_INLINE static void StageScales(const void* scales, int64_t b0, int n, float* out) {
    V::Bf16Scales(static_cast<const uint16_t*>(scales) + b0, n, out);
  }
  K3_INLINE static typename V::E2M1Scale TableOf(float scale) { return V::Int4ScaleOf(scale); }
};

// kFp8Block: the block scales of the tile row holding `row`.
inline const float* Fp8ScaleRow(const WeightMatrix& w, int64_t row) {
  return w.block_scales + row / w.block * ((w.cols + w.block - 1) / w.block);
}

}  // namespace
}  // namespace k3::kernels::detail
