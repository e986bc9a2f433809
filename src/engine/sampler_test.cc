#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace k3::engine {
namespace {

// The oracle: the whole pipeline in double precision with a full sort. Returns the final
// distribution; a token is allowed iff its probability is > 0. `slack` (only for allowed-set
// checks) widens each cut relatively, for the float-vs-double wobble at a cut boundary.
std::vector<double> ReferenceProbs(const std::vector<float>& logits, const SamplingParams& params,
                                   const PenaltyState& state, double slack = 0.0) {
  std::vector<double> x(logits.begin(), logits.end());
  std::set<int32_t> seen(state.prompt_tokens.begin(), state.prompt_tokens.end());
  for (const auto& [id, count] : state.output_counts) seen.insert(id);
  const double rep = params.repetition_penalty;
  for (int32_t id : seen) x[id] = x[id] > 0 ? x[id] / rep : x[id] * rep;
  for (const auto& [id, count] : state.output_counts) {
    x[id] -= params.presence_penalty + params.frequency_penalty * count;
  }
  const double max_x = *std::max_element(x.begin(), x.end());
  std::vector<double> p(x.size());
  for (size_t i = 0; i < x.size(); ++i) p[i] = std::exp((x[i] - max_x) / params.temperature);
  std::vector<int32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return p[a] > p[b] || (p[a] == p[b] && a < b);
  });
  size_t num_ranked = params.top_k > 0 ? std::min<size_t>(params.top_k, x.size()) : x.size();
  double ranked_mass = 0.0;
  for (size_t r = 0; r < num_ranked; ++r) ranked_mass += p[order[r]];
  std::vector<double> out(x.size(), 0.0);
  double before = 0.0, kept = 0.0;
  for (size_t r = 0; r < x.size(); ++r) {
    const double pr = p[order[r]];
    const bool top_k_ok = r < num_ranked || pr >= p[order[num_ranked - 1]] * (1 - slack);
    if (!top_k_ok) break;
    const bool top_p_ok = params.top_p >= 1.0 || before < params.top_p * ranked_mass * (1 + slack);
    const bool min_p_ok = pr >= params.min_p * p[order[0]] * (1 - slack);
    before += pr;
    if (top_p_ok && min_p_ok) out[order[r]] = pr, kept += pr;
  }
  for (double& v : out) v /= kept;
  return out;
}

// Distinct, well-separated logits in a shuffled order: no near-ties for the oracle to disagree on.
std::vector<float> ShuffledLogits(size_t vocab, uint32_t seed, float spacing) {
  std::vector<float> logits(vocab);
  for (size_t i = 0; i < vocab; ++i) logits[i] = spacing * (static_cast<float>(i) - vocab / 2.0f);
  std::shuffle(logits.begin(), logits.end(), std::mt19937(seed));
  return logits;
}

std::vector<float> NormalLogits(size_t vocab, uint32_t seed, float stddev) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> logits(vocab);
  for (float& x : logits) x = normal(rng);
  return logits;
}

SampledToken SampleCopy(Sampler& sampler, std::vector<float> logits, const SamplingParams& params,
                        const PenaltyState& state, uint64_t seed, uint64_t step) {
  return sampler.Sample(logits, params, state, seed, step);
}

TEST(SamplingParamsTest, BoundaryValuesAreValid) {
  SamplingParams p;
  EXPECT_TRUE(p.Validate(1000).ok());
  p.temperature = 2.0, p.top_p = 1.0, p.min_p = 1.0, p.repetition_penalty = 2.0;
  p.presence_penalty = -2.0, p.frequency_penalty = 2.0, p.logprobs = 20, p.n = 128;
  p.stop_token_ids = {0, 999};
  EXPECT_TRUE(p.Validate(1000).ok()) << p.Validate(1000).ToString();
  p.temperature = 0.0, p.logprobs = -1, p.n = 1, p.max_tokens = 1;
  EXPECT_TRUE(p.Validate(1000).ok());
}

