// The ops CpuBackend splits over its pool at batched-decode shapes (row-wise norms, Attention
// Residuals, the MoE gather and combine, the short convolutions, the experts taken largest first,
// BF16 panel products one row group per task) give the bits of the same backend on the calling
// thread. Each shape is checked to be large enough that the pool really splits it (TaskCount > 1):
// the conformance cases' shapes are too small to leave the calling thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/cpu_backend.h"
#include "kernels/matmul_split.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels {
namespace {

std::vector<float> Random(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want,
                    const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << what;
}

class PooledOpsTest : public testing::Test {
 protected:
  // Fails the test where `work` would stay on the calling thread.
  void ExpectSplits(int64_t work) {
    ASSERT_GT(detail::TaskCount(&pool_, work), 1) << "shape too small to reach the pool";
  }

  base::ThreadPool pool_{3};
  CpuBackend pooled_{&pool_}, serial_{nullptr};
  Workspace pooled_ws_ = pooled_.MakeWorkspace(), serial_ws_ = serial_.MakeWorkspace();
  std::mt19937 rng_{20261207};
};

TEST_F(PooledOpsTest, NormsGiveTheSerialBits) {
  const int64_t rows = 37, dim = 2048;
  ExpectSplits(rows * dim * 4);
  const std::vector<float> x = Random(rng_, rows * dim, 3.0f), w = Random(rng_, dim);
  const std::vector<float> gate = Random(rng_, rows * dim);
  const RmsNormShape shape{rows, dim, 1e-6f, 0, 0};
  std::vector<float> a(rows * dim), b(rows * dim);
  pooled_.RmsNorm(shape, x.data(), w.data(), a.data());
  serial_.RmsNorm(shape, x.data(), w.data(), b.data());
  ExpectSameBits(a, b, "RmsNorm");
  pooled_.GatedRmsNorm(shape, x.data(), w.data(), gate.data(), a.data());
  serial_.GatedRmsNorm(shape, x.data(), w.data(), gate.data(), b.data());
  ExpectSameBits(a, b, "GatedRmsNorm");
}

TEST_F(PooledOpsTest, AttnResMixGivesTheSerialBits) {
  const int64_t rows = 33, dim = 2048;
  const int sources = 5;
  ExpectSplits(rows * 3 * sources * dim);
  std::vector<std::vector<float>> src;
  std::vector<const float*> ptrs;
  for (int i = 0; i < sources; ++i) src.push_back(Random(rng_, rows * dim, 2.0f));
  for (const auto& s : src) ptrs.push_back(s.data());
  const std::vector<float> score = Random(rng_, dim, 0.5f);
  std::vector<float> a(rows * dim), b(rows * dim);
  pooled_.AttnResMix({rows, dim, sources, ptrs.data(), score.data(), 1e-6f, a.data()}, pooled_ws_);
  serial_.AttnResMix({rows, dim, sources, ptrs.data(), score.data(), 1e-6f, b.data()}, serial_ws_);
  ExpectSameBits(a, b, "AttnResMix");
}

TEST_F(PooledOpsTest, ShortConvGivesTheSerialBitsAndHistories) {
  const int64_t channels = 3072;
  const int taps = 4;
  const std::vector<int64_t> rows = {1, 1, 2, 1, 5, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1, 1, 4, 1, 1, 1};
  const int64_t total = std::accumulate(rows.begin(), rows.end(), int64_t{0});
  ExpectSplits(total * channels * taps);
  const std::vector<float> x = Random(rng_, total * channels), w = Random(rng_, channels * taps);
  const std::vector<float> history = Random(rng_, rows.size() * (taps - 1) * channels);
  std::vector<float> hist_a = history, hist_b = history;
  std::vector<ConvSequence> seqs_a, seqs_b;
  for (size_t i = 0, begin = 0; i < rows.size(); begin += rows[i], ++i) {
    seqs_a.push_back({static_cast<int64_t>(begin), rows[i], hist_a.data() + i * 3 * channels});
    seqs_b.push_back({static_cast<int64_t>(begin), rows[i], hist_b.data() + i * 3 * channels});
  }
  std::vector<float> a(total * channels), b(total * channels);
  pooled_.ShortConv({channels, taps, w.data(), x.data(), a.data()}, seqs_a);
  serial_.ShortConv({channels, taps, w.data(), x.data(), b.data()}, seqs_b);
  ExpectSameBits(a, b, "ShortConv");
  ExpectSameBits(hist_a, hist_b, "ShortConv histories");
}

TEST_F(PooledOpsTest, MoeDispatchAndCombineGiveTheSerialBits) {
  const int64_t rows = 32, width = 1024;
  const int top_k = 8, experts = 64;
  ExpectSplits(rows * top_k * width);
  std::vector<int32_t> chosen;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int32_t> all(experts);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    chosen.insert(chosen.end(), all.begin(), all.begin() + top_k);
  }
  const int64_t n = rows * top_k;
  const std::vector<float> weights = Random(rng_, n), x = Random(rng_, rows * width);
  struct Out {
    std::vector<int64_t> offsets, source_rows;
    std::vector<float> source_weights, gathered, combined;
  };
  auto run = [&](Backend& backend) {
    Out o{std::vector<int64_t>(experts + 1), std::vector<int64_t>(n), std::vector<float>(n),
          std::vector<float>(n * width), std::vector<float>(rows * width, 7.0f)};
    backend.MoeDispatch({rows, top_k, experts, width, chosen.data(), weights.data(), x.data(),
                         o.offsets.data(), o.source_rows.data(), o.source_weights.data(),
                         o.gathered.data()});
    // Combine the gathered rows back, as if each expert were the identity.
    backend.MoeCombine({rows, n, width, o.source_rows.data(), o.source_weights.data(),
                        o.gathered.data(), o.combined.data()});
    return o;
  };
  const Out a = run(pooled_), b = run(serial_);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.source_rows, b.source_rows);
  ExpectSameBits(a.source_weights, b.source_weights, "MoeDispatch weights");
  ExpectSameBits(a.gathered, b.gathered, "MoeDispatch gathered");
  ExpectSameBits(a.combined, b.combined, "MoeCombine");
}

