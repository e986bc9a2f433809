#include "loadgen/summary.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace k3::loadgen {
namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * double(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - double(lo));
}

nlohmann::json ToJson(const Distribution& d) {
  return {{"n", d.n},     {"mean", d.mean}, {"p50", d.p50},
          {"p90", d.p90}, {"p99", d.p99},   {"max", d.max}};
}

std::string Row(const char* name, const Distribution& d) {
  char line[160];
  std::snprintf(line, sizeof line, "  %-22s %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, d.mean, d.p50,
                d.p90, d.p99, d.max);
  return line;
}

}  // namespace

Distribution Distribute(std::vector<double> values) {
  Distribution d;
  d.n = static_cast<int>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  d.p50 = Percentile(values, 0.50);
  d.p90 = Percentile(values, 0.90);
  d.p99 = Percentile(values, 0.99);
  d.max = values.back();
  return d;
}

bool Slo::Met(const RequestRecord& r) const {
  if (!r.ok()) return false;
  if (ttft_ms > 0 && r.ttft() * 1e3 > ttft_ms) return false;
  if (tpot_ms > 0 && r.tpot() * 1e3 > tpot_ms) return false;
  return e2e_ms <= 0 || r.latency() * 1e3 <= e2e_ms;
}

Summary Summarize(const RunResult& run, const Slo& slo) {
  Summary s;
  s.duration_s = run.duration_s;
  std::vector<double> ttft, tpot, itl, e2e;
  int met = 0;
  for (const RequestRecord& r : run.records) {
    ++s.requests;
    if (!r.ok()) {
      ++s.failed;
      ++s.errors[r.error];
      continue;
    }
    ++s.completed;
    met += slo.Met(r) ? 1 : 0;
    s.prompt_tokens += r.prompt_tokens;
    s.cached_tokens += r.cached_tokens;
    s.output_tokens += r.output_tokens;
    ttft.push_back(r.ttft() * 1e3);
    e2e.push_back(r.latency() * 1e3);
    if (r.tpot() >= 0) tpot.push_back(r.tpot() * 1e3);
    for (double gap : r.gaps_s) itl.push_back(gap * 1e3);
  }
  const double seconds = std::max(run.duration_s, 1e-9);
  s.request_throughput = s.completed / seconds;
  s.input_tokens_per_s = double(s.prompt_tokens) / seconds;
  s.output_tokens_per_s = double(s.output_tokens) / seconds;
  s.ttft = Distribute(std::move(ttft));
  s.tpot = Distribute(std::move(tpot));
  s.itl = Distribute(std::move(itl));
  s.e2e = Distribute(std::move(e2e));
  s.goodput = met / seconds;
  s.slo_attainment = s.requests ? double(met) / s.requests : 0;
  s.usage_hit_rate = s.prompt_tokens ? double(s.cached_tokens) / double(s.prompt_tokens) : 0;
  s.client_cpu_s = run.client_cpu_s;
  s.client_core_share = run.client_cpu_s / seconds;
  int64_t text_events = 0;
  for (const RequestRecord& r : run.records) text_events += r.text_events;
  s.client_tokens_per_cpu_s = run.client_cpu_s > 0 ? double(text_events) / run.client_cpu_s : 0;
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"requests", s.requests},
          {"completed", s.completed},
          {"failed", s.failed},
          {"errors", s.errors},
          {"duration_s", s.duration_s},
          {"request_throughput", s.request_throughput},
          {"input_tokens_per_s", s.input_tokens_per_s},
          {"output_tokens_per_s", s.output_tokens_per_s},
          {"ttft_ms", ToJson(s.ttft)},
          {"tpot_ms", ToJson(s.tpot)},
          {"itl_ms", ToJson(s.itl)},
          {"e2e_ms", ToJson(s.e2e)},
          {"goodput", s.goodput},
          {"slo_attainment", s.slo_attainment},
          {"prompt_tokens", s.prompt_tokens},
          {"cached_tokens", s.cached_tokens},
          {"output_tokens", s.output_tokens},
          {"usage_hit_rate", s.usage_hit_rate},
          {"server_hit_rate", s.server_hit_rate},
          {"client_cpu_s", s.client_cpu_s},
          {"client_core_share", s.client_core_share},
          {"client_tokens_per_cpu_s", s.client_tokens_per_cpu_s}};
}

std::string FormatSummary(const Summary& s, const std::string& title) {
  std::string out = "== " + title + " ==\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "  requests %d (completed %d, failed %d) in %.2f s\n"
                "  throughput %.2f req/s, input %.0f tok/s, output %.0f tok/s\n"
                "  goodput %.2f req/s (%.1f%% of requests met the SLOs)\n",
                s.requests, s.completed, s.failed, s.duration_s, s.request_throughput,
                s.input_tokens_per_s, s.output_tokens_per_s, s.goodput, 100 * s.slo_attainment);
  out += line;
  for (const auto& [type, n] : s.errors) out += "  error " + type + ": " + std::to_string(n) + "\n";
  std::snprintf(line, sizeof line, "  prefix hit rate %.1f%% (usage)", 100 * s.usage_hit_rate);
  out += line;
  if (s.server_hit_rate >= 0) {
    std::snprintf(line, sizeof line, ", %.1f%% (server /metrics)", 100 * s.server_hit_rate);
    out += line;
  }
  out += "\n";
  out += "  latency (ms)               mean       p50       p90       p99       max\n";
  out += Row("time to first token", s.ttft) + Row("time per output token", s.tpot) +
         Row("inter-token latency", s.itl) + Row("end to end", s.e2e);
  std::snprintf(line, sizeof line,
                "  client: %.2f CPU s (%.0f%% of one core), %.0f streamed tokens per CPU second\n",
                s.client_cpu_s, 100 * s.client_core_share, s.client_tokens_per_cpu_s);
  out += line;
  return out;
}

}  // namespace k3::loadgen
