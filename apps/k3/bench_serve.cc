#include "apps/k3/bench_serve.h"

#include <unistd.h>

#include <cstdio>

#include "gateway/upstream.h"
#include "loadgen/runner.h"
#include "loadgen/server_metrics.h"

namespace k3::app {
namespace {

base::Result<std::pair<int, int>> ParseRange(const std::string& text) {
  const size_t colon = text.find(':');
  try {
    const int lo = std::stoi(text.substr(0, colon));
    const int hi = colon == std::string::npos ? lo : std::stoi(text.substr(colon + 1));
    if (lo >= 1 && hi >= lo) return std::make_pair(lo, hi);
  } catch (const std::exception&) {
  }
  return base::InvalidArgument("--input-words '" + text + "': want MIN:MAX with 1 <= MIN <= MAX");
}

void PrintProgress(const loadgen::Progress& p) {
  constexpr int kWidth = 30;
  const int filled = p.total ? kWidth * p.done / p.total : 0;
  std::fprintf(stderr, "\r  [%s%s] %d/%d requests, %d in flight, %d failed, %.0f tok/s, %.1f s ",
               std::string(size_t(filled), '#').c_str(),
               std::string(size_t(kWidth - filled), '.').c_str(), p.done, p.total, p.in_flight,
               p.failed, p.elapsed_s > 0 ? double(p.output_tokens) / p.elapsed_s : 0.0,
               p.elapsed_s);
  if (p.done >= p.total) std::fprintf(stderr, "\n");
}

}  // namespace

base::Result<loadgen::Workload> BuildWorkload(const BenchServeFlags& f) {
  if (f.num_requests < 1) return base::InvalidArgument("--num-requests must be >= 1");
  const std::string shared = K3_DEFAULT_SHARED_DIR;
  std::string dataset = f.dataset;
  std::string path;
  if (dataset == "sharegpt") path = shared + "/data/sharegpt/sharegpt_v3_filtered_500.json";
  if (dataset == "mooncake") path = shared + "/data/mooncake/conversation_trace.jsonl";
  if (dataset.ends_with(".json")) path = dataset, dataset = "sharegpt";
  if (dataset.ends_with(".jsonl")) path = dataset, dataset = "mooncake";
  if (dataset == "random") {
    K3_ASSIGN_OR_RETURN(auto range, ParseRange(f.input_words));
    return loadgen::RandomWorkload({f.num_requests, range.first, range.second,
                                    std::max(1, f.max_tokens / 2), f.max_tokens, f.seed});
  }
  if (dataset == "multi-turn") {
    return loadgen::MultiTurnWorkload(
        {f.num_requests, std::max(1, f.turns), f.system_words, 24, f.max_tokens, f.seed});
  }
  if (dataset == "sharegpt")
    return loadgen::ShareGptWorkload(path, f.num_requests, f.max_tokens, f.seed);
  if (dataset == "mooncake") {
    return loadgen::MooncakeWorkload(
        {path, f.num_requests, f.words_per_block, f.time_scale, f.max_tokens});
  }
  return base::InvalidArgument(
      "--dataset '" + f.dataset +
      "': want random, sharegpt, multi-turn, mooncake or a .json/.jsonl file");
}

base::Result<BenchOutcome> BenchOnce(const BenchServeFlags& f, const loadgen::Workload& workload,
                                     double rate) {
  K3_ASSIGN_OR_RETURN(gateway::HostPort target, gateway::ParseHttpUrl(f.url));
  loadgen::RunOptions options;
  options.target = target;
  options.api_key = f.api_key;
  options.model = f.model;
  options.completions = f.completions;
  options.concurrency = f.concurrency;
  options.request_rate = rate;
  options.burstiness = f.burstiness;
  options.trace_times = f.trace_times;
  options.seed = f.seed;
  const auto before = loadgen::ScrapeMetrics(target);
  const bool progress = !f.no_progress && isatty(STDERR_FILENO);
  auto run = loadgen::RunWorkload(workload, options, progress ? PrintProgress : nullptr);
  const auto after = loadgen::ScrapeMetrics(target);
  BenchOutcome outcome;
  outcome.summary = loadgen::Summarize(run, f.slo);
  if (auto hit = loadgen::ServerHitRate(before, after)) outcome.summary.server_hit_rate = *hit;
  outcome.title = workload.name + ", " + std::to_string(workload.requests()) + " requests, " +
                  (rate > 0            ? std::to_string(rate).substr(0, 6) + " conv/s"
                   : f.concurrency > 0 ? "concurrency " + std::to_string(f.concurrency)
                   : f.trace_times     ? std::string("trace times")
                                       : std::string("all at once"));
  if (outcome.summary.completed == 0 && outcome.summary.failed > 0) {
    return base::Status(base::StatusCode::kUnavailable, "every request failed (first error: " +
                                                            outcome.summary.errors.begin()->first +
                                                            ") against " + f.url);
  }
  return outcome;
}

}  // namespace k3::app
