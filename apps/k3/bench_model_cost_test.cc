// CostOfStep's split of a step's multiply-adds between the FP32 and the integer-dot products, on
// the demo checkpoint (K3 with MXFP4 routed experts), against the loaded weights' own shapes.
#include "apps/k3/bench_model_cost.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "kernels/matmul.h"
#include "model/model.h"
#include "model/testing/demo_checkpoint.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;

class BenchModelCostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("k3_bench_model_cost_test_" + std::to_string(getpid())));
    ASSERT_TRUE(model::testing::WriteDemoCheckpoint(*dir_).ok());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void TearDown() override { kernels::SetFourBitActivations(kernels::FourBitActivations::kFp32); }

  static std::unique_ptr<model::Model> Load(model::WeightQuant quant) {
    auto m = model::Model::Load(*dir_, nullptr, model::LoadOptions(quant));
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? std::move(*m) : nullptr;
  }
  // Multiply-adds a token spends in routed experts: top_k experts' three matrices per MoE layer.
  static double ExpertMacsPerToken(const model::Model& m) {
    double macs = 0;
    for (const auto& l : m.weights().layers) {
      if (!l.moe) continue;
      const auto& x = l.moe_weights.experts[0];
      for (const auto* w : {&x.gate, &x.up, &x.down}) {
        macs += double(m.config().moe.top_k) * w->rows * w->cols;
      }
    }
    return macs;
  }
  static fs::path* dir_;
};
fs::path* BenchModelCostTest::dir_ = nullptr;

TEST_F(BenchModelCostTest, ExactProductsHaveNoIntegerPart) {
  auto m = Load(model::WeightQuant::kNone);
  ASSERT_NE(m, nullptr);
  for (int batch : {1, 8, 32}) {
    const StepCost cost = CostOfStep(*m, batch);
    EXPECT_GT(cost.macs_per_token, ExpertMacsPerToken(*m)) << batch;
    EXPECT_EQ(cost.int8_macs_per_token, 0.0) << batch;
  }
}

TEST_F(BenchModelCostTest, IntegerExpertActivationsCountTheRoutedExperts) {
  auto m = Load(model::WeightQuant::kNone);
  ASSERT_NE(m, nullptr);
  ASSERT_GT(ExpertMacsPerToken(*m), 0.0);
  const double expected = kernels::MatMulHasInt8Dot() ? ExpertMacsPerToken(*m) : 0.0;
  for (int batch : {1, 8, 32}) {
    const StepCost fp32 = CostOfStep(*m, batch);
    kernels::SetFourBitActivations(kernels::FourBitActivations::kInt8);
    const StepCost cost = CostOfStep(*m, batch);
    kernels::SetFourBitActivations(kernels::FourBitActivations::kFp32);
    EXPECT_DOUBLE_EQ(cost.int8_macs_per_token, expected) << batch;
    EXPECT_EQ(cost.macs_per_token, fp32.macs_per_token) << batch;
    EXPECT_EQ(cost.bytes, fp32.bytes) << batch;
  }
}

TEST_F(BenchModelCostTest, Int8DenseWeightsCountTheDenseProducts) {
  auto exact = Load(model::WeightQuant::kNone);
  auto int8 = Load(model::WeightQuant::kInt8);
  ASSERT_NE(exact, nullptr);
  ASSERT_NE(int8, nullptr);
  const StepCost before = CostOfStep(*exact, 1), after = CostOfStep(*int8, 1);
  EXPECT_DOUBLE_EQ(after.macs_per_token, before.macs_per_token);
  const double dense = after.macs_per_token - ExpertMacsPerToken(*int8);
  if (!kernels::MatMulHasInt8Dot()) {
    EXPECT_EQ(after.int8_macs_per_token, 0.0);
    return;
  }
  // The requantised projections (KDA, MLA, dense and shared MLPs, lm_head) are most of the dense
  // products; the routed experts stay MXFP4 on FP32 products.
  EXPECT_GT(after.int8_macs_per_token, 0.5 * dense);
  EXPECT_LE(after.int8_macs_per_token, dense);
  EXPECT_LT(after.bytes, before.bytes);
}

}  // namespace
}  // namespace k3::app
