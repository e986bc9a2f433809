#include "loadgen/pareto.h"

#include <algorithm>

namespace k3::loadgen {
namespace {

bool Dominates(const SweepPoint& a, const SweepPoint& b) {
  const bool no_worse = a.throughput >= b.throughput && a.ttft_p90_ms <= b.ttft_p90_ms &&
                        a.tpot_p90_ms <= b.tpot_p90_ms;
  const bool better =
      a.throughput > b.throughput || a.ttft_p90_ms < b.ttft_p90_ms || a.tpot_p90_ms < b.tpot_p90_ms;
  return no_worse && better;
}

}  // namespace

std::vector<size_t> ParetoFrontier(const std::vector<SweepPoint>& points) {
  std::vector<size_t> frontier;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].failed) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      dominated = j != i && !points[j].failed && Dominates(points[j], points[i]);
    }
    if (!dominated) frontier.push_back(i);
  }
  std::sort(frontier.begin(), frontier.end(),
            [&](size_t a, size_t b) { return points[a].throughput < points[b].throughput; });
  return frontier;
}

std::optional<size_t> Recommend(const std::vector<SweepPoint>& points, double ttft_p90_ms,
                                double tpot_p90_ms) {
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    if (p.failed || (ttft_p90_ms > 0 && p.ttft_p90_ms > ttft_p90_ms) ||
        (tpot_p90_ms > 0 && p.tpot_p90_ms > tpot_p90_ms)) {
      continue;
    }
    if (!best || p.throughput > points[*best].throughput) best = i;
  }
  return best;
}

}  // namespace k3::loadgen
