// `k3 bench serve`: drives an OpenAI-compatible endpoint with streamed requests (src/loadgen)
// and prints throughput, TTFT/TPOT/ITL/end-to-end distributions, goodput under SLOs, errors by
// type, the prefix hit rate and the client's own CPU cost. Several --request-rate values give a
// latency-vs-throughput curve (--plot FILE.svg); --json FILE keeps every figure.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/k3/bench_serve.h"
#include "apps/k3/commands.h"
#include "http/server.h"
#include "loadgen/plot.h"
#include "loadgen/stub_endpoint.h"

namespace k3::app {
namespace {

std::vector<double> ParseRates(const std::string& text) {
  std::vector<double> rates;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "inf") {
      rates.push_back(0);
    } else if (!item.empty()) {
      rates.push_back(std::stod(item));
    }
  }
  return rates;
}

int WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "k3 bench serve: cannot write %s\n", path.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", path.c_str());
  return 0;
}

int RunBenchServe(BenchServeFlags& f) {
  // --stub: an in-process endpoint that costs almost nothing, to measure the client's ceiling.
  std::unique_ptr<loadgen::StubEndpoint> stub;
  std::unique_ptr<http::Server> stub_server;
  std::thread stub_thread;
  if (f.stub) {
    stub = std::make_unique<loadgen::StubEndpoint>();
    http::ServerConfig config;
    config.port = 0;
    stub_server = std::make_unique<http::Server>(config, stub.get());
    if (auto s = stub_server->Listen(); !s.ok())
      return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    stub_thread = std::thread([&] { stub_server->Run(); });
    f.url = "http://127.0.0.1:" + std::to_string(stub_server->port());
  }
  auto workload = BuildWorkload(f);
  int rc = 0;
  if (!workload.ok()) {
    std::fprintf(stderr, "k3 bench serve: %s\n", workload.status().ToString().c_str());
    rc = 2;
  } else {
    std::vector<double> rates =
        f.request_rates.empty() ? std::vector<double>{0} : ParseRates(f.request_rates);
    nlohmann::json runs = nlohmann::json::array();
    loadgen::Series ttft{"TTFT p50", {}}, ttft90{"TTFT p90", {}}, tpot{"TPOT p50", {}};
    for (size_t i = 0; i < rates.size(); ++i) {
      const double rate = rates[i];
      // Each point gets fresh texts (seed + i), so earlier points do not warm the prefix cache.
      BenchServeFlags point = f;
      point.seed = f.seed + i;
      auto texts = i == 0 ? workload : BuildWorkload(point);
      if (!texts.ok()) {
        std::fprintf(stderr, "k3 bench serve: %s\n", texts.status().ToString().c_str());
        rc = 2;
        break;
      }
      auto result = BenchOnce(point, *texts, rate);
      if (!result.ok()) {
        std::fprintf(stderr, "k3 bench serve: %s\n", result.status().ToString().c_str());
        rc = 1;
        break;
      }
      std::printf("%s", loadgen::FormatSummary(result->summary, result->title).c_str());
      std::fflush(stdout);
      runs.push_back({{"request_rate", rate},
                      {"concurrency", f.concurrency},
                      {"summary", loadgen::ToJson(result->summary)}});
      const double x = result->summary.output_tokens_per_s;
      ttft.points.push_back({x, result->summary.ttft.p50});
      ttft90.points.push_back({x, result->summary.ttft.p90});
      tpot.points.push_back({x, result->summary.tpot.p50});
      if (result->summary.failed > 0 && f.fail_on_errors) rc = 1;
    }
    if (!f.json.empty() && rc != 2) {
      rc = std::max(
          rc,
          WriteFile(
              f.json,
              nlohmann::json{{"url", f.url}, {"dataset", workload->name}, {"runs", runs}}.dump(2) +
                  "\n"));
    }
    if (!f.plot.empty() && rc != 2) {
      rc = std::max(
          rc, WriteFile(f.plot, loadgen::LinePlotSvg(
                                    "k3 bench serve: " + workload->name + " on " + f.url,
                                    "output tokens/s", "milliseconds", {ttft, ttft90, tpot})));
    }
  }
  if (stub_server) {
    stub_server->Shutdown();
    stub_thread.join();
  }
  return rc;
}

}  // namespace

CommandFn AddBenchServeCommand(CLI::App& app) {
  auto f = std::make_shared<BenchServeFlags>();
  app.add_option(
      "--url", f->url,
      "Endpoint (http://HOST:PORT of k3 serve, k3 route or any OpenAI-compatible server)");
  app.add_option("--dataset", f->dataset,
                 "random | sharegpt | multi-turn | mooncake | a file (.json ShareGPT, .jsonl "
                 "Mooncake trace)")
      ->capture_default_str();
  app.add_option("--num-requests", f->num_requests,
                 "Conversations to send (multi-turn: each has --turns requests)")
      ->capture_default_str();
  app.add_option("--concurrency", f->concurrency, "Closed loop: requests in flight (0 = no limit)")
      ->capture_default_str();
  app.add_option("--request-rate", f->request_rates,
                 "Open loop: conversations per second, a comma list for a latency-vs-throughput "
                 "curve (inf = all at once)");
  app.add_option("--burstiness", f->burstiness,
                 "Gamma shape of arrival gaps (1 = Poisson, < 1 burstier)")
      ->capture_default_str();
  app.add_flag("--trace-times", f->trace_times,
               "Mooncake: send at the trace's timestamps (times --time-scale)");
  app.add_option("--time-scale", f->time_scale, "Mooncake: multiply the timestamps")
      ->capture_default_str();
  app.add_option("--input-words", f->input_words, "random: prompt words, MIN:MAX")
      ->capture_default_str();
  app.add_option("--max-tokens", f->max_tokens,
                 "Output tokens per request (random/multi-turn; cap for others)")
      ->capture_default_str();
  app.add_option("--turns", f->turns, "multi-turn: turns per conversation")->capture_default_str();
  app.add_option("--system-words", f->system_words, "multi-turn: words of the shared system prompt")
      ->capture_default_str();
  app.add_option("--words-per-block", f->words_per_block,
                 "mooncake: words per 512-token hash block")
      ->capture_default_str();
  app.add_option("--slo-ttft-ms", f->slo.ttft_ms, "Goodput: TTFT limit (0 = none)")
      ->capture_default_str();
  app.add_option("--slo-tpot-ms", f->slo.tpot_ms, "Goodput: TPOT limit (0 = none)")
      ->capture_default_str();
  app.add_option("--slo-e2e-ms", f->slo.e2e_ms, "Goodput: end-to-end limit (0 = none)")
      ->capture_default_str();
  app.add_option("--model", f->model, "Model name sent in requests")->capture_default_str();
  app.add_option("--api-key", f->api_key, "Bearer token");
  app.add_flag("--completions", f->completions, "Use /v1/completions (single-turn datasets)");
  app.add_option("--seed", f->seed, "Workload and arrival seed")->capture_default_str();
  app.add_option("--json", f->json, "Write every figure as JSON");
  app.add_option("--plot", f->plot,
                 "Write an SVG of TTFT/TPOT vs output tokens/s (one point per --request-rate)");
  app.add_flag("--stub", f->stub,
               "Bench an in-process stub endpoint (measures the client's own ceiling)");
  app.add_flag("--no-progress", f->no_progress, "No progress bar");
  app.add_flag("--fail-on-errors", f->fail_on_errors, "Exit 1 when any request failed");
  return [f] { return RunBenchServe(*f); };
}

}  // namespace k3::app
