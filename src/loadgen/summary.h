// Figures of one `k3 bench serve` run: throughput, latency distributions (TTFT, TPOT, ITL,
// end-to-end), goodput under SLOs, errors by type, prefix hit rate, and the client's own cost.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "loadgen/runner.h"

namespace k3::loadgen {

struct Distribution {
  int n = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // milliseconds
};
Distribution Distribute(std::vector<double> values_ms);

struct Slo {  // 0 = no limit
  double ttft_ms = 0, tpot_ms = 0, e2e_ms = 0;
  bool Met(const RequestRecord& r) const;
};

struct Summary {
  int requests = 0, completed = 0, failed = 0;
  std::map<std::string, int> errors;  // by type
  double duration_s = 0;
  double request_throughput = 0, input_tokens_per_s = 0, output_tokens_per_s = 0;
  Distribution ttft, tpot, itl, e2e;
  double goodput = 0;         // completed requests per second that met every SLO
  double slo_attainment = 0;  // share of all requests that met every SLO
  int64_t prompt_tokens = 0, cached_tokens = 0, output_tokens = 0;
  double usage_hit_rate = 0;    // cached_tokens / prompt_tokens from the responses' usage
  double server_hit_rate = -1;  // from the server's /metrics (k3 serve), -1 if not exported
  double client_cpu_s = 0;
  double client_core_share = 0;        // client CPU / wall time
  double client_tokens_per_cpu_s = 0;  // streamed text events per client CPU second
};

Summary Summarize(const RunResult& run, const Slo& slo);
nlohmann::json ToJson(const Summary& s);
// A readable block of the figures (the `k3 bench serve` table).
std::string FormatSummary(const Summary& s, const std::string& title);

}  // namespace k3::loadgen
