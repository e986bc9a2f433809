// kBf16Panels (matmul.h): the layout against its definition, and MatMul's bits against std::fma
// chains computed here from the row-major BF16 matrix, on every ISA, regime, token count and
// thread split; the float64 reference within the chain's error bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_testing.h"
#include "tensor/numeric.h"

namespace k3::kernels::matmul_panels_test {
namespace {

using matmul_testing::AbsProducts;
using matmul_testing::RandomVector;

// A row-major BF16 matrix and its panels.
struct Panels {
  std::vector<uint16_t> bf16, packed;
  WeightMatrix row_major, w;
};

Panels MakePanels(int64_t rows, int64_t cols, std::mt19937& rng) {
  Panels p;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  p.bf16.resize(static_cast<size_t>(rows * cols));
  for (uint16_t& v : p.bf16) v = tensor::FloatToBf16(uniform(rng));
  p.row_major = {WeightFormat::kBF16, rows, cols, p.bf16.data()};
  p.packed.assign(static_cast<size_t>(Bf16PanelsElements(rows, cols)), 0xFFFF);
  p.w = PackBf16Panels(p.row_major, p.packed.data());
  return p;
}

bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

// y[t, r] as the layout defines it: acc = fma(W[r, c], x[t, c], acc) for c = 0, 1, ...
std::vector<float> FmaChains(const Panels& p, const std::vector<float>& x, int64_t tokens) {
  const int64_t rows = p.w.rows, cols = p.w.cols;
  std::vector<float> y(static_cast<size_t>(tokens * rows));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (int64_t c = 0; c < cols; ++c) {
        acc = std::fma(tensor::Bf16ToFloat(p.bf16[r * cols + c]), x[t * cols + c], acc);
      }
      y[t * rows + r] = acc;
    }
  }
  return y;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 2}, {16, 2}, {17, 34}, {64, 64}, {65, 130}, {100, 96}, {128, 258}, {200, 514}};

TEST(Bf16PanelsTest, EveryElementHasItsOwnPlaceAndPaddingIsZero) {
  for (auto [rows, cols] : kShapes) {
    const int64_t n = Bf16PanelsElements(rows, cols);
    EXPECT_EQ(n, (rows + 15) / 16 * 16 * cols);
    std::vector<int> seen(static_cast<size_t>(n), 0);
    for (int64_t r = 0; r < (rows + 15) / 16 * 16; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t at = Bf16PanelsOffset(r, c, rows, cols);
        ASSERT_TRUE(at >= 0 && at < n) << rows << "x" << cols << " r " << r << " c " << c;
        ++seen[static_cast<size_t>(at)];
      }
    }
    for (int count : seen) ASSERT_EQ(count, 1) << rows << "x" << cols;
    std::mt19937 rng(5);
    Panels p = MakePanels(rows, cols, rng);
    for (int64_t r = rows; r < (rows + 15) / 16 * 16; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        EXPECT_EQ(p.packed[static_cast<size_t>(Bf16PanelsOffset(r, c, rows, cols))], 0);
      }
    }
  }
}

TEST(Bf16PanelsTest, DequantizedRowsAreTheBf16Rows) {
  std::mt19937 rng(6);
  for (auto [rows, cols] : kShapes) {
    Panels p = MakePanels(rows, cols, rng);
    std::vector<float> row(static_cast<size_t>(cols)), want(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      DequantizeRow(p.w, r, row.data());
      DequantizeRow(p.row_major, r, want.data());
      for (int64_t c = 0; c < cols; ++c) ASSERT_TRUE(SameBits(row[c], want[c])) << r << " " << c;
      for (detail::Isa isa : detail::SupportedIsas()) {
        detail::DequantizeRowWithIsa(isa, p.w, r, row.data());
        for (int64_t c = 0; c < cols; ++c) ASSERT_TRUE(SameBits(row[c], want[c])) << r << " " << c;
      }
    }
  }
}

void ExpectFmaChainsEverywhere(std::mt19937& rng, base::ThreadPool& pool) {
  for (auto [rows, cols] : kShapes) {
    Panels p = MakePanels(rows, cols, rng);
    for (int64_t tokens : {1, 2, 5, 6, 7, 13, 33}) {
      const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
      const std::vector<float> want = FmaChains(p, x, tokens);
      for (detail::Isa isa : detail::SupportedIsas()) {
        for (detail::Regime regime : {detail::Regime::kAuto, detail::Regime::kGemm}) {
          for (base::ThreadPool* threads : {static_cast<base::ThreadPool*>(nullptr), &pool}) {
            std::vector<float> y(want.size(), -1.0f);
            detail::MatMulWithIsa(isa, regime, x.data(), tokens, p.w, y.data(), threads);
            for (size_t i = 0; i < y.size(); ++i) {
              ASSERT_TRUE(SameBits(y[i], want[i]))
                  << detail::IsaName(isa) << " " << rows << "x" << cols << " tokens " << tokens
                  << " output " << i << ": " << y[i] << " vs " << want[i];
            }
          }
        }
      }
    }
  }
}

