// The two AVX-512 FP8 decode paths against each other: the byte-table decode Kernels() picks on
// CPUs with AVX512-VBMI (matmul_avx512_vbmi.cc) and the F16-widening one of Avx512Kernels(). Each
// accumulator adds the same products in the same order in both, so the results must agree bit
// for bit (NaN as NaN) for every E4M3 byte, every tile scale that folds, odd column tails and every
// token tile. matmul_test.cc checks both against the float64 reference on CPUs that run them; on a
// VBMI CPU that is the table path, so this file is also what keeps the widening path checked there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_testing.h"
#include "tensor/numeric.h"

namespace k3::kernels::matmul_fp8_test {
namespace {

using matmul_testing::RandomVector;
using matmul_testing::TestWeights;

bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

bool HaveBothTables() {
  return detail::IsaSupported(detail::Isa::kAvx512) && detail::HasAvx512VbmiKernels();
}

// Runs x [tokens, cols] through both tables' decode regime (on `pool` when given) and compares.
void ExpectSameBits(const std::vector<float>& x, int64_t tokens, const WeightMatrix& w,
                    base::ThreadPool* pool, const std::string& what) {
  const size_t n = static_cast<size_t>(tokens * w.rows);
  std::vector<float> widened(n, -1.0f), looked_up(n, -2.0f);
  detail::MatMulDecodeWithKernels(detail::Avx512Kernels(), x.data(), tokens, w, widened.data(),
                                  pool);
  detail::MatMulDecodeWithKernels(detail::Avx512VbmiKernels(), x.data(), tokens, w,
                                  looked_up.data(), pool);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(SameBits(widened[i], looked_up[i]))
        << what << " token " << i / w.rows << " row " << i % w.rows << ": widening " << widened[i]
        << " vs table " << looked_up[i];
  }
}

// Every byte, in every position of a 64-byte chunk: row r holds byte (r * 37 + c) % 256 at c,
// except that only every 8th row keeps the NaN codes 0x7F / 0xFF (a NaN makes the whole output
// NaN, which would hide the other products); the rest hold 0x7E / 0xFE there.
void FillEveryByteEverywhere(TestWeights* t, int64_t rows, int64_t cols, int64_t block) {
  t->Allocate(WeightFormat::kFp8Block, rows, cols, block);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      auto b = static_cast<uint8_t>(r * 37 + c);
      if (r % 8 != 0 && (b & 0x7F) == 0x7F) b ^= 1;
      t->data[r * cols + c] = b;
    }
  }
}

TEST(Fp8DecodeTablesTest, EveryByteAndTailBitForBit) {
  if (!HaveBothTables()) GTEST_SKIP() << "needs AVX-512 with VBMI (" << MatMulIsa() << ")";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> log2_scale(-30.0f, 30.0f);
  base::ThreadPool pool(2);
  // Columns: whole 64-byte chunks, chunks plus 16-column steps, a masked tail, and less than one
  // chunk. Blocks: every multiple of 16 that folds (the table path's precondition).
  for (int64_t cols : {64, 256, 2048, 100, 257, 48, 7}) {
    for (int64_t block : {128, 64, 16}) {
      TestWeights t;
      FillEveryByteEverywhere(&t, 70, cols, block);
      for (float& s : t.block_scales) s = std::exp2(log2_scale(rng)) * (rng() % 2 ? 1.0f : -1.0f);
      for (int64_t tokens = 1;
           tokens <= detail::DecodeMaxTokens(detail::Isa::kAvx512, WeightFormat::kFp8Block);
           ++tokens) {
        const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
        const std::string what = "cols " + std::to_string(cols) + " block " +
                                 std::to_string(block) + " tokens " + std::to_string(tokens);
        ExpectSameBits(x, tokens, t.w, tokens % 2 ? &pool : nullptr, what);
      }
    }
  }
}

// Rows without NaN codes, flagged as a loader flags them: no NaN patching, so every output is a
// finite sum the two paths must build identically; special activations included.
TEST(Fp8DecodeTablesTest, NanFreeRowsWithSpecialActivationsBitForBit) {
  if (!HaveBothTables()) GTEST_SKIP() << "needs AVX-512 with VBMI (" << MatMulIsa() << ")";
  std::mt19937 rng(11);
  TestWeights t;
  const int64_t rows = 45, cols = 384;
  t.Allocate(WeightFormat::kFp8Block, rows, cols, 128);
  for (uint8_t& b : t.data) {
    b = static_cast<uint8_t>(rng());
    if ((b & 0x7F) == 0x7F) b ^= 1;  // not a NaN code
  }
  for (float& s : t.block_scales) s = 0.01f + static_cast<float>(rng() % 100) / 64.0f;
  t.w.fp8_nan_free = true;
  ASSERT_FALSE(tensor::AnyE4M3Nan(t.data.data(), t.data.size()));
  for (int64_t tokens : {1, 2, 4, 5, 12}) {
    std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
    x[0] = 0x1p-140f;  // subnormal activation
    x[1] = -0.0f;
    x[static_cast<size_t>(cols - 1)] = 1e30f;
    ExpectSameBits(x, tokens, t.w, nullptr, "tokens " + std::to_string(tokens));
  }
}

}  // namespace
}  // namespace k3::kernels::matmul_fp8_test
