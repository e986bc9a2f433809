// The integer-activation path (matmul_int8.h) against two references: its own definition in
// double (the kernels must reproduce the integer arithmetic up to float32 accumulation), and the
// exact float64 product, within the derived bound matmul.h states.
#include "kernels/matmul_int8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_testing.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

using detail::Isa;
using detail::Regime;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::kInt8Formats;
using matmul_testing::OutlierActivations;
using matmul_testing::TestWeights;

// The 512-bit kernels these tests call through Isa::kAvx512 (matmul_int8_sets_test.cc tests every
// kernel set directly).
bool HasVnni512() { return detail::IsaSupported(Isa::kAvx512) && detail::CpuHasAvx512Vnni(); }

// Sets the process-wide setting for one scope.
struct Int8Scope {
  Int8Scope() { SetFourBitActivations(FourBitActivations::kInt8); }
  ~Int8Scope() { SetFourBitActivations(FourBitActivations::kFp32); }
};

// The bound of matmul.h: sum_blocks (d / 2) (1 + 2^-20) sum_{c in block} |W[r, c]| plus the
// float32 accumulation term, per output.
std::vector<double> DerivedBound(const std::vector<float>& x, int64_t tokens,
                                 const WeightMatrix& w) {
  std::vector<double> bound(static_cast<size_t>(tokens * w.rows));
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    DequantizeRow(w, r, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double total = 0.0, abs_products = 0.0;
      for (int64_t b = 0; b < w.cols / 32; ++b) {
        double amax = 0.0, weights = 0.0;
        for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
          amax = std::max(amax, std::fabs(double{x[t * w.cols + c]}));
          weights += std::fabs(double{row[c]});
          abs_products += std::fabs(double{x[t * w.cols + c]} * row[c]);
        }
        total += amax / 127.0 / 2.0 * (1.0 + 0x1p-20) * weights;
      }
      bound[t * w.rows + r] = total + 1e-6 * abs_products + 1e-30;
    }
  }
  return bound;
}

// Both forms of Int8Activations, read by hand from the raw arrays: entry (chunk, token) at
// chunk * tokens + token, even columns then odd ones, q biased by 128 from kBiasedFromTokens
// tokens, and in the signed form each lane's correction -offset * (sum of its 8 columns' q).
TEST(Int8ActivationsTest, QuantisationLayoutAndRounding) {
  std::mt19937 rng(3);
  const int64_t cols = 160;  // 5 blocks: the second chunk holds one
  for (const auto& [tokens, allow_biased] :
       {std::pair{1, true}, std::pair{3, true}, std::pair{3, false}}) {
    const std::vector<float> x = OutlierActivations(tokens * cols, rng);
    base::Arena arena;
    const detail::Int8Activations a = detail::QuantizeActivationsInt8Portable(
        x.data(), tokens, cols, WeightFormat::kInt4, arena, allow_biased);
    ASSERT_EQ(a.chunks, 2);
    ASSERT_EQ(a.biased, allow_biased && tokens >= detail::kBiasedFromTokens);
    ASSERT_EQ(a.correction == nullptr, a.biased);
    const int bias = a.biased ? 128 : 0;
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t b = 0; b < 5; ++b) {
        const int64_t entry = (b / 4) * tokens + t, slot = b % 4;
        const float d = a.scale[entry * 16 + slot * 4];
        float amax = 0.0f;
        for (int c = 0; c < 32; ++c) amax = std::max(amax, std::fabs(x[t * cols + b * 32 + c]));
        EXPECT_FLOAT_EQ(d, amax / 127.0f);
        EXPECT_EQ(a.Scale(t, b), d);
        for (int lane = 0; lane < 4; ++lane) {
          int32_t sum = 0;
          for (int c = 8 * lane; c < 8 * lane + 8; ++c) {
            const uint8_t byte = a.q[entry * 128 + (c % 2) * 64 + slot * 16 + c / 2];
            const int32_t q = a.biased ? byte - bias : static_cast<int8_t>(byte);
            ASSERT_EQ(a.Value(t, b * 32 + c), q);
            sum += q;
            EXPECT_LE(std::fabs(x[t * cols + b * 32 + c] - q * d), d / 2 * (1 + 0x1p-20))
                << "token " << t << " column " << b * 32 + c;
          }
          if (!a.biased) {
            EXPECT_EQ(a.correction[entry * 16 + slot * 4 + lane], -8 * sum);
          }
          EXPECT_EQ(a.scale[entry * 16 + slot * 4 + lane], d);
        }
      }
      for (int i = 16; i < 64; ++i) {  // the empty slots 1..3 of the last chunk: q = 0
        EXPECT_EQ(a.q[(tokens + t) * 128 + i], bias);
        EXPECT_EQ(a.q[(tokens + t) * 128 + 64 + i], bias);
      }
    }
  }
}