// The same bits on every ISA and regime, alone or on a pool, for any token count (the AVX-512
// tiles take up to 6 tokens and 4 panels at a time, calls of several tiles widened once or per
// tile; the scalar path 8 chains). Shapes from 2 columns to 514 (one to nine 32-pair chunks).
TEST(Bf16PanelsTest, MatMulIsTheFmaChainEverywhere) {
  std::mt19937 rng(7);
  base::ThreadPool pool(3);
  for (auto widening : {detail::DecodeWidening::kOnce, detail::DecodeWidening::kPerTile}) {
    detail::SetDecodeWidening(widening);
    ExpectFmaChainsEverywhere(rng, pool);
  }
  detail::SetDecodeWidening(detail::DecodeWidening::kAuto);
}

// A token's outputs do not depend on the call's other tokens, and equal the float64 reference
// within the chain's bound: |error| <= gamma_cols * sum_c |x w| (gamma_n = n u / (1 - n u)).
TEST(Bf16PanelsTest, TokensAloneAndTheReference) {
  std::mt19937 rng(8);
  base::ThreadPool pool(2);
  const int64_t rows = 300, cols = 1030, tokens = 40;
  Panels p = MakePanels(rows, cols, rng);
  const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
  std::vector<float> together(static_cast<size_t>(tokens * rows)), ref(together.size());
  MatMul(x.data(), tokens, p.w, together.data(), &pool);
  MatMulReference(x.data(), tokens, p.row_major, ref.data());
  const std::vector<double> abs = AbsProducts(x, tokens, p.row_major);
  const double u = std::ldexp(1.0, -24), gamma = cols * u / (1 - cols * u);
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<float> alone(static_cast<size_t>(rows));
    MatMul(x.data() + t * cols, 1, p.w, alone.data());
    for (int64_t r = 0; r < rows; ++r) {
      const size_t i = static_cast<size_t>(t * rows + r);
      ASSERT_TRUE(SameBits(alone[r], together[i])) << "token " << t << " row " << r;
      ASSERT_LE(std::fabs(double{together[i]} - ref[i]), gamma * abs[i]) << t << " " << r;
    }
  }
}

// NaN and infinite weights reach exactly their rows' outputs, as in the chains.
TEST(Bf16PanelsTest, NonFiniteWeightsPropagateAsInTheChains) {
  std::mt19937 rng(9);
  const int64_t rows = 70, cols = 66, tokens = 9;
  Panels p = MakePanels(rows, cols, rng);
  p.bf16[3 * cols + 5] = 0x7FC0;    // NaN
  p.bf16[20 * cols + 64] = 0x7F80;  // +inf
  p.bf16[21 * cols + 0] = 0xFF80;   // -inf
  p.bf16[21 * cols + 1] = 0x7F80;   // +inf: inf - inf = NaN
  p.w = PackBf16Panels(p.row_major, p.packed.data());
  std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
  x[0] = x[1] = 0.5f;  // token 0: -inf + inf in row 21
  const std::vector<float> want = FmaChains(p, x, tokens);
  std::vector<float> y(want.size());
  MatMul(x.data(), tokens, p.w, y.data());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(SameBits(y[i], want[i])) << i;
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isinf(y[20]));
  EXPECT_TRUE(std::isnan(y[21]));
}

// Row views over whole groups compute their rows; others are refused.
TEST(Bf16PanelsTest, RowRangeCoversWholeGroups) {
  std::mt19937 rng(10);
  const int64_t rows = 150, cols = 40;
  Panels p = MakePanels(rows, cols, rng);
  const std::vector<float> x = RandomVector(static_cast<size_t>(cols), rng);
  std::vector<float> all(static_cast<size_t>(rows));
  MatMul(x.data(), 1, p.w, all.data());
  for (auto [begin, count] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 64}, {64, 86}, {128, 22}}) {
    std::vector<float> part(static_cast<size_t>(count));
    MatMul(x.data(), 1, RowRange(p.w, begin, count), part.data());
    for (int64_t r = 0; r < count; ++r) ASSERT_TRUE(SameBits(part[r], all[begin + r])) << begin + r;
  }
  EXPECT_DEATH(RowRange(p.w, 16, 64), "whole panel groups");
  EXPECT_DEATH(RowRange(p.w, 0, 70), "whole panel groups");
}

}  // namespace
}  // namespace k3::kernels::matmul_panels_test
