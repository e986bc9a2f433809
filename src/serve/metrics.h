// Serving metrics in Prometheus text format: requests by endpoint and status, TTFT, inter-token
// and end-to-end latency histograms, tokens in and out, plus the engine's gauges (queue depth,
// running sequences, cache usage, prefix hit rate). Thread-safe; recording costs one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"

namespace k3::serve {

// A cumulative histogram with fixed upper bounds in seconds.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double seconds);
  // Appends the _bucket/_sum/_count lines of metric `name`.
  void Render(const std::string& name, const std::string& help, std::string* out) const;
  int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // one per bound, plus +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class ServeMetrics {
 public:
  ServeMetrics();

  void RecordRequest(const std::string& endpoint, int http_status);
  void RecordTimeToFirstToken(double seconds);
  void RecordInterTokenLatency(double seconds);
  void RecordEndToEnd(double seconds);
  void AddTokens(int64_t prompt, int64_t generated);
  void SetPending(int64_t pending);

  // The whole /metrics page.
  std::string RenderPrometheus(const engine::EngineMetrics& engine) const;
  int64_t requests_with_status(int http_status) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  Histogram ttft_, itl_, e2e_;
  int64_t prompt_tokens_ = 0, generated_tokens_ = 0, pending_ = 0;
};

}  // namespace k3::serve
