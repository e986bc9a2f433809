#include "loadgen/soak_health.h"

#include <fstream>
#include <sstream>

namespace k3::loadgen {

const char* const kLeftoverGauges[5] = {"k3_requests_pending", "k3_queue_depth",
                                        "k3_running_sequences", "k3_kv_blocks_referenced",
                                        "k3_state_slots_in_use"};

std::optional<int64_t> ParseVmRssKib(const std::string& status_text) {
  std::istringstream lines(status_text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("VmRSS:")) continue;
    std::istringstream fields(line.substr(6));
    int64_t kib = -1;
    std::string unit;
    if (fields >> kib >> unit && kib >= 0 && unit == "kB") return kib;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> ReadRssKib(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/status");
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return ParseVmRssKib(text.str());
}

RssVerdict JudgeRss(const std::vector<RssSample>& samples, double warmup_s, int64_t bound_kib,
                    bool required) {
  RssVerdict v;
  if (samples.empty()) {
    if (required) v.failure = "no RSS samples of the server";
    return v;
  }
  v.start_kib = samples.front().kib;
  v.end_kib = samples.back().kib;
  size_t first = 0;
  while (first < samples.size() && samples[first].t_s < warmup_s) ++first;
  for (const RssSample& s : samples) v.peak_kib = std::max(v.peak_kib, s.kib);
  if (samples.size() - first < 2) {
    if (required) v.failure = "fewer than two RSS samples after the warm-up";
    return v;
  }
  v.baseline_kib = samples[first].kib;
  for (size_t i = first; i < samples.size(); ++i) {
    const int64_t growth = samples[i].kib - v.baseline_kib;
    if (growth > bound_kib) {
      v.failure = "server RSS grew " + std::to_string(growth / 1024) + " MiB after warm-up (" +
                  std::to_string(v.baseline_kib / 1024) + " -> " +
                  std::to_string(samples[i].kib / 1024) + " MiB at " +
                  std::to_string(int(samples[i].t_s)) + " s), bound " +
                  std::to_string(bound_kib / 1024) + " MiB";
      return v;
    }
  }
  return v;
}

std::vector<std::string> Leftovers(const std::map<std::string, double>& metrics) {
  std::vector<std::string> out;
  for (const char* gauge : kLeftoverGauges) {
    const auto it = metrics.find(gauge);
    if (it == metrics.end()) {
      out.push_back(std::string(gauge) + " missing from /metrics");
    } else if (it->second != 0) {
      out.push_back(std::string(gauge) + " = " + std::to_string(it->second) + " after the drain");
    }
  }
  return out;
}

}  // namespace k3::loadgen
