// `k3 route simulate`: replays a Mooncake trace through the router's real code (src/router)
// against simulated workers, one table row per policy, and times routing decisions on a synthetic
// 100K-token request across 64 workers. `k3 route` without a subcommand is the live router
// (route_serve_command.cc).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>

#include "apps/k3/commands.h"
#include "router/router.h"
#include "router/simulator.h"

namespace k3::app {
namespace {

struct SimulateFlags {
  std::string trace =
      std::string(K3_DEFAULT_SHARED_DIR) + "/data/mooncake/conversation_trace.jsonl";
  int workers = 8;
  int64_t cache_blocks = 0;
  double cache_share = 0.10;
  std::string policies = "kv,dynamo,round-robin,random,least-loaded,session";
  double prefill_tokens_per_s = 20000;
  double tpot_ms = 30;
  double decode_slowdown = 0.005;
  double time_scale = 1.0;
  router::CostWeights weights;
  bool check = false;
};

// Route() wall time for a 100K-token request (16-token blocks: 6,250 chained hashes, hashing
// excluded) when 64 workers each hold a different-length prefix of it.
std::pair<double, double> DecisionTimeAt64Workers() {
  constexpr int kWorkers = 64;
  constexpr int64_t kTokens = 100000, kBlock = 16;
  std::vector<router::BlockHash> chain(kTokens / kBlock);
  std::mt19937_64 rng(7);
  for (auto& h : chain) h = rng();
  router::Router r(kWorkers, kBlock, router::Policy::kKv, router::CostWeights{}, false);
  for (int w = 0; w < kWorkers; ++w) {
    const size_t held = chain.size() * static_cast<size_t>(w + 1) / kWorkers;
    r.index().Store(w, std::span(chain).first(held));
    r.SetLoad(
        w, router::WorkerLoad{.prefill_tokens = w * 100, .decode_seqs = w % 7, .active_blocks = 0});
  }
  std::vector<double> us;
  router::RouteRequest req{chain, kTokens, ""};
  for (int i = 0; i < 2000; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto d = r.Route(req);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (!d.ok()) return {0, 0};
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

// The targets, for rows that were simulated. With --check, exit 1 if a checked one fails
// (decision time is not checked: sanitizer builds are slow by design).
int PrintRouteTargets(const std::map<std::string, router::SimResult>& rows, double shared,
                      double decision_p99_us, bool check) {
  auto met = [](bool ok) { return ok ? "MET" : "NOT MET"; };
  bool failed = false;
  auto kv = rows.find("kv");
  if (kv == rows.end()) return 0;
  std::printf("\ntargets (kv):\n");
  const bool ideal = kv->second.hit_rate >= 0.9 * shared;
  const bool balanced = kv->second.imbalance <= 1.3;
  std::printf("  hit rate >= 90%% of the ideal shared cache: %s\n", met(ideal));
  std::printf("  load imbalance <= 1.3: %s\n", met(balanced));
  failed |= !ideal || !balanced;
  if (auto rr = rows.find("round-robin"); rr != rows.end() && rr->second.hit_rate > 0) {
    const double ratio = kv->second.hit_rate / rr->second.hit_rate;
    std::printf(
        "  hit rate >= 3x round-robin: %.2fx %s (the ideal shared cache itself reaches "
        "%.2fx)\n",
        ratio, met(ratio >= 3), shared / rr->second.hit_rate);
  }
  if (auto d = rows.find("dynamo"); d != rows.end()) {
    const bool faster = kv->second.mean_ttft_ms < d->second.mean_ttft_ms;
    std::printf("  mean TTFT below Dynamo's default cost (overlap weight 1.0): %s\n", met(faster));
    failed |= !faster;
  }
  std::printf("  decision p99 < 200 us at 100K tokens x 64 workers: %s\n",
              met(decision_p99_us < 200));
  return check && failed ? 1 : 0;
}

int RunSimulate(const SimulateFlags& f) {
  auto trace = router::LoadMooncakeTrace(f.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "k3 route simulate: %s\n", trace.status().ToString().c_str());
    return 1;
  }
  const size_t unique = router::UniqueBlocks(*trace);
  const int64_t cache = f.cache_blocks > 0
                            ? f.cache_blocks
                            : std::max<int64_t>(1, int64_t(double(unique) * f.cache_share));
  const double shared = router::SharedCacheHitRate(*trace, cache * f.workers);
  std::printf("trace %s: %zu requests, %zu unique 512-token blocks\n", f.trace.c_str(),
              trace->size(), unique);
  std::printf(
      "%d workers x %lld cached blocks (%.0f%% of the unique blocks each); model: prefill "
      "%.0f tok/s per worker, -%.1f%% per running decode, %.0f ms per output token; "
      "arrivals x %.2f\n",
      f.workers, static_cast<long long>(cache), 100.0 * double(cache) / double(unique),
      f.prefill_tokens_per_s, 100 * f.decode_slowdown, f.tpot_ms, f.time_scale);
  std::printf("ideal single shared cache of %lld blocks: hit rate %.1f%%\n\n",
              static_cast<long long>(cache * f.workers), 100 * shared);
  std::printf("%-13s %9s %10s %10s %13s %12s %14s\n", "policy", "hit rate", "vs ideal", "imbalance",
              "mean TTFT ms", "p90 TTFT ms", "decide p99 us");
  std::stringstream names(f.policies);
  std::string name;
  std::map<std::string, router::SimResult> rows;
  while (std::getline(names, name, ',')) {
    auto policy = router::ParsePolicy(name);
    if (!policy.ok()) {
      std::fprintf(stderr, "k3 route simulate: %s\n", policy.status().ToString().c_str());
      return 2;
    }
    router::SimConfig c;
    c.workers = f.workers;
    c.cache_blocks = cache;
    c.prefill_tokens_per_s = f.prefill_tokens_per_s;
    c.tpot_ms = f.tpot_ms;
    c.decode_slowdown = f.decode_slowdown;
    c.time_scale = f.time_scale;
    c.policy = *policy;
    c.weights = f.weights;
    const router::SimResult s = router::Simulate(*trace, c);
    rows[s.policy] = s;
    std::printf("%-13s %8.1f%% %9.1f%% %10.2f %13.0f %12.0f %14.1f\n", s.policy.c_str(),
                100 * s.hit_rate, shared > 0 ? 100 * s.hit_rate / shared : 0, s.imbalance,
                s.mean_ttft_ms, s.p90_ttft_ms, s.decision_p99_us);
    std::fflush(stdout);
  }
  const auto [p50, p99] = DecisionTimeAt64Workers();
  std::printf(
      "\nrouting decision, 100K-token request (6,250 blocks of 16), 64 workers, hashing "
      "excluded: p50 %.1f us, p99 %.1f us\n",
      p50, p99);
  return PrintRouteTargets(rows, shared, p99, f.check);
}

}  // namespace

CommandFn AddRouteCommand(CLI::App& app) {
  app.require_subcommand(0, 1);
  CommandFn serve = AddRouteServeOptions(app);
  CLI::App* sim = app.add_subcommand(
      "simulate", "Replay a Mooncake trace through the router against simulated workers");
  auto f = std::make_shared<SimulateFlags>();
  sim->add_option("--trace", f->trace, "Mooncake JSON lines")->capture_default_str();
  sim->add_option("--workers", f->workers, "Simulated workers (1..64)")
      ->check(CLI::Range(1, router::PrefixIndex::kMaxWorkers))
      ->capture_default_str();
  sim->add_option(
      "--cache-blocks", f->cache_blocks,
      "Cached 512-token blocks per worker (0: --cache-share of the trace's unique blocks)");
  sim->add_option("--cache-share", f->cache_share, "See --cache-blocks")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sim->add_option("--policies", f->policies, "Comma-separated policies, one row each")
      ->capture_default_str();
  sim->add_option("--prefill-tps", f->prefill_tokens_per_s, "Modelled prefill tokens/s per worker")
      ->capture_default_str();
  sim->add_option("--tpot-ms", f->tpot_ms, "Modelled time per output token")->capture_default_str();
  sim->add_option("--decode-slowdown", f->decode_slowdown,
                  "Prefill slowdown per running decode sequence")
      ->capture_default_str();
  sim->add_option("--time-scale", f->time_scale, "Multiply arrival times (< 1: heavier load)")
      ->capture_default_str();
  sim->add_option("--prefill-weight", f->weights.prefill, "kv cost: per queued/new prefill token")
      ->capture_default_str();
  sim->add_option("--overlap-weight", f->weights.overlap, "kv cost: per cached prompt token")
      ->capture_default_str();
  sim->add_option("--decode-weight", f->weights.decode, "kv cost: per running decode sequence")
      ->capture_default_str();
  sim->add_option("--dynamo-overlap-weight", f->weights.dynamo_overlap,
                  "dynamo cost: overlap_score_weight")
      ->capture_default_str();
  sim->add_flag("--check", f->check,
                "Exit 1 unless kv reaches 90% of the ideal hit rate, imbalance <= 1.3 and a lower "
                "mean TTFT than dynamo");
  return [sim, f, serve] { return sim->parsed() ? RunSimulate(*f) : serve(); };
}

}  // namespace k3::app
