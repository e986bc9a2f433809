// The benchmark families' configs parse as the family they claim, in its published formats, and
// each is about 2B parameters (counted from the tensor schema, so nothing is written).
#include "model/testing/bench_checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "model/config.h"
#include "model/tensor_schema.h"

namespace k3::model::testing {
namespace {

int64_t SchemaParameters(const ModelConfig& config) {
  const std::string_view prefix = CheckpointPrefix(config.family);
  int64_t n = 0;
  auto add = [&](const TensorSpec* spec) {
    if (spec->is_matrix()) n += spec->rows() * spec->cols();
  };
  const OuterTensors outer = OuterTensorsOf(config, prefix);
  for (const TensorSpec* spec : Ordered(outer)) add(spec);
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const LayerTensors tensors = LayerTensorsOf(config, prefix, layer);
    for (const TensorSpec* spec : Ordered(tensors)) add(spec);
  }
  return n;
}

ModelConfig Parse(BenchFamily family) {
  auto config = ParseModelConfig(BenchFamilyConfig(family).dump());
  EXPECT_TRUE(config.ok()) << BenchFamilyName(family) << ": " << config.status().ToString();
  return config.ok() ? *config : ModelConfig{};
}

TEST(BenchFamilies, EachIsItsFamilyInItsPublishedFormats) {
  const ModelConfig k3 = Parse(BenchFamily::kK3);
  EXPECT_EQ(k3.family, Family::kKimiK3);
  EXPECT_TRUE(k3.mxfp4_experts);
  EXPECT_FALSE(Parse(BenchFamily::kK3Bf16).mxfp4_experts);
  const ModelConfig linear = Parse(BenchFamily::kKimiLinear);
  EXPECT_EQ(linear.family, Family::kKimiLinear);
  EXPECT_EQ(linear.num_kda_layers(), 9);
  EXPECT_EQ(linear.num_mla_layers(), 3);
  const ModelConfig k2 = Parse(BenchFamily::kK2);
  EXPECT_EQ(k2.family, Family::kDeepseekV3);
  EXPECT_EQ(k2.fp8_block, 128);
  const ModelConfig k25 = Parse(BenchFamily::kK25);
  EXPECT_EQ(k25.family, Family::kDeepseekV3);
  EXPECT_TRUE(k25.int4_experts);
  EXPECT_EQ(k25.fp8_block, 0);
}

TEST(BenchFamilies, EachIsAboutTwoBillionParameters) {
  for (BenchFamily f :
       {BenchFamily::kK3, BenchFamily::kKimiLinear, BenchFamily::kK2, BenchFamily::kK25}) {
    const double billions = SchemaParameters(Parse(f)) / 1e9;
    std::printf("%s: %.2fB parameters\n", std::string(BenchFamilyName(f)).c_str(), billions);
    EXPECT_GT(billions, 1.5) << BenchFamilyName(f);
    EXPECT_LT(billions, 3.0) << BenchFamilyName(f);
  }
}

TEST(BenchFamilies, NamesRoundTripAndUnknownIsRefused) {
  for (BenchFamily f : {BenchFamily::kK3, BenchFamily::kK3Bf16, BenchFamily::kKimiLinear,
                        BenchFamily::kK2, BenchFamily::kK25}) {
    auto parsed = ParseBenchFamily(BenchFamilyName(f));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, f);
  }
  auto bad = ParseBenchFamily("k9");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("k9"), std::string::npos);
}

}  // namespace
}  // namespace k3::model::testing
