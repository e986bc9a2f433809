#include "loadgen/server_metrics.h"

namespace k3::loadgen {

std::map<std::string, double> ScrapeMetrics(const gateway::HostPort& target) {
  auto answer = gateway::HttpGet(target, "/metrics", std::chrono::seconds(5));
  if (!answer.ok() || answer->status != 200) return {};
  return ParsePrometheus(answer->body);
}

}  // namespace k3::loadgen
