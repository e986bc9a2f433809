#include "model/greedy.h"

#include <chrono>
#include <numeric>

namespace k3::model {

int32_t Argmax(const float* values, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

base::Result<GreedyResult> GreedyGenerate(const Model& model, std::span<const int32_t> prompt,
                                          const GreedyOptions& options) {
  using Clock = std::chrono::steady_clock;
  if (prompt.empty()) return base::InvalidArgument("empty prompt");
  const ModelConfig& c = model.config();
  const int64_t total = static_cast<int64_t>(prompt.size()) + options.max_tokens;
  const int pages_needed = static_cast<int>((total + options.page_size - 1) / options.page_size);
  KdaStatePool states(c, 1, &model.backend());
  MlaCache cache(c, pages_needed, options.page_size, &model.backend(), options.forward.cache_dtype);
  Workspace workspace = model.MakeWorkspace();
  std::vector<int32_t> pages(pages_needed);
  std::iota(pages.begin(), pages.end(), 0);

  GreedyResult result;
  ForwardResult forward;
  SequenceInput seq{prompt, 0, 0, pages, 1};
  auto start = Clock::now();
  int64_t position = 0;
  for (int step = 0; step < options.max_tokens; ++step) {
    K3_RETURN_IF_ERROR(
        model.Forward({&seq, 1}, options.forward, {states, cache, workspace}, &forward));
    const auto now = Clock::now();
    (step == 0 ? result.prefill_seconds : result.decode_seconds) +=
        std::chrono::duration<double>(now - start).count();
    start = now;
    result.step_logits.insert(result.step_logits.end(), forward.logits.begin(),
                              forward.logits.end());
    result.step_router_gap.push_back(forward.router_min_gap.back());
    const int32_t next = Argmax(forward.logits.data(), c.vocab);
    result.generated.push_back(next);
    if (options.on_token) options.on_token(next);
    if (options.stop_at_eos && next == c.eos_id) break;
    position += static_cast<int64_t>(seq.tokens.size());
    seq.tokens = {&result.generated.back(), 1};
    seq.start_position = position;
  }
  return result;
}

}  // namespace k3::model
