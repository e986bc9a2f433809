// k3 bench model: decode and prefill speed of the model runtime on a synthetic K3-shaped
// checkpoint, each as a fraction of a limit measured in the same run: decode against (weight bytes
// a step reads / read bandwidth), prefill against the peak of the instruction set its GEMMs run on
// (FP32 FMA; vdpbf16ps under --gemm-precision bf16 without AMX). Also shows what chunked prefill
// saves by computing only the logit rows it needs, and compares MXFP4 routed experts with BF16.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "apps/k3/bench_model_quant.h"
#include "apps/k3/bench_report.h"
#include "apps/k3/commands.h"
#include "apps/k3/engine_flags.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "kernels/cpu_backend.h"
#include "kernels/matmul.h"
#include "kernels/roofline.h"
#include "model/mlp_block.h"
#include "model/model.h"
#include "model/testing/bench_checkpoint.h"

namespace k3::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchModelFlags {
  std::string model;
  std::string cache_dir = "build/bench-models";
  std::vector<int> batches = {1, 8, 32};
  std::vector<int> prefill = {512, 4096};
  int chunked_prefill = 1024;  // a prompt prefilled in chunks, as the engine runs a long one
  int prefill_chunk = 64;
  int decode_steps = 8;
  bool compare_bf16 = true;
  size_t threads = 0;
  std::string gemm_precision = "fp32";
  std::string expert_activations = "fp32";
  std::string weight_quant = "none";
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

int64_t MatrixBytes(const model::WeightMatrix& w) {
  const int64_t n = w.rows * w.cols;
  switch (w.format) {
    case kernels::WeightFormat::kF32:
      return n * 4;
    case kernels::WeightFormat::kBF16:
    case kernels::WeightFormat::kF16:
      return n * 2;
    case kernels::WeightFormat::kMxfp4:
      return n / 2 + n / 32;
    case kernels::WeightFormat::kInt4:
      return n / 2 + n / 16;
    case kernels::WeightFormat::kInt8Block:
      return n + n / 16;
    case kernels::WeightFormat::kFp8Block:
      return n + n / (w.block * w.block) * 4;
  }
  return 0;
}

// Weight bytes and multiply-adds one decode step reads for `batch` sequences: every dense matrix,
// and per MoE layer the expected number of distinct experts top_k picks out of E for `batch`
// tokens (uniform routing): E (1 - (1 - k/E)^batch).
struct StepCost {
  double bytes = 0, macs_per_token = 0;
};

StepCost CostOfStep(const model::Model& m, int batch) {
  const auto& c = m.config();
  const auto& w = m.weights();
  StepCost cost;
  auto add = [&](const model::WeightMatrix& x, double share = 1.0) {
    cost.bytes += MatrixBytes(x) * share;
  };
  auto mlp = [&](const model::MlpWeights& x, double share = 1.0) {
    add(x.gate, share);
    add(x.up, share);
    add(x.down, share);
  };
  add(w.lm_head);
  cost.macs_per_token += double(w.lm_head.rows) * w.lm_head.cols;
  for (const auto& l : w.layers) {
    for (const auto* x : {&l.kda.q, &l.kda.k, &l.kda.v, &l.kda.f_a, &l.kda.f_b, &l.kda.beta,
                          &l.kda.g, &l.kda.g_a, &l.kda.g_b, &l.kda.o, &l.mla.q_a, &l.mla.q_b,
                          &l.mla.q, &l.mla.kv_a, &l.mla.kv_b, &l.mla.g, &l.mla.o}) {
      add(*x);
      cost.macs_per_token += double(x->rows) * x->cols;
    }
    if (!l.moe) {
      mlp(l.dense);
      cost.macs_per_token += 3.0 * l.dense.gate.rows * l.dense.gate.cols;
      continue;
    }
    const auto& moe = l.moe_weights;
    add(moe.router);
    add(moe.latent_down);
    add(moe.latent_up);
    if (moe.has_shared) mlp(moe.shared);
    const double e = c.moe.num_experts, k = c.moe.top_k;
    const double distinct = e * (1.0 - std::pow(1.0 - k / e, batch));
    mlp(moe.experts[0], distinct);
    const auto& x = moe.experts[0];
    cost.macs_per_token +=
        double(moe.router.rows) * moe.router.cols +
        2.0 * moe.latent_down.rows * moe.latent_down.cols +
        (moe.has_shared ? 3.0 * moe.shared.gate.rows * moe.shared.gate.cols : 0) +
        k * 3.0 * x.gate.rows * x.gate.cols;
  }
  return cost;
}

// Times `steps` decode steps of `batch` sequences after a short untimed prefill of each, each
// step asking for `logit_rows` (0 or 1) logit rows per sequence.
double DecodeTokensPerSecond(const model::Model& m, int batch, int steps, int logit_rows = 1) {
  const auto& c = m.config();
  const int prompt = 16, page = 64;
  const int pages_per_seq = (prompt + steps + page - 1) / page;
  model::KdaStatePool states(c, batch, &m.backend());
  model::MlaCache cache(c, batch * pages_per_seq, page, &m.backend());
  model::Workspace workspace = m.MakeWorkspace();  // reused by every step, as a runner does
  std::vector<std::vector<int32_t>> pages(batch), tokens(batch);
  std::vector<model::SequenceInput> seqs(batch);
  model::ForwardResult out;
  for (int b = 0; b < batch; ++b) {
    pages[b].resize(pages_per_seq);
    std::iota(pages[b].begin(), pages[b].end(), b * pages_per_seq);
    tokens[b].resize(prompt);
    for (int t = 0; t < prompt; ++t) tokens[b][t] = (b * 131 + t * 17) % c.vocab;
    model::SequenceInput one{tokens[b], 0, b, pages[b], 1};
    K3_CHECK(m.Forward({&one, 1}, {}, {states, cache, workspace}, &out).ok());
  }
  std::vector<int32_t> next(batch, 7);
  auto start = Clock::now();
  for (int s = 0; s < steps; ++s) {
    for (int b = 0; b < batch; ++b) {
      seqs[b] = {{&next[b], 1}, prompt + s, b, pages[b], logit_rows};
    }
    K3_CHECK(m.Forward(seqs, {}, {states, cache, workspace}, &out).ok());
  }
  return batch * steps / Seconds(start);
}

// A `tokens`-token prompt prefilled in `chunk`-token forward passes, as the engine's token budget
// cuts a long prompt. With `logits_every_chunk`, every chunk's last row also goes through the
// final norm and lm_head (what the model did before SequenceInput::num_logit_rows); otherwise only
// the last chunk's, the one sampled from.
double ChunkedPrefillTokensPerSecond(const model::Model& m, int tokens, int chunk,
                                     bool logits_every_chunk) {
  const auto& c = m.config();
  const int page = 64;
  const int num_pages = (tokens + page - 1) / page;
  model::KdaStatePool states(c, 1, &m.backend());
  model::MlaCache cache(c, num_pages, page, &m.backend());
  model::Workspace workspace = m.MakeWorkspace();
  std::vector<int32_t> pages(num_pages), ids(tokens);
  std::iota(pages.begin(), pages.end(), 0);
  for (int t = 0; t < tokens; ++t) ids[t] = (t * 7919) % c.vocab;
  model::ForwardResult out;
  auto start = Clock::now();
  for (int begin = 0; begin < tokens; begin += chunk) {
    const int n = std::min(chunk, tokens - begin);
    const bool last = begin + n == tokens;
    model::SequenceInput seq{std::span(ids).subspan(begin, n), begin, 0, pages,
                             last || logits_every_chunk ? 1 : 0};
    K3_CHECK(m.Forward({&seq, 1}, {}, {states, cache, workspace}, &out).ok());
  }
  return tokens / Seconds(start);
}

// One forward pass over the whole prompt, logits for its last token.
double PrefillTokensPerSecond(const model::Model& m, int tokens) {
  return ChunkedPrefillTokensPerSecond(m, tokens, tokens, false);
}

// Seconds for the routed experts of one token in every MoE layer (top_k expert MLPs at latent
// width), best of a few repeats: the part MXFP4 is meant to speed up.
double RoutedExpertSeconds(const model::Model& m, base::ThreadPool* pool) {
  const auto& c = m.config();
  const int64_t width = c.moe.latent_dim > 0 ? c.moe.latent_dim : c.hidden;
  std::vector<float> x(width, 0.01f);
  // Each expert on one thread, with its thread's scratch (kernels::Workspace per pool slot).
  kernels::CpuBackend serial;
  std::vector<kernels::Workspace> workspaces;
  for (size_t i = 0; i < pool->parallelism(); ++i) workspaces.push_back(serial.MakeWorkspace());
  const kernels::ActivationShape activation = model::ActivationOf(c);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto start = Clock::now();
    for (const auto& l : m.weights().layers) {
      if (!l.moe) continue;
      // As the model runs them: one single-threaded task per expert.
      pool->ParallelForSlots(c.moe.top_k, [&](size_t e, size_t slot) {
        kernels::Workspace& ws = workspaces[slot];
        float* out = ws.arena().Allocate<float>(width);
        model::MlpForward({serial, ws, activation}, l.moe_weights.experts[e], x.data(), 1, out);
        ws.Reset();
      });
    }
    best = std::min(best, Seconds(start));
  }
  return best;
}