// The AVX-512 quantizer against the portable one, bit for bit: random rows with outliers, an
// all-zero block, non-finite blocks, subnormal and huge magnitudes, and values on the rounding
// ties of x / d (k + 1/2 times d, which round to even).
TEST(Int8ActivationsTest, VectorQuantizerMatchesThePortableOne) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  std::mt19937 rng(4);
  for (int64_t tokens : {1, 2, 5}) {
    for (int64_t cols : {32, 160, 512}) {
      std::vector<float> x = OutlierActivations(tokens * cols, rng);
      for (int64_t t = 0; t < tokens; ++t) {
        float* row = x.data() + t * cols;
        std::fill(row, row + 32, 0.0f);  // block 0 all zero
        if (cols > 32) {                 // block 1: ties of round(x / d), d = 127 / 127 = 1
          for (int c = 0; c < 32; ++c) row[32 + c] = c == 0 ? 127.0f : (c % 7) - 3 + 0.5f;
        }
        if (cols > 64) row[64 + t % 32] = t % 2 ? std::numeric_limits<float>::infinity() : NAN;
        if (cols > 96) {  // a block of one subnormal
          std::fill(row + 96, row + 128, 0.0f);
          row[96 + t % 32] = 0x1p-140f;
        }
        if (cols > 128) row[128] = 3e38f;
      }
      base::Arena arena;
      const auto want = detail::QuantizeActivationsInt8Portable(x.data(), tokens, cols,
                                                                WeightFormat::kMxfp4, arena);
      const auto got =
          detail::QuantizeActivationsInt8(x.data(), tokens, cols, WeightFormat::kMxfp4, arena);
      const int64_t entries = tokens * want.chunks;
      ASSERT_EQ(got.biased, want.biased);
      for (int64_t i = 0; i < entries * 128; ++i) {
        ASSERT_EQ(got.q[i], want.q[i]) << tokens << " tokens, " << cols << " columns, byte " << i;
      }
      EXPECT_EQ(0, std::memcmp(got.scale, want.scale, static_cast<size_t>(entries * 16 * 4)));
      for (int64_t t = 0; t < tokens && cols > 128; ++t) {  // the subnormal block's one value
        EXPECT_EQ(want.Value(t, 96 + t % 32), 127) << "token " << t;
      }
      if (!want.biased) {
        EXPECT_EQ(
            0, std::memcmp(got.correction, want.correction, static_cast<size_t>(entries * 16 * 4)));
      }
    }
  }
}

TEST(Int8ActivationsTest, DefinitionIsWithinTheDerivedBoundOfTheExactProduct) {
  std::mt19937 rng(11);
  for (const FormatCase& fc : kInt8Formats) {
    for (int64_t cols : {32, 96, 256, 1024}) {
      TestWeights t;
      FillRandom(t, fc, 19, cols, rng);
      const int64_t tokens = 3;
      const std::vector<float> x = OutlierActivations(tokens * cols, rng);
      std::vector<float> exact(tokens * 19), int8(tokens * 19);
      MatMulReference(x.data(), tokens, t.w, exact.data());
      detail::MatMulInt8Definition(x.data(), tokens, t.w, int8.data());
      const std::vector<double> bound = DerivedBound(x, tokens, t.w);
      double worst = 0.0;
      for (size_t i = 0; i < exact.size(); ++i) {
        const double err = std::fabs(double{int8[i]} - exact[i]);
        ASSERT_LE(err, bound[i]) << fc.name << " cols " << cols << " output " << i;
        worst = std::max(worst, err / bound[i]);
      }
      EXPECT_GT(worst, 0.0) << "the quantisation changed nothing: the test cannot fail";
    }
  }
}

