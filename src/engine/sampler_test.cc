#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace k3::engine {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

SamplingParams Params(int top_k, double top_p, double min_p, double temperature) {
  SamplingParams params;
  params.top_k = top_k, params.top_p = top_p, params.min_p = min_p;
  params.temperature = temperature;
  return params;
}

// The oracle: the whole pipeline in double precision with a full sort. Returns the final
// distribution; a token is allowed iff its probability is > 0. `slack` (allowed-set checks only)
// widens each cut relatively, for the float-vs-double wobble at a cut boundary.
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
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
  const size_t num_ranked = params.top_k > 0 ? std::min<size_t>(params.top_k, x.size()) : x.size();
  double ranked_mass = 0.0;
  for (size_t r = 0; r < num_ranked; ++r) ranked_mass += p[order[r]];
  std::vector<double> out(x.size(), 0.0);
  double before = 0.0, kept = 0.0;
  for (size_t r = 0; r < x.size(); ++r) {
    const double pr = p[order[r]];
    if (r >= num_ranked && (slack == 0 || pr < p[order[num_ranked - 1]] * (1 - slack))) break;
    const bool top_p_ok = params.top_p >= 1.0 || before < params.top_p * ranked_mass * (1 + slack);
    const bool min_p_ok = pr >= params.min_p * p[order[0]] * (1 - slack);
    before += pr;
    if (top_p_ok && min_p_ok && pr > 0) out[order[r]] = pr, kept += pr;
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

// Sample() scribbles on its logits, so each call gets a copy.
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
  p.temperature = 0.0, p.logprobs = -1, p.n = 1, p.max_tokens = 1, p.top_p = 1e-9;
  EXPECT_TRUE(p.Validate(1000).ok());
}

// `field` set to `value`, everything else default.
template <typename T>
SamplingParams With(T SamplingParams::*field, T value) {
  SamplingParams params;
  params.*field = value;
  return params;
}

// INVALID_ARGUMENT with a message that starts with the field's name.
void ExpectRejected(const SamplingParams& params, const std::string& field) {
  const base::Status status = params.Validate(1000);
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument) << field;
  EXPECT_EQ(status.message().rfind(field + " must be", 0), 0u) << status.message();
}

TEST(SamplingParamsTest, EachBadFieldIsNamed) {
  using S = SamplingParams;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = kInf;
  for (double v : {-0.1, 2.5, nan, inf}) ExpectRejected(With(&S::temperature, v), "temperature");
  for (double v : {0.0, 1.01, nan}) ExpectRejected(With(&S::top_p, v), "top_p");
  ExpectRejected(With(&S::top_k, -1), "top_k");
  for (double v : {-0.1, 1.5, nan}) ExpectRejected(With(&S::min_p, v), "min_p");
  for (double v : {-2.5, 2.1, nan}) {
    ExpectRejected(With(&S::presence_penalty, v), "presence_penalty");
    ExpectRejected(With(&S::frequency_penalty, v), "frequency_penalty");
  }
  for (double v : {-1.0, 0.0, 2.1}) {
    ExpectRejected(With(&S::repetition_penalty, v), "repetition_penalty");
  }
  ExpectRejected(With(&S::max_tokens, int64_t{0}), "max_tokens");
  ExpectRejected(With(&S::stop_token_ids, {5, 1000}), "stop_token_ids[1]");  // vocab is 1000
  ExpectRejected(With(&S::stop_token_ids, {-1}), "stop_token_ids[0]");
  for (int v : {-2, 21}) ExpectRejected(With(&S::logprobs, v), "logprobs");
  for (int v : {0, 129}) ExpectRejected(With(&S::n, v), "n");
}

