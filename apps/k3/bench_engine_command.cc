// k3 bench engine: the serving engine in-process (no HTTP) on the synthetic K3-shaped benchmark
// model. Prints
// - throughput at several concurrency levels, as a speed-up over concurrency 1 (requests one at a
//   time), with the share of step time spent in the scheduler rather than the forward pass;
// - time to first token of a long prompt cold vs with a cached prefix (prefix cache + KDA
//   checkpoint), as a speed-up;
// - memory held by KDA state checkpoints vs latent-cache pages after that prompt, per checkpoint
//   interval.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include "apps/k3/bench_report.h"
#include "apps/k3/commands.h"
#include "apps/k3/engine_flags.h"
#include "apps/k3/numa_flag.h"
#include "base/log.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "kernels/roofline.h"
#include "model/testing/bench_checkpoint.h"

namespace k3::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchEngineFlags {
  std::string model;
  std::string cache_dir = "build/bench-models";
  std::vector<int> concurrency = {1, 4, 16, 64};
  int prompt_len = 32;
  int output_len = 32;
  int waves = 2;  // requests per level = waves x concurrency (at least 4)
  int ttft_prompt = 4096;
  int ttft_cached = 3584;
  std::vector<int> intervals = {0, 256, 1024};
  size_t threads = 0;
  int numa_node = -1;
  EngineFlags engine;
};

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<int32_t> RandomIds(std::mt19937_64& rng, int n, int64_t vocab) {
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = static_cast<int32_t>(3 + rng() % (vocab - 3));
  return ids;
}

// Keeps `concurrency` requests in flight until `total` have finished; returns per-request TTFT.
struct LoadResult {
  double seconds = 0;
  int64_t output_tokens = 0, prompt_tokens = 0;
  double mean_ttft = 0;
};

LoadResult RunClosedLoop(engine::Engine& engine, int concurrency, int total, int prompt_len,
                         int output_len, std::mt19937_64& rng) {
  std::mutex mutex;
  std::condition_variable done_cv;
  int submitted = 0, finished = 0;
  double ttft_sum = 0;
  LoadResult result;
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < total; ++i)
    prompts.push_back(RandomIds(rng, prompt_len, engine.info().vocab_size));
  engine::SamplingParams params;
  params.temperature = 0;
  params.max_tokens = output_len;
  params.ignore_eos = true;
  const auto start = Clock::now();
  std::function<void()> submit_one;
  submit_one = [&] {
    const int i = submitted++;
    const auto sent = Clock::now();
    auto first = std::make_shared<bool>(true);
    auto id = engine.Submit({prompts[i], params, [&, sent, first](const engine::RequestOutput& o) {
                               std::lock_guard lock(mutex);
                               if (*first && !o.tokens.empty()) {
                                 *first = false;
                                 ttft_sum += SecondsSince(sent);
                               }
                               result.output_tokens += static_cast<int64_t>(o.tokens.size());
                               if (!o.finished()) return;
                               result.prompt_tokens += o.prompt_tokens;
                               ++finished;
                               if (submitted < total) submit_one();
                               done_cv.notify_all();
                             }});
    K3_CHECK(id.ok()) << id.status().ToString();
  };
  {
    std::lock_guard lock(mutex);
    for (int i = 0; i < std::min(concurrency, total); ++i) submit_one();
  }
  std::unique_lock lock(mutex);
  done_cv.wait(lock, [&] { return finished == total; });
  result.seconds = SecondsSince(start);
  result.mean_ttft = ttft_sum / total;
  return result;
}

// Time from submission to the first token of one request.
double TimeToFirstToken(engine::Engine& engine, std::vector<int32_t> prompt, int64_t* cached) {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  double ttft = 0;
  engine::SamplingParams params;
  params.temperature = 0;
  params.max_tokens = 1;
  const auto start = Clock::now();
  auto id = engine.Submit({std::move(prompt), params, [&](const engine::RequestOutput& o) {
                             std::lock_guard lock(mutex);
                             if (!o.finished()) return;
                             ttft = SecondsSince(start);
                             *cached = o.cached_tokens;
                             done = true;
                             cv.notify_all();
                           }});
  K3_CHECK(id.ok()) << id.status().ToString();
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return done; });
  return ttft;
}

