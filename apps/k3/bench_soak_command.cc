// `k3 bench soak`: a soak test of k3 serve. Starts one (or uses --url), drives mixed traffic for
// --duration (loadgen/soak_runner.h), then drains and checks the server: any unexpected status,
// malformed response or connection failure, RSS growth beyond --rss-bound-mib after the warm-up,
// or any request, sequence, KV block or state slot still held (the /metrics gauges) fails.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/k3/commands.h"
#include "apps/k3/serve_child.h"
#include "loadgen/server_metrics.h"
#include "loadgen/soak_runner.h"

namespace k3::app {
namespace {

struct SoakFlags {
  std::string duration = "3m";
  std::string url;  // empty: start a k3 serve child
  std::string model;
  std::string serve_args;
  std::string work = "k3-soak";
  int pid = 0;
  int clients = 4;
  int max_tokens = 24;
  double rss_bound_mib = 64;
  double warmup_s = -1;  // < 0: a quarter of the duration, at most 30 s
  double drain_s = 15;
  double progress_s = 5;
  uint64_t seed = 1;
};

// "3m", "30s", "90" (seconds), "1h"; nullopt otherwise.
std::optional<double> ParseDurationSeconds(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0) return std::nullopt;
  const std::string unit(end);
  if (unit.empty() || unit == "s") return v;
  if (unit == "m") return v * 60;
  if (unit == "h") return v * 3600;
  return std::nullopt;
}

std::vector<std::string> SoakWords(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

int64_t MaxModelLen(const gateway::HostPort& target) {
  auto answer = gateway::HttpGet(target, "/v1/models", std::chrono::seconds(5));
  if (!answer.ok() || answer->status != 200) return 0;
  const auto j = nlohmann::json::parse(answer->body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) return 0;
  return j["data"][0].value("max_model_len", int64_t{0});
}

// Polls /metrics until nothing is held or `drain_s` passes; returns what is still held.
std::vector<std::string> DrainAndCheck(const gateway::HostPort& target, double drain_s) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(drain_s * 1000));
  std::vector<std::string> left;
  do {
    left = loadgen::Leftovers(loadgen::ScrapeMetrics(target));
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  return left;
}

void PrintSoakProgress(const loadgen::SoakProgress& p) {
  std::fprintf(stderr, "  %5.0f s: %lld done, %lld failed, %d in flight", p.elapsed_s,
               static_cast<long long>(p.done), static_cast<long long>(p.failed), p.in_flight);
  if (p.rss_kib > 0)
    std::fprintf(stderr, ", server RSS %lld MiB", static_cast<long long>(p.rss_kib / 1024));
  std::fprintf(stderr, "\n");
}

int RunBenchSoak(const SoakFlags& f) {
  const auto duration = ParseDurationSeconds(f.duration);
  if (!duration) {
    std::fprintf(stderr, "k3 bench soak: --duration '%s': want e.g. 30s, 3m, 1h\n",
                 f.duration.c_str());
    return 2;
  }
  std::optional<std::pair<base::Subprocess, std::string>> child;
  std::string url = f.url;
  pid_t pid = f.pid;
  if (url.empty()) {
    std::filesystem::create_directories(f.work);
    std::vector<std::string> args = {"serve", "--port", "0"};
    if (!f.model.empty()) args.insert(args.end(), {"--model", f.model});
    for (const std::string& a : SoakWords(f.serve_args)) args.push_back(a);
    auto started = StartServe(args, f.work + "/serve");
    if (!started.ok()) {
      std::fprintf(stderr, "k3 bench soak: %s\n", started.status().ToString().c_str());
      return 1;
    }
    child.emplace(std::move(*started));
    url = child->second;
    pid = child->first.pid();
  }
  auto target = gateway::ParseHttpUrl(url);
  if (!target.ok()) {
    std::fprintf(stderr, "k3 bench soak: %s\n", target.status().ToString().c_str());
    return 2;
  }
  loadgen::SoakOptions options;
  options.target = *target;
  options.duration_s = *duration;
  options.clients = f.clients;
  options.server_pid = pid;
  options.progress_every_s = f.progress_s;
  options.seed = f.seed;
  options.context.max_tokens = f.max_tokens;
  options.context.max_model_len = MaxModelLen(*target);
  std::fprintf(stderr, "k3 bench soak: %s for %.0f s, %d clients, context %lld, server pid %d\n",
               url.c_str(), *duration, f.clients,
               static_cast<long long>(options.context.max_model_len), int(pid));
  const loadgen::SoakResult result = loadgen::RunSoak(options, PrintSoakProgress);
  const std::vector<std::string> left = DrainAndCheck(*target, f.drain_s);
  auto rss = result.rss;
  if (pid > 0) {
    if (auto kib = loadgen::ReadRssKib(pid)) rss.push_back({result.duration_s + f.drain_s, *kib});
  }
  const double warmup = f.warmup_s >= 0 ? f.warmup_s : std::min(30.0, *duration / 4);
  const auto verdict =
      loadgen::JudgeRss(rss, warmup, int64_t(f.rss_bound_mib * 1024), /*required=*/pid > 0);
  std::printf("k3 bench soak: %s, %.1f s, %d clients\n%s", url.c_str(), result.duration_s,
              f.clients, loadgen::FormatSoakTraffic(result).c_str());
  if (pid > 0) {
    std::printf(
        "server RSS MiB: start %.1f, after warm-up (%.0f s) %.1f, peak %.1f, end %.1f "
        "(bound: +%.0f MiB after warm-up)\n",
        verdict.start_kib / 1024.0, warmup, verdict.baseline_kib / 1024.0,
        verdict.peak_kib / 1024.0, verdict.end_kib / 1024.0, f.rss_bound_mib);
  } else {
    std::printf("server RSS: not checked (no --pid)\n");
  }
  std::printf("leftovers after the drain: %s\n", left.empty() ? "none" : "");
  for (const std::string& l : left) std::printf("  %s\n", l.c_str());
  bool failed =
      result.failed() > 0 || !left.empty() || !verdict.failure.empty() || result.sent() == 0;
  if (!verdict.failure.empty()) std::printf("FAIL: %s\n", verdict.failure.c_str());
  if (child) {
    child->first.Stop();
    const auto code = child->first.exit_code();
    if (!code || *code != 0) {
      std::printf("FAIL: k3 serve exited with %d (see %s/serve.log)\n", code ? *code : -1,
                  f.work.c_str());
      failed = true;
    }
  }
  std::printf("%s\n", failed ? "SOAK FAILED" : "SOAK PASSED");
  return failed ? 1 : 0;
}

}  // namespace