TEST(SamplingParamsTest, EachBadFieldIsNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    void (*mutate)(SamplingParams&, double);
    double value;
    const char* field;
  };
  const Case cases[] = {
      {[](SamplingParams& p, double v) { p.temperature = v; }, -0.1, "temperature"},
      {[](SamplingParams& p, double v) { p.temperature = v; }, 2.5, "temperature"},
      {[](SamplingParams& p, double v) { p.temperature = v; }, nan, "temperature"},
      {[](SamplingParams& p, double v) { p.temperature = v; }, inf, "temperature"},
      {[](SamplingParams& p, double v) { p.top_p = v; }, 0.0, "top_p"},
      {[](SamplingParams& p, double v) { p.top_p = v; }, 1.01, "top_p"},
      {[](SamplingParams& p, double v) { p.top_p = v; }, nan, "top_p"},
      {[](SamplingParams& p, double v) { p.top_k = static_cast<int>(v); }, -1, "top_k"},
      {[](SamplingParams& p, double v) { p.min_p = v; }, 1.5, "min_p"},
      {[](SamplingParams& p, double v) { p.min_p = v; }, -0.5, "min_p"},
      {[](SamplingParams& p, double v) { p.presence_penalty = v; }, 2.5, "presence_penalty"},
      {[](SamplingParams& p, double v) { p.frequency_penalty = v; }, -3, "frequency_penalty"},
      {[](SamplingParams& p, double v) { p.repetition_penalty = v; }, 0.0, "repetition_penalty"},
      {[](SamplingParams& p, double v) { p.repetition_penalty = v; }, 2.1, "repetition_penalty"},
      {[](SamplingParams& p, double v) { p.max_tokens = static_cast<int64_t>(v); }, 0, "max_tokens"},
      {[](SamplingParams& p, double v) { p.stop_token_ids = {5, static_cast<int32_t>(v)}; }, 1000,
       "stop_token_ids[1]"},
      {[](SamplingParams& p, double v) { p.stop_token_ids = {static_cast<int32_t>(v)}; }, -1,
       "stop_token_ids[0]"},
      {[](SamplingParams& p, double v) { p.logprobs = static_cast<int>(v); }, 21, "logprobs"},
      {[](SamplingParams& p, double v) { p.logprobs = static_cast<int>(v); }, -2, "logprobs"},
      {[](SamplingParams& p, double v) { p.n = static_cast<int>(v); }, 0, "n must"},
      {[](SamplingParams& p, double v) { p.n = static_cast<int>(v); }, 129, "n must"},
  };
  for (const Case& c : cases) {
    SamplingParams p;
    c.mutate(p, c.value);
    const base::Status s = p.Validate(1000);
    EXPECT_EQ(s.code(), base::StatusCode::kInvalidArgument) << c.field << " " << c.value;
    EXPECT_EQ(s.message().rfind(c.field, 0), 0u) << s.message();
  }
}

TEST(SamplerTest, GreedyIsArgmaxWithLowestIdOnTies) {
  Sampler sampler;
  SamplingParams params;
  params.temperature = 0.0;
  const std::vector<float> logits = NormalLogits(5000, 1, 3.0f);
  const auto ref = std::max_element(logits.begin(), logits.end()) - logits.begin();
  for (uint64_t seed : {0, 1, 99}) {
    EXPECT_EQ(SampleCopy(sampler, logits, params, {}, seed, seed).token, ref);
  }
  EXPECT_EQ(SampleCopy(sampler, {1, 5, 3, 5, 5}, params, {}, 0, 0).token, 1);
  EXPECT_EQ(SampleCopy(sampler, {2, 2, 2}, params, {}, 0, 0).token, 0);
  const float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(SampleCopy(sampler, {ninf, -50, ninf}, params, {}, 0, 0).token, 1);
}

