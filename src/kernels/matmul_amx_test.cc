// GemmPrecision::kBf16 through MatMul: the GEMM regime against MatMulReference within a bound
// derived from BF16 rounding, and everything else unchanged. It runs on AMX or vdpbf16ps
// (MatMulBf16Path()); with neither, kBf16 runs the FP32 kernels, which meet the same bound, and
// the tests that check the BF16 arithmetic itself skip. The vdpbf16ps kernels themselves are
// tested in matmul_avx512_bf16_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_testing.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

using matmul_testing::AbsProducts;
using matmul_testing::Bf16Tolerance;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::RandomVector;
using matmul_testing::RoundToBf16;
using matmul_testing::ScopedGemmPrecision;
using matmul_testing::TestWeights;

class Bf16GemmTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(Bf16GemmTest, MatchesReferenceWithinBf16Bound) {
  const FormatCase& fc = GetParam();
  const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
  base::ThreadPool pool(3);
  std::mt19937 rng(2024);
  for (int64_t tokens : {33, 64, 100}) {
    for (int64_t rows : {31, 64, 200}) {
      for (int64_t cols : {32, 100, 1024}) {
        if (fc.format == WeightFormat::kMxfp4 && cols % 32 != 0) cols = 128;
        TestWeights t;
        FillRandom(t, fc, rows, cols, rng);
        std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
        const size_t n = static_cast<size_t>(tokens * rows);
        std::vector<float> want(n), got(n, -12345.0f), pooled(n, -12345.0f);
        MatMulReference(x.data(), tokens, t.w, want.data());
        const std::vector<double> abs_products = AbsProducts(x, tokens, t.w);
        MatMul(x.data(), tokens, t.w, got.data());
        MatMul(x.data(), tokens, t.w, pooled.data(), &pool);
        const std::string what = fc.name + " " + std::to_string(tokens) + " tokens x [" +
                                 std::to_string(rows) + "x" + std::to_string(cols) + "]";
        EXPECT_EQ(0, std::memcmp(got.data(), pooled.data(), n * sizeof(float))) << what;
        int failures = 0;
        for (size_t i = 0; i < n && failures < 5; ++i) {
          const double tolerance = Bf16Tolerance(abs_products[i], cols);
          if (std::fabs(double{got[i]} - want[i]) <= tolerance) continue;
          ++failures;
          ADD_FAILURE() << what << " token " << i / rows << " row " << i % rows << ": got "
                        << got[i] << " want " << want[i] << " (tolerance " << tolerance << ")";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, Bf16GemmTest,
    ::testing::Values(
        FormatCase{"F32", WeightFormat::kF32}, FormatCase{"BF16", WeightFormat::kBF16},
        FormatCase{"F16", WeightFormat::kF16}, FormatCase{"MXFP4", WeightFormat::kMxfp4},
        FormatCase{"FP8_block128", WeightFormat::kFp8Block, 128},
        FormatCase{"FP8_block48", WeightFormat::kFp8Block, 48},
        FormatCase{"FP8_large_scales", WeightFormat::kFp8Block, 32, 0x1p118f, 0x1p121f, 0x20},
        FormatCase{"FP8_tiny_scales", WeightFormat::kFp8Block, 32, 0x1p-140f, 0x1p-100f}),
    [](const ::testing::TestParamInfo<FormatCase>& info) { return info.param.name; });

// With x and W rounded to BF16 (nearest even) first, only the float32 accumulation differs from a
// double-precision product: a bound about 2^-7 / (cols * 2^-23) times tighter than the one above,
// which FP32 arithmetic on unrounded inputs would miss. This pins the packing (pair layout,
// ragged edges) and its rounding on whichever BF16 path MatMul takes.
TEST(Bf16GemmTest, RoundsEachFactorToBf16) {
  if (std::string(MatMulBf16Path()) == "none") {
    GTEST_SKIP() << "neither AMX-BF16 (with tile permission) nor AVX512-BF16: kBf16 runs FP32";
  }
  const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
  std::mt19937 rng(77);
  for (int64_t cols : {64, 100, 257}) {
    const int64_t tokens = 47, rows = 45;
    TestWeights t;
    FillRandom(t, {"F32", WeightFormat::kF32}, rows, cols, rng);
    std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
    std::vector<float> xr = x;
    for (float& v : xr) v = RoundToBf16(v);
    TestWeights rounded;
    rounded.Allocate(WeightFormat::kF32, rows, cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      rounded.As<float>()[i] = RoundToBf16(t.As<float>()[i]);
    const size_t n = static_cast<size_t>(tokens * rows);
    std::vector<float> want(n), got(n), fp32(n);
    MatMulReference(xr.data(), tokens, rounded.w, want.data());
    const std::vector<double> abs_products = AbsProducts(xr, tokens, rounded.w);
    MatMul(x.data(), tokens, t.w, got.data());
    SetGemmPrecision(GemmPrecision::kFp32);
    MatMul(x.data(), tokens, t.w, fp32.data());
    SetGemmPrecision(GemmPrecision::kBf16);
    bool differs_from_fp32 = false;
    for (size_t i = 0; i < n; ++i) {
      const double tolerance = static_cast<double>(cols + 1) * 0x1p-23 * abs_products[i];
      ASSERT_LE(std::fabs(double{got[i]} - want[i]), tolerance)
          << "cols " << cols << " token " << i / rows << " row " << i % rows;
      differs_from_fp32 = differs_from_fp32 || got[i] != fp32[i];
    }
    EXPECT_TRUE(differs_from_fp32) << "cols " << cols << ": kBf16 gave the FP32 results";
  }
}

// One-hot activations select single weights, which BF16 holds exactly for MXFP4 (2 significant
// bits) except below 2^-126, where AMX flushes to zero: every byte under every E8M0 scale,
// including the overflowing 2^127 and NaN.
TEST(Bf16GemmTest, Mxfp4EveryByteWithEveryScaleIsExact) {
  const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
  TestWeights t;
  FillEveryMxfp4ByteUnderEveryScale(&t);
  const int64_t tokens = 32;
  std::vector<float> x(static_cast<size_t>(tokens * 32), 0.0f);
  for (int64_t j = 0; j < tokens; ++j) x[j * 32 + j] = 1.0f;
  std::vector<float> want(static_cast<size_t>(tokens * t.w.rows)), got(want.size());
  MatMulReference(x.data(), tokens, t.w, want.data());
  MatMul(x.data(), tokens, t.w, got.data());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])) ||
                      (got[i] == 0.0f && std::fabs(want[i]) < 0x1p-126f);
    ASSERT_TRUE(same) << "token " << i / t.w.rows << " row " << i % t.w.rows << ": " << got[i]
                      << " vs " << want[i];
  }
}

TEST(Bf16GemmTest, NanWeightsPropagate) {
  const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
  std::mt19937 rng(5);
  TestWeights t;
  FillRandom(t, {"F32", WeightFormat::kF32}, 40, 64, rng);
  t.As<float>()[7 * 64 + 3] = NAN;
  const int64_t tokens = 40;
  std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 64), rng);
  std::vector<float> y(static_cast<size_t>(tokens * 40));
  MatMul(x.data(), tokens, t.w, y.data());
  for (int64_t tok = 0; tok < tokens; ++tok) {
    for (int64_t r = 0; r < 40; ++r) {
      EXPECT_EQ(std::isnan(y[tok * 40 + r]), r == 7) << "token " << tok << " row " << r;
    }
  }
}

