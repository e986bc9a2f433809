// The GEMM regime's weight packings (matmul_simd_gemm.h: PackPanelDirect with its row staging,
// PackPanelFp8Folded) checked through their results: every output of the GEMM regime is, bit for
// bit, a float32 FMA chain over each kGemmKc-column block in column order, the blocks' sums added
// to the output in turn, over the weights as the scalar DequantizeRow gives them. A weight packed
// at the wrong place, a wrong scale or a missed tail changes bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels::matmul_gemm_pack_test {
namespace {

using detail::Isa;
using detail::Regime;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::RandomVector;
using matmul_testing::TestWeights;

// y[t, r] as GemmMicro and GemmPanel compute it (see the file comment).
std::vector<float> FmaChainPerBlock(const std::vector<float>& x, int64_t tokens,
                                    const WeightMatrix& w) {
  std::vector<float> y(static_cast<size_t>(tokens * w.rows));
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    DequantizeRow(w, r, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      float out = 0.0f;
      for (int64_t k0 = 0; k0 < w.cols; k0 += detail::kGemmKc) {
        float acc = 0.0f;
        for (int64_t k = k0; k < std::min(k0 + detail::kGemmKc, w.cols); ++k) {
          acc = std::fma(x[t * w.cols + k], row[k], acc);
        }
        out = k0 == 0 ? acc : acc + out;
      }
      y[t * w.rows + r] = out;
    }
  }
  return y;
}

void ExpectFmaChains(const TestWeights& t, const std::string& what, std::mt19937& rng) {
  for (int64_t tokens : {1, 5, 15, 40}) {
    const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * t.w.cols), rng);
    const std::vector<float> want = FmaChainPerBlock(x, tokens, t.w);
    for (Isa isa : detail::SupportedIsas()) {
      if (isa == Isa::kScalar) continue;
      std::vector<float> got(want.size(), -1.0f);
      detail::MatMulWithIsa(isa, Regime::kGemm, x.data(), tokens, t.w, got.data());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
            << what << " " << detail::IsaName(isa) << " tokens " << tokens << " row "
            << i % t.w.rows << " token " << i / t.w.rows << ": " << got[i] << " vs " << want[i];
      }
    }
  }
}

constexpr int64_t kRows[] = {1, 31, 33, 70};
constexpr int64_t kCols[] = {7, 16, 255, 300, 520};

TEST(GemmPackTest, DenseFormatsAreFmaChainsPerColumnBlock) {
  std::mt19937 rng(7);
  const std::pair<WeightFormat, const char*> formats[] = {
      {WeightFormat::kF32, "f32"}, {WeightFormat::kBF16, "bf16"}, {WeightFormat::kF16, "f16"}};
  for (const auto& [format, name] : formats) {
    for (int64_t rows : kRows) {
      for (int64_t cols : kCols) {
        TestWeights t;
        FillRandom(t, {"dense", format}, rows, cols, rng);
        ExpectFmaChains(
            t, std::string(name) + " " + std::to_string(rows) + "x" + std::to_string(cols), rng);
      }
    }
  }
}

// FP8 with and without WeightMatrix::fp8_nan_free (the folded packing takes the flagged ones whose
// block is a multiple of the vector width), blocks the packings treat differently, and tile scales
// up to the largest that folds (2^119 * 256 is finite), subnormal and negative ones.
TEST(GemmPackTest, Fp8IsAnFmaChainPerColumnBlockFoldedOrNot) {
  std::mt19937 rng(11);
  const float special[] = {0x1p119f, 0x1p-149f, 1e-40f, -3.5f, 0.0f, 0x1p-126f};
  for (int64_t block : {16, 24, 128}) {
    for (int64_t rows : kRows) {
      for (int64_t cols : kCols) {
        for (bool nan_free : {false, true}) {
          TestWeights t;
          FillRandom(t, {"fp8", WeightFormat::kFp8Block, block, 0.01f, 100.0f, 0x7E, nan_free},
                     rows, cols, rng);
          for (size_t i = 0; i < t.block_scales.size(); i += 2) {
            t.block_scales[i] = special[(i / 2) % std::size(special)];
          }
          ExpectFmaChains(t,
                          "fp8 block " + std::to_string(block) + " " + std::to_string(rows) + "x" +
                              std::to_string(cols) + (nan_free ? " nan-free" : ""),
                          rng);
        }
      }
    }
  }
}

}  // namespace
}  // namespace k3::kernels::matmul_gemm_pack_test
