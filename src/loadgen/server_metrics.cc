#include "loadgen/server_metrics.h"

#include <cstdlib>
#include <sstream>

namespace k3::loadgen {

std::map<std::string, double> ParsePrometheus(const std::string& text) {
  std::map<std::string, double> sums;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    std::string name = line.substr(0, space);
    name = name.substr(0, name.find('{'));
    char* end = nullptr;
    const double value = std::strtod(line.c_str() + space + 1, &end);
    if (end != line.c_str() + space + 1) sums[name] += value;
  }
  return sums;
}

std::map<std::string, double> ScrapeMetrics(const gateway::HostPort& target) {
  auto answer = gateway::HttpGet(target, "/metrics", std::chrono::seconds(5));
  if (!answer.ok() || answer->status != 200) return {};
  return ParsePrometheus(answer->body);
}

std::optional<double> ServerHitRate(const std::map<std::string, double>& before,
                                    const std::map<std::string, double>& after) {
  auto delta = [&](const char* name) -> std::optional<double> {
    const auto a = after.find(name);
    if (a == after.end()) return std::nullopt;
    const auto b = before.find(name);
    return a->second - (b == before.end() ? 0 : b->second);
  };
  const auto hits = delta("k3_prefix_cache_hit_tokens_total");
  const auto prompts = delta("k3_prompt_tokens_total");
  if (!hits || !prompts || *prompts <= 0) return std::nullopt;
  return *hits / *prompts;
}

}  // namespace k3::loadgen
