// MLA attention at decode in the absorbed form (google-benchmark). Not a test: run
//   build/release/src/kernels/mla_benchmark [--benchmark_filter=...]
// One decode token per sequence for 1 or 8 sequences, each over `context` cached positions of a
// paged latent cache (fp32, bf16 or fp8 E4M3 entries), with the shape of Kimi K2 / DeepSeek-V3
// (64 heads, nope 128, rope 64, value 128, latent 512, BF16 kv_b) and of `k3 bench model`'s K2
// (16 heads). Reports the attention's floating-point rate (scores and weighted sums:
// 2 heads len (latent + rope + latent) per token, the two kv_b products on top) as a fraction of
// the FP32 FMA peak measured in the same run, and the cache bytes read per second as a fraction
// of the read bandwidth (each entry is read once per head group; what a perfect kernel reads once).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/thread_pool.h"
#include "kernels/cpu_backend.h"
#include "kernels/mla_layout.h"
#include "kernels/roofline.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

base::ThreadPool& Pool() {
  static base::ThreadPool pool(0);
  return pool;
}
double bandwidth_gbs = 0, peak_gflops = 0;

struct Case {
  const char* name;
  int64_t heads;
};

void BM_AbsorbedDecode(benchmark::State& state, const Case* c, LatentDtype dtype, int64_t seqs,
                       int64_t context) {
  const MlaShape shape{c->heads, 128, 64, 128, 512, 0.07f};
  const int64_t entry = shape.latent_dim + shape.rope_dim, page = 64;
  const int64_t pages_per_seq = (context + page - 1) / page;
  const int64_t entry_bytes = LatentEntryBytes(dtype, entry);
  base::AlignedBuffer<uint8_t> cache(seqs * pages_per_seq * page * entry_bytes, 0);
  const LatentCacheView view{cache.data(), page * entry_bytes, page, entry, dtype};
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<std::vector<int32_t>> pages(seqs);
  std::vector<PagedSequence> all_positions;
  std::vector<MlaSequence> decode;
  for (int64_t s = 0; s < seqs; ++s) {
    for (int64_t p = 0; p < pages_per_seq; ++p) pages[s].push_back(int32_t(s * pages_per_seq + p));
    all_positions.push_back({0, context, 0, pages[s]});
    decode.push_back({{s, 1, context - 1, pages[s]}, MlaForm::kAbsorbed});
  }
  CpuBackend backend(&Pool());
  Workspace ws = backend.MakeWorkspace();
  for (const PagedSequence& s : all_positions) {  // every position of every sequence
    std::vector<float> entries(context * entry);
    for (float& v : entries) v = normal(rng);
    backend.WriteLatentCache(view, {&s, 1}, entries.data());
  }
  const int64_t kv_rows = shape.heads * (shape.nope_dim + shape.value_dim);
  std::vector<uint16_t> kv(kv_rows * shape.latent_dim);
  for (uint16_t& v : kv) v = tensor::FloatToBf16(0.05f * normal(rng));
  const WeightMatrix kv_b{WeightFormat::kBF16, kv_rows, shape.latent_dim, kv.data()};
  const AbsorbedKvBStorage absorbed(kv_b, shape);
  std::vector<float> q(seqs * shape.heads * shape.qk_dim()), out(seqs * shape.heads * 128);
  for (float& v : q) v = normal(rng);
  const MlaAttentionArgs args{shape, q.data(), view, &kv_b, absorbed.layout(), out.data()};
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) backend.MlaAttention(args, decode, ws);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double calls = static_cast<double>(state.iterations());
  const double flops = 2.0 * seqs * shape.heads *
                       (context * (2.0 * shape.latent_dim + shape.rope_dim) +
                        shape.latent_dim * (shape.nope_dim + shape.value_dim));
  const double gflops = flops * calls / seconds / 1e9;
  const double cache_gbs = double(seqs) * context * entry_bytes * calls / seconds / 1e9;
  state.counters["GFLOP/s"] = gflops;
  state.counters["of_peak"] = gflops / peak_gflops;
  state.counters["cache_GB/s"] = cache_gbs;
  state.counters["of_bandwidth"] = cache_gbs / bandwidth_gbs;
}

const Case kCases[] = {{"K2", 64}, {"K2bench", 16}};

void RegisterAll() {
  const std::pair<const char*, LatentDtype> dtypes[] = {
      {"bf16", LatentDtype::kBf16}, {"fp32", LatentDtype::kF32}, {"fp8", LatentDtype::kFp8E4m3}};
  for (const Case& c : kCases) {
    for (const auto& [dtype_name, dtype] : dtypes) {
      for (int64_t seqs : {1, 8}) {
        for (int64_t context : {512, 4096, 32768}) {
          if (seqs * context > 65536) continue;  // keeps each case's cache under ~75 MB
          const std::string name = std::string(c.name) + "/" + dtype_name +
                                   "/seqs:" + std::to_string(seqs) +
                                   "/context:" + std::to_string(context);
          benchmark::RegisterBenchmark(name.c_str(), BM_AbsorbedDecode, &c, dtype, seqs, context)
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
}

}  // namespace
}  // namespace k3::kernels

int main(int argc, char** argv) {
  using namespace k3::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bandwidth_gbs = MeasureReadBandwidthGBs(&Pool());
  std::printf("%s\n", MachineLine(Pool().parallelism()).c_str());
  peak_gflops = MeasurePeakFp32Gflops(&Pool());
  std::printf("read bandwidth %.1f GB/s, peak FP32 %.1f GFLOP/s, %zu threads\n", bandwidth_gbs,
              peak_gflops, Pool().parallelism());
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
