// The vdpbf16ps kernels of GemmPrecision::kBf16 (matmul_avx512_bf16.cc), called directly: the
// GEMM over every weight format and the decode kernel of BF16 weights against the float64
// MatMulReference within the BF16 bound of matmul_testing.h (Bf16Tolerance), over random shapes
// with odd tails, pooled and unpooled; determinism and independence of the thread pool; and
// that MatMul dispatches to them. Skipped only where the CPU lacks AVX512-BF16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/arena.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels {
namespace {

using matmul_testing::AbsProducts;
using matmul_testing::Bf16Tolerance;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::RandomVector;
using matmul_testing::ScopedGemmPrecision;
using matmul_testing::TestWeights;

#define K3_REQUIRE_AVX512_BF16()                                                         \
  if (!detail::CpuHasAvx512Bf16()) {                                                     \
    GTEST_SKIP() << "this CPU has no AVX512-BF16 (CPUID 7.1 EAX bit 5): nothing to run"; \
  }

// Which kernel a case runs.
enum class Kernel { kGemm, kDecode };

void RunKernel(Kernel kernel, const float* x, int64_t tokens, const WeightMatrix& w, float* y,
               base::ThreadPool* pool) {
  base::Arena arena;
  if (kernel == Kernel::kGemm) return detail::MatMulAvx512Bf16(x, tokens, w, y, pool, arena);
  detail::MatMulAvx512Bf16Decode(x, tokens, w, y, pool, arena);
}

// One random case: pooled and unpooled results identical, each output within the bound.
void CheckCase(Kernel kernel, const FormatCase& fc, int64_t tokens, int64_t rows, int64_t cols,
               std::mt19937& rng, base::ThreadPool& pool) {
  TestWeights t;
  FillRandom(t, fc, rows, cols, rng);
  std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
  const size_t n = static_cast<size_t>(tokens * rows);
  std::vector<float> want(n), got(n, -12345.0f), pooled(n, -12345.0f);
  MatMulReference(x.data(), tokens, t.w, want.data());
  const std::vector<double> abs_products = AbsProducts(x, tokens, t.w);
  RunKernel(kernel, x.data(), tokens, t.w, got.data(), nullptr);
  RunKernel(kernel, x.data(), tokens, t.w, pooled.data(), &pool);
  const std::string what = fc.name + " " + std::to_string(tokens) + " tokens x [" +
                           std::to_string(rows) + "x" + std::to_string(cols) + "]";
  EXPECT_EQ(0, std::memcmp(got.data(), pooled.data(), n * sizeof(float))) << what;
  int failures = 0;
  for (size_t i = 0; i < n && failures < 5; ++i) {
    const double tolerance = Bf16Tolerance(abs_products[i], cols);
    if (std::fabs(double{got[i]} - want[i]) <= tolerance) continue;
    ++failures;
    ADD_FAILURE() << what << " token " << i / rows << " row " << i % rows << ": got " << got[i]
                  << " want " << want[i] << " (tolerance " << tolerance << ")";
  }
}

// Columns: odd tails where the format allows, multiples of 32 for the 4-bit and int8 formats.
std::vector<int64_t> ColsFor(WeightFormat format) {
  if (IsFourBit(format) || format == WeightFormat::kInt8Block) return {32, 96, 288, 544};
  return {1, 17, 33, 100, 257, 531};
}

class Avx512Bf16GemmTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(Avx512Bf16GemmTest, MatchesReferenceWithinBf16Bound) {
  K3_REQUIRE_AVX512_BF16();
  const FormatCase& fc = GetParam();
  base::ThreadPool pool(3);
  std::mt19937 rng(31);
  std::uniform_int_distribution<int64_t> tokens_draw(1, 70), rows_draw(1, 70);
  for (int64_t cols : ColsFor(fc.format)) {
    for (int draw = 0; draw < 4; ++draw) {
      // Random token counts 1..70 (ragged token tiles), and one whole number of 14-token tiles.
      const int64_t tokens = draw == 0 ? 14 * (1 + cols % 5) : tokens_draw(rng);
      CheckCase(Kernel::kGemm, fc, tokens, rows_draw(rng), cols, rng, pool);
    }
  }
  // Panels of 32 rows and column blocks of kGemmKc: several of each, with ragged ends.
  const int64_t big_cols =
      IsFourBit(fc.format) || fc.format == WeightFormat::kInt8Block ? 608 : 601;
  CheckCase(Kernel::kGemm, fc, 29, 97, big_cols, rng, pool);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, Avx512Bf16GemmTest,
    ::testing::Values(
        FormatCase{"F32", WeightFormat::kF32}, FormatCase{"BF16", WeightFormat::kBF16},
        FormatCase{"F16", WeightFormat::kF16}, FormatCase{"MXFP4", WeightFormat::kMxfp4},
        FormatCase{"INT4", WeightFormat::kInt4}, FormatCase{"INT8_block", WeightFormat::kInt8Block},
        FormatCase{"FP8_block128", WeightFormat::kFp8Block, 128},
        FormatCase{"FP8_block48", WeightFormat::kFp8Block, 48},
        FormatCase{"FP8_large_scales", WeightFormat::kFp8Block, 32, 0x1p118f, 0x1p121f, 0x20},
        FormatCase{"FP8_tiny_scales", WeightFormat::kFp8Block, 32, 0x1p-140f, 0x1p-100f}),
    [](const ::testing::TestParamInfo<FormatCase>& info) { return info.param.name; });

TEST(Avx512Bf16DecodeTest, MatchesReferenceWithinBf16Bound) {
  K3_REQUIRE_AVX512_BF16();
  base::ThreadPool pool(3);
  std::mt19937 rng(17);
  const FormatCase bf16{"BF16", WeightFormat::kBF16};
  for (int64_t tokens = 1; tokens <= 70; tokens += 3) {
    for (int64_t rows : {1, 3, 4, 5, 31}) {
      CheckCase(Kernel::kDecode, bf16, tokens, rows, 1 + (tokens * 37 + rows * 11) % 300, rng,
                pool);
    }
  }
  CheckCase(Kernel::kDecode, bf16, 32, 64, 2048, rng, pool);
}

// The same call gives the same bits every time, on every pool size.
TEST(Avx512Bf16Test, DeterministicAndIndependentOfThePool) {
  K3_REQUIRE_AVX512_BF16();
  std::mt19937 rng(3);
  for (Kernel kernel : {Kernel::kGemm, Kernel::kDecode}) {
    for (WeightFormat format : {WeightFormat::kBF16, WeightFormat::kMxfp4}) {
      if (kernel == Kernel::kDecode && format != WeightFormat::kBF16) continue;
      TestWeights t;
      FillRandom(t, {"w", format}, 200, 1024, rng);
      const int64_t tokens = 45;
      std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 1024), rng);
      const size_t n = static_cast<size_t>(tokens * 200);
      std::vector<float> first(n);
      RunKernel(kernel, x.data(), tokens, t.w, first.data(), nullptr);
      for (size_t threads : {1, 2, 3, 5}) {
        base::ThreadPool pool(threads);
        for (int repeat = 0; repeat < 2; ++repeat) {
          std::vector<float> y(n, -1.0f);
          RunKernel(kernel, x.data(), tokens, t.w, y.data(), &pool);
          ASSERT_EQ(0, std::memcmp(first.data(), y.data(), n * sizeof(float)))
              << "threads " << threads << " repeat " << repeat;
        }
      }
    }
  }
}

