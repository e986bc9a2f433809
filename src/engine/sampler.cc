#include "engine/sampler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <functional>

#include "base/check.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::engine {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // SplitMix64's Weyl increment, 2^64 / phi
// The id-order draw sums blocks of this many probabilities before walking inside one.
constexpr size_t kBlock = 1024;

// SplitMix64's output finaliser (Stafford's "Mix13" constants): a bijection on 64 bits.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The largest logit, with 16 independent lanes so the loop vectorises. At least one logit must
// be finite (a grammar mask must leave a token) and none NaN: engine bugs, not user errors.
K3_MULTIVERSION float MaxLogit(const float* x, size_t n) {
  float lanes[16];
  std::fill(lanes, lanes + 16, x[0]);
  size_t idx = 0;
  for (; idx + 16 <= n; idx += 16) {
    for (size_t lane = 0; lane < 16; ++lane) {
      lanes[lane] = x[idx + lane] > lanes[lane] ? x[idx + lane] : lanes[lane];
    }
  }
  float max_logit = *std::max_element(lanes, lanes + 16);
  for (; idx < n; ++idx) max_logit = std::max(max_logit, x[idx]);
  K3_CHECK(std::isfinite(max_logit)) << "the largest logit must be finite, got " << +max_logit;
  return max_logit;
}

// out[i] = exp((x[i] - max) * inv_temperature): the max maps to exactly 1, and anything below
// e^-87 (about 1e-38 of the max; masked -inf logits included) to exactly 0, never drawn.
// kernels::FastExp (2 ulp) vectorises where libm's expf would not.
K3_MULTIVERSION void ScaledExp(const float* x, size_t n, float max_logit, float inv_temperature,
                               float* out) {
  for (size_t idx = 0; idx < n; ++idx) {
    const float scaled = (x[idx] - max_logit) * inv_temperature;
    const float p = kernels::FastExp(scaled);  // unconditional, so the select vectorises
    out[idx] = scaled < -87.0f ? 0.0f : p;
  }
}

// A double sum in a fixed order (eight interleaved lanes), so still deterministic, but not bound by
// the latency of one chain of adds.
K3_MULTIVERSION double SumInDouble(const float* x, size_t n) {
  double lanes[8] = {};
  size_t idx = 0;
  for (; idx + 8 <= n; idx += 8) {
    for (size_t lane = 0; lane < 8; ++lane) lanes[lane] += x[idx + lane];
  }
  double sum = 0.0;
  for (; idx < n; ++idx) sum += x[idx];
  for (double lane : lanes) sum += lane;
  return sum;
}

// Sum of the kBlock-sized block sums: exactly what DrawInIdOrder accumulates.
double BlockedSum(const std::vector<float>& probs) {
  double total = 0.0;
  for (size_t start = 0; start < probs.size(); start += kBlock) {
    total += SumInDouble(probs.data() + start, std::min(kBlock, probs.size() - start));
  }
  return total;
}

// Checks the token ids a PenaltyState hands us; an id outside the vocab is an engine bug.
void CheckToken(int32_t id, size_t vocab) {
  K3_CHECK(id >= 0 && static_cast<size_t>(id) < vocab) << "token " << id << " vocab " << vocab;
}

// raw_logprobs = log_softmax(logits): terms exp(x - max) <= 1 (no overflow), summed in double.
// `top` gets the `num_top` largest logits (ties: lower id first), selected on the logits so
// rounding to float cannot reorder them. Cost: O(vocab) (plus O(vocab * num_top) for adversarial
// orders in the selection).
void RawLogprobs(std::span<const float> logits, size_t num_top, std::vector<float>& raw_logprobs,
                 std::vector<TokenLogprob>& top) {
  const size_t vocab = logits.size();
  const float max_logit = MaxLogit(logits.data(), vocab);
  raw_logprobs.resize(vocab);
  ScaledExp(logits.data(), vocab, max_logit, 1.0f, raw_logprobs.data());
  const double log_norm = max_logit + std::log(SumInDouble(raw_logprobs.data(), vocab));
  for (size_t id = 0; id < vocab; ++id) {
    raw_logprobs[id] = static_cast<float>(static_cast<double>(logits[id]) - log_norm);
  }
  // `top` stays sorted by logit, descending; a newcomer equal to an entry has a higher id, so it
  // goes after it (upper_bound) and never evicts it. Once it is full, only logits above `bar`
  // (its last) get in.
  top.clear();
  bool full = false;
  float bar = 0.0f;
  for (size_t id = 0; id < vocab && num_top > 0; ++id) {
    const float x = logits[id];
    if (full && !(x > bar)) continue;
    auto pos = std::upper_bound(top.begin(), top.end(), x, [](float value, const TokenLogprob& e) {
      return value > e.logprob;
    });
    top.insert(pos, TokenLogprob{static_cast<int32_t>(id), x});
    if (top.size() > num_top) top.pop_back();
    full = top.size() == num_top;
    bar = top.back().logprob;
  }
  for (TokenLogprob& entry : top) entry.logprob = raw_logprobs[entry.token];
}