// Outputs are delivered inside a step; the metrics are published right after it. Waits for them.
engine::EngineMetrics SettledMetrics(const engine::Engine& engine, int64_t finished) {
  for (;;) {
    engine::EngineMetrics m = engine.metrics();
    if (m.counters.finished >= finished && m.counters.running == 0) return m;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::unique_ptr<engine::Engine> MakeBenchEngine(std::shared_ptr<const model::Model> model,
                                                engine::EngineConfig config,
                                                const model::ForwardOptions& options) {
  auto engine =
      engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model, options), config);
  K3_CHECK(engine.ok()) << engine.status().ToString();
  (*engine)->Start();
  return std::move(engine).value();
}

void ThroughputTable(const BenchEngineFlags& f, std::shared_ptr<const model::Model> model) {
  std::mt19937_64 rng(1);
  Table table({"concurrency", "requests", "output tok/s", "total tok/s", "mean TTFT s",
               "scheduler % of step", "speed-up vs 1"});
  double baseline = 0;
  for (int c : f.concurrency) {
    engine::EngineConfig config = f.engine.config;
    config.max_running = std::max(config.max_running, c);
    config.max_batched_tokens = std::max(config.max_batched_tokens, c);
    auto engine = MakeBenchEngine(model, config, f.engine.runner_options());
    const int total = std::max(4, f.waves * c);
    K3_LOG(kInfo) << "throughput: concurrency " << c << ", " << total << " requests of "
                  << f.prompt_len << " + " << f.output_len << " tokens";
    const LoadResult r = RunClosedLoop(*engine, c, total, f.prompt_len, f.output_len, rng);
    const auto m = SettledMetrics(*engine, total);
    const double out_tps = r.output_tokens / r.seconds;
    if (baseline == 0) baseline = out_tps;
    table.Row({std::to_string(c), std::to_string(total), Fixed(out_tps),
               Fixed((r.output_tokens + r.prompt_tokens) / r.seconds), Fixed(r.mean_ttft, 2),
               Fixed(100.0 * m.scheduler_seconds / m.busy_seconds, 2), Ratio(out_tps, baseline)});
  }
  table.Print();
}

void PrefixTables(const BenchEngineFlags& f, std::shared_ptr<const model::Model> model) {
  std::mt19937_64 rng(2);
  const auto prompt = RandomIds(rng, f.ttft_prompt, model->config().vocab);
  auto second = prompt;  // same first ttft_cached tokens, different rest
  const auto tail = RandomIds(rng, f.ttft_prompt - f.ttft_cached, model->config().vocab);
  std::copy(tail.begin(), tail.end(), second.begin() + f.ttft_cached);

  Table memory({"checkpoint interval", "checkpoints", "checkpoint MiB", "cached page MiB",
                "checkpoints / pages"});
  Table ttft({"prompt", "cached prefix", "interval", "TTFT s", "speed-up"});
  for (int interval : f.intervals) {
    engine::EngineConfig config = f.engine.config;
    config.state_checkpoint_interval = interval;
    auto engine = MakeBenchEngine(model, config, f.engine.runner_options());
    K3_LOG(kInfo) << "prefix cache: " << f.ttft_prompt << "-token prompt, checkpoint interval "
                  << interval;
    int64_t cached = 0;
    const double cold = TimeToFirstToken(*engine, prompt, &cached);
    const auto m = SettledMetrics(*engine, 1);
    const auto& layout = engine->layout();
    const double ckpt_mib = m.counters.cache.checkpoints * double(layout.slot_bytes) / (1 << 20);
    const double page_mib =
        (m.counters.cache.idle_cached_blocks + m.counters.cache.referenced_blocks) *
        double(layout.block_bytes) / (1 << 20);
    memory.Row({std::to_string(interval), std::to_string(m.counters.cache.checkpoints),
                Fixed(ckpt_mib), Fixed(page_mib), Fixed(ckpt_mib / page_mib, 2)});
    if (interval == f.intervals.front()) {
      ttft.Row({std::to_string(f.ttft_prompt), "0 (cold)", std::to_string(interval), Fixed(cold, 2),
                "1.0x"});
    }
    if (interval == 0 || f.ttft_cached % interval != 0) continue;  // no checkpoint at the prefix
    K3_LOG(kInfo) << "prefix cache: same prompt with a different last "
                  << f.ttft_prompt - f.ttft_cached << " tokens";
    const double warm = TimeToFirstToken(*engine, second, &cached);
    ttft.Row({std::to_string(f.ttft_prompt), std::to_string(cached), std::to_string(interval),
              Fixed(warm, 2), Ratio(cold, warm)});
  }
  std::printf("\ntime to first token\n");
  ttft.Print();
  std::printf("\nmemory after one %d-token prompt\n", f.ttft_prompt);
  memory.Print();
}