TEST(SamplerTest, LogprobsMatchDoubleLogSoftmaxOfRawLogits) {
  Sampler sampler;
  std::vector<float> logits = NormalLogits(1000, 2, 4.0f);
  logits[10] = logits[20] = 30.0f;  // a tie at the top: 10 before 20
  double max_x = 30.0, sum = 0.0;
  for (float x : logits) sum += std::exp(x - max_x);
  auto ref_logprob = [&](int32_t id) { return logits[id] - max_x - std::log(sum); };
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });

  SamplingParams params;
  params.logprobs = 7;
  PenaltyState state;  // penalties and temperature must not leak into the reported logprobs
  params.repetition_penalty = 2.0, params.frequency_penalty = 1.5, params.temperature = 0.3;
  state.prompt_tokens = {10, 20};
  state.AddOutput(order[2]);
  for (uint64_t step = 0; step < 20; ++step) {
    const SampledToken out = SampleCopy(sampler, logits, params, state, 5, step);
    EXPECT_NEAR(out.logprob, ref_logprob(out.token), 1e-5);
    ASSERT_EQ(out.top.size(), 7u);
    for (size_t r = 0; r < 7; ++r) {
      EXPECT_EQ(out.top[r].token, order[r]);
      EXPECT_NEAR(out.top[r].logprob, ref_logprob(order[r]), 1e-5);
    }
  }
  params.logprobs = 0;
  const SampledToken only = SampleCopy(sampler, logits, params, state, 5, 0);
  EXPECT_TRUE(only.top.empty());
  EXPECT_NEAR(only.logprob, ref_logprob(only.token), 1e-5);
  // Huge spreads stay finite; masked tokens report -inf.
  params.logprobs = 2, params.temperature = 0.0;
  const float ninf = -std::numeric_limits<float>::infinity();
  const SampledToken wide = SampleCopy(sampler, {-1e4f, 1e4f, ninf, 1e4f}, params, {}, 0, 0);
  EXPECT_EQ(wide.token, 1);
  EXPECT_NEAR(wide.logprob, -std::log(2.0), 1e-5);
  ASSERT_EQ(wide.top.size(), 2u);
  EXPECT_EQ(wide.top[1].token, 3);
}

// Pins the penalised logit of token 0 within 1e-3 of `expected`, using greedy against a
// competitor (token 1, never penalised) placed just below and just above it.
void ExpectPenalisedTo(float raw, double expected, const SamplingParams& base_params,
                       const PenaltyState& state) {
  Sampler sampler;
  SamplingParams params = base_params;
  params.temperature = 0.0;
  const float below = static_cast<float>(expected - 1e-3), above = static_cast<float>(expected + 1e-3);
  EXPECT_EQ(SampleCopy(sampler, {raw, below}, params, state, 0, 0).token, 0) << raw << "->" << expected;
  EXPECT_EQ(SampleCopy(sampler, {raw, above}, params, state, 0, 0).token, 1) << raw << "->" << expected;
}

TEST(SamplerTest, PenaltiesMatchHandComputedValues) {
  SamplingParams rep;
  rep.repetition_penalty = 2.0;
  PenaltyState in_prompt;
  in_prompt.prompt_tokens = {0};
  ExpectPenalisedTo(3.0f, 1.5, rep, in_prompt);    // positive logit divided
  ExpectPenalisedTo(-3.0f, -6.0, rep, in_prompt);  // negative logit multiplied
  PenaltyState in_both = in_prompt;                // once per token, not per occurrence
  in_both.AddOutput(0), in_both.AddOutput(0);
  ExpectPenalisedTo(3.0f, 1.5, rep, in_both);
  PenaltyState in_output;
  in_output.AddOutput(0), in_output.AddOutput(0);
  ExpectPenalisedTo(3.0f, 1.5, rep, in_output);
  rep.repetition_penalty = 0.5;  // < 1 encourages
  ExpectPenalisedTo(3.0f, 6.0, rep, in_output);

  SamplingParams openai;
  openai.presence_penalty = 0.5, openai.frequency_penalty = 0.25;
  PenaltyState thrice;
  for (int i = 0; i < 3; ++i) thrice.AddOutput(0);
  ExpectPenalisedTo(1.0f, 1.0 - 0.5 - 0.75, openai, thrice);
  ExpectPenalisedTo(1.0f, 1.0, openai, in_prompt);  // prompt tokens only feel repetition
  openai.presence_penalty = -1.0, openai.frequency_penalty = -0.5;
  ExpectPenalisedTo(1.0f, 1.0 + 1.0 + 1.5, openai, thrice);

  SamplingParams both;  // repetition first, then frequency: 4 / 2 - 0.5 * 2 (not (4 - 1) / 2)
  both.repetition_penalty = 2.0, both.frequency_penalty = 0.5;
  ExpectPenalisedTo(4.0f, 1.0, both, in_output);
}

