// The "judged steps" criterion of the approximate paths' parity tests (model_parity_test.cc,
// model_cache_precision_test.cc), on the float64 reference's outputs (model_test_util.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "model/greedy.h"
#include "model/model.h"
#include "model/model_test_util.h"

namespace k3::model::testing {

// An approximate path (int8 expert activations, int8 dense weights, a bf16 or fp8 latent cache of
// `cache_dtype`) against the exact float64
// reference, teacher-forced along the reference's own 64 greedy tokens so that every step is
// judged. Each product's error is bounded (kernels/matmul.h), but through the network a
// perturbation of ~1e-2 moves MoE routing decisions whose top-k gap is smaller (these random tiny
// models have many), after which a step's logits differ by much more; so the bound is on the
// typical step: the median step's logit error relative to the row's largest |logit| <=
// `median_max`. The argmax must equal the reference's at every step whose top-1 margin exceeds
// twice that step's largest logit error (there it cannot flip), and at least `min_judged` steps
// must be judged. Observed values are printed (docs/model.md lists them).
inline void ExpectTeacherForcedWithinBound(
    const Model& model, const Reference& ref, const std::string& what, double median_max,
    size_t min_judged, kernels::LatentDtype cache_dtype = kernels::LatentDtype::kF32) {
  const auto& c = model.config();
  KdaStatePool states(c, 1);
  MlaCache cache(c, 8, 16, nullptr, cache_dtype);
  std::vector<int32_t> pages = {0, 1, 2, 3, 4, 5, 6, 7};
  SequenceInput seq{ref.prompt, 0, 0, pages, 1};
  ForwardResult out;
  std::vector<double> errors;
  size_t judged = 0;
  int64_t position = 0;
  for (size_t step = 0; step < ref.generated.size(); ++step) {
    const base::Status status = model.Forward({&seq, 1}, {}, states, cache, &out);
    ASSERT_TRUE(status.ok()) << status.ToString();
    const double* want = &ref.decode[step * ref.vocab];
    const auto e = CompareRow(out.logits.data(), want, c.vocab);
    errors.push_back(e.relative);
    if (testing::TopMargin(want, c.vocab) > 2 * e.max_abs) {
      ++judged;
      EXPECT_EQ(Argmax(out.logits.data(), c.vocab), ref.generated[step])
          << what << " step " << step;
    }
    position += static_cast<int64_t>(seq.tokens.size());
    seq.tokens = {&ref.generated[step], 1};
    seq.start_position = position;
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  const auto within =
      std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 2e-2; });
  std::printf(
      "%s: relative logit error median %.3g, max %.3g, %ld of %zu steps within 2e-2; "
      "argmax equal on all %zu steps whose margin allows judging\n",
      what.c_str(), median, errors.back(), static_cast<long>(within), errors.size(), judged);
  EXPECT_LE(median, median_max) << what;
  EXPECT_GE(judged, min_judged) << what << ": too few steps with a margin to judge";
}

}  // namespace k3::model::testing