int RunBenchEngine(BenchEngineFlags& f) {
  if (auto s = f.engine.Finish(); !s.ok()) {
    K3_LOG(kError) << s.ToString();
    return 2;
  }
  if (auto s = ApplyNumaNode(f.numa_node); !s.ok()) {
    K3_LOG(kError) << s.ToString();
    return 2;
  }
  base::ThreadPool pool(f.threads);
  const std::string dir = f.model.empty() ? f.cache_dir + "/k3-mxfp4" : f.model;
  auto loaded = model::testing::LoadOrMakeBenchModel(dir, model::testing::BenchFamily::kK3, &pool);
  if (!loaded.ok()) {
    K3_LOG(kError) << loaded.status().ToString();
    return 1;
  }
  std::shared_ptr<const model::Model> model = std::move(loaded).value();
  const auto& c = model->config();
  std::printf("%s\n", kernels::MachineLine(pool.parallelism()).c_str());
  std::printf("model %s: hidden %d, %d layers (%d KDA, %d MLA), %d experts top-%d, %zu threads\n\n",
              dir.c_str(), c.hidden, c.num_layers, c.num_kda_layers(), c.num_mla_layers(),
              c.moe.num_experts, c.moe.top_k, pool.parallelism());
  std::printf("throughput (closed loop, greedy, %d prompt + %d output tokens per request)\n",
              f.prompt_len, f.output_len);
  ThroughputTable(f, model);
  PrefixTables(f, model);
  return 0;
}

std::vector<int> ParseInts(const std::string& text) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    out.push_back(std::stoi(text.substr(at, comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace

CommandFn AddBenchEngineCommand(CLI::App& app) {
  auto f = std::make_shared<BenchEngineFlags>();
  auto levels = std::make_shared<std::string>("1,4,16,64");
  auto intervals = std::make_shared<std::string>("0,256,1024");
  app.add_option("--model", f->model,
                 "Checkpoint folder (default: generate the K3-shaped benchmark model)");
  app.add_option("--cache-dir", f->cache_dir, "Where generated benchmark models are kept")
      ->capture_default_str();
  app.add_option("--concurrency", *levels, "Concurrency levels")->capture_default_str();
  app.add_option("--prompt-len", f->prompt_len, "Prompt tokens per request")->capture_default_str();
  app.add_option("--output-len", f->output_len, "Output tokens per request")->capture_default_str();
  app.add_option("--waves", f->waves, "Requests per level = waves x concurrency")
      ->capture_default_str();
  app.add_option("--ttft-prompt", f->ttft_prompt, "Long prompt for the prefix-cache test")
      ->capture_default_str();
  app.add_option("--ttft-cached", f->ttft_cached, "Of which this many tokens are cached")
      ->capture_default_str();
  app.add_option("--intervals", *intervals, "KDA checkpoint intervals to compare")
      ->capture_default_str();
  app.add_option("--threads", f->threads, "Worker threads (0 = all cores)");
  AddNumaNodeFlag(app, &f->numa_node);
  AddEngineFlags(app, &f->engine);
  return [f, levels, intervals]() {
    f->concurrency = ParseInts(*levels);
    f->intervals = ParseInts(*intervals);
    return RunBenchEngine(*f);
  };
}

}  // namespace k3::app
