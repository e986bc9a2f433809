// kBf16Panels (matmul.h): packing, the element order, and MatMul's driver. Without AVX-512 the
// products run as scalar std::fma chains, the same bits as the AVX-512 tiles but slow: the layout
// is worth packing only where AVX-512 runs (BestIsa()).
#include "kernels/matmul_panels.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_split.h"
#include "tensor/numeric.h"

namespace k3::kernels {

int64_t Bf16PanelsElements(int64_t rows, int64_t cols) {
  return (rows + kBf16PanelRows - 1) / kBf16PanelRows * kBf16PanelRows * cols;
}

int64_t Bf16PanelsOffset(int64_t r, int64_t c, int64_t rows, int64_t cols) {
  const int64_t group_rows = kBf16PanelRows * kBf16PanelGroup;
  const int64_t g = r / group_rows, panels = detail::PanelsInGroup(g, rows);
  const int64_t panel = r % group_rows / kBf16PanelRows, lane = r % kBf16PanelRows;
  const int64_t word = detail::GroupWordOffset(g, cols) + (c / 2) * panels * kBf16PanelRows +
                       panel * kBf16PanelRows + lane;
  return 2 * word + c % 2;
}

WeightMatrix PackBf16Panels(const WeightMatrix& w, uint16_t* data, base::ThreadPool* pool) {
  K3_CHECK(w.format == WeightFormat::kBF16) << "PackBf16Panels needs BF16 weights";
  K3_CHECK(w.cols % 2 == 0) << "BF16 panels need an even column count, got " << w.cols;
  const int64_t rows = w.rows, cols = w.cols;
  const auto* src = static_cast<const uint16_t*>(w.data);
  const int64_t group_rows = kBf16PanelRows * kBf16PanelGroup;
  const int64_t padded_rows = (rows + kBf16PanelRows - 1) / kBf16PanelRows * kBf16PanelRows;
  auto pack_groups = [&](int64_t g0, int64_t g1) {
    for (int64_t r = g0 * group_rows; r < std::min(g1 * group_rows, padded_rows); ++r) {
      // Column pair j of row r lies pair_stride elements after pair j - 1 (Bf16PanelsOffset).
      uint16_t* out = data + Bf16PanelsOffset(r, 0, rows, cols);
      const int64_t pair_stride = 2 * detail::PanelsInGroup(r / group_rows, rows) * kBf16PanelRows;
      for (int64_t c = 0; c < cols; c += 2, out += pair_stride) {
        out[0] = r < rows ? src[r * cols + c] : uint16_t{0};
        out[1] = r < rows ? src[r * cols + c + 1] : uint16_t{0};
      }
    }
  };
  detail::SplitRange(detail::PanelGroups(rows), 1, detail::TaskCount(pool, rows * cols), pool,
                     pack_groups);
  WeightMatrix out = w;
  out.format = WeightFormat::kBf16Panels;
  out.data = data;
  return out;
}

bool Bf16PanelsRunFast() { return detail::BestIsa() == detail::Isa::kAvx512; }

namespace detail {
namespace {

// Rows [r0, r1) for every token as std::fma chains, eight tokens side by side.
void ScalarRows(const WeightMatrix& w, const float* x, int64_t tokens, float* y, int64_t r0,
                int64_t r1, float* row) {
  constexpr int64_t kChains = 8;
  const int64_t cols = w.cols;
  for (int64_t r = r0; r < r1; ++r) {
    DequantizeBf16PanelsRange(w, r, 0, cols, row);
    for (int64_t t0 = 0; t0 < tokens; t0 += kChains) {
      const int64_t n = std::min(kChains, tokens - t0);
      float acc[kChains] = {};
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t t = 0; t < n; ++t) acc[t] = std::fma(row[c], x[(t0 + t) * cols + c], acc[t]);
      }
      for (int64_t t = 0; t < n; ++t) y[(t0 + t) * w.rows + r] = acc[t];
    }
  }
}

}  // namespace

void DequantizeBf16PanelsRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                               float* out) {
  const auto* data = static_cast<const uint16_t*>(w.data);
  for (int64_t c = c0; c < c1; ++c) {
    out[c - c0] = tensor::Bf16ToFloat(data[Bf16PanelsOffset(row, c, w.rows, w.cols)]);
  }
}

void MatMulBf16Panels(Isa isa, const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                      base::ThreadPool* pool, base::Arena& scratch) {
  const int64_t tasks = TaskCount(pool, tokens * w.rows * w.cols);
  if (isa == Isa::kAvx512) {
    const int64_t groups = PanelGroups(w.rows);
    const PanelArgs args{
        static_cast<const uint32_t*>(w.data), w.rows, w.cols, x, tokens, y, DecodeWidensOnce(isa)};
    return SplitRange(groups, 1, PieceTaskCount(pool, tokens * w.rows * w.cols, groups), pool,
                      [&](int64_t g0, int64_t g1) { Bf16PanelGroupsAvx512(args, g0, g1); });
  }
  float* rows_by_slot = scratch.Allocate<float>(SplitSlots(pool) * w.cols);  // [slots, cols]
  SplitRangeSlots(w.rows, 1, tasks, pool, [&](int64_t r0, int64_t r1, size_t slot) {
    ScalarRows(w, x, tokens, y, r0, r1, rows_by_slot + slot * w.cols);
  });
}

}  // namespace detail
}  // namespace k3::kernels