TEST(SamplerTest, GreedyIsArgmaxWithLowestIdOnTies) {
  Sampler sampler;
  const SamplingParams greedy = Params(0, 1.0, 0.0, 0.0);
  const std::vector<float> logits = NormalLogits(5000, 1, 3.0f);
  const auto argmax = std::max_element(logits.begin(), logits.end()) - logits.begin();
  for (uint64_t seed : {0, 1, 99}) {
    EXPECT_EQ(SampleCopy(sampler, logits, greedy, {}, seed, seed).token, argmax);
  }
  EXPECT_EQ(SampleCopy(sampler, {1, 5, 3, 5, 5}, greedy, {}, 0, 0).token, 1);
  EXPECT_EQ(SampleCopy(sampler, std::vector<float>(40, 2.0f), greedy, {}, 0, 0).token, 0);
  EXPECT_EQ(SampleCopy(sampler, {-kInf, -50, -kInf}, greedy, {}, 0, 0).token, 1);
  // A tiny (valid) temperature is greedy in effect, not NaN.
  for (uint64_t step = 0; step < 20; ++step) {
    EXPECT_EQ(SampleCopy(sampler, logits, Params(0, 1.0, 0.0, 1e-300), {}, 3, step).token, argmax);
  }
}

TEST(SamplerTest, LogprobsMatchDoubleLogSoftmaxOfRawLogits) {
  std::vector<float> logits = NormalLogits(1000, 2, 4.0f);
  logits[10] = logits[20] = 30.0f;  // a tie at the top: 10 before 20
  double sum = 0.0;
  for (float x : logits) sum += std::exp(x - 30.0);
  auto ref_logprob = [&](int32_t id) { return logits[id] - 30.0 - std::log(sum); };
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });

  Sampler sampler;
  SamplingParams params = Params(0, 1.0, 0.0, 0.3);
  params.logprobs = 7;  // penalties and temperature must not leak into the reported logprobs
  params.repetition_penalty = 2.0, params.frequency_penalty = 1.5;
  PenaltyState state;
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
  // Huge spreads stay finite; masked tokens fill the list last, at -inf.
  params = Params(0, 1.0, 0.0, 0.0);
  params.logprobs = 4;
  const SampledToken wide = SampleCopy(sampler, {-1e4f, 1e4f, -kInf, 1e4f}, params, {}, 0, 0);
  EXPECT_EQ(wide.token, 1);
  EXPECT_NEAR(wide.logprob, -std::log(2.0), 1e-6);
  ASSERT_EQ(wide.top.size(), 4u);
  EXPECT_EQ(wide.top[1].token, 3);
  EXPECT_NEAR(wide.top[2].logprob, -2e4, 1.0);
  EXPECT_EQ(wide.top[3].token, 2);
  EXPECT_EQ(wide.top[3].logprob, -kInf);
}

// Pins the penalised logit of token 0 within 1e-3 of `expected`, using greedy against a
// competitor (token 1, never penalised) placed just below and then just above it.
void ExpectPenalisedTo(float raw, double expected, SamplingParams params,
                       const PenaltyState& state) {
  Sampler sampler;
  params.temperature = 0.0;
  const auto below = static_cast<float>(expected - 1e-3),
             above = static_cast<float>(expected + 1e-3);
  EXPECT_EQ(SampleCopy(sampler, {raw, below}, params, state, 0, 0).token, 0)
      << raw << " " << expected;
  EXPECT_EQ(SampleCopy(sampler, {raw, above}, params, state, 0, 0).token, 1)
      << raw << " " << expected;
}