struct Limits {
  double bandwidth = 0, peak = 0;  // GB/s; FP32 FMA GFLOP/s
  double prefill_peak = 0;         // GFLOP/s of the instruction set prefill GEMMs run on
};

// vdpbf16ps does 2x FP32 FMA's flops per instruction; AMX has no measured peak: FP32's stands in.
Limits MeasureLimits(base::ThreadPool& pool) {
  K3_LOG(kInfo) << "measuring memory read bandwidth and peak FMA rates";
  Limits limits{kernels::MeasureReadBandwidthGBs(&pool), kernels::MeasurePeakFp32Gflops(&pool)};
  const bool dpbf16 = kernels::GetGemmPrecision() == kernels::GemmPrecision::kBf16 &&
                      std::string(kernels::MatMulBf16Path()) == "avx512-bf16";
  limits.prefill_peak = dpbf16 ? kernels::MeasurePeakBf16Gflops(&pool) : limits.peak;
  std::printf("limits: read bandwidth %.1f GB/s, peak FP32 %.1f GFLOP/s", limits.bandwidth,
              limits.peak);
  if (dpbf16) std::printf(", peak vdpbf16ps %.1f GFLOP/s (prefill's)", limits.prefill_peak);
  std::printf(", %zu threads\n\n", pool.parallelism());
  return limits;
}

