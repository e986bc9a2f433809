// The tensor schema against the independent Python writer (reference/make_checkpoint.py): for
// each family the schema's stored tensors (names with the family's prefix, dtypes, shapes) are
// exactly the checkpoint's, and its checkpoint order lists every tensor once. The fixture
// tensor_schema_checkpoints writes the three checkpoints.
#include "model/tensor_schema.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensor/tensor_view.h"
#include "testing/paths.h"
#include "weights/checkpoint.h"

namespace k3::model {
namespace {

struct Expected {
  tensor::DType dtype;
  std::vector<int64_t> shape;
};

// Every stored tensor the schema lists for `config`, by name.
std::map<std::string, Expected> SchemaTensors(const ModelConfig& config, std::string_view prefix,
                                              int* num_specs) {
  std::map<std::string, Expected> out;
  auto add = [&](const std::vector<const TensorSpec*>& specs) {
    for (const TensorSpec* spec : specs) {
      ++*num_specs;
      for (const StoredTensor& t : StoredTensors(*spec, config.fp8_block)) {
        EXPECT_TRUE(out.emplace(t.name, Expected{t.dtype, t.shape}).second) << "twice: " << t.name;
      }
    }
  };
  add(Ordered(OuterTensorsOf(config, prefix)));
  for (int layer = 0; layer < config.num_layers; ++layer) {
    add(Ordered(LayerTensorsOf(config, prefix, layer)));
  }
  return out;
}

class TensorSchemaTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TensorSchemaTest, MatchesThePythonWriter) {
  const std::string dir = k3::testing::BinaryDir() + "/tensor_schema_refs/" + GetParam();
  auto checkpoint = weights::Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  auto config = ParseModelConfig(checkpoint->config_json());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  int num_specs = 0;
  // K2.5 nests a DeepSeek-V3 text model under "language_model." as K3 does (the loader tells the
  // two spellings apart by where the embedding is).
  const bool nested = checkpoint->Contains("language_model.model.embed_tokens.weight");
  const std::map<std::string, Expected> schema = SchemaTensors(
      *config, nested ? "language_model." : CheckpointPrefix(config->family), &num_specs);
  const std::vector<std::string> names = checkpoint->TensorNames();
  const std::set<std::string> stored(names.begin(), names.end());
  for (const auto& [name, expected] : schema) {
    auto view = checkpoint->Get(name);
    ASSERT_TRUE(view.ok()) << "the schema names " << name << ", the checkpoint lacks it";
    EXPECT_EQ(view->dtype, expected.dtype) << name;
    EXPECT_EQ(view->shape, expected.shape) << name << ": " << tensor::ShapeToString(view->shape)
                                           << " vs " << tensor::ShapeToString(expected.shape);
  }
  for (const std::string& name : stored) {
    EXPECT_TRUE(schema.count(name)) << "the checkpoint has " << name << ", the schema does not";
  }
  std::printf("[ schema   ] %s: %d specs, %zu stored tensors\n", GetParam(), num_specs,
              schema.size());
}

INSTANTIATE_TEST_SUITE_P(Families, TensorSchemaTest,
                         ::testing::Values("k3", "kimi_linear", "k2", "k25"));

TEST(TensorSchemaPrefixTest, OnlyK3IsNested) {
  EXPECT_EQ(CheckpointPrefix(Family::kKimiK3), "language_model.");
  EXPECT_EQ(CheckpointPrefix(Family::kKimiLinear), "");
  EXPECT_EQ(CheckpointPrefix(Family::kDeepseekV3), "");
}

}  // namespace
}  // namespace k3::model