TEST(SamplerTest, PenaltiesMatchHandComputedValues) {
  SamplingParams rep;
  rep.repetition_penalty = 2.0;
  PenaltyState in_prompt, in_output, thrice;
  in_prompt.prompt_tokens = {0};
  in_output.AddOutput(0), in_output.AddOutput(0);
  PenaltyState in_both = in_output;
  in_both.prompt_tokens = {0};
  for (int i = 0; i < 3; ++i) thrice.AddOutput(0);
  ExpectPenalisedTo(3.0f, 1.5, rep, in_prompt);    // positive logit divided
  ExpectPenalisedTo(-3.0f, -6.0, rep, in_prompt);  // negative logit multiplied
  ExpectPenalisedTo(3.0f, 1.5, rep, in_output);    // once per token, not per occurrence
  ExpectPenalisedTo(3.0f, 1.5, rep, in_both);
  rep.repetition_penalty = 0.5;  // < 1 encourages
  ExpectPenalisedTo(3.0f, 6.0, rep, in_output);

  SamplingParams openai;
  openai.presence_penalty = 0.5, openai.frequency_penalty = 0.25;
  ExpectPenalisedTo(1.0f, 1.0 - 0.5 - 3 * 0.25, openai, thrice);
  ExpectPenalisedTo(1.0f, 1.0, openai, in_prompt);  // prompt tokens only feel repetition
  openai.presence_penalty = -1.0, openai.frequency_penalty = -0.5;
  ExpectPenalisedTo(1.0f, 1.0 + 1.0 + 3 * 0.5, openai, thrice);

  SamplingParams both;  // repetition first, then frequency: 4 / 2 - 0.5 * 2, not (4 - 1) / 2
  both.repetition_penalty = 2.0, both.frequency_penalty = 0.5;
  ExpectPenalisedTo(4.0f, 1.0, both, in_output);
}

TEST(SamplerTest, TruncationOnlyReturnsReferenceAllowedTokens) {
  const SamplingParams cases[] = {
      Params(1, 1.0, 0.0, 1.0),    Params(5, 1.0, 0.0, 0.7),      Params(0, 0.5, 0.0, 1.0),
      Params(0, 0.9, 0.0, 1.3),    Params(0, 1.0, 0.2, 1.0),      Params(10, 0.7, 0.0, 1.0),
      Params(20, 0.95, 0.05, 1.5), Params(0, 0.99, 0.0, 1.0),     Params(2000, 0.999, 0.001, 2.0),
      Params(0, 1.0, 0.0001, 2.0), Params(100000, 0.3, 0.0, 1.0), Params(0, 0.5, 0.9, 1.0)};
  PenaltyState state;
  state.prompt_tokens = {3, 7, 11};
  state.AddOutput(7), state.AddOutput(50);
  Sampler sampler;
  for (size_t vocab : {300, 5000}) {
    const std::vector<float> logits = ShuffledLogits(vocab, 3, 30.0f / vocab);
    for (SamplingParams params : cases) {
      params.repetition_penalty = 1.2, params.presence_penalty = 0.3;
      const std::vector<double> ref = ReferenceProbs(logits, params, state, 1e-5);
      for (uint64_t seed = 0; seed < 300; ++seed) {
        const int32_t token = SampleCopy(sampler, logits, params, state, seed, seed % 7).token;
        ASSERT_GT(ref[token], 0.0) << "vocab " << vocab << " top_k " << params.top_k << " top_p "
                                   << params.top_p << " min_p " << params.min_p;
      }
    }
  }
}

TEST(SamplerTest, MaskedTokensAreNeverDrawn) {
  std::vector<float> logits(3000, -kInf);
  logits[17] = 0.0f, logits[1500] = 0.5f, logits[2999] = -0.5f;
  Sampler sampler;
  for (int top_k : {0, 50}) {
    for (uint64_t step = 0; step < 500; ++step) {
      const int32_t token = SampleCopy(sampler, logits, Params(top_k, 1, 0, 1), {}, 1, step).token;
      ASSERT_TRUE(token == 17 || token == 1500 || token == 2999) << token;
    }
  }
}