void PrintDecode(const model::Model& m, const BenchModelFlags& f, const Limits& limits) {
  Table decode({"decode batch", "tokens/s", "ms/step", "MB read/step", "roofline ms/step",
                "fraction of roofline"});
  for (int batch : f.batches) {
    K3_LOG(kInfo) << "decode, batch " << batch;
    const double tps = DecodeTokensPerSecond(m, batch, f.decode_steps);
    const StepCost cost = CostOfStep(m, batch);
    const double step_ms = batch / tps * 1e3;
    const double roof_ms = std::max(cost.bytes / (limits.bandwidth * 1e9),
                                    2.0 * cost.macs_per_token * batch / (limits.peak * 1e9)) *
                           1e3;
    decode.Row({std::to_string(batch), Fixed(tps), Fixed(step_ms, 2), Fixed(cost.bytes / 1e6),
                Fixed(roof_ms, 2), Fixed(roof_ms / step_ms, 2)});
  }
  decode.Print();
}

void PrintPrefill(const model::Model& m, const BenchModelFlags& f, const Limits& limits) {
  Table prefill({"prefill tokens", "tokens/s", "GFLOP/s (weights)", "fraction of peak"});
  for (int tokens : f.prefill) {
    K3_LOG(kInfo) << "prefill, " << tokens << " tokens";
    const double tps = PrefillTokensPerSecond(m, tokens);
    const double gflops = 2.0 * CostOfStep(m, 1).macs_per_token * tps / 1e9;
    prefill.Row({std::to_string(tokens), Fixed(tps), Fixed(gflops),
                 Fixed(gflops / limits.prefill_peak, 2)});
  }
  prefill.Print();
}

