// The decode regime's batch invariance: each token gets the bits it gets alone, whichever way the
// call is cut into token tiles (single-token tiles, with the FP8 byte tables on VBMI CPUs; tiles
// of up to 6 tokens (AVX2: 3); up to 64 tokens now take the decode regime). Every
// accumulator adds the same products in the same order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels::matmul_decode_test {
namespace {

using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::RandomVector;
using matmul_testing::TestWeights;

bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

void ExpectTokensAlone(const TestWeights& t, const std::string& what, std::mt19937& rng,
                       base::ThreadPool* pool) {
  const int64_t cols = t.w.cols, rows = t.w.rows;
  for (int64_t tokens : {4, 5, 7, 12, 13, 24, 25, 30, 64, 67}) {
    const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
    for (detail::Isa isa : detail::SupportedIsas()) {
      if (isa == detail::Isa::kScalar) continue;
      std::vector<float> together(static_cast<size_t>(tokens * rows), -1.0f);
      detail::MatMulWithIsa(isa, detail::Regime::kDecode, x.data(), tokens, t.w, together.data(),
                            tokens % 2 ? pool : nullptr);
      for (int64_t tok = 0; tok < tokens; ++tok) {
        std::vector<float> alone(static_cast<size_t>(rows), -2.0f);
        detail::MatMulWithIsa(isa, detail::Regime::kDecode, x.data() + tok * cols, 1, t.w,
                              alone.data());
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_TRUE(SameBits(together[tok * rows + r], alone[r]))
              << what << " " << detail::IsaName(isa) << " tokens " << tokens << " token " << tok
              << " row " << r << ": " << together[tok * rows + r] << " vs " << alone[r];
        }
      }
    }
  }
}

// Columns with 16-column steps and masked tails (FP8, BF16), whole 32-column blocks (4-bit); NaN
// codes in FP8 rows make those rows NaN either way.
TEST(DecodeBatchInvarianceTest, TokensTogetherGiveTheBitsOfTokensAlone) {
  std::mt19937 rng(23);
  base::ThreadPool pool(2);
  const std::pair<FormatCase, std::vector<int64_t>> cases[] = {
      {{"fp8", WeightFormat::kFp8Block, 128, 1e-6f, 1e6f, 0x7E, true}, {7, 100, 513, 1100, 2048}},
      {{"fp8 nan codes", WeightFormat::kFp8Block, 16, 0.5f, 2.0f, 0x7F}, {100, 1100}},
      {{"mxfp4", WeightFormat::kMxfp4}, {32, 544, 1056}},
      {{"int4", WeightFormat::kInt4}, {32, 544, 1056}},
      {{"bf16", WeightFormat::kBF16}, {7, 513}}};
  for (const auto& [format, col_list] : cases) {
    for (int64_t cols : col_list) {
      TestWeights t;
      FillRandom(t, format, 37, cols, rng);
      ExpectTokensAlone(t, format.name + " cols " + std::to_string(cols), rng, &pool);
    }
  }
}

// The 4-bit tiles widen each row group once per call or once per token tile (DecodeWidening,
// kAuto picks by CPU vendor); both forms on any machine. Columns of 1, 17 and 33 blocks: one chunk
// of the widened buffer, then a partial second and third.
TEST(DecodeBatchInvarianceTest, FourBitWidenedOnceOrPerTileGiveTheBitsOfTokensAlone) {
  std::mt19937 rng(29);
  base::ThreadPool pool(2);
  for (auto widening : {detail::DecodeWidening::kOnce, detail::DecodeWidening::kPerTile}) {
    detail::SetDecodeWidening(widening);
    for (const FormatCase& format :
         {FormatCase{"mxfp4", WeightFormat::kMxfp4}, FormatCase{"int4", WeightFormat::kInt4}}) {
      for (int64_t cols : {32, 544, 1056}) {
        TestWeights t;
        FillRandom(t, format, 37, cols, rng);
        ExpectTokensAlone(t,
                          format.name + " cols " + std::to_string(cols) +
                              (widening == detail::DecodeWidening::kOnce ? " once" : " per tile"),
                          rng, &pool);
      }
    }
  }
  detail::SetDecodeWidening(detail::DecodeWidening::kAuto);
}

}  // namespace
}  // namespace k3::kernels::matmul_decode_test