// The kernels against the definition: the same integers, float32 sums in another order.
void ExpectKernelMatchesDefinition(const TestWeights& t, const std::vector<float>& x,
                                   int64_t tokens, base::ThreadPool* pool,
                                   const std::string& what) {
  const size_t n = static_cast<size_t>(tokens * t.w.rows);
  std::vector<float> want(n), got(n, -12345.0f);
  detail::MatMulInt8Definition(x.data(), tokens, t.w, want.data());
  {
    Int8Scope int8;
    detail::MatMulWithIsa(Isa::kAvx512, Regime::kDecode, x.data(), tokens, t.w, got.data(), pool);
  }
  const std::vector<double> abs = matmul_testing::AbsProducts(x, tokens, t.w);
  for (size_t i = 0; i < n; ++i) {
    const double tolerance = 2e-5 * abs[i] + 1e-6;
    ASSERT_LE(std::fabs(double{got[i]} - want[i]), tolerance)
        << what << " token " << i / t.w.rows << " row " << i % t.w.rows << ": got " << got[i]
        << " want " << want[i];
  }
}

TEST(Int8ActivationsTest, VnniKernelsMatchTheDefinition) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  std::mt19937 rng(5);
  base::ThreadPool pool(3);
  for (const FormatCase& fc : kInt8Formats) {
    for (int64_t rows : {1, 3, 4, 5, 37, 130}) {
      for (int64_t blocks : {1, 2, 3, 4, 5, 8, 33}) {
        TestWeights t;
        FillRandom(t, fc, rows, blocks * 32, rng);
        for (int64_t tokens : {1, 2, 3, 4, 5, 9, 12}) {
          const std::vector<float> x = OutlierActivations(tokens * blocks * 32, rng);
          const std::string what = fc.name + " " + std::to_string(rows) + "x" +
                                   std::to_string(blocks * 32) + " tokens " +
                                   std::to_string(tokens);
          ExpectKernelMatchesDefinition(t, x, tokens, nullptr, what);
          if (rows >= 37) ExpectKernelMatchesDefinition(t, x, tokens, &pool, what + " pooled");
        }
      }
    }
  }
}

// A token's outputs are the same bits alone (the signed form) as in a batch of any size and at
// any position in its token tiles (the biased form): both make every lane's integer the exact
// sum of k * q, and the float32 steps after it are the same.
TEST(Int8ActivationsTest, OutputsDoNotDependOnTheBatch) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  std::mt19937 rng(6);
  for (const FormatCase& fc : kInt8Formats) {
    for (int64_t blocks : {1, 5, 33}) {
      TestWeights t;
      FillRandom(t, fc, 37, blocks * 32, rng);
      const int64_t cols = blocks * 32, tokens = 11;
      const std::vector<float> x = OutlierActivations(tokens * cols, rng);
      std::vector<float> alone(static_cast<size_t>(tokens * 37));
      Int8Scope int8;
      for (int64_t i = 0; i < tokens; ++i) {
        detail::MatMulWithIsa(Isa::kAvx512, Regime::kDecode, x.data() + i * cols, 1, t.w,
                              alone.data() + i * 37);
      }
      for (int64_t n : {2, 3, 4, 5, 7, 11}) {
        std::vector<float> batch(static_cast<size_t>(n * 37));
        const int64_t first = tokens - n;  // the last n tokens
        detail::MatMulWithIsa(Isa::kAvx512, Regime::kDecode, x.data() + first * cols, n, t.w,
                              batch.data());
        EXPECT_EQ(0, std::memcmp(batch.data(), alone.data() + first * 37, batch.size() * 4))
            << fc.name << " " << cols << " columns, batch of " << n;
      }
    }
  }
}

TEST(Int8ActivationsTest, EveryMxfp4ByteUnderEveryScale) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  TestWeights t;
  matmul_testing::FillEveryMxfp4ByteUnderEveryScale(&t);
  std::mt19937 rng(8);
  const std::vector<float> x = OutlierActivations(2 * 32, rng);
  const size_t n = static_cast<size_t>(2 * t.w.rows);
  std::vector<float> want(n), got(n);
  detail::MatMulInt8Definition(x.data(), 2, t.w, want.data());
  {
    Int8Scope int8;
    detail::MatMulWithIsa(Isa::kAvx512, Regime::kDecode, x.data(), 2, t.w, got.data());
  }
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(want[i])) {  // the NaN scale byte
      EXPECT_TRUE(std::isnan(got[i])) << "output " << i;
      continue;
    }
    // Scales near 2^127 take partial sums past FLT_MAX in float32 accumulation (inf - inf), as
    // they do on the exact path: only finite ranges are compared.
    if (std::fabs(want[i]) > 0x1p120f) continue;
    EXPECT_NEAR(got[i], want[i], 2e-6 * std::fabs(want[i]) + 1e-37) << "output " << i;
  }
}

