// The engine on the tiny generated checkpoints (one per family, written by the model_refs
// fixture): greedy output equals the float64 reference, and batching, prefix-cache hits,
// preemption and seeded sampling never change a token.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "model/greedy.h"
#include "model/model_test_util.h"

namespace k3::engine {
namespace {

struct Completion {
  std::vector<int32_t> tokens;
  int64_t cached = 0;
  FinishReason reason = FinishReason::kNone;
};

class EngineModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Engine> MakeEngine(EngineConfig config,
                                     model::ForwardOptions options = model::ForwardOptions{}) {
    auto model = model::Model::Load(model::testing::FamilyDir(GetParam()) + "/model");
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto engine =
        Engine::Create(std::make_unique<K3ModelRunner>(std::move(model).value(), options), config);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return std::move(engine).value();
  }

  static EngineConfig Config() {
    EngineConfig c;
    c.cache_memory_bytes = 16 << 20;
    c.block_size = 16;
    c.max_running = 32;
    c.max_batched_tokens = 256;
    return c;
  }

  // Submits every prompt, runs to idle, returns completions in submission order.
  static std::vector<Completion> Run(Engine& engine,
                                     const std::vector<std::vector<int32_t>>& prompts,
                                     const SamplingParams& params) {
    std::map<uint64_t, Completion> done;
    std::vector<uint64_t> ids;
    for (const auto& prompt : prompts) {
      auto id = engine.Submit({prompt, params, [&done](const RequestOutput& o) {
                                 Completion& c = done[o.request_id];
                                 c.tokens.insert(c.tokens.end(), o.tokens.begin(), o.tokens.end());
                                 c.cached = o.cached_tokens;
                                 c.reason = o.finish_reason;
                               }});
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      ids.push_back(*id);
    }
    EXPECT_TRUE(engine.RunUntilIdle().ok());
    std::vector<Completion> out;
    for (uint64_t id : ids) out.push_back(done[id]);
    return out;
  }

  // Each prompt alone in an engine without prefix caching.
  std::vector<Completion> RunAlone(const std::vector<std::vector<int32_t>>& prompts,
                                   const SamplingParams& params) {
    EngineConfig config = Config();
    config.enable_prefix_caching = false;
    auto engine = MakeEngine(config);
    std::vector<Completion> out;
    for (const auto& prompt : prompts) out.push_back(Run(*engine, {prompt}, params)[0]);
    return out;
  }
};

SamplingParams Greedy(int64_t max_tokens) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

std::vector<std::vector<int32_t>> RandomPrompts(int count, int min_len, int max_len,
                                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int32_t>> prompts(count);
  for (auto& p : prompts) {
    p.resize(min_len + rng() % (max_len - min_len + 1));
    for (auto& t : p) t = static_cast<int32_t>(3 + rng() % 500);
  }
  return prompts;
}

TEST_P(EngineModelTest, GreedyOutputEqualsFloat64Reference) {
  const model::testing::Reference ref = model::testing::LoadReference(GetParam());
  auto engine = MakeEngine(Config());
  const auto got = Run(*engine, {ref.prompt}, Greedy(static_cast<int64_t>(ref.generated.size())));
  EXPECT_EQ(got[0].tokens, ref.generated);
}

TEST_P(EngineModelTest, ThirtyTwoBatchedRequestsEqualEachAlone) {
  const auto prompts = RandomPrompts(32, 5, 90, 1);
  auto engine = MakeEngine(Config());
  const auto batched = Run(*engine, prompts, Greedy(16));
  const auto alone = RunAlone(prompts, Greedy(16));
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(batched[i].tokens, alone[i].tokens) << "request " << i;
  }
}

TEST_P(EngineModelTest, SeededSamplingIsReproducibleInAnyBatch) {
  SamplingParams p;
  p.temperature = 0.9;
  p.top_p = 0.95;
  p.top_k = 50;
  p.seed = 1234;
  p.max_tokens = 16;
  p.ignore_eos = true;
  const auto prompts = RandomPrompts(12, 5, 60, 2);
  auto engine = MakeEngine(Config());
  const auto batched = Run(*engine, prompts, p);
  const auto alone = RunAlone(prompts, p);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(batched[i].tokens, alone[i].tokens) << "request " << i;
  }
}

