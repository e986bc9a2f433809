// The SIMD MatMul kernels, written once: the decode driver (matmul_simd_decode.h), the exact
// dequantisation, the GEMM driver (matmul_simd_gemm.h) and the row-table products
// (matmul_simd_rows.h) are templates over a vector-traits type V, and MakeIsaKernels<V>()
// instantiates them into the IsaKernels table matmul.cc and row_table.cc dispatch to.
//
// Adding an ISA means one traits header and one small translation unit, nothing else here:
//  - matmul_vec_<isa>.h: a struct with the members Avx2 (matmul_vec_avx2.h) documents: the vector,
//    mask and pair types; kLanes; the tile sizes (kPanelRows = 2 * kLanes, kMaxTileTokens,
//    kMaxDecodeTokens[Fp4]); the algorithm choices (kWeightsFirst, kBf16TwoPasses, kMaskedLoads,
//    kE2M1Groups); loads, masked loads and stores, FMA, broadcast, horizontal sums, the weight
//    conversions (Weights, ExactWeights, BF16 pairs, E2M1, E4M3 NaN scan) and the transpose;
//  - matmul_<isa>.cc, compiled with the ISA's flags (src/kernels/CMakeLists.txt): include the
//    traits header and this one and return a table made by MakeIsaKernels;
//  - a declaration next to Avx2Kernels() in matmul_kernels.h and a case in matmul.cc's dispatch.
// Everything here follows the ODR rule of matmul_simd_base.h.
#pragma once

#include <cstdint>

#include "kernels/matmul_simd_base.h"
#include "kernels/matmul_simd_decode.h"
#include "kernels/matmul_simd_gemm.h"
#include "kernels/matmul_simd_rows.h"

namespace k3::kernels::detail {
namespace {

template <class V>
constexpr IsaKernels MakeIsaKernels() {
  static_assert(kGemmKc % V::kLanes == 0 && V::kPanelRows == 2 * V::kLanes);
  static_assert(32 % (2 * V::kLanes) == 0 && V::kE2M1Groups * 2 * V::kLanes == 32);
  return IsaKernels{
      .lanes = V::kLanes,
      .pair_group = 2 * V::kLanes,
      .panel_rows = V::kPanelRows,
      .max_tile_tokens = V::kMaxTileTokens,
      .gemm_scratch = GemmScratch<V>(),
      .decode_rows = DecodeRows<V>,
      .gemm_panel = GemmPanel<V>,
      .pack_tokens = PackTokens<V>,
      .dequantize_range = DequantizeRangeImpl<V>,
      .fma_loop = FmaLoop<V>,
      .row_table_dots = RowTableDots<V>,
      .row_table_combine = RowTableCombine<V>,
  };
}

}  // namespace
}  // namespace k3::kernels::detail