// Milliseconds one logit row adds to a forward pass (final norm + lm_head): batch-1 decode steps
// with and without their row, interleaved, best step time of each.
double LogitRowMs(const model::Model& m, int steps) {
  double with_row = 1e30, without = 1e30;
  for (int round = 0; round < 3; ++round) {
    with_row = std::min(with_row, 1e3 / DecodeTokensPerSecond(m, 1, steps, 1));
    without = std::min(without, 1e3 / DecodeTokensPerSecond(m, 1, steps, 0));
  }
  return with_row - without;
}

// The same chunked prefill twice, logits for every chunk then for the last only, and the cost of
// one logit row measured directly: what computing only the rows a step needs saves.
void PrintChunkedPrefill(const model::Model& m, const BenchModelFlags& f) {
  if (f.chunked_prefill <= 0 || f.prefill_chunk <= 0) return;
  const double row_ms = LogitRowMs(m, f.decode_steps);
  K3_LOG(kInfo) << "chunked prefill, " << f.chunked_prefill << " tokens in " << f.prefill_chunk
                << "-token chunks";
  const int chunks = (f.chunked_prefill + f.prefill_chunk - 1) / f.prefill_chunk;
  const double every = ChunkedPrefillTokensPerSecond(m, f.chunked_prefill, f.prefill_chunk, true);
  const double last = ChunkedPrefillTokensPerSecond(m, f.chunked_prefill, f.prefill_chunk, false);
  std::printf("\nchunked prefill: %d tokens in %d chunks of %d\n", f.chunked_prefill, chunks,
              f.prefill_chunk);
  Table table({"logit rows", "tokens/s", "seconds"});
  table.Row({"every chunk (" + std::to_string(chunks) + ")", Fixed(every),
             Fixed(f.chunked_prefill / every, 2)});
  table.Row({"last chunk only (1)", Fixed(last), Fixed(f.chunked_prefill / last, 2)});
  table.Row({"speed-up", Ratio(last, every), ""});
  table.Print();
  const auto& c = m.config();
  std::printf(
      "one logit row (final norm + lm_head, %d x %d): %.2f ms, so these %d chunks skip %.0f ms; "
      "at Kimi K3's 163840 x 7168 a row reads %.2f GB of BF16 weights\n",
      c.vocab, c.hidden, row_ms, chunks, row_ms * (chunks - 1), 163840.0 * 7168 * 2 / 1e9);
}

int PrintBf16Compare(const model::Model& m, const BenchModelFlags& f, base::ThreadPool* pool) {
  auto bf16 = model::testing::LoadOrMakeBenchModel(f.cache_dir + "/k3-bf16", false, pool);
  if (!bf16.ok()) {
    K3_LOG(kError) << bf16.status().ToString();
    return 1;
  }
  const double mx_tps = DecodeTokensPerSecond(m, 1, f.decode_steps);
  const double bf_tps = DecodeTokensPerSecond(**bf16, 1, f.decode_steps);
  const double mx_experts = RoutedExpertSeconds(m, pool);
  const double bf_experts = RoutedExpertSeconds(**bf16, pool);
  std::printf("\nMXFP4 vs BF16 routed experts, batch-1 decode:\n");
  Table cmp({"", "MXFP4", "BF16", "speed-up"});
  cmp.Row({"whole model tokens/s", Fixed(mx_tps), Fixed(bf_tps), Ratio(mx_tps, bf_tps)});
  cmp.Row({"routed experts ms/token", Fixed(mx_experts * 1e3, 2), Fixed(bf_experts * 1e3, 2),
           Ratio(bf_experts, mx_experts)});
  cmp.Print();
  return 0;
}

