// `k3 sweep`: runs `k3 serve` under every combination of a grid of settings, drives each with the
// same seeded workload (`k3 bench serve`'s), and prints the Pareto frontier of output throughput
// against p90 TTFT/TPOT with the best setting for an SLO. Saves JSON and an SVG of the frontier.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "apps/k3/bench_serve.h"
#include "apps/k3/commands.h"
#include "apps/k3/serve_child.h"
#include "loadgen/pareto.h"
#include "loadgen/plot.h"
#include "loadgen/sweep_grid.h"

namespace k3::app {
namespace {

struct SweepFlags {
  BenchServeFlags bench;
  std::string grid = "max-batched-tokens=512,2048;max-running=4,32";
  std::string model;  // empty: the embedded demo checkpoint
  std::string serve_args = "--cache-memory 512MiB";
  double rate = 0;
  std::string work = "k3-sweep";
};

// The k3 serve flags a grid may vary.
const std::set<std::string> kSweepable = {"max-batched-tokens",
                                          "max-running",
                                          "state-checkpoint-interval",
                                          "checkpoint-memory-fraction",
                                          "cache-memory",
                                          "threads",
                                          "block-size",
                                          "max-model-len"};

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Runs `k3 serve` with the point's settings and drives it with the sweep's workload. A point that
// fails (the server, or any request) is returned marked failed; its summary is added to `runs`.
loadgen::SweepPoint MeasurePoint(const SweepFlags& f, const loadgen::Workload& workload,
                                 const loadgen::GridPoint& grid_point, size_t index,
                                 nlohmann::json* runs) {
  std::vector<std::string> serve = {"serve", "--port", "0"};
  if (!f.model.empty()) serve.insert(serve.end(), {"--model", f.model});
  for (const std::string& a : Split(f.serve_args)) serve.push_back(a);
  serve.insert(serve.end(), grid_point.args.begin(), grid_point.args.end());
  const std::string& label = grid_point.label;
  auto child = StartServe(serve, f.work + "/point-" + std::to_string(index));
  if (!child.ok()) {
    std::fprintf(stderr, "  %s\n", child.status().ToString().c_str());
    return {label, 0, 0, 0, true};
  }
  BenchServeFlags bench = f.bench;  // same seed every point: the same texts and arrivals
  bench.url = child->second;
  auto outcome = BenchOnce(bench, workload, f.rate);
  child->first.Stop();
  if (!outcome.ok() || outcome->summary.failed != 0) {
    std::fprintf(stderr, "  failed: %s\n",
                 outcome.ok() ? "some requests failed" : outcome.status().ToString().c_str());
    return {label, 0, 0, 0, true};
  }
  const auto& s = outcome->summary;
  runs->push_back({{"setting", label}, {"summary", loadgen::ToJson(s)}});
  return {label, s.output_tokens_per_s, s.ttft.p90, s.tpot.p90, false};
}

// The table on stdout: every point, frontier points starred, then the recommendation.
void PrintTable(const SweepFlags& f, const std::vector<loadgen::SweepPoint>& points,
                const std::vector<size_t>& frontier, std::optional<size_t> best) {
  const std::set<size_t> on_frontier(frontier.begin(), frontier.end());
  std::printf("%-56s %10s %12s %12s  %s\n", "setting", "out tok/s", "TTFT p90 ms", "TPOT p90 ms",
              "frontier");
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.failed) {
      std::printf("%-56s %10s\n", p.setting.c_str(), "failed");
      continue;
    }
    std::printf("%-56s %10.1f %12.1f %12.1f  %s\n", p.setting.c_str(), p.throughput, p.ttft_p90_ms,
                p.tpot_p90_ms, on_frontier.count(i) ? "*" : "");
  }
  std::printf("recommended for p90 TTFT <= %g ms, p90 TPOT <= %g ms (0 = no limit): %s\n",
              f.bench.slo.ttft_ms, f.bench.slo.tpot_ms,
              best ? points[*best].setting.c_str() : "none meets the SLO");
}