// Repetition penalty once per distinct token seen (prompt or output), then the OpenAI-style
// presence/frequency terms on output counts. Cost: O(prompt + distinct outputs * log prompt).
void ApplyPenalties(std::span<float> logits, const SamplingParams& params,
                    const PenaltyState& penalties) {
  const double rep = params.repetition_penalty;
  if (rep != 1.0) {
    const auto& prompt = penalties.prompt_tokens;
    K3_DCHECK(std::adjacent_find(prompt.begin(), prompt.end(), std::greater_equal<>()) ==
              prompt.end());  // sorted and unique
    auto penalise = [&](int32_t id) {
      CheckToken(id, logits.size());
      const double x = logits[id];
      logits[id] = static_cast<float>(x > 0 ? x / rep : x * rep);
    };
    for (int32_t id : prompt) penalise(id);
    for (const auto& [id, count] : penalties.output_counts) {
      if (count > 0 && !std::binary_search(prompt.begin(), prompt.end(), id)) penalise(id);
    }
  }
  if (params.presence_penalty == 0.0 && params.frequency_penalty == 0.0) return;
  for (const auto& [id, count] : penalties.output_counts) {
    if (count <= 0) continue;
    CheckToken(id, logits.size());
    logits[id] =
        static_cast<float>(logits[id] - params.presence_penalty - params.frequency_penalty * count);
  }
}

// Lowest id among the largest logits.
int32_t Argmax(std::span<const float> logits) {
  const float max_logit = MaxLogit(logits.data(), logits.size());
  return static_cast<int32_t>(std::find(logits.begin(), logits.end(), max_logit) - logits.begin());
}

// Inverse CDF over the whole vocab in id order: the first id whose cumulative mass exceeds
// u * total, found block by block (total is BlockedSum's, so the same sums in the same order). If
// rounding leaves the target unreached, the last id with mass in the block (or vocab) wins.
int32_t DrawInIdOrder(const std::vector<float>& probs, double total, double u) {
  const double target = u * total;
  double cumulative = 0.0;
  size_t last_block = 0;  // the last block with mass
  for (size_t start = 0; start < probs.size(); start += kBlock) {
    const size_t size = std::min(kBlock, probs.size() - start);
    const double block_mass = SumInDouble(probs.data() + start, size);
    if (block_mass > 0.0) last_block = start;
    if (cumulative + block_mass <= target) {
      cumulative += block_mass;
      continue;
    }
    size_t id = start;
    for (size_t end = start + size; id < end; ++id) {
      cumulative += probs[id];
      if (cumulative > target && probs[id] > 0.0f) return static_cast<int32_t>(id);
    }
    last_block = start;
    break;
  }
  size_t id = std::min(last_block + kBlock, probs.size()) - 1;
  while (id > last_block && probs[id] <= 0.0f) --id;
  return static_cast<int32_t>(id);
}

// A candidate as one integer: a positive float's bits order like the float, and the complemented
// id puts lower ids first among equal probabilities, so descending keys are the draw order.
uint64_t CandidateKey(float prob, size_t id) {
  return (uint64_t{std::bit_cast<uint32_t>(prob)} << 32) | (0xFFFFFFFFu - id);
}
float KeyProb(uint64_t key) { return std::bit_cast<float>(static_cast<uint32_t>(key >> 32)); }
int32_t KeyToken(uint64_t key) { return static_cast<int32_t>(0xFFFFFFFFu - (key & 0xFFFFFFFFu)); }

// Probabilities bucketed by their float bits >> 20 (exponent and 3 mantissa bits: each bucket spans
// a factor of 2^(1/8)); the buckets of [0, 1] are [0, kNumBuckets).
constexpr int kBucketShift = 20;
constexpr int kNumBuckets = (std::bit_cast<uint32_t>(1.0f) >> kBucketShift) + 1;
int Bucket(float prob) { return static_cast<int>(std::bit_cast<uint32_t>(prob) >> kBucketShift); }

// The lowest bucket that can hold a token of the top-k set, or else a kept one. Walking down from
// the top: with top_k, until the buckets so far hold k tokens (top_p needs the whole top-k set's
// mass); otherwise until they hold top_p of the mass, but not below min_p's threshold. Bucket 0
// (zero and the tiniest subnormals) is never gathered. Cost: one histogram pass over the vocab.
int LowestKeptBucket(const std::vector<float>& probs, double total, const SamplingParams& params) {
  int bucket = kNumBuckets - 1;
  if (params.top_k > 0) {
    std::array<uint32_t, kNumBuckets> counts{};
    for (float p : probs) ++counts[Bucket(p)];
    for (uint64_t count = 0; bucket > 1; --bucket) {
      count += counts[bucket];
      if (count >= static_cast<uint64_t>(params.top_k)) break;
    }
    return bucket;
  }
  // The most likely token has probability exactly 1; one bucket of margin for the float rounding.
  const int min_p_bucket = std::max(Bucket(static_cast<float>(params.min_p)) - 1, 1);
  if (params.top_p >= 1.0) return min_p_bucket;
  std::array<double, kNumBuckets> masses{};
  for (float p : probs) masses[Bucket(p)] += p;
  // The margin keeps summation-order rounding from stopping one bucket early.
  const double mass_target = params.top_p * total * (1 + 1e-9);
  for (double mass = 0.0; bucket > min_p_bucket; --bucket) {
    mass += masses[bucket];
    if (mass >= mass_target) break;
  }
  return bucket;
}

