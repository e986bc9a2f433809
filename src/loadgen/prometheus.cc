// The parsing half of server_metrics.h, apart from the HTTP scrape so the fuzzer can build it
// alone.
#include <cstdlib>
#include <sstream>

#include "loadgen/server_metrics.h"

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