// Full 128-column chunks take a shortcut for their E8M0 scales when all four lie in [2, 254]
// (matmul_vnni.cc): row r's block b has scale byte (r + b) % 256, so every byte value sits at
// every position of a chunk, beside normal ones and beside the subnormal (0, 1) and NaN (255)
// bytes that must take the exact conversion.
TEST(Int8ActivationsTest, FullChunksUnderEveryScaleByte) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  constexpr int64_t kRows = 256, kCols = 256;
  TestWeights t;
  t.Allocate(WeightFormat::kMxfp4, kRows, kCols);
  std::mt19937 rng(9);
  for (uint8_t& b : t.data) b = static_cast<uint8_t>(rng());
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t b = 0; b < kCols / 32; ++b) {
      t.mx_scales[r * (kCols / 32) + b] = static_cast<uint8_t>((r + b) % 256);
    }
  }
  const std::vector<float> x = OutlierActivations(3 * kCols, rng);
  const size_t n = static_cast<size_t>(3 * kRows);
  std::vector<float> want(n), got(n);
  detail::MatMulInt8Definition(x.data(), 3, t.w, want.data());
  {
    Int8Scope int8;
    detail::MatMulWithIsa(Isa::kAvx512, Regime::kDecode, x.data(), 3, t.w, got.data());
  }
  // Float32 sums in another order than the definition's: the bound is relative to sum |x w|.
  const std::vector<double> abs = matmul_testing::AbsProducts(x, 3, t.w);
  int compared = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "output " << i;
      continue;
    }
    if (!(abs[i] < 0x1p120)) continue;  // as in EveryMxfp4ByteUnderEveryScale
    EXPECT_NEAR(got[i], want[i], 2e-5 * abs[i] + 1e-37) << "output " << i;
    ++compared;
  }
  EXPECT_GT(compared, 200);
}

// kInt8Block: QuantizeInt8Block stays within scale / 2 of every weight, Int8BlockOffset places
// each column once, and every path that is not the integer kernels (the scalar level, where
// RunsInt8 is false) computes the exact product of the stored weights.
TEST(Int8BlockWeightsTest, QuantisationLayoutAndExactPaths) {
  std::mt19937 rng(12);
  for (int64_t cols : {32, 96, 128, 160, 1024}) {
    std::vector<bool> seen(static_cast<size_t>(cols), false);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t at = Int8BlockOffset(c, cols);
      ASSERT_TRUE(at >= 0 && at < cols && !seen[static_cast<size_t>(at)]) << cols << " " << c;
      seen[static_cast<size_t>(at)] = true;
    }
    TestWeights source;
    FillRandom(source, {"BF16", WeightFormat::kBF16}, 37, cols, rng);
    std::vector<uint8_t> data(static_cast<size_t>(37 * cols));
    std::vector<uint16_t> scales(static_cast<size_t>(37 * cols / 32));
    const WeightMatrix q = QuantizeInt8Block(source.w, data.data(), scales.data());
    std::vector<float> want(static_cast<size_t>(cols)), got(want.size());
    for (int64_t r = 0; r < 37; ++r) {
      DequantizeRow(source.w, r, want.data());
      DequantizeRow(q, r, got.data());
      for (int64_t c = 0; c < cols; ++c) {
        const float scale =
            tensor::Bf16ToFloat(scales[static_cast<size_t>(r * cols / 32 + c / 32)]);
        ASSERT_LE(std::fabs(got[c] - want[c]), scale / 2 * (1 + 1e-6))
            << "row " << r << " col " << c;
      }
    }
    for (int64_t tokens : {1, 5, 20}) {
      const std::vector<float> x = OutlierActivations(tokens * cols, rng);
      std::vector<float> exact(static_cast<size_t>(tokens * 37)), y(exact.size());
      MatMulReference(x.data(), tokens, q, exact.data());
      const std::vector<double> abs = matmul_testing::AbsProducts(x, tokens, q);
      for (Isa isa : detail::SupportedIsas()) {
        for (Regime regime : {Regime::kDecode, Regime::kGemm}) {
          if (detail::RunsInt8(isa, regime, q)) continue;  // W8A8 there
          detail::MatMulWithIsa(isa, regime, x.data(), tokens, q, y.data());
          for (size_t i = 0; i < y.size(); ++i) {
            ASSERT_LE(std::fabs(double{y[i]} - exact[i]), 1e-5 * abs[i] + 1e-6)
                << detail::IsaName(isa) << " cols " << cols << " tokens " << tokens;
          }
        }
      }
    }
  }
}

