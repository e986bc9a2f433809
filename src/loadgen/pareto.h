// Choosing among measured configurations (`k3 sweep`): the Pareto frontier of throughput against
// tail latency, and the best configuration that meets an SLO.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace k3::loadgen {

struct SweepPoint {
  std::string setting;     // e.g. "max-batched-tokens=512 max-running=16"
  double throughput = 0;   // output tokens per second (higher is better)
  double ttft_p90_ms = 0;  // lower is better
  double tpot_p90_ms = 0;  // lower is better
  bool failed = false;     // the run did not complete (never on the frontier)
};

// Indices of the points no other point dominates (>= throughput, <= both latencies, one strictly
// better), sorted by throughput.
std::vector<size_t> ParetoFrontier(const std::vector<SweepPoint>& points);

// The highest-throughput point whose p90 TTFT and TPOT are within the limits (0 = no limit).
std::optional<size_t> Recommend(const std::vector<SweepPoint>& points, double ttft_p90_ms,
                                double tpot_p90_ms);

}  // namespace k3::loadgen