// WORK/sweep.json (grid, workload, seed, every run's summary, frontier, recommendation) and
// WORK/frontier.svg (throughput against p90 TTFT, all points and the frontier line).
void WriteReport(const SweepFlags& f, const std::string& workload_name,
                 const std::vector<loadgen::SweepPoint>& points,
                 const std::vector<size_t>& frontier, std::optional<size_t> best,
                 const nlohmann::json& runs) {
  nlohmann::json frontier_json = nlohmann::json::array();
  loadgen::Series all{"all settings", {}, false}, line{"Pareto frontier", {}};
  for (const auto& p : points) {
    if (!p.failed) all.points.push_back({p.throughput, p.ttft_p90_ms});
  }
  for (size_t i : frontier) {
    frontier_json.push_back(points[i].setting);
    line.points.push_back({points[i].throughput, points[i].ttft_p90_ms});
  }
  const nlohmann::json report = {
      {"grid", f.grid},
      {"workload", workload_name},
      {"seed", f.bench.seed},
      {"runs", runs},
      {"frontier", frontier_json},
      {"recommended", best ? nlohmann::json(points[*best].setting) : nlohmann::json()}};
  std::ofstream(f.work + "/sweep.json") << report.dump(2) << "\n";
  std::ofstream(f.work + "/frontier.svg") << loadgen::LinePlotSvg(
      "k3 sweep: " + f.grid, "output tokens/s", "TTFT p90 (ms)", {all, line});
  std::fprintf(stderr, "wrote %s/sweep.json and %s/frontier.svg\n", f.work.c_str(), f.work.c_str());
}

int RunSweep(SweepFlags& f) {
  auto dims = loadgen::ParseGrid(f.grid, kSweepable);
  if (!dims.ok()) {
    const base::Status error = base::InvalidArgument("--grid " + dims.status().message());
    std::fprintf(stderr, "k3 sweep: %s\n", error.ToString().c_str());
    return 2;
  }
  auto workload = BuildWorkload(f.bench);
  if (!workload.ok())
    return std::fprintf(stderr, "k3 sweep: %s\n", workload.status().ToString().c_str()), 2;
  std::filesystem::create_directories(f.work);
  const std::vector<loadgen::GridPoint> grid = loadgen::ExpandGrid(*dims);
  std::vector<loadgen::SweepPoint> points;
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i = 0; i < grid.size(); ++i) {
    std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, grid.size(), grid[i].label.c_str());
    points.push_back(MeasurePoint(f, *workload, grid[i], i, &runs));
  }
  const auto frontier = loadgen::ParetoFrontier(points);
  const auto best = loadgen::Recommend(points, f.bench.slo.ttft_ms, f.bench.slo.tpot_ms);
  PrintTable(f, points, frontier, best);
  WriteReport(f, workload->name, points, frontier, best, runs);
  return frontier.empty() ? 1 : 0;
}

}  // namespace

CommandFn AddSweepCommand(CLI::App& app) {
  auto f = std::make_shared<SweepFlags>();
  app.add_option("--grid", f->grid,
                 "Settings to combine: NAME=V1,V2;NAME=... (k3 serve flags: max-batched-tokens, "
                 "max-running, "
                 "state-checkpoint-interval, checkpoint-memory-fraction, cache-memory, threads, "
                 "block-size, "
                 "max-model-len)")
      ->capture_default_str();
  app.add_option("--model", f->model,
                 "Checkpoint folder for k3 serve (default: the embedded demo checkpoint)");
  app.add_option("--serve-args", f->serve_args, "More k3 serve flags for every point")
      ->capture_default_str();
  app.add_option("--dataset", f->bench.dataset, "As k3 bench serve")->capture_default_str();
  app.add_option("--num-requests", f->bench.num_requests, "Conversations per point")
      ->capture_default_str();
  app.add_option("--concurrency", f->bench.concurrency, "Closed loop: requests in flight")
      ->capture_default_str();
  app.add_option("--request-rate", f->rate, "Open loop: conversations per second (0: all at once)")
      ->capture_default_str();
  app.add_option("--max-tokens", f->bench.max_tokens, "Output tokens per request")
      ->capture_default_str();
  app.add_option("--input-words", f->bench.input_words, "random: prompt words MIN:MAX")
      ->capture_default_str();
  app.add_option("--turns", f->bench.turns, "multi-turn: turns per conversation")
      ->capture_default_str();
  app.add_option("--system-words", f->bench.system_words, "multi-turn: shared prefix words")
      ->capture_default_str();
  app.add_option("--slo-ttft-ms", f->bench.slo.ttft_ms, "SLO for the recommendation: p90 TTFT")
      ->capture_default_str();
  app.add_option("--slo-tpot-ms", f->bench.slo.tpot_ms, "SLO for the recommendation: p90 TPOT")
      ->capture_default_str();
  app.add_option("--seed", f->bench.seed, "Workload seed (the same for every point)")
      ->capture_default_str();
  app.add_option("--work", f->work, "Folder for server logs, sweep.json and frontier.svg")
      ->capture_default_str();
  f->bench.no_progress = true;
  return [f] { return RunSweep(*f); };
}

}  // namespace k3::app
