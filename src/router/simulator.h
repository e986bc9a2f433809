// Trace replay for routing policies: Mooncake-format requests (arrival time, input and output
// length, the hash ids of their 512-token blocks, which name prefixes as chained hashes do) go
// through the real Router against simulated workers. Each worker has an LRU cache of `cache_blocks`
// blocks that reports what it stores and evicts to the router's index, a FIFO prefill queue and
// running decodes. Modelled time (stated in the output, not measured):
//   prefill: `prefill_tokens_per_s` per worker, slowed by `decode_slowdown` per running decode
//            sequence (chunked prefill shares steps with decodes);
//   decode:  `tpot_ms` per output token once the prefill is done;
//   TTFT:    from arrival to the end of the request's prefill (queueing included).
// Also the ideal: one shared LRU cache of workers x cache_blocks blocks (hit rate only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "router/router.h"

namespace k3::router {

struct TraceRequest {
  double arrival_ms = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::vector<BlockHash> blocks;
};
// JSON lines {"timestamp", "input_length", "output_length", "hash_ids"} (../shared/data/mooncake).
base::Result<std::vector<TraceRequest>> LoadMooncakeTrace(const std::string& path);
size_t UniqueBlocks(const std::vector<TraceRequest>& trace);

struct SimConfig {
  int workers = 8;
  int64_t cache_blocks = 0;  // per worker
  int block_tokens = 512;
  double prefill_tokens_per_s = 20000;
  double decode_slowdown = 0.005;
  double tpot_ms = 30;
  double time_scale = 1.0;  // arrival times are multiplied by this (< 1: a heavier load)
  Policy policy = Policy::kKv;
  CostWeights weights;
};

struct SimResult {
  std::string policy;
  double hit_rate = 0;  // cached prompt blocks / prompt blocks
  double imbalance =
      0;  // max / mean of the workers' work (prefill tokens computed + output tokens)
  double mean_ttft_ms = 0, p90_ttft_ms = 0;
  double decision_p50_us = 0, decision_p99_us = 0;  // Router::Route, wall time
  size_t requests = 0;
};

SimResult Simulate(const std::vector<TraceRequest>& trace, const SimConfig& config);
// One LRU cache of workers x cache_blocks: the hit rate no placement can beat by much.
double SharedCacheHitRate(const std::vector<TraceRequest>& trace, int64_t total_blocks);

}  // namespace k3::router
