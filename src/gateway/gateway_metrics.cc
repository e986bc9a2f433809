#include "gateway/gateway_metrics.h"

#include <sstream>

namespace k3::gateway {

void GatewayMetrics::RecordRequest(const std::string& endpoint, const std::string& outcome) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, outcome}];
}

void GatewayMetrics::RecordDecision(int64_t prompt_tokens, int64_t cached_tokens, double seconds) {
  decisions_++;
  prompt_tokens_ += prompt_tokens;
  cached_tokens_ += cached_tokens;
  decision_nanos_ += static_cast<int64_t>(seconds * 1e9);
}

std::string GatewayMetrics::Render(const std::string& policy, const std::vector<Worker>& workers,
                                   const KvFeedCounters& feed) const {
  std::ostringstream out;
  auto help = [&](const char* name, const char* type, const char* text) {
    out << "# HELP " << name << " " << text << "\n# TYPE " << name << " " << type << "\n";
  };
  help("k3_router_requests_total", "counter", "Requests by endpoint and outcome.");
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, n] : requests_) {
      out << "k3_router_requests_total{endpoint=\"" << key.first << "\",outcome=\"" << key.second
          << "\"} " << n << "\n";
    }
  }
  help("k3_router_decisions_total", "counter", "Routing decisions made.");
  out << "k3_router_decisions_total{policy=\"" << policy << "\"} " << decisions_.load() << "\n";
  help("k3_router_decision_seconds_total", "counter", "Time spent in routing decisions.");
  out << "k3_router_decision_seconds_total " << double(decision_nanos_.load()) * 1e-9 << "\n";
  help("k3_router_retries_total", "counter", "Requests re-sent to another worker.");
  out << "k3_router_retries_total " << retries_.load() << "\n";
  help("k3_router_unrouted_total", "counter", "Requests whose prompt the router could not read.");
  out << "k3_router_unrouted_total " << unrouted_.load() << "\n";
  help("k3_router_prompt_tokens_total", "counter", "Prompt tokens routed.");
  out << "k3_router_prompt_tokens_total " << prompt_tokens_.load() << "\n";
  help("k3_router_cached_tokens_total", "counter",
       "Prompt tokens the index showed cached on the chosen worker.");
  out << "k3_router_cached_tokens_total " << cached_tokens_.load() << "\n";
  help("k3_router_predicted_hit_rate", "gauge", "cached_tokens_total / prompt_tokens_total.");
  const int64_t prompts = prompt_tokens_.load();
  out << "k3_router_predicted_hit_rate "
      << (prompts ? double(cached_tokens_.load()) / double(prompts) : 0.0) << "\n";
  help("k3_router_kv_events_total", "counter", "KV events received from workers.");
  out << "k3_router_kv_events_total " << feed.events_received << "\n";
  help("k3_router_kv_resyncs_total", "counter", "Replays and snapshots applied.");
  out << "k3_router_kv_resyncs_total " << feed.resyncs << "\n";
  help("k3_router_kv_gaps_total", "counter", "Event sequence gaps (lost events).");
  out << "k3_router_kv_gaps_total " << feed.gaps << "\n";
  help("k3_router_kv_decode_errors_total", "counter", "Undecodable KV messages dropped.");
  out << "k3_router_kv_decode_errors_total " << feed.decode_errors << "\n";
  help("k3_router_index_blocks", "gauge", "Distinct cached blocks known on any worker.");
  out << "k3_router_index_blocks " << feed.index_blocks << "\n";

  const char* per_worker[][3] = {
      {"k3_router_worker_healthy", "gauge", "1 when the worker passes health checks."},
      {"k3_router_worker_prefill_tokens", "gauge", "Prompt tokens sent and not yet answered."},
      {"k3_router_worker_decode_seqs", "gauge", "Requests running on the worker."},
      {"k3_router_worker_requests_total", "counter", "Requests routed to the worker."},
      {"k3_router_worker_cached_tokens_total", "counter", "Predicted cached prompt tokens."},
      {"k3_router_worker_errors_total", "counter", "Failed connections and refusals."}};
  for (int metric = 0; metric < 6; ++metric) {
    help(per_worker[metric][0], per_worker[metric][1], per_worker[metric][2]);
    for (const Worker& w : workers) {
      const int64_t values[] = {w.healthy ? 1 : 0, w.load.prefill_tokens, w.load.decode_seqs,
                                w.requests,        w.cached_tokens,       w.errors};
      out << per_worker[metric][0] << "{worker=\"" << w.id << "\",url=\"" << w.url << "\"} "
          << values[metric] << "\n";
    }
  }
  return out.str();
}

}  // namespace k3::gateway