// The decode regime ignores the setting (except the vdpbf16ps decode of BF16 weights at
// kDpbf16DecodeMinTokens .. kDpbf16DecodeMaxTokens tokens, and the FP8 / 4-bit products which the
// setting sends to the BF16 GEMM: Bf16GemmTakes), and kFp32 after kBf16 is bit-identical to
// before.
TEST(Bf16GemmTest, DecodeRegimeAndFp32AreUnchanged) {
  std::mt19937 rng(9);
  base::ThreadPool pool(2);
  for (WeightFormat format :
       {WeightFormat::kBF16, WeightFormat::kMxfp4, WeightFormat::kInt4, WeightFormat::kFp8Block}) {
    TestWeights t;
    FillRandom(t, {"w", format}, 96, 256, rng);
    const int64_t decode_tokens = detail::DecodeMaxTokens(detail::BestIsa(), format);
    for (int64_t tokens :
         {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{17}, int64_t{32}, decode_tokens}) {
      if (tokens < 1) continue;
      std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 256), rng);
      const size_t n = static_cast<size_t>(tokens * 96);
      std::vector<float> before(n), bf16(n), after(n);
      ASSERT_EQ(GetGemmPrecision(), GemmPrecision::kFp32);
      MatMul(x.data(), tokens, t.w, before.data(), &pool);
      bool bf16_decode = false, bf16_gemm = false;
      {
        const ScopedGemmPrecision scoped(GemmPrecision::kBf16);
        MatMul(x.data(), tokens, t.w, bf16.data(), &pool);
        bf16_decode = detail::UseDpbf16Decode(detail::BestIsa(), tokens, t.w);
        bf16_gemm = detail::Bf16GemmTakes(detail::BestIsa(), tokens, t.w);
      }
      MatMul(x.data(), tokens, t.w, after.data(), &pool);
      EXPECT_EQ(0, std::memcmp(before.data(), after.data(), n * sizeof(float))) << tokens;
      if (tokens <= decode_tokens && !bf16_decode && !bf16_gemm) {
        EXPECT_EQ(0, std::memcmp(before.data(), bf16.data(), n * sizeof(float))) << tokens;
      }
      if (bf16_decode) {
        EXPECT_GE(tokens, detail::kDpbf16DecodeMinTokens);
        EXPECT_NE(0, std::memcmp(before.data(), bf16.data(), n * sizeof(float))) << tokens;
      }
    }
  }
}

// On AMX, kBf16 products of BF16 weights from 8 tokens run on the tiles (they beat the FP32
// decode tiles and the vdpbf16ps decode kernel there); below 8 they stay FP32, bit for bit.
TEST(Bf16GemmTest, AmxTakesBf16DecodeBatchesFromEightTokens) {
  if (!MatMulHasAmx()) GTEST_SKIP() << "needs AMX (MatMulBf16Path() is " << MatMulBf16Path() << ")";
  std::mt19937 rng(12);
  base::ThreadPool pool(2);
  TestWeights t;
  FillRandom(t, {"w", WeightFormat::kBF16}, 80, 288, rng);
  for (int64_t tokens : {1, 7, 8, 16, 32}) {
    std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 288), rng);
    const size_t n = static_cast<size_t>(tokens * 80);
    std::vector<float> fp32(n), via_matmul(n), amx(n);
    MatMul(x.data(), tokens, t.w, fp32.data(), &pool);
    {
      const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
      MatMul(x.data(), tokens, t.w, via_matmul.data(), &pool);
      EXPECT_FALSE(detail::UseDpbf16Decode(detail::BestIsa(), tokens, t.w)) << tokens;
    }
    detail::MatMulAmx(x.data(), tokens, t.w, amx.data(), &pool);
    const std::vector<float>& expected = tokens >= 8 ? amx : fp32;
    EXPECT_EQ(0, std::memcmp(expected.data(), via_matmul.data(), n * sizeof(float))) << tokens;
  }
}

}  // namespace
}  // namespace k3::kernels