TEST_P(EngineModelTest, PrefixHitsEqualColdRuns) {
  const auto base = RandomPrompts(1, 200, 200, 3)[0];
  std::mt19937_64 rng(4);
  for (int64_t interval : {0, 32}) {
    for (double shared : {0.0, 0.5, 0.99, 1.0}) {
      std::vector<int32_t> prompt(base.begin(), base.begin() + static_cast<int>(shared * 200));
      while (prompt.size() < 200 + (shared == 1.0 ? 37u : 0u)) {
        prompt.push_back(static_cast<int32_t>(3 + rng() % 500));
      }
      EngineConfig config = Config();
      config.state_checkpoint_interval = interval;
      auto engine = MakeEngine(config);
      Run(*engine, {base}, Greedy(8));
      const auto hit = Run(*engine, {prompt}, Greedy(8))[0];
      const auto cold = RunAlone({prompt}, Greedy(8))[0];
      EXPECT_EQ(hit.tokens, cold.tokens) << "interval " << interval << " shared " << shared;
      if (shared == 1.0) {
        EXPECT_EQ(hit.cached, 192) << "interval " << interval;  // the base prompt's last block
      }
      if (shared >= 0.99 && interval > 0) {
        EXPECT_GE(hit.cached, 192 - interval) << "interval " << interval;
      }
      if (shared == 0.0) {
        EXPECT_EQ(hit.cached, 0);
      }
    }
  }
}

TEST_P(EngineModelTest, PreemptedRequestsEqualUninterruptedOnes) {
  EngineConfig config = Config();
  config.max_running = 8;
  config.max_batched_tokens = 64;
  // Room for 8 state slots and ~20 blocks: eight 120-token sequences cannot all fit.
  auto probe = MakeEngine(Config());
  const RunnerInfo info = probe->info();
  config.cache_memory_bytes = 8 * info.state_bytes_per_slot + 20 * 16 * info.cache_bytes_per_token;
  config.checkpoint_memory_fraction = 0;
  auto engine = MakeEngine(config);
  const auto prompts = RandomPrompts(8, 60, 100, 5);
  const auto got = Run(*engine, prompts, Greedy(24));
  EXPECT_GT(engine->metrics().counters.preemptions, 0);
  const auto alone = RunAlone(prompts, Greedy(24));
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(got[i].tokens, alone[i].tokens) << "request " << i;
  }
}

// A bf16 latent cache: half the bytes per token of fp32 (576-wide entries: 1152 instead of 2304
// per MLA layer), so the same cache memory holds about twice the blocks (exactly twice where no
// KDA state shares the budget); the engine's greedy output equals GreedyGenerate's over the same
// bf16 cache (the engine runs what the model test measures against the reference).
TEST_P(EngineModelTest, Bf16CacheHalvesBytesPerTokenAndDecodesAsTheModelDoes) {
  model::ForwardOptions bf16;
  bf16.cache_dtype = kernels::LatentDtype::kBf16;
  auto fp32_engine = MakeEngine(Config());
  auto bf16_engine = MakeEngine(Config(), bf16);
  const RunnerInfo fp32_info = fp32_engine->info(), bf16_info = bf16_engine->info();
  EXPECT_EQ(2 * bf16_info.cache_bytes_per_token, fp32_info.cache_bytes_per_token);
  const double ratio = static_cast<double>(bf16_engine->layout().num_blocks) /
                       static_cast<double>(fp32_engine->layout().num_blocks);
  std::printf("%s: %lld -> %lld cache bytes per token, %lld -> %lld blocks (x%.2f)\n",
              GetParam().c_str(), static_cast<long long>(fp32_info.cache_bytes_per_token),
              static_cast<long long>(bf16_info.cache_bytes_per_token),
              static_cast<long long>(fp32_engine->layout().num_blocks),
              static_cast<long long>(bf16_engine->layout().num_blocks), ratio);
  EXPECT_GE(ratio, fp32_info.state_bytes_per_slot > 0 ? 1.5 : 1.99);
  const model::testing::Reference ref = model::testing::LoadReference(GetParam());
  const auto got = Run(*bf16_engine, {ref.prompt}, Greedy(32));
  auto model = model::Model::Load(model::testing::FamilyDir(GetParam()) + "/model");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  model::GreedyOptions options;
  options.max_tokens = 32;
  options.stop_at_eos = false;
  options.forward = bf16;
  auto want = model::GreedyGenerate(**model, ref.prompt, options);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(got[0].tokens, want->generated);
}

INSTANTIATE_TEST_SUITE_P(Families, EngineModelTest, ::testing::Values("k3", "kimi_linear", "k2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace k3::engine
