// The router's Prometheus counters (GET /metrics on `k3 route`): requests by endpoint and
// outcome, routing decisions, retries, the prefix hit rate the index predicted, and decision
// time. Per-worker gauges (health, load, requests) come from the worker table at render time.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/workers.h"

namespace k3::gateway {

struct KvFeedCounters {
  int64_t events_received = 0, resyncs = 0, decode_errors = 0;
  int64_t events_applied = 0, gaps = 0, restarts = 0;
  int64_t index_blocks = 0;  // distinct blocks held by some worker
};

class GatewayMetrics {
 public:
  void RecordRequest(const std::string& endpoint, const std::string& outcome);
  void RecordDecision(int64_t prompt_tokens, int64_t cached_tokens, double seconds);
  void RecordRetry() { retries_++; }
  void RecordUnrouted() { unrouted_++; }  // prompts the router could not parse (routed by load)

  int64_t prompt_tokens() const { return prompt_tokens_.load(); }
  int64_t cached_tokens() const { return cached_tokens_.load(); }

  std::string Render(const std::string& policy, const std::vector<Worker>& workers,
                     const KvFeedCounters& feed) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, int64_t> requests_;
  std::atomic<int64_t> decisions_{0}, retries_{0}, unrouted_{0};
  std::atomic<int64_t> prompt_tokens_{0}, cached_tokens_{0};
  std::atomic<int64_t> decision_nanos_{0};
};

}  // namespace k3::gateway
