// Every integer kernel set this CPU runs (AVX512-VNNI, AVX-VNNI, plain AVX2: matmul_int8.h)
// against the integer path's definition in double, called directly so that each set is tested
// whichever one MatMul would pick; and which set MatMul picks at each SIMD level.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_int8.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels {
namespace {

using detail::Int8Kernels;
using detail::Isa;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::kInt8Formats;
using matmul_testing::OutlierActivations;
using matmul_testing::TestWeights;

std::vector<const Int8Kernels*> Sets() {
  std::vector<const Int8Kernels*> sets;
  for (int i = 0; i < detail::Int8KernelSetCount(); ++i) sets.push_back(&detail::Int8KernelSet(i));
  return sets;
}

std::vector<float> RunSet(const Int8Kernels& k, const std::vector<float>& x, int64_t tokens,
                          const WeightMatrix& w, base::ThreadPool* pool = nullptr) {
  std::vector<float> y(static_cast<size_t>(tokens * w.rows), -12345.0f);
  base::Arena arena;
  detail::MatMulInt8Decode(k, x.data(), tokens, w, y.data(), pool, arena);
  return y;
}

// The same integers as the definition, float32 sums in another order: within 2e-5 of sum |x w|.
void ExpectSetMatchesDefinition(const Int8Kernels& k, const TestWeights& t,
                                const std::vector<float>& x, int64_t tokens, base::ThreadPool* pool,
                                const std::string& what) {
  std::vector<float> want(static_cast<size_t>(tokens * t.w.rows));
  detail::MatMulInt8Definition(x.data(), tokens, t.w, want.data());
  const std::vector<float> got = RunSet(k, x, tokens, t.w, pool);
  const std::vector<double> abs = matmul_testing::AbsProducts(x, tokens, t.w);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::fabs(double{got[i]} - want[i]), 2e-5 * abs[i] + 1e-6)
        << k.name << " " << what << " token " << i / t.w.rows << " row " << i % t.w.rows << ": got "
        << got[i] << " want " << want[i];
  }
}

TEST(Int8KernelSetsTest, EverySetMatchesTheDefinition) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  std::mt19937 rng(21);
  base::ThreadPool pool(3);
  for (const Int8Kernels* k : Sets()) {
    for (const FormatCase& fc : kInt8Formats) {
      for (int64_t rows : {1, 4, 6, 37}) {
        for (int64_t blocks : {1, 2, 3, 4, 5, 7, 33}) {
          TestWeights t;
          FillRandom(t, fc, rows, blocks * 32, rng);
          for (int64_t tokens : {1, 2, 3, 5, 12}) {
            const std::vector<float> x = OutlierActivations(tokens * blocks * 32, rng);
            const std::string what = fc.name + " " + std::to_string(rows) + "x" +
                                     std::to_string(blocks * 32) + " tokens " +
                                     std::to_string(tokens);
            ExpectSetMatchesDefinition(*k, t, x, tokens, nullptr, what);
            if (rows == 37) ExpectSetMatchesDefinition(*k, t, x, tokens, &pool, what + " pooled");
          }
        }
      }
    }
  }
}

// kInt8Block at its extremes: every byte 1 or 255 (|k| = 127) against activations at +-amax, where
// vpmaddubsw would saturate without the sign trick (pairs of 2 * 127 * 127 stay below 2^15).
TEST(Int8KernelSetsTest, Int8BlockExtremesDoNotSaturate) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  std::mt19937 rng(22);
  TestWeights t;
  FillRandom(t, kInt8Formats[2], 8, 160, rng);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = (i / 3) % 2 ? 255 : 1;
  std::vector<float> x(2 * 160);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i / 5) % 2 ? 3.0f : -3.0f;
  for (const Int8Kernels* k : Sets()) {
    ExpectSetMatchesDefinition(*k, t, x, 2, nullptr, "extremes");
    ExpectSetMatchesDefinition(*k, t, std::vector<float>(x.begin(), x.begin() + 160), 1, nullptr,
                               "extremes, one token");
  }
}

// Every set on t's MXFP4 rows against the definition at two outlier tokens.
void ExpectMxfp4RowsMatch(const TestWeights& t) {
  std::mt19937 rng(23);
  const std::vector<float> x = OutlierActivations(2 * t.w.cols, rng);
  std::vector<float> want(static_cast<size_t>(2 * t.w.rows));
  detail::MatMulInt8Definition(x.data(), 2, t.w, want.data());
  for (const Int8Kernels* k : Sets()) {
    const std::vector<float> got = RunSet(*k, x, 2, t.w);
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {  // the NaN scale byte
        EXPECT_TRUE(std::isnan(got[i])) << k->name << " output " << i;
        continue;
      }
      if (std::fabs(want[i]) > 0x1p120f) continue;  // float32 sums past FLT_MAX, as exact
      EXPECT_NEAR(got[i], want[i], 2e-6 * std::fabs(want[i]) + 1e-37) << k->name << " output " << i;
    }
  }
}

TEST(Int8KernelSetsTest, EveryMxfp4ByteUnderEveryScale) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  TestWeights t;
  matmul_testing::FillEveryMxfp4ByteUnderEveryScale(&t);  // one block per row
  ExpectMxfp4RowsMatch(t);
}