CommandFn AddBenchSoakCommand(CLI::App& app) {
  auto f = std::make_shared<SoakFlags>();
  app.footer(
      "Traffic: chat (streamed and not), completions, Anthropic messages (streamed), client "
      "cancellations mid-stream, forced tool calls, json_schema outputs, n=3, and bad requests "
      "(malformed JSON, invalid fields, an over-long prompt, Anthropic without max_tokens: each "
      "must get its 400 in the API's error shape). Fails (exit 1) on any unexpected status or "
      "malformed answer, server RSS growth beyond --rss-bound-mib after the warm-up, or any "
      "pending/running request, referenced KV block or state slot left after the drain.");
  app.add_option("--duration", f->duration, "How long to send traffic: 30s, 3m, 1h")
      ->capture_default_str();
  app.add_option("--url", f->url, "An already running k3 serve (default: start one on loopback)");
  app.add_option("--pid", f->pid, "With --url: the server's pid, to check its RSS");
  app.add_option("--model", f->model, "Checkpoint for the started server (default: the demo)");
  app.add_option("--serve-args", f->serve_args, "More flags for the started k3 serve");
  app.add_option("--work", f->work, "Folder for the started server's logs")->capture_default_str();
  app.add_option("--clients", f->clients, "Concurrent clients")->capture_default_str();
  app.add_option("--max-tokens", f->max_tokens, "max_tokens of plain generations")
      ->capture_default_str();
  app.add_option("--rss-bound-mib", f->rss_bound_mib,
                 "Allowed server RSS growth after the warm-up, MiB")
      ->capture_default_str();
  app.add_option("--warmup", f->warmup_s,
                 "Seconds before the RSS baseline (default: a quarter of the duration, <= 30)");
  app.add_option("--drain", f->drain_s, "Seconds to wait for the server to free everything")
      ->capture_default_str();
  app.add_option("--progress-every", f->progress_s, "Seconds between progress lines (0: none)")
      ->capture_default_str();
  app.add_option("--seed", f->seed, "Request seed")->capture_default_str();
  return [f] { return RunBenchSoak(*f); };
}

}  // namespace k3::app