// 20k draws (steps 0..19999 of one seed) against the oracle: every token within 0.01.
void ExpectEmpiricalMatch(const std::vector<float>& logits, const SamplingParams& params,
                          const PenaltyState& state) {
  const std::vector<double> ref = ReferenceProbs(logits, params, state);
  constexpr int kDraws = 20000;
  std::vector<int> counts(logits.size(), 0);
  Sampler sampler;
  for (uint64_t step = 0; step < kDraws; ++step) {
    ++counts[SampleCopy(sampler, logits, params, state, 42, step).token];
  }
  for (size_t id = 0; id < logits.size(); ++id) {
    ASSERT_NEAR(static_cast<double>(counts[id]) / kDraws, ref[id], 0.01)
        << "token " << id << " top_k " << params.top_k << " top_p " << params.top_p << " min_p "
        << params.min_p << " temperature " << params.temperature;
  }
}

TEST(SamplerTest, EmpiricalDistributionMatchesReference) {
  const std::vector<float> small = {1.0f, 0.5f, 2.0f, -1.0f, 0.0f, 1.5f, 0.2f, -0.5f, 0.8f, 1.2f};
  // Several 1024-token blocks with the mass spread over block edges, plus a light tail.
  std::vector<float> blocks(3000, -6.0f);
  const int32_t heavy[] = {0, 1023, 1024, 1500, 2047, 2048, 2999};
  for (int32_t idx = 0; idx < 7; ++idx) blocks[heavy[idx]] = 0.3f * static_cast<float>(idx);
  PenaltyState state;
  state.prompt_tokens = {2};
  state.AddOutput(5), state.AddOutput(5), state.AddOutput(9);
  const SamplingParams cases[] = {Params(0, 1.0, 0.0, 1.0),  Params(6, 1.0, 0.0, 0.7),
                                  Params(0, 0.8, 0.0, 1.0),  Params(0, 1.0, 0.15, 1.5),
                                  Params(10, 1.0, 0.0, 1.0), Params(4, 0.9, 0.3, 1.2)};
  for (double temperature : {1.0, 0.7}) {  // the untruncated draw walks block by block
    ExpectEmpiricalMatch(blocks, Params(0, 1.0, 0.0, temperature), {});
  }
  for (SamplingParams params : cases) {
    ExpectEmpiricalMatch(small, params, {});
    params.repetition_penalty = 1.3, params.frequency_penalty = 0.3, params.presence_penalty = 0.2;
    ExpectEmpiricalMatch(small, params, state);
  }
}

TEST(SamplerTest, SameSeedAndStepGiveSameTokenWhateverRanBefore) {
  const std::vector<float> logits = NormalLogits(1000, 4, 0.1f);  // nearly flat
  Sampler a, b;
  std::set<int32_t> by_step, by_seed;
  for (uint64_t step = 0; step < 200; ++step) {
    const SamplingParams params = Params(0, step % 2 ? 0.95 : 1.0, 0.0, 1.0);
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
    EXPECT_NEAR(lag / kCount * 12.0, 0.0, 0.01);  // lag-1 correlation
  }
  EXPECT_EQ(UniformForStep(9, 4), UniformForStep(9, 4));
  EXPECT_NE(UniformForStep(9, 4), UniformForStep(4, 9));
}

TEST(SamplerTest, FullKimiVocabTopP) {
  constexpr size_t kVocab = 163840;
  Sampler sampler;
  // Peaked (~7k tokens kept) and nearly flat (~90% kept).
  for (const auto& [stddev, draws] : {std::pair{3.0f, 50}, std::pair{0.05f, 10}}) {
    const std::vector<float> logits = NormalLogits(kVocab, 6, stddev);
    SamplingParams params = Params(0, 0.9, 0.0, 1.0);
    params.logprobs = 5;
    const std::vector<double> ref = ReferenceProbs(logits, params, {}, 1e-5);
    std::set<int32_t> seen;
    for (int step = 0; step < draws; ++step) {
      const SampledToken out = SampleCopy(sampler, logits, params, {}, 8, step);
      ASSERT_GT(ref[out.token], 0.0) << out.token;
      ASSERT_EQ(out.top.size(), 5u);
      seen.insert(out.token);
    }
    EXPECT_GT(seen.size(), draws / 2u);  // not stuck on one token
  }
}

}  // namespace
}  // namespace k3::engine
