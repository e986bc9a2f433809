// MatMul for kBf16Panels weights (matmul.h): the layout's arithmetic shared by the baseline driver
// (matmul_panels.cc) and the AVX-512 tiles (matmul_panels_avx512.cc). Both include it, so its
// inline helpers live in an anonymous namespace (the ODR rule of matmul_simd_base.h: the linker
// must never hand baseline code a copy compiled with AVX-512 flags).
#pragma once

#include <cstdint>

#include "kernels/matmul.h"

namespace k3::kernels::detail {

// What the AVX-512 tiles compute: y[t, r] for t < tokens and the rows of groups [g0, g1).
struct PanelArgs {
  const uint32_t* words = nullptr;  // the packed data as 32-bit column pairs
  int64_t rows = 0, cols = 0;
  const float* x = nullptr;  // [tokens, cols]
  int64_t tokens = 0;
  float* y = nullptr;  // [tokens, rows]
  // Calls of several token tiles: widen each group's weights once (DecodeWidensOnce; same bits).
  bool widen_once = false;
};

namespace {

// Panels in group g of a matrix with `rows` rows.
inline int64_t PanelsInGroup(int64_t g, int64_t rows) {
  const int64_t panels = (rows + kBf16PanelRows - 1) / kBf16PanelRows;
  const int64_t left = panels - g * kBf16PanelGroup;
  return left < kBf16PanelGroup ? left : kBf16PanelGroup;
}

// 32-bit words before group g: every earlier group is full (kBf16PanelGroup panels).
inline int64_t GroupWordOffset(int64_t g, int64_t cols) {
  return g * kBf16PanelGroup * kBf16PanelRows * cols / 2;
}

// Groups of a matrix with `rows` rows.
inline int64_t PanelGroups(int64_t rows) {
  const int64_t group_rows = kBf16PanelRows * kBf16PanelGroup;
  return (rows + group_rows - 1) / group_rows;
}

}  // namespace

// The AVX-512 tiles over groups [g0, g1) (call only where AVX-512 runs).
void Bf16PanelGroupsAvx512(const PanelArgs& a, int64_t g0, int64_t g1);

}  // namespace k3::kernels::detail
