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

template <int P, int T>
[[gnu::noinline]] void PanelTile(const uint32_t* group, int64_t cols, const float* x, int64_t ldx,
                                 float* y, int64_t ldy, int64_t valid_rows) {
  __m512 acc[P][T];
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[p][t] = _mm512_setzero_ps();
  }
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t j = 0; j < cols / 2; ++j) {
    const uint32_t* words = group + j * P * 16;
    __m512 even[P], odd[P];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      Prefetch(words + p * 16, kPanelPrefetchBytes);
      const __m512i v = _mm512_loadu_si512(words + p * 16);
      even[p] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
      odd[p] = _mm512_castsi512_ps(_mm512_and_si512(v, high));
    }
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
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
    const int64_t n = valid_rows - 16 * p;
    if (n <= 0) break;
    const __mmask16 m = n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy + 16 * p, m, acc[p][t]);
  }
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
    // Token tiles depend on the token count only, and no output's chain depends on them.
    ForEachTokenTile(a.tokens, kMaxTileTokens, [&](int64_t t0, int tb) {
      GroupTile(PanelsInGroup(g, a.rows), tb, group, a.cols, a.x + t0 * a.cols,
                a.y + t0 * a.rows + r0, a.rows, valid);
    });
  }
}

}  // namespace k3::kernels::detail
