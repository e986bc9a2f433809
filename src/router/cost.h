// The routing cost: one function, so every decision can be logged with the numbers it used.
//
// kv (ours): the work a worker has ahead of this request's first token, in prefill-token units —
// what it still has queued to prefill, this prompt minus what it has cached, and a charge per
// running decode sequence (decode steps share the GPU with prefill chunks). The weights are
// flags of `k3 route`.
//
// dynamo: NVIDIA Dynamo's default, re-implemented for comparison (spec/serving.md §1.1):
// overlap_score_weight x prefill_blocks + decode_blocks, where prefill_blocks are the blocks the
// worker must prefill (queued, plus this prompt's uncached ones) and decode_blocks its active KV
// blocks.
#pragma once

#include <cstdint>
#include <string>

namespace k3::router {

struct WorkerLoad {
  int64_t prefill_tokens = 0;  // queued for prefill, not yet computed
  int64_t decode_seqs = 0;     // running decode sequences
  int64_t active_blocks = 0;   // KV blocks of the requests it is serving (Dynamo's decode_blocks)
};

struct CostWeights {
  double prefill = 1.0;         // per token of queued or new prefill
  double overlap = 1.0;         // per cached prompt token (saved prefill)
  double decode = 64.0;         // per running decode sequence, in prefill tokens
  double dynamo_overlap = 1.0;  // Dynamo's overlap_score_weight (policy dynamo)
};

double KvCost(const CostWeights& w, int64_t prompt_tokens, int64_t cached_tokens,
              const WorkerLoad& load);
double DynamoCost(const CostWeights& w, int64_t prompt_blocks, int64_t cached_blocks,
                  int64_t block_tokens, const WorkerLoad& load);
// "cost 1234.0 = 1.0 x (queued 800 + new 500 - 1.0 x cached 128) + 64.0 x decodes 1"
std::string ExplainKvCost(const CostWeights& w, int64_t prompt_tokens, int64_t cached_tokens,
                          const WorkerLoad& load);

}  // namespace k3::router