TEST_F(PooledOpsTest, MoeRouteGivesTheSerialChoices) {
  const int64_t rows = 32;
  const int experts = 64, top_k = 16;
  ExpectSplits(rows * experts * 128);
  const std::vector<float> logits = Random(rng_, rows * experts, 2.0f);
  const std::vector<float> bias = Random(rng_, experts, 0.1f);
  struct Out {
    std::vector<float> scores;
    std::vector<int32_t> experts;
    std::vector<float> weights, gap;
  };
  auto run = [&](Backend& backend, Workspace& ws) {
    Out o{logits, std::vector<int32_t>(rows * top_k), std::vector<float>(rows * top_k),
          std::vector<float>(rows, INFINITY)};
    backend.MoeRoute({rows, experts, top_k, 4, 2, true, 2.5f, o.scores.data(), bias.data(),
                      o.experts.data(), o.weights.data(), o.gap.data()},
                     ws);
    return o;
  };
  const Out a = run(pooled_, pooled_ws_), b = run(serial_, serial_ws_);
  ExpectSameBits(a.scores, b.scores, "MoeRoute scores");
  EXPECT_EQ(a.experts, b.experts);
  ExpectSameBits(a.weights, b.weights, "MoeRoute weights");
  ExpectSameBits(a.gap, b.gap, "MoeRoute gaps");
}

TEST_F(PooledOpsTest, AddGivesTheSerialBits) {
  const int64_t n = 32 * 2048 + 5;  // a tail past the last whole piece of 16
  ExpectSplits(n * 4);
  const std::vector<float> x = Random(rng_, n), y = Random(rng_, n);
  std::vector<float> a = x, b = x;
  pooled_.Add(a.data(), y.data(), n);
  serial_.Add(b.data(), y.data(), n);
  ExpectSameBits(a, b, "Add");
  for (int64_t i = 0; i < n; i += 997) EXPECT_EQ(a[i], x[i] + y[i]) << i;
}

// Uneven groups, some empty: the pool hands them out largest first, each still its own product.
TEST_F(PooledOpsTest, GroupedMlpGivesTheSerialBits) {
  const int64_t width = 256, inter = 96;
  const std::vector<int64_t> sizes = {3, 0, 14, 1, 7, 7, 0, 2, 11, 5};
  std::vector<int64_t> offsets = {0};
  for (int64_t s : sizes) offsets.push_back(offsets.back() + s);
  const int64_t groups = static_cast<int64_t>(sizes.size()), total = offsets.back();
  std::vector<matmul_testing::TestWeights> storage(3 * groups);
  std::vector<WeightMatrix> gate, up, down;
  const matmul_testing::FormatCase mxfp4{"MXFP4", WeightFormat::kMxfp4};
  for (int64_t g = 0; g < groups; ++g) {
    matmul_testing::FillRandom(storage[3 * g], mxfp4, inter, width, rng_);
    matmul_testing::FillRandom(storage[3 * g + 1], mxfp4, inter, width, rng_);
    matmul_testing::FillRandom(storage[3 * g + 2], mxfp4, width, inter, rng_);
    gate.push_back(storage[3 * g].w);
    up.push_back(storage[3 * g + 1].w);
    down.push_back(storage[3 * g + 2].w);
  }
  const std::vector<float> x = Random(rng_, total * width);
  std::vector<float> a(total * width), b(total * width);
  const ActivationShape act{ActivationKind::kSilu, 0, 4.0f, 25.0f};
  pooled_.GroupedMlp(
      {groups, offsets.data(), gate.data(), up.data(), down.data(), act, false, x.data(), a.data()},
      pooled_ws_);
  serial_.GroupedMlp(
      {groups, offsets.data(), gate.data(), up.data(), down.data(), act, false, x.data(), b.data()},
      serial_ws_);
  ExpectSameBits(a, b, "GroupedMlp");
}

// 768 rows = 12 panel groups: one group per task on the pool (PieceTaskCount).
TEST_F(PooledOpsTest, Bf16PanelProductsGiveTheSerialBits) {
  if (!Bf16PanelsRunFast()) GTEST_SKIP() << "BF16 panels run on the scalar chains here";
  const int64_t rows = 768, cols = 512;
  matmul_testing::TestWeights t;
  matmul_testing::FillRandom(t, {"BF16", WeightFormat::kBF16}, rows, cols, rng_);
  std::vector<uint16_t> packed(static_cast<size_t>(Bf16PanelsElements(rows, cols)));
  const WeightMatrix w = PackBf16Panels(t.w, packed.data());
  for (int64_t tokens : {1, 7, 32}) {
    ExpectSplits(tokens * rows * cols);
    const std::vector<float> x = Random(rng_, tokens * cols);
    std::vector<float> a(tokens * rows), b(tokens * rows);
    pooled_.MatMul(x.data(), tokens, w, a.data(), pooled_ws_);
    serial_.MatMul(x.data(), tokens, w, b.data(), serial_ws_);
    ExpectSameBits(a, b, "panels");
  }
}

}  // namespace
}  // namespace k3::kernels
