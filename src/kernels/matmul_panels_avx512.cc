// The AVX-512 tiles of kBf16Panels products (matmul_panels.h). A tile is P panels (16 rows each,
// one vector) x T tokens: per column pair it loads each panel's 64 bytes once, splits them into the
// even and the odd column's 16 weights (a shift and a mask), and adds weight x broadcast activation
// to each of its P x T accumulators, the even column's product before the odd one's, so every
// accumulator is the chain the layout defines. At T tokens each weight vector serves T FMAs and
// each broadcast P; up to 4 x 6 accumulators stay in registers. Measured against the row-major
// BF16 tiles (kernels_benchmark, docs/model.md).
#include <cstdint>

#include "kernels/matmul_panels.h"
#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

constexpr int kMaxTileTokens = 6;
// Prefetch distance in the group's stream (a group reads 256 B per column pair): 8 and 16 KiB
// measured no better on K3 batch-1 decode (within noise).
constexpr int64_t kPanelPrefetchBytes = 4096;

// Column pair j's weights of P panels: even[p] / odd[p] = the 16 rows' even / odd column.
template <int P>
K3_INLINE void SplitPair(const uint32_t* group, int64_t j, __m512* even, __m512* odd) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  const uint32_t* words = group + j * P * 16;
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    Prefetch(words + p * 16, kPanelPrefetchBytes);
    const __m512i v = _mm512_loadu_si512(words + p * 16);
    even[p] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    odd[p] = _mm512_castsi512_ps(_mm512_and_si512(v, high));
  }
}

// acc[p][t] += even[p] x[t, 2j], then odd[p] x[t, 2j + 1]: the layout's chain order.
template <int P, int T>
K3_INLINE void FmaPair(const __m512* even, const __m512* odd, const float* x, int64_t ldx,
                       int64_t j, __m512 (&acc)[P][T]) {
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    const __m512 xe = _mm512_set1_ps(x[t * ldx + 2 * j]);
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[p][t] = _mm512_fmadd_ps(even[p], xe, acc[p][t]);
    const __m512 xo = _mm512_set1_ps(x[t * ldx + 2 * j + 1]);
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[p][t] = _mm512_fmadd_ps(odd[p], xo, acc[p][t]);
  }
}

// y[t, 16 p + i] = acc(p, t) lane i for the group's valid rows.
template <int P, int T, class Acc>
K3_INLINE void StoreRows(const Acc& acc, float* y, int64_t ldy, int64_t valid_rows) {
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const int64_t n = valid_rows - 16 * p;
    if (n <= 0) break;
    const __mmask16 m = n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy + 16 * p, m, acc(p, t));
  }
}

template <int P, int T>
[[gnu::noinline]] void PanelTile(const uint32_t* group, int64_t cols, const float* x, int64_t ldx,
                                 float* y, int64_t ldy, int64_t valid_rows) {
  __m512 acc[P][T];
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[p][t] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < cols / 2; ++j) {
    __m512 even[P], odd[P];
    SplitPair<P>(group, j, even, odd);
    FmaPair<P, T>(even, odd, x, ldx, j, acc);
  }
  StoreRows<P, T>([&](int p, int t) { return acc[p][t]; }, y, ldy, valid_rows);
}

// Calls PanelTile<P, T> for runtime p (1..4) and t (1..kMaxTileTokens).
template <int P, int T = kMaxTileTokens>
void TileFor(int t, const uint32_t* group, int64_t cols, const float* x, int64_t ldx, float* y,
             int64_t ldy, int64_t valid_rows) {
  if constexpr (T > 1) {
    if (t < T) return TileFor<P, T - 1>(t, group, cols, x, ldx, y, ldy, valid_rows);
  }
  PanelTile<P, T>(group, cols, x, ldx, y, ldy, valid_rows);
}

void GroupTile(int64_t panels, int t, const uint32_t* group, int64_t cols, const float* x, float* y,
               int64_t ldy, int64_t valid_rows) {
  switch (panels) {
    case 4:
      return TileFor<4>(t, group, cols, x, cols, y, ldy, valid_rows);
    case 3:
      return TileFor<3>(t, group, cols, x, cols, y, ldy, valid_rows);
    case 2:
      return TileFor<2>(t, group, cols, x, cols, y, ldy, valid_rows);
    default:
      return TileFor<1>(t, group, cols, x, cols, y, ldy, valid_rows);
  }
}

// The multi-tile form for calls of several token tiles (PanelArgs::widen_once): the group is
// taken kWidePairs column pairs at a time; the first tile splits the weights as PanelTile does
// and keeps the floats in an L1 buffer, the other tiles read them back, and each tile parks its
// accumulators between chunks. Every accumulator gets PanelTile's products in its order. The
// split (a shift and a mask per 32 weights) is then paid once per call, not once per tile, which
// pays where it shares the FMAs' two ports (Intel): kernels_benchmark Widening/BF16PANELS, 4096 x
// 2048 streamed, Emerald Rapids VM, once / per tile: 8 tokens 164-189 / 157-159 GFLOP/s, 12
// 214-218 / 207-215, 16 228-241 / 192-230, 32 277-290 / 255-257 (several runs); Kimi-Linear bench
// model batch 32 1.07x, K3 1.02-1.05x.
constexpr int64_t kWidePairs = 32;  // 4 panels x 32 pairs x 2 vectors: 16 KiB
constexpr int kWideMaxTiles = 11;

