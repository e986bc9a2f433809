// The release after a load-time conversion (Model::Load, weights::Checkpoint::ReleaseExcept) must
// never take memory the model still reads. Released 2 MiB-page memory reads as zeros, released
// mapped pages read the file again, so the same model loaded both ways must compute the same
// logits bit for bit: a matrix released while still read (say a field MatrixBytes missed) turns
// to zeros in one and not in the other. The checkpoint is a mid-sized synthetic K3 (hidden 1024,
// ~50 MB) whose BF16 stretches span whole 2 MiB units, so the huge-page load does release memory;
// the tiny parity checkpoints are smaller than one unit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/state.h"
#include "model/testing/bench_checkpoint.h"
#include "model/testing/synthetic_checkpoint.h"
#include "weights/mapped_file.h"

namespace k3::model::testing {
namespace {

using Pages = weights::MappedFile::Pages;

std::filesystem::path WriteMidSizedK3() {
  BenchModelShape shape;
  shape.hidden = 1024;
  shape.vocab = 4096;
  shape.layers = 4;  // KDA, KDA, KDA, MLA
  shape.dense_intermediate = 1024;
  shape.experts = 8;
  shape.top_k = 2;
  shape.moe_intermediate = 256;
  shape.latent = 512;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("k3_release_" + std::to_string(::getpid()));
  const base::Status written = WriteSyntheticCheckpoint(BenchModelConfig(shape).dump(), dir);
  EXPECT_TRUE(written.ok()) << written.ToString();
  return dir;
}

std::vector<float> PromptLogits(const Model& model) {
  const ModelConfig& c = model.config();
  KdaStatePool states(c, 1);
  MlaCache cache(c, 1, 64);
  const std::vector<int32_t> prompt = {5, 900, 17, 3000, 42, 7, 1234, 2048, 99, 1, 4000, 64};
  const std::vector<int32_t> pages = {0};
  SequenceInput seq{prompt, 0, 0, pages, static_cast<int64_t>(prompt.size())};
  ForwardResult out;
  const base::Status status = model.Forward({&seq, 1}, ForwardOptions{}, states, cache, &out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out.logits;
}

TEST(WeightRelease, ReleasedMemoryIsNeverReadAgain) {
  if (!weights::MappedFile::HugePagesAvailable()) {
    GTEST_SKIP() << "no transparent huge pages: both loads would map the files";
  }
  const std::filesystem::path dir = WriteMidSizedK3();
  base::ThreadPool pool(2);
  // auto is bf16-panels exactly where the panel tiles run.
  const std::vector<WeightQuant> quants =
      ResolveWeightQuant(WeightQuant::kAuto) == WeightQuant::kBf16Panels
          ? std::vector{WeightQuant::kInt8, WeightQuant::kBf16Panels}
          : std::vector{WeightQuant::kInt8};
  for (WeightQuant quant : quants) {
    std::vector<float> logits[2];
    for (Pages pages : {Pages::kHuge, Pages::kFile}) {
      LoadOptions options(quant);
      options.pages = pages;
      auto model = Model::Load(dir, &pool, options);
      ASSERT_TRUE(model.ok()) << model.status().ToString();
      EXPECT_GT((*model)->checkpoint().released_bytes(), uint64_t{4} << 20)
          << WeightQuantName(quant) << (pages == Pages::kHuge ? " huge pages" : " mapped");
      logits[pages == Pages::kHuge] = PromptLogits(**model);
    }
    ASSERT_EQ(logits[0].size(), logits[1].size());
    EXPECT_TRUE(logits[0] == logits[1]) << WeightQuantName(quant) << ": released memory was read";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace k3::model::testing
