// k3 bench model: decode and prefill speed of the model runtime on a synthetic checkpoint of one
// family (K3 by default), each as a fraction of a limit measured in the same run: decode against
// (weight bytes a step reads / read bandwidth), prefill against the peak of the instruction set
// its GEMMs run on (FP32 FMA; vdpbf16ps under --gemm-precision bf16 without AMX). Also shows what
// chunked prefill saves by computing only the logit rows it needs, and compares MXFP4 routed
// experts with BF16.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "apps/k3/bench_model_cost.h"
#include "apps/k3/bench_model_quant.h"
#include "apps/k3/bench_report.h"
#include "apps/k3/bench_vs_llama_cpp.h"
#include "apps/k3/commands.h"
#include "apps/k3/engine_flags.h"
#include "apps/k3/numa_flag.h"
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
  std::string family = "k3";
  std::string cache_dir = "build/bench-models";
  std::vector<int> batches = {1, 8, 32};
  std::vector<int> prefill = {512, 4096};
  int chunked_prefill = 1024;  // a prompt prefilled in chunks, as the engine runs a long one
  int prefill_chunk = 64;
  int decode_steps = 8;
  int decode_rounds = 3;  // per batch, each after its own bandwidth reading (PrintDecode)
  bool compare_bf16 = true;
  size_t threads = 0;
  int numa_node = -1;
  std::string gemm_precision = "fp32";
  std::string expert_activations = "fp32";
  std::string weight_quant = "auto";
  model::WeightQuant quant = model::WeightQuant::kNone;  // weight_quant, resolved
  bool mmap_weights = false;
  std::string kv_cache_dtype = "auto";
  kernels::LatentDtype cache_dtype = kernels::LatentDtype::kBf16;  // from kv_cache_dtype
  int decode_context = 16;  // tokens prefilled before the timed decode steps
  LlamaCppFlags llama_cpp;  // --vs-llama-cpp
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Times `steps` decode steps of `batch` sequences after an untimed prefill of f.decode_context
// tokens each, each step asking for `rows` (0 or 1) logit rows per sequence.
double DecodeTokensPerSecond(const model::Model& m, const BenchModelFlags& f, int batch,
                             int rows = 1) {
  const auto& c = m.config();
  const int prompt = f.decode_context, page = 64, steps = f.decode_steps;
  const int pages_per_seq = (prompt + steps + page - 1) / page;
  model::KdaStatePool states(c, batch, &m.backend());
  model::MlaCache cache(c, batch * pages_per_seq, page, &m.backend(), f.cache_dtype);
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
  // Each sequence decodes its own tokens, as a real batch does: with one token for all, the
  // routing was more concentrated than real traffic's (a perf profile at batch 32 showed fewer
  // 3- and 4-token expert tiles), though the speed measured the same within noise.
  std::vector<int32_t> next(batch);
  auto start = Clock::now();
  for (int s = 0; s < steps; ++s) {
    for (int b = 0; b < batch; ++b) {
      next[b] = (b * 977 + s * 61 + 7) % c.vocab;
      seqs[b] = {{&next[b], 1}, prompt + s, b, pages[b], rows};
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
                                     bool logits_every_chunk, kernels::LatentDtype dtype) {
  const auto& c = m.config();
  const int page = 64;
  const int num_pages = (tokens + page - 1) / page;
  model::KdaStatePool states(c, 1, &m.backend());
  model::MlaCache cache(c, num_pages, page, &m.backend(), dtype);
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
double PrefillTokensPerSecond(const model::Model& m, int tokens, kernels::LatentDtype dtype) {
  return ChunkedPrefillTokensPerSecond(m, tokens, tokens, false, dtype);
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
  // GB/s one thread reads alone: printed, not a limit of the table. Where it times the threads is
  // below `bandwidth`, a core's own stream (its outstanding misses / memory latency) caps decode
  // before the memory does.
  double one_thread_bandwidth = 0;
  // GOP/s of vpdpbusd (two per 8-bit multiply-add, as FLOP/s count an FMA), measured where
  // integer products run; 0: not measured, FP32's peak bounds every product.
  double int8_peak = 0;
};

// Under --gemm-precision bf16 prefill is judged against its path's instruction: vdpbf16ps (2x FP32
// FMA's flops per instruction) or AMX tdpbf16ps chains. With integer products the vpdpbusd peak
// bounds their multiply-adds (CostOfStep says which).
Limits MeasureLimits(base::ThreadPool& pool, const kernels::ReadBandwidthProbe& probe,
                     bool integer_products) {
  K3_LOG(kInfo) << "measuring memory read bandwidth and peak FMA rates";
  Limits limits{probe.MeasureGBs(&pool), kernels::MeasurePeakFp32Gflops(&pool)};
  const std::string bf16_path = kernels::GetGemmPrecision() == kernels::GemmPrecision::kBf16
                                    ? kernels::MatMulBf16Path()
                                    : "none";
  limits.prefill_peak = bf16_path == "amx"           ? kernels::MeasurePeakAmxBf16Gflops(&pool)
                        : bf16_path == "avx512-bf16" ? kernels::MeasurePeakBf16Gflops(&pool)
                                                     : limits.peak;
  limits.one_thread_bandwidth = probe.MeasureGBs(nullptr);
  std::printf("%s\n", kernels::MachineLine(pool.parallelism()).c_str());
  std::printf("limits: read bandwidth %.1f GB/s (one thread alone %.1f), peak FP32 %.1f GFLOP/s",
              limits.bandwidth, limits.one_thread_bandwidth, limits.peak);
  if (bf16_path != "none") {
    std::printf(", peak %s %.1f GFLOP/s (prefill's)",
                bf16_path == "amx" ? "AMX tdpbf16ps" : "vdpbf16ps", limits.prefill_peak);
  }
  std::printf(", %zu threads\n", pool.parallelism());
  if (integer_products && kernels::MatMulHasInt8Dot()) {
    limits.int8_peak = kernels::MeasurePeakInt8Gops(&pool);
    std::printf(
        "integer products: peak %s dots %.1f GOP/s; the roofline's compute term takes the "
        "products that run on integer dots at this peak, the others at FP32's\n",
        kernels::MatMulInt8DotName(), limits.int8_peak);
  }
  std::printf("\n");
  return limits;
}

// What a timed decode step of `batch` sequences moves: the weights, and each sequence's cache and
// states at the timed steps' mean context (--decode-context, plus half the steps).
StepCost DecodeCost(const model::Model& m, const BenchModelFlags& f, int batch) {
  return CostOfStep(m, batch, f.decode_context + f.decode_steps / 2, f.cache_dtype);
}

// Seconds a decode step of `batch` tokens needs at the measured bandwidth or compute limit.
double RooflineStepSeconds(const model::Model& m, const BenchModelFlags& f, int batch,
                           const Limits& limits) {
  const StepCost cost = DecodeCost(m, f, batch);
  const double int8_macs = limits.int8_peak > 0 ? cost.int8_macs_per_token : 0.0;
  const double compute_s = 2.0 * batch *
                           ((cost.macs_per_token - int8_macs) / (limits.peak * 1e9) +
                            (int8_macs > 0 ? int8_macs / (limits.int8_peak * 1e9) : 0.0));
  return std::max(cost.bytes / (limits.bandwidth * 1e9), compute_s);
}

// Each batch is timed f.decode_rounds times, each round right after its own bandwidth reading, so
// a round's fraction compares its steps with the memory system of the same seconds (this VM's
// reading moves between ~37 and ~80 GB/s from one minute to the next). The table gives medians
// and each figure's range over the rounds.
void PrintDecode(const model::Model& m, const BenchModelFlags& f, const Limits& limits,
                 base::ThreadPool& pool, const kernels::ReadBandwidthProbe& probe) {
  Table decode({"decode batch", "tokens/s", "tokens/s range", "ms/step", "MB read/step",
                "of which cache/state", "GB/s read", "roofline ms/step", "fraction range",
                "fraction of roofline"});
  for (int batch : f.batches) {
    K3_LOG(kInfo) << "decode, batch " << batch << " (" << f.decode_rounds << " rounds)";
    std::vector<double> tps, bandwidth, roof_ms, fraction;
    for (int round = 0; round < f.decode_rounds; ++round) {
      Limits now = limits;
      if (f.decode_rounds > 1) now.bandwidth = probe.MeasureGBs(&pool);
      tps.push_back(DecodeTokensPerSecond(m, f, batch));
      bandwidth.push_back(now.bandwidth);
      roof_ms.push_back(RooflineStepSeconds(m, f, batch, now) * 1e3);
      fraction.push_back(roof_ms.back() / (batch / tps.back() * 1e3));
      K3_LOG(kInfo) << "  round " << round + 1 << ": read bandwidth " << Fixed(now.bandwidth)
                    << " GB/s, " << Fixed(tps.back()) << " tokens/s, " << Fixed(fraction.back(), 2)
                    << " of the roofline";
    }
    const double median_tps = Median(tps);
    const StepCost cost = DecodeCost(m, f, batch);
    decode.Row({std::to_string(batch), Fixed(median_tps), Range(tps, 1),
                Fixed(batch / median_tps * 1e3, 2), Fixed(cost.bytes / 1e6),
                Fixed(cost.sequence_bytes / 1e6), Fixed(Median(bandwidth)),
                Fixed(Median(roof_ms), 2), Range(fraction, 2), Fixed(Median(fraction), 2)});
  }
  decode.Print();
}

void PrintPrefill(const model::Model& m, const BenchModelFlags& f, const Limits& limits) {
  Table prefill({"prefill tokens", "tokens/s", "GFLOP/s (weights)", "fraction of peak"});
  for (int tokens : f.prefill) {
    K3_LOG(kInfo) << "prefill, " << tokens << " tokens";
    const double tps = PrefillTokensPerSecond(m, tokens, f.cache_dtype);
    const double gflops = 2.0 * CostOfStep(m, 1).macs_per_token * tps / 1e9;
    prefill.Row({std::to_string(tokens), Fixed(tps), Fixed(gflops),
                 Fixed(gflops / limits.prefill_peak, 2)});
  }
  prefill.Print();
}

// Milliseconds one logit row adds to a forward pass (final norm + lm_head): batch-1 decode steps
// with and without their row, interleaved, best step time of each.
double LogitRowMs(const model::Model& m, const BenchModelFlags& f) {
  double with_row = 1e30, without = 1e30;
  for (int round = 0; round < 3; ++round) {
    with_row = std::min(with_row, 1e3 / DecodeTokensPerSecond(m, f, 1, 1));
    without = std::min(without, 1e3 / DecodeTokensPerSecond(m, f, 1, 0));
  }
  return with_row - without;
}

// The same chunked prefill twice, logits for every chunk then for the last only, and the cost of
// one logit row measured directly: what computing only the rows a step needs saves.
void PrintChunkedPrefill(const model::Model& m, const BenchModelFlags& f) {
  if (f.chunked_prefill <= 0 || f.prefill_chunk <= 0) return;
  const double row_ms = LogitRowMs(m, f);
  K3_LOG(kInfo) << "chunked prefill, " << f.chunked_prefill << " tokens in " << f.prefill_chunk
                << "-token chunks";
  const int n = f.chunked_prefill, chunk = f.prefill_chunk, chunks = (n + chunk - 1) / chunk;
  const double every = ChunkedPrefillTokensPerSecond(m, n, chunk, true, f.cache_dtype);
  const double last = ChunkedPrefillTokensPerSecond(m, n, chunk, false, f.cache_dtype);
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
  auto bf16 = model::testing::LoadOrMakeBenchModel(f.cache_dir + "/k3-bf16",
                                                   model::testing::BenchFamily::kK3Bf16, pool,
                                                   LoadOptionsOf(f.quant, f.mmap_weights));
  if (!bf16.ok()) {
    K3_LOG(kError) << bf16.status().ToString();
    return 1;
  }
  const double mx_tps = DecodeTokensPerSecond(m, f, 1);
  const double bf_tps = DecodeTokensPerSecond(**bf16, f, 1);
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

// The decode and prefill figures again, interleaved with llama.cpp's on the same checkpoint.
// The bandwidth is measured again before each round and the best reading is the roofline's: a
// single reading on a shared machine can come out low enough to put a run above its "limit".
int CompareWithLlamaCpp(const model::Model& m, const BenchModelFlags& f, const std::string& dir,
                        Limits limits, base::ThreadPool& pool,
                        const kernels::ReadBandwidthProbe& probe) {
  PeerComparison plan{f.batches, f.prefill, f.decode_context, f.decode_steps, pool.parallelism()};
  plan.before_round = [&] {
    limits.bandwidth = std::max(limits.bandwidth, probe.MeasureGBs(&pool));
  };
  plan.ours_decode = [&](int batch) { return DecodeTokensPerSecond(m, f, batch); };
  plan.ours_prefill = [&](int n) { return PrefillTokensPerSecond(m, n, f.cache_dtype); };
  plan.decode_roofline = [&](int b) { return b / RooflineStepSeconds(m, f, b, limits); };
  plan.prefill_peak = [&](int) {
    return limits.prefill_peak * 1e9 / (2.0 * CostOfStep(m, 1).macs_per_token);
  };
  const int code = PrintVsLlamaCpp(f.llama_cpp, dir, plan);
  std::printf("read bandwidth: best of %d readings, %.1f GB/s\n", f.llama_cpp.rounds + 1,
              limits.bandwidth);
  return code;
}

int RunBenchModel(BenchModelFlags& f) {
  auto quant = model::ParseWeightQuant(f.weight_quant);
  auto cache_dtype = ParseKvCacheDtype(f.kv_cache_dtype);
  auto family = model::testing::ParseBenchFamily(f.family);
  for (const base::Status& s : {ApplyNumaNode(f.numa_node), ApplyGemmPrecision(f.gemm_precision),
                                ApplyExpertActivations(f.expert_activations), quant.status(),
                                cache_dtype.status(), family.status()}) {
    if (!s.ok()) {
      K3_LOG(kError) << s.ToString();
      return 2;
    }
  }
  f.cache_dtype = *cache_dtype;
  f.quant = model::ResolveWeightQuant(*quant);  // after ApplyGemmPrecision: auto depends on it
  if (*quant == model::WeightQuant::kAuto) K3_LOG(kInfo) << model::DescribeAutoWeightQuant();
  base::ThreadPool pool(f.threads);
  const std::string dir =
      f.model.empty() ? f.cache_dir + "/" + model::testing::BenchFamilyDir(*family) : f.model;
  auto model = model::testing::LoadOrMakeBenchModel(dir, *family, &pool,
                                                    LoadOptionsOf(f.quant, f.mmap_weights));
  if (!model.ok()) {
    K3_LOG(kError) << model.status().ToString();
    return 1;
  }
  const model::Model& m = **model;
  if (f.quant != model::WeightQuant::kNone) {
    auto exact = model::Model::Load(dir, &pool, LoadOptionsOf({}, f.mmap_weights));
    if (!exact.ok()) {
      K3_LOG(kError) << exact.status().ToString();
      return 1;
    }
    // --expert-activations is process-wide: the reference model runs with it too.
    const std::string both =
        f.expert_activations == "fp32"
            ? ""
            : " (both models --expert-activations " + f.expert_activations + ")";
    PrintQuantError(**exact, m, 64, std::string(model::WeightQuantName(f.quant)) + both);
  }
  const auto& c = m.config();
  std::printf("model %s: %s, hidden %d, %d layers (%d KDA, %d MLA), %d experts top-%d\n",
              dir.c_str(), std::string(model::FamilyName(c.family)).c_str(), c.hidden, c.num_layers,
              c.num_kda_layers(), c.num_mla_layers(), c.moe.num_experts, c.moe.top_k);
  std::printf("latent cache %s (%ld bytes per token), decode after %d tokens\n",
              kernels::LatentDtypeName(f.cache_dtype),
              static_cast<long>(model::MlaCache::BytesPerToken(c, f.cache_dtype)),
              f.decode_context);
  const kernels::ReadBandwidthProbe probe;  // read again before every round: allocated once
  const Limits limits =
      MeasureLimits(pool, probe,
                    f.quant == model::WeightQuant::kInt8 ||
                        kernels::GetFourBitActivations() == kernels::FourBitActivations::kInt8);
  if (!f.llama_cpp.dir.empty()) return CompareWithLlamaCpp(m, f, dir, limits, pool, probe);
  PrintDecode(m, f, limits, pool, probe);
  std::printf("\n");
  PrintPrefill(m, f, limits);
  PrintChunkedPrefill(m, f);
  if (f.compare_bf16 && f.model.empty() && *family == model::testing::BenchFamily::kK3)
    return PrintBf16Compare(m, f, &pool);
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
                 "Checkpoint folder to measure (default: generate --family's ~2B model)");
  app.add_option("--family", f->family,
                 "Generated benchmark model: k3 (MXFP4 experts), k3-bf16, kimi-linear (BF16), "
                 "k2 (FP8 blocks), k25 (INT4 experts)")
      ->capture_default_str();
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
  app.add_option("--decode-rounds", f->decode_rounds,
                 "Timings per batch size, each right after its own bandwidth reading (medians "
                 "and ranges are printed; 1 = one timing against the first reading)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  app.add_flag("!--no-bf16-compare", f->compare_bf16, "Skip the MXFP4 vs BF16 expert comparison");
  app.add_option("--threads", f->threads, "Worker threads (0 = all cores)");
  AddNumaNodeFlag(app, &f->numa_node);
  AddGemmPrecisionFlag(app, &f->gemm_precision);
  AddExpertActivationsFlag(app, &f->expert_activations);
  AddWeightQuantFlag(app, &f->weight_quant);
  AddMmapWeightsFlag(app, &f->mmap_weights);
  AddKvCacheDtypeFlag(app, &f->kv_cache_dtype);
  app.add_option("--decode-context", f->decode_context, "Tokens prefilled before decode steps")
      ->capture_default_str();
  app.add_option("--vs-llama-cpp", f->llama_cpp.dir,
                 "llama.cpp source folder with a CPU build in build/bin: convert this model with "
                 "its convert_hf_to_gguf.py (once) and measure both, interleaved");
  app.add_option("--llama-cpp-rounds", f->llama_cpp.rounds, "Interleaved rounds of the comparison")
      ->capture_default_str();
  app.add_option("--llama-cpp-outtype", f->llama_cpp.outtype,
                 "GGUF dense weight type: auto (q8_0 for FP8-block checkpoints, else bf16), bf16, "
                 "q8_0")
      ->capture_default_str();
  return [f, batches, prefill]() {
    f->batches = ParseList(*batches);
    f->prefill = ParseList(*prefill);
    return RunBenchModel(*f);
  };
}

}  // namespace k3::app