struct TruncCase {
  int top_k;
  double top_p, min_p, temperature;
};
const TruncCase kTruncCases[] = {
    {1, 1.0, 0.0, 1.0},   {5, 1.0, 0.0, 0.7},  {0, 0.5, 0.0, 1.0},   {0, 0.9, 0.0, 1.3},
    {0, 1.0, 0.2, 1.0},   {10, 0.7, 0.0, 1.0}, {20, 0.95, 0.05, 1.5}, {0, 0.99, 0.0, 1.0},
    {2000, 0.999, 0.001, 2.0}, {0, 1.0, 0.0001, 2.0},
};

TEST(SamplerTest, TruncationOnlyReturnsReferenceAllowedTokens) {
  Sampler sampler;
  PenaltyState state;
  state.prompt_tokens = {3, 7, 11};
  state.AddOutput(7), state.AddOutput(50);
  for (size_t vocab : {300, 5000}) {
    const std::vector<float> logits = ShuffledLogits(vocab, 3, 3000.0f / vocab / 100.0f);
    for (const TruncCase& c : kTruncCases) {
      SamplingParams params;
      params.top_k = c.top_k, params.top_p = c.top_p, params.min_p = c.min_p;
      params.temperature = c.temperature, params.repetition_penalty = 1.2;
      params.presence_penalty = 0.3;
      const std::vector<double> ref = ReferenceProbs(logits, params, state, 1e-5);
      for (uint64_t seed = 0; seed < 300; ++seed) {
        const int32_t token = SampleCopy(sampler, logits, params, state, seed, seed % 7).token;
        ASSERT_GT(ref[token], 0.0) << "vocab " << vocab << " top_k " << c.top_k << " top_p "
                                   << c.top_p << " min_p " << c.min_p << " seed " << seed;
      }
    }
  }
}

TEST(SamplerTest, MaskedTokensAreNeverDrawn) {
  Sampler sampler;
  std::vector<float> logits(100, -std::numeric_limits<float>::infinity());
  logits[17] = 0.0f, logits[42] = 0.5f, logits[99] = -0.5f;
  SamplingParams params;
  for (int top_k : {0, 50}) {
    params.top_k = top_k;
    for (uint64_t step = 0; step < 500; ++step) {
      const int32_t token = SampleCopy(sampler, logits, params, {}, 1, step).token;
      ASSERT_TRUE(token == 17 || token == 42 || token == 99) << token;
    }
  }
}

TEST(SamplerTest, EmpiricalDistributionMatchesReference) {
  const std::vector<float> logits = {1.0f, 0.5f, 2.0f, -1.0f, 0.0f, 1.5f, 0.2f, -0.5f, 0.8f, 1.2f};
  PenaltyState state;
  state.prompt_tokens = {2};
  state.AddOutput(5), state.AddOutput(5), state.AddOutput(9);
  const TruncCase cases[] = {{0, 1.0, 0.0, 1.0}, {6, 1.0, 0.0, 0.7}, {0, 0.8, 0.0, 1.0},
                             {0, 1.0, 0.15, 1.5}, {10, 1.0, 0.0, 1.0}, {4, 0.9, 0.3, 1.2}};
  Sampler sampler;
  for (bool penalised : {false, true}) {
    for (const TruncCase& c : cases) {
      SamplingParams params;
      params.top_k = c.top_k, params.top_p = c.top_p, params.min_p = c.min_p;
      params.temperature = c.temperature;
      if (penalised) params.repetition_penalty = 1.3, params.frequency_penalty = 0.3;
      if (penalised) params.presence_penalty = 0.2;
      const PenaltyState& used = penalised ? state : PenaltyState{};
      const std::vector<double> ref = ReferenceProbs(logits, params, used);
      constexpr int kDraws = 20000;
      std::vector<int> counts(logits.size(), 0);
      for (uint64_t step = 0; step < kDraws; ++step) {
        ++counts[SampleCopy(sampler, logits, params, used, 42, step).token];
      }
      for (size_t id = 0; id < logits.size(); ++id) {
        EXPECT_NEAR(static_cast<double>(counts[id]) / kDraws, ref[id], 0.01)
            << "token " << id << " top_k " << c.top_k << " top_p " << c.top_p << " penalised "
            << penalised;
      }
    }
  }
}

