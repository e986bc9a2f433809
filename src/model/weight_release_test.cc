// --weight-quant int8 / bf16-panels convert matrices into memory of the model's own; Model::Load
// then releases, layer by layer, the checkpoint memory the model no longer reads
// (weights::Checkpoint::ReleaseExcept). Checked on each family's tiny generated checkpoint against
// a second, untouched opening of the same files: with mapped files (4 KiB units; the 1.2 MB
// shards hold no whole 2 MiB unit that is free) something was released, the checkpoint refuses
// only tensors the model does not read in place, and every tensor it still hands out -- the
// embedding, routers, kv_b and 4-bit experts above all -- holds the file's bytes. That the
// converted model computes the right logits is model_parity_test's (which loads the same way).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kernels/matmul.h"
#include "model/model.h"
#include "model/model_test_util.h"
#include "weights/checkpoint.h"

namespace k3::model {
namespace {

using testing::FamilyDir;

class WeightReleaseTest : public ::testing::TestWithParam<std::tuple<std::string, WeightQuant>> {};

// Names of the tensors every family's model reads in place whatever the conversion.
bool ReadInPlace(const std::string& name) {
  for (const char* part : {"embed_tokens", "kv_b_proj", "mlp.gate.weight", "e_score_correction"}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST_P(WeightReleaseTest, OriginalsOfConvertedMatricesAreReleasedAndTheRestIsIntact) {
  const auto& [family, quant] = GetParam();
  if (quant == WeightQuant::kBf16Panels && !kernels::Bf16PanelsRunFast()) {
    GTEST_SKIP() << "no AVX-512: the loader keeps row-major BF16 and converts nothing";
  }
  const std::string dir = FamilyDir(family) + "/model";
  base::ThreadPool pool(2);
  LoadOptions options(quant);
  for (auto pages : {weights::MappedFile::Pages::kHuge, weights::MappedFile::Pages::kFile}) {
    options.pages = pages;
    auto model = Model::Load(dir, &pool, options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto fresh = weights::Checkpoint::Open(dir);
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    const weights::Checkpoint& loaded = (*model)->checkpoint();
    if (pages == weights::MappedFile::Pages::kFile) {
      EXPECT_GT(loaded.released_bytes(), 0u);
    }
    int refused = 0, in_place = 0;
    for (const std::string& name : fresh->TensorNames()) {
      auto want = fresh->Get(name);
      ASSERT_TRUE(want.ok());
      auto got = loaded.Get(name);
      if (!got.ok()) {
        EXPECT_EQ(got.status().code(), base::StatusCode::kFailedPrecondition) << name;
        EXPECT_FALSE(ReadInPlace(name)) << name << " is read in place but was released";
        ++refused;
        continue;
      }
      in_place += ReadInPlace(name);
      ASSERT_EQ(got->bytes.size(), want->bytes.size()) << name;
      EXPECT_EQ(std::memcmp(got->bytes.data(), want->bytes.data(), got->bytes.size()), 0)
          << name << " changed";
    }
    EXPECT_EQ(refused > 0, loaded.released_bytes() > 0);
    EXPECT_GT(in_place, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, WeightReleaseTest,
                         ::testing::Combine(::testing::Values("k3", "kimi_linear", "k2", "k25"),
                                            ::testing::Values(WeightQuant::kInt8,
                                                              WeightQuant::kBf16Panels)),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) == WeightQuant::kInt8 ? "_int8"
                                                                                 : "_panels");
                         });

}  // namespace
}  // namespace k3::model