// The same over whole 128-column chunks (the kernels take a whole chunk's scales another way):
// row 16e + g holds bytes 16g .. 16g + 15 in each of its 4 blocks, block j under scale byte
// (e + 64j) % 256, so every slot of a chunk sees every scale.
TEST(Int8KernelSetsTest, EveryMxfp4ByteUnderEveryScaleInWholeChunks) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  TestWeights t;
  t.Allocate(WeightFormat::kMxfp4, 256 * 16, 128);
  for (int e = 0; e < 256; ++e) {
    for (int g = 0; g < 16; ++g) {
      const int r = 16 * e + g;
      for (int j = 0; j < 4; ++j) {
        t.mx_scales[r * 4 + j] = static_cast<uint8_t>((e + 64 * j) % 256);
        for (int i = 0; i < 16; ++i) t.data[r * 64 + j * 16 + i] = static_cast<uint8_t>(16 * g + i);
      }
    }
  }
  ExpectMxfp4RowsMatch(t);
}

// A token's outputs are the same bits alone as in any batch, on every set.
TEST(Int8KernelSetsTest, OutputsDoNotDependOnTheBatch) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  std::mt19937 rng(24);
  for (const Int8Kernels* k : Sets()) {
    for (const FormatCase& fc : kInt8Formats) {
      TestWeights t;
      FillRandom(t, fc, 13, 5 * 32, rng);
      const int64_t cols = 5 * 32, tokens = 7;
      const std::vector<float> x = OutlierActivations(tokens * cols, rng);
      const std::vector<float> batch = RunSet(*k, x, tokens, t.w);
      for (int64_t i = 0; i < tokens; ++i) {
        const std::vector<float> one(x.begin() + i * cols, x.begin() + (i + 1) * cols);
        const std::vector<float> alone = RunSet(*k, one, 1, t.w);
        EXPECT_EQ(0, std::memcmp(alone.data(), batch.data() + i * 13, 13 * sizeof(float)))
            << k->name << " " << fc.name << " token " << i;
      }
    }
  }
}

// Each set's quantizer against the portable one, bit for bit, in both forms: rows with outliers,
// an all-zero block, rounding ties of x / d, a non-finite block, a subnormal-only block and a huge
// value (as VectorQuantizerMatchesThePortableOne for the 512-bit quantizer).
TEST(Int8KernelSetsTest, EveryQuantizerMatchesThePortableOne) {
  if (Sets().empty()) GTEST_SKIP() << "this CPU has no AVX2: no integer kernels";
  std::mt19937 rng(25);
  const int64_t tokens = 3, cols = 160;
  std::vector<float> x = OutlierActivations(tokens * cols, rng);
  for (int64_t t = 0; t < tokens; ++t) {
    float* row = x.data() + t * cols;
    std::fill(row, row + 32, 0.0f);
    for (int c = 0; c < 32; ++c) row[32 + c] = c == 0 ? 127.0f : (c % 7) - 3 + 0.5f;
    row[64 + t] = t % 2 ? std::numeric_limits<float>::infinity() : NAN;
    std::fill(row + 96, row + 128, 0.0f);
    row[96 + t] = 0x1p-140f;
    row[128] = 3e38f;
  }
  for (const Int8Kernels* k : Sets()) {
    for (bool biased : {false, true}) {
      base::Arena arena;
      const detail::Int8Activations want = detail::QuantizeActivationsInt8Portable(
          x.data(), tokens, cols, WeightFormat::kInt4, arena, biased);
      ASSERT_EQ(want.biased, biased);
      const size_t entries = static_cast<size_t>(tokens * want.chunks);
      std::vector<uint8_t> q(entries * 128, biased ? 128 : 0);
      std::vector<float> scale(entries * 16, 0.0f);
      std::vector<int32_t> correction(entries * 16, 0);
      for (int64_t t = 0; t < tokens; ++t) {
        k->quantize_row(x.data() + t * cols, cols, t, tokens, 8, q.data(), scale.data(),
                        biased ? nullptr : correction.data());
      }
      EXPECT_EQ(0, std::memcmp(q.data(), want.q, q.size())) << k->name << " biased " << biased;
      EXPECT_EQ(0, std::memcmp(scale.data(), want.scale, scale.size() * 4)) << k->name;
      if (!biased) {
        EXPECT_EQ(0, std::memcmp(correction.data(), want.correction, correction.size() * 4))
            << k->name;
      }
    }
  }
}

// MatMul's choice per SIMD level: the 512-bit VNNI kernels only at the AVX-512 level, the best
// 256-bit set below it, nothing at the scalar level; and the name the logs print is the best one.
TEST(Int8KernelSetsTest, EachLevelPicksItsBestSet) {
  EXPECT_EQ(detail::Int8KernelsFor(Isa::kScalar), nullptr);
  for (Isa isa : detail::SupportedIsas()) {
    const Int8Kernels* k = detail::Int8KernelsFor(isa);
    if (isa == Isa::kScalar) continue;
    ASSERT_NE(k, nullptr) << detail::IsaName(isa);
    const std::string name = k->name;
    if (isa == Isa::kAvx512 && detail::CpuHasAvx512Vnni()) {
      EXPECT_EQ(name, "avx512-vnni");
    } else {
      EXPECT_EQ(name, detail::CpuHasAvxVnni() ? "avx-vnni" : "avx2") << detail::IsaName(isa);
    }
    EXPECT_EQ(k->takes_biased, name == "avx512-vnni");
  }
  EXPECT_EQ(std::string(MatMulInt8DotName()),
            MatMulHasInt8Dot() ? detail::Int8KernelsFor(detail::BestIsa())->name : "none");
}

}  // namespace
}  // namespace k3::kernels