// top_k, then top_p on the top-k set's mass, then min_p: each keeps a prefix of the tokens in
// descending probability (ties: lower id first), so the kept set is the shortest of the three
// prefixes. Only candidates in buckets that can be kept are gathered and sorted: the kept set
// plus at most one partly kept bucket (or, with top_k, the top-k set plus one bucket).
// Cost: O(vocab) + O(gathered log gathered).
int32_t DrawTruncated(const std::vector<float>& probs, double total, const SamplingParams& params,
                      double u, std::vector<uint64_t>& candidates) {
  // The smallest probability in the lowest bucket.
  const auto threshold = std::bit_cast<float>(
      static_cast<uint32_t>(LowestKeptBucket(probs, total, params)) << kBucketShift);
  candidates.clear();
  const float* prob = probs.data();
  for (size_t id = 0, vocab = probs.size(); id < vocab; ++id) {
    if (prob[id] >= threshold) candidates.push_back(CandidateKey(prob[id], id));
  }
  auto begin = candidates.begin();
  size_t num_ranked = candidates.size();  // candidates [0, num_ranked) are the top-k set
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < num_ranked) {
    num_ranked = static_cast<size_t>(params.top_k);
    std::nth_element(begin, begin + num_ranked, candidates.end(), std::greater<>());
  }
  std::sort(begin, begin + num_ranked, std::greater<>());
  // The top-k set's mass: without top_k, the whole vocab's; with it, the gathered set holds the
  // whole top-k set, or else every token with mass.
  double ranked_mass = total;
  if (params.top_k > 0) {
    ranked_mass = 0.0;
    for (size_t idx = 0; idx < num_ranked; ++idx) ranked_mass += KeyProb(candidates[idx]);
  }
  const double mass_target = params.top_p < 1.0 ? params.top_p * ranked_mass : INFINITY;
  const double min_prob = params.min_p * KeyProb(candidates[0]);
  double kept_mass = 0.0;
  size_t num_kept = num_ranked;
  for (size_t idx = 0; idx < num_ranked; ++idx) {
    const double p = KeyProb(candidates[idx]);
    if (p < min_prob) {
      num_kept = idx;  // idx >= 1: min_p <= 1 keeps the most likely token
      break;
    }
    kept_mass += p;
    if (kept_mass >= mass_target) {
      num_kept = idx + 1;
      break;
    }
  }
  const double target = u * kept_mass;
  double cumulative = 0.0;
  for (size_t idx = 0; idx < num_kept; ++idx) {
    cumulative += KeyProb(candidates[idx]);
    if (cumulative > target) return KeyToken(candidates[idx]);
  }
  return KeyToken(candidates[num_kept - 1]);
}

}  // namespace

double UniformForStep(uint64_t seed, uint64_t step) {
  // The key spreads the seed so that nearby seeds give unrelated streams; the draw is then
  // SplitMix64's output at position step + 1 of the stream keyed by it, computed directly.
  const uint64_t key = Mix64(seed + kGolden);
  const uint64_t bits = Mix64(key + (step + 1) * kGolden);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // top 53 bits: exact, in [0, 1)
}

SampledToken Sampler::Sample(std::span<float> logits, const SamplingParams& params,
                             const PenaltyState& penalties, uint64_t seed, uint64_t step) {
  K3_CHECK(!logits.empty());
  SampledToken result;
  if (params.logprobs >= 0) {
    RawLogprobs(logits, static_cast<size_t>(params.logprobs), raw_logprobs_, result.top);
  }
  ApplyPenalties(logits, params, penalties);
  if (params.temperature == 0.0) {
    result.token = Argmax(logits);
  } else {
    const float max_logit = MaxLogit(logits.data(), logits.size());
    // Clamped so that a tiny temperature gives 0 * big = 0 for the max, not 0 * inf = NaN.
    const auto inv_temperature = static_cast<float>(std::min(1.0 / params.temperature, 1e38));
    probs_.resize(logits.size());
    ScaledExp(logits.data(), logits.size(), max_logit, inv_temperature, probs_.data());
    const double total = BlockedSum(probs_);
    const double u = UniformForStep(seed, step);
    const bool truncates =
        (params.top_k > 0 && static_cast<size_t>(params.top_k) < logits.size()) ||
        params.top_p < 1.0 || params.min_p > 0.0;
    result.token = truncates ? DrawTruncated(probs_, total, params, u, candidates_)
                             : DrawInIdOrder(probs_, total, u);
  }
  if (params.logprobs >= 0) result.logprob = raw_logprobs_[result.token];
  return result;
}

}  // namespace k3::engine
