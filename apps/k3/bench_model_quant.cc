#include "apps/k3/bench_model_quant.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "base/log.h"
#include "model/greedy.h"

namespace k3::app {
namespace {

// One forward over `prompt` with logits at every position.
std::vector<float> AllLogits(const model::Model& m, const std::vector<int32_t>& prompt,
                             const model::ForwardOptions& options = {}) {
  const auto& c = m.config();
  const int pages = static_cast<int>((prompt.size() + 63) / 64);
  model::KdaStatePool states(c, 1, &m.backend());
  model::MlaCache cache(c, pages, 64, &m.backend());
  std::vector<int32_t> page_ids(static_cast<size_t>(pages));
  std::iota(page_ids.begin(), page_ids.end(), 0);
  model::SequenceInput seq{prompt, 0, 0, page_ids, static_cast<int64_t>(prompt.size())};
  model::ForwardResult out;
  const base::Status status = m.Forward({&seq, 1}, options, states, cache, &out);
  K3_CHECK(status.ok()) << status.ToString();
  return out.logits;
}

// Per position: max |got - want| / max |want|, and whether the argmaxes agree.
struct Deviation {
  double median = 0, worst = 0;
  int agree = 0;
};

Deviation Compare(const std::vector<float>& want, const std::vector<float>& got, int64_t vocab,
                  int tokens) {
  std::vector<double> errors;
  Deviation d;
  for (int t = 0; t < tokens; ++t) {
    const float* w = &want[t * vocab];
    const float* g = &got[t * vocab];
    double max_diff = 0, scale = 0;
    for (int64_t v = 0; v < vocab; ++v) {
      max_diff = std::max(max_diff, double{std::fabs(w[v] - g[v])});
      scale = std::max(scale, double{std::fabs(w[v])});
    }
    errors.push_back(max_diff / std::max(scale, 1e-30));
    d.agree += model::Argmax(w, vocab) == model::Argmax(g, vocab);
  }
  std::sort(errors.begin(), errors.end());
  d.median = errors[errors.size() / 2];
  d.worst = errors.back();
  return d;
}

}  // namespace

void PrintQuantError(const model::Model& exact, const model::Model& quantised, int tokens,
                     const std::string& flag) {
  const int64_t vocab = exact.config().vocab;
  std::vector<int32_t> prompt(static_cast<size_t>(tokens));
  for (int i = 0; i < tokens; ++i) prompt[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  const std::vector<float> want = AllLogits(exact, prompt);
  const Deviation q = Compare(want, AllLogits(quantised, prompt), vocab, tokens);
  // The same measure for a perturbation of known size (the MXFP8 expert emulation, E4M3 inputs):
  // a synthetic random model can be chaotic enough that any change moves it this far.
  model::ForwardOptions mxfp8;
  mxfp8.mxfp8_experts = true;
  const Deviation m = Compare(want, AllLogits(exact, prompt, mxfp8), vocab, tokens);
  std::printf(
      "logits vs exact weights on a %d-token prompt (relative error per position: "
      "median, worst; argmax agreement)\n",
      tokens);
  std::printf("  --weight-quant %-11s %.3g  %.3g  %d/%d\n", flag.c_str(), q.median, q.worst,
              q.agree, tokens);
  std::printf("  calibration: MXFP8 experts %.3g  %.3g  %d/%d\n\n", m.median, m.worst, m.agree,
              tokens);
}

}  // namespace k3::app
