// Scraping an endpoint's Prometheus /metrics (k3 serve's prefix-cache counters) before and after
// a run, so the bench can report the server's own prefix hit rate over exactly that run.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gateway/upstream.h"

namespace k3::loadgen {

// Series name without labels -> sum over its label sets. Empty when /metrics does not answer.
std::map<std::string, double> ScrapeMetrics(const gateway::HostPort& target);
// Parses Prometheus text the same way (exposed for tests).
std::map<std::string, double> ParsePrometheus(const std::string& text);

// k3 serve: hit tokens / prompt tokens between two scrapes; nullopt without those series.
std::optional<double> ServerHitRate(const std::map<std::string, double>& before,
                                    const std::map<std::string, double>& after);

}  // namespace k3::loadgen
