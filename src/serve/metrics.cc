#include "serve/metrics.h"

#include <algorithm>
#include <cstdio>

namespace k3::serve {
namespace {

std::string Number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

void Gauge(const std::string& name, const std::string& help, double value, std::string* out) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n";
  *out += name + " " + Number(value) + "\n";
}

void Counter(const std::string& name, const std::string& help, double value, std::string* out) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n";
  *out += name + " " + Number(value) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double seconds) {
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  ++counts_[bucket];
  sum_ += seconds;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& help, std::string* out) const {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out +=
        name + "_bucket{le=\"" + Number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += counts_.back();
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  *out += name + "_sum " + Number(sum_) + "\n";
  *out += name + "_count " + std::to_string(count_) + "\n";
}

ServeMetrics::ServeMetrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
             20, 40, 80}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
            0.075, 0.1,    0.15,  0.2,  0.3,   0.4,  0.5,   0.75, 1,    2.5}),
      e2e_({0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120}) {}

void ServeMetrics::RecordRequest(const std::string& endpoint, int http_status) {
  std::lock_guard lock(mu_);
  ++requests_[{endpoint, http_status}];
}
void ServeMetrics::RecordTimeToFirstToken(double seconds) {
  std::lock_guard lock(mu_);
  ttft_.Observe(seconds);
}
void ServeMetrics::RecordInterTokenLatency(double seconds) {
  std::lock_guard lock(mu_);
  itl_.Observe(seconds);
}
void ServeMetrics::RecordEndToEnd(double seconds) {
  std::lock_guard lock(mu_);
  e2e_.Observe(seconds);
}
void ServeMetrics::AddTokens(int64_t prompt, int64_t generated) {
  std::lock_guard lock(mu_);
  prompt_tokens_ += prompt;
  generated_tokens_ += generated;
}
void ServeMetrics::SetPending(int64_t pending) {
  std::lock_guard lock(mu_);
  pending_ = pending;
}

int64_t ServeMetrics::requests_with_status(int http_status) const {
  std::lock_guard lock(mu_);
  int64_t total = 0;
  for (const auto& [key, count] : requests_) {
    if (key.second == http_status) total += count;
  }
  return total;
}

std::string ServeMetrics::RenderPrometheus(const engine::EngineMetrics& engine) const {
  std::lock_guard lock(mu_);
  std::string out;
  out += "# HELP k3_requests_total HTTP requests by endpoint and status code.\n";
  out += "# TYPE k3_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out += "k3_requests_total{endpoint=\"" + key.first + "\",status=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(count) + "\n";
  }
  ttft_.Render("k3_time_to_first_token_seconds", "Time from request arrival to the first token.",
               &out);
  itl_.Render("k3_inter_token_latency_seconds", "Time between consecutive streamed tokens.", &out);
  e2e_.Render("k3_request_latency_seconds", "Time from arrival to the last token.", &out);
  Counter("k3_prompt_tokens_total", "Prompt tokens of admitted requests.",
          static_cast<double>(prompt_tokens_), &out);
  Counter("k3_generation_tokens_total", "Generated tokens.", static_cast<double>(generated_tokens_),
          &out);
  Gauge("k3_requests_pending", "Requests admitted by the frontend and not finished.",
        static_cast<double>(pending_), &out);
  Gauge("k3_queue_depth", "Sequences waiting in the engine.",
        static_cast<double>(engine.queue_depth), &out);
  Gauge("k3_running_sequences", "Sequences running in the engine.",
        static_cast<double>(engine.counters.running), &out);
  // Leak detectors (`k3 bench soak` reads them after its drain): 0 when nothing is in flight.
  Gauge("k3_kv_blocks_referenced", "KV cache blocks referenced by live sequences.",
        static_cast<double>(engine.counters.cache.referenced_blocks), &out);
  Gauge("k3_state_slots_in_use", "Running-state slots held by live sequences.",
        static_cast<double>(engine.running_slots - engine.counters.free_running_slots), &out);
  Gauge("k3_cache_usage_ratio", "Referenced KV blocks over all blocks.", engine.cache_usage, &out);
  Gauge("k3_prefix_cache_hit_rate", "Cached prompt tokens over all prompt tokens.",
        engine.prefix_hit_rate, &out);
  Counter("k3_prefix_cache_hit_tokens_total", "Prompt tokens served from the prefix cache.",
          static_cast<double>(engine.counters.cached_prompt_tokens), &out);
  Counter("k3_preemptions_total", "Sequences preempted for cache space.",
          static_cast<double>(engine.counters.preemptions), &out);
  Gauge("k3_generation_tokens_per_second", "Recent generation throughput.",
        engine.generated_per_second, &out);
  return out;
}

}  // namespace k3::serve
