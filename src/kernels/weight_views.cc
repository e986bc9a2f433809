// Views of parts of a WeightMatrix (matmul.h), for callers that read a matrix piecewise.
#include "base/check.h"
#include "kernels/matmul.h"

namespace k3::kernels {

WeightMatrix RowRange(const WeightMatrix& w, int64_t begin, int64_t count) {
  K3_CHECK(begin >= 0 && count >= 0 && begin + count <= w.rows)
      << "rows [" << begin << ", " << begin + count << ") of a " << w.rows << "-row matrix";
  WeightMatrix view = w;
  view.rows = count;
  view.data = static_cast<const uint8_t*>(w.data) + begin * StoredRowBytes(w);
  const int64_t groups = w.cols / 32;  // per-32 scales of the 4-bit and int8 formats
  switch (w.format) {
    case WeightFormat::kFp8Block:
      K3_CHECK(begin % w.block == 0)
          << "an FP8 row view must start on a tile: row " << begin << ", block " << w.block;
      view.block_scales = w.block_scales + begin / w.block * ((w.cols + w.block - 1) / w.block);
      break;
    case WeightFormat::kMxfp4:
      view.mx_scales = w.mx_scales + begin * groups;
      break;
    case WeightFormat::kInt4:
    case WeightFormat::kInt8Block:
      view.group_scales = w.group_scales + begin * groups;
      break;
    case WeightFormat::kBf16Panels:
      K3_CHECK(begin % (kBf16PanelRows * kBf16PanelGroup) == 0 &&
               (count % (kBf16PanelRows * kBf16PanelGroup) == 0 || begin + count == w.rows))
          << "a BF16 panel row view must cover whole panel groups: rows [" << begin << ", "
          << begin + count << ") of " << w.rows;
      break;
    default:  // F32, BF16, F16: no scales
      break;
  }
  return view;
}

}  // namespace k3::kernels
