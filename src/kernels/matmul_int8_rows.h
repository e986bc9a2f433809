// The row groups the integer kernels (matmul_vnni.cc, matmul_int8_avx2.h) walk: what both ISA
// flavours share, under the ODR rule of matmul_simd_base.h (internal linkage only).
#pragma once

#include "kernels/matmul_int8.h"
#include "kernels/matmul_simd_base.h"

namespace k3::kernels::detail {
namespace {

// The 4 rows of a decode row group (rows past nr repeat the last valid one).
struct Int8Rows {
  const uint8_t* bytes[kDecodeRowGroup];
  const void* scales[kDecodeRowGroup];
  int nr;
};

// Bytes per stored row of an integer-path weight matrix (4-bit: two weights per byte).
template <WeightFormat F>
K3_INLINE int64_t Int8RowBytes(int64_t cols) {
  return F == WeightFormat::kInt8Block ? cols : cols / 2;
}

// The row group of w starting at row r, of the rows before r1.
template <WeightFormat F>
K3_INLINE Int8Rows Int8RowGroup(const WeightMatrix& w, int64_t r, int64_t r1) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  Int8Rows g;
  g.nr = static_cast<int>(Min(kDecodeRowGroup, r1 - r));
  for (int i = 0; i < kDecodeRowGroup; ++i) {
    const int64_t row = r + Min(i, g.nr - 1);
    g.bytes[i] = base + row * Int8RowBytes<F>(w.cols);
    g.scales[i] = FourBitScaleRow(w, row);
  }
  return g;
}

}  // namespace
}  // namespace k3::kernels::detail