// MatMul under kBf16 takes these kernels where AVX512-BF16 is the BF16 path: the decode kernel
// for BF16 weights at kDpbf16DecodeMinTokens .. kDpbf16DecodeMaxTokens tokens, the GEMM for
// every format above its decode regime.
TEST(Avx512Bf16Test, MatMulDispatchesHere) {
  K3_REQUIRE_AVX512_BF16();
  if (MatMulHasAmx()) GTEST_SKIP() << "AMX is preferred here: kBf16 GEMMs run on tiles";
  EXPECT_STREQ(MatMulBf16Path(), "avx512-bf16");
  const ScopedGemmPrecision bf16(GemmPrecision::kBf16);
  std::mt19937 rng(8);
  base::ThreadPool pool(2);
  const int64_t lo = detail::kDpbf16DecodeMinTokens, hi = detail::kDpbf16DecodeMaxTokens;
  for (WeightFormat format : {WeightFormat::kBF16, WeightFormat::kInt4}) {
    TestWeights t;
    FillRandom(t, {"w", format}, 70, 320, rng);
    for (int64_t tokens : {int64_t{1}, lo - 1, lo, int64_t{33}, hi, hi + 1}) {
      std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 320), rng);
      const size_t n = static_cast<size_t>(tokens * 70);
      std::vector<float> via_matmul(n), direct(n);
      MatMul(x.data(), tokens, t.w, via_matmul.data(), &pool);
      const bool bf16_weights = format == WeightFormat::kBF16;
      const bool decode = bf16_weights && tokens >= lo && tokens <= hi;
      EXPECT_EQ(decode, detail::UseDpbf16Decode(detail::BestIsa(), tokens, t.w)) << tokens;
      const bool gemm = !decode && tokens > detail::DecodeMaxTokens(detail::BestIsa(), format);
      if (!gemm && !decode) continue;  // FP32 decode (DecodeRegimeAndFp32AreUnchanged)
      RunKernel(decode ? Kernel::kDecode : Kernel::kGemm, x.data(), tokens, t.w, direct.data(),
                nullptr);
      EXPECT_EQ(0, std::memcmp(via_matmul.data(), direct.data(), n * sizeof(float)))
          << "tokens " << tokens;
    }
  }
}

}  // namespace
}  // namespace k3::kernels
