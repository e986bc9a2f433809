// The chunked (WY) KDA form against token-by-token recurrence, on random heads with both gate
// ranges (K3's bounded gate and Kimi-Linear's unbounded softplus), chunk sizes that do and do not
// divide the length, and a non-zero initial state. Through CpuBackend::KdaDeltaRule with one
// head (the conformance test covers several heads and sequences against the double oracle).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu_backend.h"

namespace k3::kernels {
namespace {

struct Problem {
  int tokens, kd, vd;
  std::vector<float> q, k, v, g, beta, state;
};

Problem MakeProblem(int tokens, int kd, int vd, float min_log_decay, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  Problem p{tokens, kd, vd, {}, {}, {}, {}, {}, {}};
  auto unit = [&](std::vector<float>& x, float scale) {
    for (int t = 0; t < tokens; ++t) {
      double s = 0;
      for (int i = 0; i < kd; ++i) s += x[t * kd + i] * x[t * kd + i];
      for (int i = 0; i < kd; ++i) x[t * kd + i] *= static_cast<float>(scale / std::sqrt(s));
    }
  };
  p.q.resize(tokens * kd);
  p.k.resize(tokens * kd);
  p.v.resize(tokens * vd);
  p.g.resize(tokens * kd);
  p.beta.resize(tokens);
  p.state.resize(kd * vd);
  for (auto& x : p.q) x = normal(rng);
  for (auto& x : p.k) x = normal(rng);
  for (auto& x : p.v) x = normal(rng);
  for (auto& x : p.g) x = min_log_decay * uni(rng);
  for (auto& x : p.beta) x = uni(rng);
  for (auto& x : p.state) x = 0.1f * normal(rng);
  unit(p.q, 1.0f / std::sqrt(static_cast<float>(kd)));
  unit(p.k, 1.0f);
  return p;
}

// One head, `tokens` rows: step by step, or chunked `chunk` tokens at a time.
void RunHead(const float* q, const float* k, const float* v, const float* g, const float* beta,
             int tokens, int kd, int vd, bool chunked, int chunk, float* state, float* o) {
  CpuBackend backend;
  Workspace ws = backend.MakeWorkspace();
  const KdaArgs args{1, kd, vd, chunk, q, k, v, g, beta, o};
  const KdaSequence seq{0, tokens, state, chunked};
  backend.KdaDeltaRule(args, {&seq, 1}, ws);
}

void ExpectChunkedEqualsRecurrent(const Problem& p, int chunk) {
  std::vector<float> s_rec = p.state, s_chunk = p.state;
  std::vector<float> o_rec(p.tokens * p.vd), o_chunk(p.tokens * p.vd);
  RunHead(p.q.data(), p.k.data(), p.v.data(), p.g.data(), p.beta.data(), p.tokens, p.kd, p.vd,
          false, chunk, s_rec.data(), o_rec.data());
  RunHead(p.q.data(), p.k.data(), p.v.data(), p.g.data(), p.beta.data(), p.tokens, p.kd, p.vd, true,
          chunk, s_chunk.data(), o_chunk.data());
  double worst_o = 0, worst_s = 0;
  for (size_t i = 0; i < o_rec.size(); ++i)
    worst_o = std::max(worst_o, double(std::fabs(o_rec[i] - o_chunk[i])));
  for (size_t i = 0; i < s_rec.size(); ++i)
    worst_s = std::max(worst_s, double(std::fabs(s_rec[i] - s_chunk[i])));
  EXPECT_LT(worst_o, 2e-5) << "chunk " << chunk;
  EXPECT_LT(worst_s, 2e-5) << "chunk " << chunk;
}

TEST(KdaCore, ChunkedEqualsRecurrentWithBoundedGate) {
  Problem p = MakeProblem(150, 32, 32, -5.0f, 1);  // K3: g in (-5, 0)
  for (int chunk : {1, 7, 16, 64, 200}) ExpectChunkedEqualsRecurrent(p, chunk);
}

TEST(KdaCore, ChunkedEqualsRecurrentWithStrongDecay) {
  Problem p = MakeProblem(100, 16, 16, -40.0f, 2);  // unbounded softplus gates can be large
  for (int chunk : {16, 64}) ExpectChunkedEqualsRecurrent(p, chunk);
}

TEST(KdaCore, ChunkedEqualsRecurrentWithMildDecayInLongChunks) {
  Problem p = MakeProblem(130, 64, 64, -1.0f, 3);  // 64 x -1 stays above -80: factorised path
  for (int chunk : {32, 64}) ExpectChunkedEqualsRecurrent(p, chunk);
}

TEST(KdaCore, DecayIsIndexedByTheKeyChannel) {
  // With k = 0 and beta = 0 nothing is written: S[k][:] only decays by exp(g[k]).
  const int kd = 4, vd = 3;
  std::vector<float> state(kd * vd, 1.0f), q(kd, 0.0f), k(kd, 0.0f), v(vd, 0.0f), o(vd);
  std::vector<float> g = {0.0f, std::log(0.5f), std::log(0.25f), 0.0f};
  q[2] = 1.0f;
  const float beta = 0.0f;
  RunHead(q.data(), k.data(), v.data(), g.data(), &beta, 1, kd, vd, false, 16, state.data(),
          o.data());
  for (int b = 0; b < vd; ++b) {
    EXPECT_FLOAT_EQ(state[1 * vd + b], 0.5f);
    EXPECT_FLOAT_EQ(state[2 * vd + b], 0.25f);
    EXPECT_FLOAT_EQ(o[b], 0.25f);  // output reads the updated state
  }
}

}  // namespace
}  // namespace k3::kernels
