// Steady-state decode allocates nothing: for each family's tiny checkpoint, a batch of three
// sequences is prefilled, two decode steps warm the workspace up, and then every heap allocation
// of the whole process is counted over further decode steps of the same batch shape (threads of
// the pool included) with testing/allocation_counter.h: global operator new and the C allocation
// functions our libraries call (the arenas' and matmul's blocks included). Expected: zero, with
// each latent cache dtype (bf16 is read in place; fp8 entries are decoded into the workspace's
// arena, which stays warm as long as the context grows within its blocks).
#include <gtest/gtest.h>

#include <numeric>
#include <tuple>

#include "model/model.h"
#include "model/model_test_util.h"
#include "testing/allocation_counter.h"

namespace k3::model {
namespace {

class AllocationTest
    : public ::testing::TestWithParam<std::tuple<std::string, kernels::LatentDtype>> {};

TEST_P(AllocationTest, SteadyStateDecodeStepsAllocateNothing) {
  base::ThreadPool pool(2);
  auto loaded = Model::Load(testing::FamilyDir(std::get<0>(GetParam())) + "/model", &pool);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Model& model = **loaded;
  const ModelConfig& c = model.config();
  constexpr int kSeqs = 3, kPageSize = 16, kPagesPerSeq = 4;
  KdaStatePool states(c, kSeqs, &model.backend());
  MlaCache cache(c, kSeqs * kPagesPerSeq, kPageSize, &model.backend(), std::get<1>(GetParam()));
  Workspace workspace = model.MakeWorkspace();
  ForwardResult result;
  std::vector<std::vector<int32_t>> pages(kSeqs), prompts(kSeqs);
  std::vector<int32_t> next(kSeqs);
  std::vector<int64_t> position(kSeqs);
  std::vector<SequenceInput> batch(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    pages[s].resize(kPagesPerSeq);
    std::iota(pages[s].begin(), pages[s].end(), s * kPagesPerSeq);
    for (int t = 0; t < 5 + 7 * s; ++t) prompts[s].push_back((s * 31 + t * 7) % c.vocab);
    batch[s] = {prompts[s], 0, s, pages[s], 1};
    position[s] = static_cast<int64_t>(prompts[s].size());
  }
  ASSERT_TRUE(model.Forward(batch, {}, {states, cache, workspace}, &result).ok());
  auto decode = [&] {
    for (int s = 0; s < kSeqs; ++s) {
      next[s] = (position[s] * 13 + s) % c.vocab;
      batch[s] = {{&next[s], 1}, position[s]++, s, pages[s], 1};
    }
    return model.Forward(batch, {}, {states, cache, workspace}, &result).ok();
  };
  for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE(decode());
  const int64_t blocks = workspace.blocks_allocated();
  ::k3::testing::StartCountingAllocations();
  bool ok = true;
  for (int step = 0; step < 8; ++step) ok = decode() && ok;
  const int64_t allocations = ::k3::testing::StopCountingAllocations();
  ASSERT_TRUE(ok);
  EXPECT_EQ(allocations, 0) << "heap allocations in 8 steady-state decode steps";
  EXPECT_EQ(workspace.blocks_allocated(), blocks);
  EXPECT_EQ(result.rows, kSeqs);
  // The counter sees allocations: the convenience Forward makes a workspace per call.
  ::k3::testing::StartCountingAllocations();
  ok = model.Forward(batch, {}, states, cache, &result).ok();
  const int64_t convenience = ::k3::testing::StopCountingAllocations();
  ASSERT_TRUE(ok);
  EXPECT_GT(convenience, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, AllocationTest,
                         ::testing::Combine(::testing::Values("k3", "kimi_linear", "k2", "k25"),
                                            ::testing::Values(kernels::LatentDtype::kF32,
                                                              kernels::LatentDtype::kBf16,
                                                              kernels::LatentDtype::kFp8E4m3)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  kernels::LatentDtypeName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace k3::model
