// Op cases of the layer kernels: KDA (gates, short convolutions, the delta rule chunked and step by
// step), MoE (routing, dispatch, combine) and the Attention Residuals mix (paged MLA:
// backend_conformance_mla.cc).
#include <algorithm>
#include <numeric>

#include "kernels/backend_conformance.h"

namespace k3::kernels::conformance {
namespace {

// ---- KDA

void KdaGatesCase(CaseEnv& env) {
  for (KdaGateKind kind : {KdaGateKind::kSoftplus, KdaGateKind::kLowerBound}) {
    const int64_t rows = 6, heads = 3, dim = 13;
    const std::vector<float> a_log = Normal(env.rng, heads), bias = Normal(env.rng, heads * dim);
    std::vector<float> g = Normal(env.rng, rows * heads * dim, 3.0f);
    std::vector<float> beta = Normal(env.rng, rows * heads, 3.0f);
    DeviceArray<float> da(env.backend, a_log), db(env.backend, bias), dg(env.backend, g),
        dbeta(env.backend, beta);
    env.backend.KdaGates(
        {rows, heads, dim, kind, -5.0f, da.get(), db.get(), dg.get(), dbeta.get()});
    env.oracle.KdaGates(
        {rows, heads, dim, kind, -5.0f, a_log.data(), bias.data(), g.data(), beta.data()});
    ExpectNear(dg.Download(), g, {1e-6, 1e-5}, "KdaGates g");
    ExpectNear(dbeta.Download(), beta, {1e-7, 1e-5}, "KdaGates beta");
  }
}

void ShortConvCase(CaseEnv& env) {
  for (int taps : {1, 2, 4, 6}) {
    const int64_t channels = 37, keep = taps - 1;
    // Sequences of 1, 2 (fewer rows than history when taps > 3) and 9 rows.
    const std::vector<int64_t> rows = {1, 2, 9};
    const int64_t total = 12;
    const std::vector<float> w = Normal(env.rng, channels * taps),
                             x = Normal(env.rng, total * channels);
    std::vector<float> history = Normal(env.rng, 3 * keep * channels), out(total * channels);
    DeviceArray<float> dw(env.backend, w), dx(env.backend, x), dh(env.backend, history),
        dout(env.backend, out);
    std::vector<ConvSequence> dev, host;
    for (int64_t i = 0, begin = 0; i < 3; begin += rows[i], ++i) {
      dev.push_back({begin, rows[i], dh.get() + i * keep * channels});
      host.push_back({begin, rows[i], history.data() + i * keep * channels});
    }
    env.backend.ShortConv({channels, taps, dw.get(), dx.get(), dout.get()}, dev);
    env.oracle.ShortConv({channels, taps, w.data(), x.data(), out.data()}, host);
    ExpectNear(dout.Download(), out, {1e-6, 1e-5}, "ShortConv taps " + std::to_string(taps));
    ExpectEqual(dh.Download(), history, "ShortConv history taps " + std::to_string(taps));
  }
}

// q L2-normalised and scaled by K^-0.5, k L2-normalised, g in (min_log_decay, 0), beta in (0, 1).
void KdaDeltaRuleProblem(CaseEnv& env, int64_t kd, int64_t vd, float min_log_decay, int chunk,
                         bool chunked) {
  const int64_t heads = 2, total = 40;
  const std::vector<int64_t> rows = {1, 39};
  auto unit = [&](std::vector<float> x, float scale) {
    for (int64_t v = 0; v < total * heads; ++v) {
      double s = 0;
      for (int64_t i = 0; i < kd; ++i) s += x[v * kd + i] * x[v * kd + i];
      for (int64_t i = 0; i < kd; ++i) x[v * kd + i] *= static_cast<float>(scale / std::sqrt(s));
    }
    return x;
  };
  const std::vector<float> q = unit(Normal(env.rng, total * heads * kd), 1.0f / std::sqrt(kd));
  const std::vector<float> k = unit(Normal(env.rng, total * heads * kd), 1.0f);
  const std::vector<float> v = Normal(env.rng, total * heads * vd);
  const std::vector<float> g = Uniform(env.rng, total * heads * kd, min_log_decay, 0.0f);
  const std::vector<float> beta = Uniform(env.rng, total * heads, 0.0f, 1.0f);
  std::vector<float> state = Normal(env.rng, 2 * heads * kd * vd, 0.1f), o(total * heads * vd);
  DeviceArray<float> dq(env.backend, q), dk(env.backend, k), dv(env.backend, v), dg(env.backend, g),
      db(env.backend, beta), ds(env.backend, state), dout(env.backend, o);
  const KdaArgs dev{heads,    kd,       vd,       chunk,    dq.get(),
                    dk.get(), dv.get(), dg.get(), db.get(), dout.get()};
  const KdaArgs host{heads,    kd,       vd,       chunk,       q.data(),
                     k.data(), v.data(), g.data(), beta.data(), o.data()};
  const int64_t per_seq = heads * kd * vd;
  const std::vector<KdaSequence> dev_seqs = {{0, 1, ds.get(), chunked},
                                             {1, 39, ds.get() + per_seq, chunked}};
  const std::vector<KdaSequence> host_seqs = {{0, 1, state.data(), chunked},
                                              {1, 39, state.data() + per_seq, chunked}};
  env.backend.KdaDeltaRule(dev, dev_seqs, env.backend_ws);
  env.oracle.KdaDeltaRule(host, host_seqs, env.oracle_ws);
  const std::string what = (chunked ? "chunked " + std::to_string(chunk) : std::string("steps")) +
                           " K " + std::to_string(kd) + " V " + std::to_string(vd) + " decay " +
                           std::to_string(min_log_decay);
  ExpectNear(dout.Download(), o, {5e-5, 1e-4}, "KdaDeltaRule o " + what);
  ExpectNear(ds.Download(), state, {5e-5, 1e-4}, "KdaDeltaRule state " + what);
}

void KdaDeltaRuleCase(CaseEnv& env) {
  for (bool chunked : {false, true}) {
    KdaDeltaRuleProblem(env, 16, 16, -5.0f, 16, chunked);  // K3's bounded gate
    KdaDeltaRuleProblem(env, 13, 21, -40.0f, 7, chunked);  // strong decay, odd sizes
    KdaDeltaRuleProblem(env, 32, 32, -1.0f, 64, chunked);  // one long factorised chunk
  }
}

// ---- MoE

void MoeRouteCase(CaseEnv& env) {
  struct Config {
    int experts, top_k, groups, topk_groups;
    bool renormalize;
  };
  for (const Config& c : {Config{16, 4, 4, 2, true}, Config{37, 5, 1, 1, false},
                          Config{64, 8, 8, 3, true}, Config{6, 6, 1, 1, true}}) {
    const int64_t rows = 9;
    std::vector<float> scores = Normal(env.rng, rows * c.experts, 2.0f);
    const std::vector<float> bias = Normal(env.rng, c.experts, 0.3f);
    std::vector<int32_t> experts(rows * c.top_k);
    std::vector<float> weights(rows * c.top_k), gap(rows);
    for (int64_t r = 0; r < rows; ++r) gap[r] = r % 2 ? 0.05f : INFINITY;  // gaps are lowered
    DeviceArray<float> ds(env.backend, scores), db(env.backend, bias), dw(env.backend, weights),
        dgap(env.backend, gap);
    DeviceArray<int32_t> de(env.backend, experts);
    env.backend.MoeRoute({rows, c.experts, c.top_k, c.groups, c.topk_groups, c.renormalize, 2.5f,
                          ds.get(), db.get(), de.get(), dw.get(), dgap.get()},
                         env.backend_ws);
    env.oracle.MoeRoute({rows, c.experts, c.top_k, c.groups, c.topk_groups, c.renormalize, 2.5f,
                         scores.data(), bias.data(), experts.data(), weights.data(), gap.data()},
                        env.oracle_ws);
    const std::string what = "experts " + std::to_string(c.experts);
    ExpectNear(ds.Download(), scores, {1e-7, 1e-6}, "MoeRoute scores " + what);
    ExpectEqual(de.Download(), experts, "MoeRoute experts " + what);
    ExpectNear(dw.Download(), weights, {1e-7, 1e-5}, "MoeRoute weights " + what);
    ExpectNear(dgap.Download(), gap, {1e-6, 1e-5}, "MoeRoute gap " + what);
  }
}

void MoeDispatchCombineCase(CaseEnv& env) {
  const int64_t rows = 11, width = 40;
  const int top_k = 3, num_experts = 7;
  std::vector<int32_t> experts;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int32_t> all(num_experts);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), env.rng);
    experts.insert(experts.end(), all.begin(), all.begin() + top_k);
  }
  const std::vector<float> weights = Uniform(env.rng, rows * top_k, 0.0f, 1.0f);
  const std::vector<float> x = Normal(env.rng, rows * width);
  const int64_t n = rows * top_k;
  std::vector<int64_t> offsets(num_experts + 1), source_rows(n);
  std::vector<float> source_weights(n), gathered(n * width);
  DeviceArray<int32_t> de(env.backend, experts);
  DeviceArray<float> dw(env.backend, weights), dx(env.backend, x), dsw(env.backend, source_weights),
      dg(env.backend, gathered);
  DeviceArray<int64_t> doff(env.backend, offsets), drows(env.backend, source_rows);
  env.backend.MoeDispatch({rows, top_k, num_experts, width, de.get(), dw.get(), dx.get(),
                           doff.get(), drows.get(), dsw.get(), dg.get()});
  env.oracle.MoeDispatch({rows, top_k, num_experts, width, experts.data(), weights.data(), x.data(),
                          offsets.data(), source_rows.data(), source_weights.data(),
                          gathered.data()});
  ExpectEqual(doff.Download(), offsets, "MoeDispatch offsets");
  ExpectEqual(drows.Download(), source_rows, "MoeDispatch rows");
  ExpectEqual(dsw.Download(), source_weights, "MoeDispatch weights");
  ExpectEqual(dg.Download(), gathered, "MoeDispatch gathered");
  const std::vector<float> y = Normal(env.rng, n * width);
  std::vector<float> out(rows * width, 7.0f);
  DeviceArray<float> dy(env.backend, y), dout(env.backend, out);
  env.backend.MoeCombine({rows, n, width, drows.get(), dsw.get(), dy.get(), dout.get()});
  env.oracle.MoeCombine(
      {rows, n, width, source_rows.data(), source_weights.data(), y.data(), out.data()});
  ExpectNear(dout.Download(), out, {1e-6, 1e-6}, "MoeCombine");
}