struct PanelChunk {
  const uint32_t* group;
  int64_t j0, nj;
  const float* x;
  int64_t ldx;
  __m512* wide;  // [nj][P][2]
};

template <int P, int T, bool kWiden>
[[gnu::noinline]] void PanelChunkTile(const PanelChunk& c, __m512* parked, bool first) {
  __m512 acc[P][T];
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[p][t] = first ? _mm512_setzero_ps() : parked[p * T + t];
  }
  for (int64_t k = 0; k < c.nj; ++k) {
    const int64_t j = c.j0 + k;
    __m512* kept = c.wide + k * P * 2;
    __m512 even[P], odd[P];
    if constexpr (kWiden) SplitPair<P>(c.group, j, even, odd);
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      if constexpr (kWiden) {
        _mm512_store_ps(reinterpret_cast<float*>(kept + 2 * p), even[p]);
        _mm512_store_ps(reinterpret_cast<float*>(kept + 2 * p + 1), odd[p]);
      } else {
        even[p] = kept[2 * p];
        odd[p] = kept[2 * p + 1];
      }
    }
    FmaPair<P, T>(even, odd, c.x, c.ldx, j, acc);
  }
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) parked[p * T + t] = acc[p][t];
  }
}

template <int P, int T = kMaxTileTokens>
void WideTileFor(int t, bool widen, const PanelChunk& c, __m512* parked, bool first, bool last,
                 float* y, int64_t ldy, int64_t valid_rows) {
  if constexpr (T > 1) {
    if (t < T) return WideTileFor<P, T - 1>(t, widen, c, parked, first, last, y, ldy, valid_rows);
  }
  if (widen) {
    PanelChunkTile<P, T, true>(c, parked, first);
  } else {
    PanelChunkTile<P, T, false>(c, parked, first);
  }
  if (last) StoreRows<P, T>([&](int p, int t) { return parked[p * T + t]; }, y, ldy, valid_rows);
}

template <int P>
void WidenedGroup(const uint32_t* group, const PanelArgs& a, float* y, int64_t valid_rows) {
  alignas(64) __m512 wide[kWidePairs * P * 2];
  alignas(64) __m512 parked[kWideMaxTiles][P * kMaxTileTokens];
  const int64_t pairs = a.cols / 2;
  for (int64_t j0 = 0; j0 < pairs; j0 += kWidePairs) {
    const int64_t nj = Min(kWidePairs, pairs - j0);
    const bool first = j0 == 0, last = j0 + nj >= pairs;
    int tile = 0;
    ForEachTokenTile(a.tokens, kMaxTileTokens, [&](int64_t t0, int tb) {
      const PanelChunk c{group, j0, nj, a.x + t0 * a.cols, a.cols, wide};
      WideTileFor<P>(tb, tile == 0, c, parked[tile], first, last, y + t0 * a.rows, a.rows,
                     valid_rows);
      ++tile;
    });
  }
}

void WidenedGroupFor(int64_t panels, const uint32_t* group, const PanelArgs& a, float* y,
                     int64_t valid_rows) {
  switch (panels) {
    case 4:
      return WidenedGroup<4>(group, a, y, valid_rows);
    case 3:
      return WidenedGroup<3>(group, a, y, valid_rows);
    case 2:
      return WidenedGroup<2>(group, a, y, valid_rows);
    default:
      return WidenedGroup<1>(group, a, y, valid_rows);
  }
}

}  // namespace

void Bf16PanelGroupsAvx512(const PanelArgs& a, int64_t g0, int64_t g1) {
  const int64_t group_rows = kBf16PanelRows * kBf16PanelGroup;
  // The range's first bytes, which the tiles' own prefetches (kPanelPrefetchBytes ahead) never
  // reach.
  const uint32_t* head = a.words + GroupWordOffset(g0, a.cols);
  const int64_t range_bytes = (GroupWordOffset(g1, a.cols) - GroupWordOffset(g0, a.cols)) * 4;
  for (int64_t o = 0; o < Min(kPanelPrefetchBytes, range_bytes); o += 64) Prefetch(head, o);
  for (int64_t g = g0; g < g1; ++g) {
    const uint32_t* group = a.words + GroupWordOffset(g, a.cols);
    const int64_t r0 = g * group_rows, valid = Min(a.rows - r0, group_rows);
    if (a.widen_once && a.tokens > kMaxTileTokens && a.tokens <= kWideMaxTiles * kMaxTileTokens &&
        a.cols % 2 == 0) {
      WidenedGroupFor(PanelsInGroup(g, a.rows), group, a, a.y + r0, valid);
      continue;
    }
    // Token tiles depend on the token count only, and no output's chain depends on them.
    ForEachTokenTile(a.tokens, kMaxTileTokens, [&](int64_t t0, int tb) {
      GroupTile(PanelsInGroup(g, a.rows), tb, group, a.cols, a.x + t0 * a.cols,
                a.y + t0 * a.rows + r0, a.rows, valid);
    });
  }
}

}  // namespace k3::kernels::detail
