// RowTableDots and RowTableCombine on every supported ISA and row format, over scattered rows and
// odd shapes: dots against a float64 reference within the float32 summation bound, combine bit
// for bit against a scalar chain of fused multiply-adds in increasing row order.
#include "kernels/row_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/matmul_detail.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

using detail::Isa;

// n rows of `cols` elements in `format`, stored in shuffled order with gaps between them, and
// their float values.
struct ScatteredRows {
  std::vector<uint8_t> storage;
  std::vector<const void*> pointers;
  std::vector<float> values;  // [n, cols]
  RowTable table;

  ScatteredRows(WeightFormat format, int64_t n, int64_t cols, std::mt19937& rng) {
    const int64_t bytes = StoredElementBytes(format);
    const int64_t stride = (cols + 5) * bytes;  // a gap after every row
    storage.assign(static_cast<size_t>(n * stride + 64), 0xEE);
    std::vector<int64_t> slot(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) slot[j] = j;
    std::shuffle(slot.begin(), slot.end(), rng);
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    values.resize(static_cast<size_t>(n * cols));
    for (int64_t j = 0; j < n; ++j) {
      uint8_t* row = storage.data() + slot[j] * stride;
      pointers.push_back(row);
      for (int64_t c = 0; c < cols; ++c) values[j * cols + c] = Store(format, uniform(rng), row, c);
    }
    table = {pointers.data(), n, cols, format};
  }

  // Writes v rounded to the format at element c of row; returns the stored value.
  static float Store(WeightFormat format, float v, uint8_t* row, int64_t c) {
    if (format == WeightFormat::kF32) {
      reinterpret_cast<float*>(row)[c] = v;
      return v;
    }
    auto* halves = reinterpret_cast<uint16_t*>(row);
    if (format == WeightFormat::kBF16) {
      halves[c] = tensor::FloatToBf16(v);
      return tensor::Bf16ToFloat(halves[c]);
    }
    halves[c] = tensor::FloatToF16(v);
    return tensor::F16ToFloat(halves[c]);
  }
};

std::vector<float> RandomFloats(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = uniform(rng);
  return v;
}

struct Shape {
  int64_t tokens, n, cols;
};

std::vector<Shape> Shapes() {
  std::vector<Shape> shapes;
  for (int64_t tokens : {1, 3, 7, 13, 16}) {
    for (int64_t n : {1, 3, 5, 17}) {
      for (int64_t cols : {1, 7, 16, 31, 33, 64, 70}) shapes.push_back({tokens, n, cols});
    }
  }
  shapes.push_back({8, 40, 576});  // an MLA decode step: 8 heads, 40 positions, 512 + 64
  return shapes;
}

constexpr WeightFormat kFormats[] = {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kF16};

TEST(RowTableTest, DotsWithinTheSummationBoundOfFloat64) {
  std::mt19937 rng(11);
  base::Arena scratch;
  for (Isa isa : detail::SupportedIsas()) {
    for (WeightFormat format : kFormats) {
      for (const Shape& s : Shapes()) {
        ScatteredRows rows(format, s.n, s.cols, rng);
        const std::vector<float> x = RandomFloats(s.tokens * s.cols, rng);
        const std::vector<float> x_before = x;
        const int64_t ldy = s.n + 3;
        std::vector<float> y(static_cast<size_t>(s.tokens * ldy), -7.0f);
        detail::RowTableDotsWithIsa(isa, x.data(), s.tokens, rows.table, y.data(), ldy, scratch);
        ASSERT_EQ(x, x_before) << "x must not change";
        for (int64_t t = 0; t < s.tokens; ++t) {
          for (int64_t j = 0; j < ldy; ++j) {
            const float got = y[t * ldy + j];
            if (j >= s.n) {
              ASSERT_EQ(got, -7.0f) << "wrote past the rows at t " << t << " j " << j;
              continue;
            }
            double want = 0, abs_sum = 0;
            for (int64_t c = 0; c < s.cols; ++c) {
              const double p = double{x[t * s.cols + c]} * rows.values[j * s.cols + c];
              want += p;
              abs_sum += std::fabs(p);
            }
            // Any order of cols float32 additions of exact-or-rounded products, plus rounding
            // the reference: (cols + 1) * 2^-24 relative to sum |x w|.
            const double bound = static_cast<double>(s.cols + 1) * 0x1p-24 * abs_sum + 1e-30;
            ASSERT_LE(std::fabs(got - want), bound)
                << detail::IsaName(isa) << " format " << static_cast<int>(format) << " tokens "
                << s.tokens << " n " << s.n << " cols " << s.cols << " t " << t << " j " << j;
          }
        }
      }
    }
  }
}

TEST(RowTableTest, CombineIsAnFmaChainInRowOrderBitForBit) {
  std::mt19937 rng(12);
  for (Isa isa : detail::SupportedIsas()) {
    for (WeightFormat format : kFormats) {
      for (const Shape& s : Shapes()) {
        ScatteredRows rows(format, s.n, s.cols, rng);
        const int64_t ldx = s.n + 2, ldy = s.cols + 5;
        const std::vector<float> x = RandomFloats(s.tokens * ldx, rng);
        std::vector<float> y(static_cast<size_t>(s.tokens * ldy), -7.0f);
        detail::RowTableCombineWithIsa(isa, x.data(), s.tokens, ldx, rows.table, y.data(), ldy);
        for (int64_t t = 0; t < s.tokens; ++t) {
          for (int64_t c = 0; c < ldy; ++c) {
            float want = -7.0f;
            if (c < s.cols) {
              want = 0.0f;
              for (int64_t j = 0; j < s.n; ++j) {
                want = std::fma(rows.values[j * s.cols + c], x[t * ldx + j], want);
              }
            }
            ASSERT_EQ(y[t * ldy + c], want)
                << detail::IsaName(isa) << " format " << static_cast<int>(format) << " tokens "
                << s.tokens << " n " << s.n << " cols " << s.cols << " t " << t << " c " << c;
          }
        }
      }
    }
  }
}

TEST(RowTableTest, EmptyTablesWriteZerosOrNothing) {
  base::Arena scratch;
  const float x[4] = {1, 2, 3, 4};
  for (Isa isa : detail::SupportedIsas()) {
    float y[4] = {5, 5, 5, 5};
    detail::RowTableDotsWithIsa(isa, x, 2, RowTable{nullptr, 0, 2, WeightFormat::kBF16}, y, 0,
                                scratch);
    EXPECT_EQ(y[0], 5.0f) << "no rows: nothing to write";
    detail::RowTableCombineWithIsa(isa, x, 2, 0, RowTable{nullptr, 0, 2, WeightFormat::kF32}, y, 2);
    for (float v : y) EXPECT_EQ(v, 0.0f) << "a sum over no rows is 0";
  }
}

TEST(RowTableDeathTest, RefusesOtherFormats) {
  base::Arena scratch;
  const float x[2] = {1, 2};
  float y[2];
  const uint8_t byte = 0;
  const void* row = &byte;
  EXPECT_DEATH(RowTableDots(x, 1, RowTable{&row, 1, 2, WeightFormat::kFp8Block}, y, 1, scratch),
               "F32, BF16 or F16");
}

}  // namespace
}  // namespace k3::kernels