TEST(SamplerTest, SameSeedAndStepGiveSameTokenWhateverRanBefore) {
  const std::vector<float> logits = NormalLogits(1000, 4, 0.1f);  // nearly flat
  SamplingParams params;
  Sampler a, b;
  std::set<int32_t> by_step, by_seed;
  for (uint64_t step = 0; step < 200; ++step) {
    params.top_p = step % 2 ? 0.95 : 1.0;
    const int32_t first = SampleCopy(a, logits, params, {}, 77, step).token;
    (void)SampleCopy(a, NormalLogits(50, 5, 1.0f), params, {}, 3, 9);  // dirty the scratch
    EXPECT_EQ(SampleCopy(a, logits, params, {}, 77, step).token, first);
    EXPECT_EQ(SampleCopy(b, logits, params, {}, 77, step).token, first);
    by_step.insert(first);
    by_seed.insert(SampleCopy(b, logits, params, {}, step, 0).token);
  }
  EXPECT_GT(by_step.size(), 150u);  // ~181 expected for 200 independent uniform draws of 1000
  EXPECT_GT(by_seed.size(), 150u);
}

TEST(UniformForStepTest, RangeMomentsAndIndependence) {
  constexpr int kCount = 200000;
  for (bool vary_step : {true, false}) {
    double sum = 0.0, sum_sq = 0.0, lag = 0.0, prev = 0.5;
    for (uint64_t i = 0; i < kCount; ++i) {
      const double u = vary_step ? UniformForStep(12345, i) : UniformForStep(i, 3);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      sum += u, sum_sq += u * u, lag += (u - 0.5) * (prev - 0.5), prev = u;
    }
    const double mean = sum / kCount;
    EXPECT_NEAR(mean, 0.5, 0.003);
    EXPECT_NEAR(sum_sq / kCount - mean * mean, 1.0 / 12.0, 0.002);
    EXPECT_NEAR(lag / kCount / (1.0 / 12.0), 0.0, 0.01);  // lag-1 correlation
  }
  EXPECT_EQ(UniformForStep(9, 4), UniformForStep(9, 4));
  EXPECT_NE(UniformForStep(9, 4), UniformForStep(4, 9));
}

TEST(SamplerTest, FullKimiVocabTopP) {
  constexpr size_t kVocab = 163840;
  Sampler sampler;
  for (float stddev : {3.0f, 0.05f}) {  // peaked (a few hundred kept) and flat (~90% kept)
    const std::vector<float> logits = NormalLogits(kVocab, 6, stddev);
    SamplingParams params;
    params.top_p = 0.9, params.logprobs = 5;
    const std::vector<double> ref = ReferenceProbs(logits, params, {}, 1e-5);
    std::set<int32_t> seen;
    for (uint64_t step = 0; step < 100; ++step) {
      const SampledToken out = SampleCopy(sampler, logits, params, {}, 8, step);
      ASSERT_GT(ref[out.token], 0.0) << out.token;
      ASSERT_EQ(out.top.size(), 5u);
      seen.insert(out.token);
    }
    EXPECT_GT(seen.size(), 50u);
  }
}

}  // namespace
}  // namespace k3::engine
