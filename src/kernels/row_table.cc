#include "kernels/row_table.h"

#include <cmath>

#include "base/check.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace detail {
namespace {

void CheckTable(const RowTable& r) {
  K3_CHECK(r.format == WeightFormat::kF32 || r.format == WeightFormat::kBF16 ||
           r.format == WeightFormat::kF16)
      << "row tables hold F32, BF16 or F16 rows";
  K3_CHECK(r.n >= 0 && r.cols >= 0 && (r.n == 0 || r.rows != nullptr));
}

float Element(const RowTable& r, int64_t j, int64_t c) {
  switch (r.format) {
    case WeightFormat::kF32:
      return static_cast<const float*>(r.rows[j])[c];
    case WeightFormat::kBF16:
      return tensor::Bf16ToFloat(static_cast<const uint16_t*>(r.rows[j])[c]);
    default:
      return tensor::F16ToFloat(static_cast<const uint16_t*>(r.rows[j])[c]);
  }
}

RowTableArgs ArgsOf(const float* x, int64_t tokens, int64_t ldx, const RowTable& r, float* y,
                    int64_t ldy) {
  RowTableArgs a;
  a.x = x;
  a.ldx = ldx;
  a.tokens = tokens;
  a.rows = r.rows;
  a.n = r.n;
  a.cols = r.cols;
  a.format = r.format;
  a.y = y;
  a.ldy = ldy;
  return a;
}

}  // namespace

void RowTableDotsWithIsa(Isa isa, const float* x, int64_t tokens, const RowTable& r, float* y,
                         int64_t ldy, base::Arena& scratch) {
  CheckTable(r);
  K3_CHECK(ldy >= r.n) << "ldy " << ldy << " < rows " << r.n;
  if (tokens <= 0 || r.n == 0) return;
  if (isa == Isa::kScalar) {
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t j = 0; j < r.n; ++j) {
        float sum = 0.0f;
        for (int64_t c = 0; c < r.cols; ++c)
          sum = std::fma(x[t * r.cols + c], Element(r, j, c), sum);
        y[t * ldy + j] = sum;
      }
    }
    return;
  }
  const IsaKernels& k = Kernels(isa);
  base::ArenaMark mark(scratch);
  const float* xs = r.format == WeightFormat::kBF16
                        ? PermuteEvenOdd(x, tokens, r.cols, k.pair_group, scratch)
                        : x;
  k.row_table_dots(ArgsOf(xs, tokens, r.cols, r, y, ldy));
}

void RowTableCombineWithIsa(Isa isa, const float* x, int64_t tokens, int64_t ldx, const RowTable& r,
                            float* y, int64_t ldy) {
  CheckTable(r);
  K3_CHECK(ldx >= r.n && ldy >= r.cols) << "ldx " << ldx << ", ldy " << ldy;
  if (tokens <= 0 || r.cols == 0) return;
  if (isa == Isa::kScalar) {
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t c = 0; c < r.cols; ++c) {
        float sum = 0.0f;
        for (int64_t j = 0; j < r.n; ++j) sum = std::fma(Element(r, j, c), x[t * ldx + j], sum);
        y[t * ldy + c] = sum;
      }
    }
    return;
  }
  Kernels(isa).row_table_combine(ArgsOf(x, tokens, ldx, r, y, ldy));
}

}  // namespace detail

void RowTableDots(const float* x, int64_t tokens, const RowTable& r, float* y, int64_t ldy,
                  base::Arena& scratch) {
  detail::RowTableDotsWithIsa(detail::BestIsa(), x, tokens, r, y, ldy, scratch);
}

void RowTableCombine(const float* x, int64_t tokens, int64_t ldx, const RowTable& r, float* y,
                     int64_t ldy) {
  detail::RowTableCombineWithIsa(detail::BestIsa(), x, tokens, ldx, r, y, ldy);
}

}  // namespace k3::kernels