// ---- Attention Residuals

void AttnResCase(CaseEnv& env) {
  for (int sources : {1, 2, 5}) {
    const int64_t rows = 5, dim = 37;
    std::vector<std::vector<float>> host(sources);
    std::vector<std::unique_ptr<DeviceArray<float>>> dev;
    std::vector<const float*> host_ptrs, dev_ptrs;
    for (auto& s : host) {
      s = Normal(env.rng, rows * dim, 3.0f);
      dev.push_back(std::make_unique<DeviceArray<float>>(env.backend, s));
      host_ptrs.push_back(s.data());
      dev_ptrs.push_back(dev.back()->get());
    }
    const std::vector<float> score = Normal(env.rng, dim, 0.5f);
    DeviceArray<float> dscore(env.backend, score),
        dout(env.backend, std::vector<float>(rows * dim));
    std::vector<float> want(rows * dim);
    env.backend.AttnResMix({rows, dim, sources, dev_ptrs.data(), dscore.get(), 1e-6f, dout.get()},
                           env.backend_ws);
    env.oracle.AttnResMix({rows, dim, sources, host_ptrs.data(), score.data(), 1e-6f, want.data()},
                          env.oracle_ws);
    ExpectNear(dout.Download(), want, {1e-6, 1e-5},
               "AttnResMix sources " + std::to_string(sources));
  }
}

}  // namespace

std::vector<OpCase> LayerOpCases() {
  return {{"KdaGates", KdaGatesCase},
          {"ShortConv", ShortConvCase},
          {"KdaDeltaRule", KdaDeltaRuleCase},
          {"MoeRoute", MoeRouteCase},
          {"MoeDispatchCombine", MoeDispatchCombineCase},
          {"AttnResMix", AttnResCase}};
}

}  // namespace k3::kernels::conformance