TEST(Int8ActivationsTest, NonFiniteActivationsGiveNaN) {
  if (!HasVnni512()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  std::mt19937 rng(9);
  TestWeights t;
  FillRandom(t, kInt8Formats[1], 8, 64, rng);
  std::vector<float> x = OutlierActivations(64, rng);
  x[40] = std::numeric_limits<float>::infinity();
  std::vector<float> y(8);
  Int8Scope int8;
  MatMul(x.data(), 1, t.w, y.data());
  for (float v : y) EXPECT_TRUE(std::isnan(v));
}

TEST(Int8ActivationsTest, SettingReachesThePublicEntryOnlyInTheDecodeRegime) {
  std::mt19937 rng(10);
  TestWeights t;
  FillRandom(t, kInt8Formats[0], 16, 128, rng);
  // One token past the decode regime: the GEMM regime.
  const int64_t n = detail::DecodeMaxTokens(detail::BestIsa(), t.w.format) + 1;
  const std::vector<float> x = OutlierActivations(static_cast<size_t>(n * 128), rng);
  std::vector<float> exact(static_cast<size_t>(n * 16)), int8(exact.size()), got(exact.size());
  MatMul(x.data(), n, t.w, exact.data());
  detail::MatMulInt8Definition(x.data(), n, t.w, int8.data());
  Int8Scope scope;
  MatMul(x.data(), 1, t.w, got.data());
  const bool ran_int8 = std::fabs(got[0] - int8[0]) < std::fabs(got[0] - exact[0]) ||
                        (got[0] == int8[0] && got[0] != exact[0]);
  EXPECT_EQ(ran_int8, MatMulHasInt8Dot());
  MatMul(x.data(), n, t.w, got.data());  // the GEMM regime stays exact
  EXPECT_EQ(0, std::memcmp(got.data(), exact.data(), got.size() * sizeof(float)));
}

// MatMulRunsInt8 says what MatMul does: whether its outputs are the integer definition's (to
// float32 accumulation) rather than the exact product's, for every format, setting and regime.
TEST(Int8ActivationsTest, RunsInt8SaysWhichProductRan) {
  std::mt19937 rng(11);
  for (const FormatCase& f : kInt8Formats) {
    TestWeights t;
    FillRandom(t, f, 16, 256, rng);
    const int64_t gemm = detail::DecodeMaxTokens(detail::BestIsa(), t.w.format) + 1;
    for (int64_t n : {int64_t{1}, int64_t{5}, gemm}) {
      const std::vector<float> x = OutlierActivations(static_cast<size_t>(n * 256), rng);
      std::vector<float> exact(static_cast<size_t>(n * 16)), int8(exact.size());
      MatMulReference(x.data(), n, t.w, exact.data());
      detail::MatMulInt8Definition(x.data(), n, t.w, int8.data());
      for (bool on : {false, true}) {
        SetFourBitActivations(on ? FourBitActivations::kInt8 : FourBitActivations::kFp32);
        std::vector<float> got(exact.size());
        MatMul(x.data(), n, t.w, got.data());
        double to_exact = 0.0, to_int8 = 0.0;
        for (size_t i = 0; i < got.size(); ++i) {
          to_exact += std::fabs(double{got[i]} - exact[i]);
          to_int8 += std::fabs(double{got[i]} - int8[i]);
        }
        const bool ran_int8 = to_int8 < to_exact;
        EXPECT_EQ(MatMulRunsInt8(n, t.w), ran_int8)
            << f.name << " tokens " << n << " setting " << on << " distances " << to_exact << " / "
            << to_int8;
        SetFourBitActivations(FourBitActivations::kFp32);
      }
    }
  }
}

}  // namespace
}  // namespace k3::kernels