int RunBenchModel(const BenchModelFlags& f) {
  for (auto s :
       {ApplyGemmPrecision(f.gemm_precision), ApplyExpertActivations(f.expert_activations)}) {
    if (!s.ok()) {
      K3_LOG(kError) << s.ToString();
      return 2;
    }
  }
  auto quant = model::ParseWeightQuant(f.weight_quant);
  if (!quant.ok()) {
    K3_LOG(kError) << quant.status().ToString();
    return 2;
  }
  base::ThreadPool pool(f.threads);
  const std::string dir = f.model.empty() ? f.cache_dir + "/k3-mxfp4" : f.model;
  auto model = model::testing::LoadOrMakeBenchModel(dir, true, &pool, *quant);
  if (!model.ok()) {
    K3_LOG(kError) << model.status().ToString();
    return 1;
  }
  const model::Model& m = **model;
  if (*quant != model::WeightQuant::kNone) {
    auto exact = model::Model::Load(dir, &pool);
    if (!exact.ok()) {
      K3_LOG(kError) << exact.status().ToString();
      return 1;
    }
    PrintQuantError(**exact, m, 64);
  }
  const auto& c = m.config();
  std::printf("model %s: %s, hidden %d, %d layers (%d KDA, %d MLA), %d experts top-%d\n",
              dir.c_str(), std::string(model::FamilyName(c.family)).c_str(), c.hidden, c.num_layers,
              c.num_kda_layers(), c.num_mla_layers(), c.moe.num_experts, c.moe.top_k);
  const Limits limits = MeasureLimits(pool);
  PrintDecode(m, f, limits);
  std::printf("\n");
  PrintPrefill(m, f, limits);
  PrintChunkedPrefill(m, f);
  if (f.compare_bf16 && f.model.empty()) return PrintBf16Compare(m, f, &pool);
  return 0;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

}  // namespace

CommandFn AddBenchModelCommand(CLI::App& app) {
  auto f = std::make_shared<BenchModelFlags>();
  auto batches = std::make_shared<std::string>("1,8,32");
  auto prefill = std::make_shared<std::string>("512,4096");
  app.add_option("--model", f->model,
                 "Checkpoint folder to measure (default: generate a K3-shaped ~2B model)");
  app.add_option("--cache-dir", f->cache_dir, "Where generated benchmark models are kept")
      ->capture_default_str();
  app.add_option("--batches", *batches, "Decode batch sizes")->capture_default_str();
  app.add_option("--prefill", *prefill, "Prefill lengths")->capture_default_str();
  app.add_option("--chunked-prefill", f->chunked_prefill,
                 "Prompt prefilled in chunks twice, logits every chunk vs last only (0 = skip)")
      ->capture_default_str();
  app.add_option("--prefill-chunk", f->prefill_chunk, "Chunk size of --chunked-prefill")
      ->capture_default_str();
  app.add_option("--decode-steps", f->decode_steps, "Timed decode steps per batch size")
      ->capture_default_str();
  app.add_flag("!--no-bf16-compare", f->compare_bf16, "Skip the MXFP4 vs BF16 expert comparison");
  app.add_option("--threads", f->threads, "Worker threads (0 = all cores)");
  AddGemmPrecisionFlag(app, &f->gemm_precision);
  AddExpertActivationsFlag(app, &f->expert_activations);
  AddWeightQuantFlag(app, &f->weight_quant);
  return [f, batches, prefill]() {
    f->batches = ParseList(*batches);
    f->prefill = ParseList(*prefill);
    return RunBenchModel(*f);
  };
}

}  // namespace k3::app
