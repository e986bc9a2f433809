#include "router/cost.h"

#include <cstdio>

namespace k3::router {

double KvCost(const CostWeights& w, int64_t prompt_tokens, int64_t cached_tokens,
              const WorkerLoad& load) {
  const double new_prefill = static_cast<double>(prompt_tokens) - w.overlap * double(cached_tokens);
  return w.prefill * (static_cast<double>(load.prefill_tokens) + new_prefill) +
         w.decode * static_cast<double>(load.decode_seqs);
}

double DynamoCost(const CostWeights& w, int64_t prompt_blocks, int64_t cached_blocks,
                  int64_t block_tokens, const WorkerLoad& load) {
  const double queued_blocks =
      static_cast<double>(load.prefill_tokens) / static_cast<double>(block_tokens);
  const double prefill_blocks = queued_blocks + static_cast<double>(prompt_blocks - cached_blocks);
  return w.dynamo_overlap * prefill_blocks + static_cast<double>(load.active_blocks);
}

std::string ExplainKvCost(const CostWeights& w, int64_t prompt_tokens, int64_t cached_tokens,
                          const WorkerLoad& load) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "cost %.1f = %.2f x (queued %lld + new %lld - %.2f x cached %lld) + %.1f x decodes "
                "%lld",
                KvCost(w, prompt_tokens, cached_tokens, load), w.prefill,
                static_cast<long long>(load.prefill_tokens), static_cast<long long>(prompt_tokens),
                w.overlap, static_cast<long long>(cached_tokens), w.decode,
                static_cast<long long>(load.decode_seqs));
  return buf;
}

}  // namespace k3::router
