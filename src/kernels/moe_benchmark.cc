// The routed experts of one MoE layer at decode, fused against unfused (google-benchmark). Not a
// test: run
//   build/release/src/kernels/moe_benchmark [--benchmark_filter=...]
// Shapes of the benchmark models (`k3 bench model`): K3 (64 MXFP4 experts of 768 x 1024, top 16)
// and K2 (64 FP8-block experts of 512 x 2048, top 8), at 1, 8 and 32 tokens. Each call routes
// its tokens to fresh random experts (untimed) and then times either (the fused form also under
// GemmPrecision::kBf16, rows ending /bf16, where the CPU has a BF16 path)
//   Fused:   CpuBackend::GroupedMlp (one pool dispatch per layer), or
//   Unfused: GroupedMatMul gate, GroupedMatMul up, Glu, GroupedMatMul down (three dispatches),
// and reports the expert weight bytes the call read per second and their fraction of the read
// bandwidth measured in the same run. The expert set (75 / 192 MB) lies in 2 MiB pages, copied
// until the copies fill the bandwidth measurement's buffer (4x the last-level cache, at least 256
// MiB), and each call takes the next copy, so its weights stream from memory as in a decode step
// even where the last-level cache would hold one set (a 260 MiB L3 held the K3 set, whose calls
// with int8 activations then read "39.6 GB/s" against a 30 GB/s bandwidth).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <numeric>
#include <random>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/thread_pool.h"
#include "kernels/cpu_backend.h"
#include "kernels/matmul_testing.h"
#include "kernels/roofline.h"
#include "kernels/roofline_detail.h"

namespace k3::kernels {
namespace {

using matmul_testing::FormatCase;
using matmul_testing::TestWeights;

base::ThreadPool& Pool() {
  static base::ThreadPool pool(0);
  return pool;
}
double bandwidth_gbs = 0;

struct Shape {
  const char* name;
  FormatCase format;
  int experts, top_k;
  int64_t width, inter;
};

size_t Bytes(const TestWeights& t) {
  return t.data.size() + t.mx_scales.size() + 2 * t.group_scales.size() + 4 * t.block_scales.size();
}

// Copies the storage `t` views into `at` (64-byte aligned pieces) and returns the matrix viewing
// the copy; `at` advances past it.
WeightMatrix CopyInto(const TestWeights& t, uint8_t*& at) {
  auto place = [&](const void* src, size_t bytes) -> uint8_t* {
    if (bytes == 0) return nullptr;
    uint8_t* dst = at;
    std::memcpy(dst, src, bytes);
    at += (bytes + 63) / 64 * 64;
    return dst;
  };
  WeightMatrix w = t.w;
  w.data = place(t.data.data(), t.data.size());
  w.mx_scales = place(t.mx_scales.data(), t.mx_scales.size());
  w.group_scales =
      reinterpret_cast<const uint16_t*>(place(t.group_scales.data(), 2 * t.group_scales.size()));
  w.block_scales =
      reinterpret_cast<const float*>(place(t.block_scales.data(), 4 * t.block_scales.size()));
  return w;
}

// Every expert's gate, up and down matrices of one shape, one after another in 2 MiB pages (as
// k3 loads checkpoints: base::AlignedBuffer asks for transparent huge pages), `copies` times:
// copy c's matrices are gate[c * experts ...] and so on.
struct Experts {
  explicit Experts(const Shape& s) {
    std::mt19937 rng(1);
    std::deque<TestWeights> made;  // TestWeights does not move
    size_t total = 0;
    for (int e = 0; e < 3 * s.experts; ++e) {
      const bool down = e % 3 == 2;
      TestWeights& t = made.emplace_back();
      matmul_testing::FillRandom(t, s.format, down ? s.width : s.inter, down ? s.inter : s.width,
                                 rng);
      total += Bytes(t) + 4 * 64;
    }
    bytes_per_expert = (Bytes(made[0]) + Bytes(made[1]) + Bytes(made[2]));
    copies = std::max<size_t>(1, (detail::BandwidthBufferBytes() + total - 1) / total);
    storage = base::AlignedBuffer<uint8_t>(copies * total, 0);
    uint8_t* at = storage.data();
    for (size_t c = 0; c < copies; ++c) {
      for (int e = 0; e < s.experts; ++e) {
        gate.push_back(CopyInto(made[3 * e], at));
        up.push_back(CopyInto(made[3 * e + 1], at));
        down.push_back(CopyInto(made[3 * e + 2], at));
      }
    }
  }
  base::AlignedBuffer<uint8_t> storage;
  std::vector<WeightMatrix> gate, up, down;
  size_t bytes_per_expert = 0;
  size_t copies = 1;
};

void BM_Experts(benchmark::State& state, const Shape* s, int64_t tokens, bool fused,
                GemmPrecision precision) {
  static const Shape* built_for = nullptr;
  static std::unique_ptr<Experts> experts;
  if (built_for != s) experts = std::make_unique<Experts>(*s), built_for = s;
  CpuBackend backend(&Pool());
  Workspace ws = backend.MakeWorkspace();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const int64_t assignments = tokens * s->top_k;
  std::vector<float> x(tokens * s->width), weights(assignments, 1.0f);
  for (float& v : x) v = normal(rng);
  std::vector<int32_t> chosen(assignments), order(s->experts);
  std::vector<int64_t> offsets(s->experts + 1), source_rows(assignments);
  std::vector<float> source_weights(assignments), gathered(assignments * s->width);
  std::vector<float> gate(assignments * s->inter), up(assignments * s->inter);
  const ActivationShape act{ActivationKind::kSilu, assignments * s->inter, 4.0f, 25.0f};
  double seconds = 0, bytes = 0;
  size_t calls = 0;
  SetGemmPrecision(precision);
  for (auto _ : state) {
    for (int64_t t = 0; t < tokens; ++t) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::copy_n(order.begin(), s->top_k, chosen.begin() + t * s->top_k);
    }
    backend.MoeDispatch({tokens, s->top_k, s->experts, s->width, chosen.data(), weights.data(),
                         x.data(), offsets.data(), source_rows.data(), source_weights.data(),
                         gathered.data()});
    int used = 0;
    for (int e = 0; e < s->experts; ++e) used += offsets[e + 1] > offsets[e];
    const size_t first = calls++ % experts->copies * s->experts;  // this call's copy
    const WeightMatrix* gate_w = experts->gate.data() + first;
    const WeightMatrix* up_w = experts->up.data() + first;
    const WeightMatrix* down_w = experts->down.data() + first;
    const auto start = std::chrono::steady_clock::now();
    if (fused) {
      backend.GroupedMlp({s->experts, offsets.data(), gate_w, up_w, down_w, act, false,
                          gathered.data(), gathered.data()},
                         ws);
    } else {
      backend.GroupedMatMul({s->experts, offsets.data(), gate_w, gathered.data(), gate.data()}, ws);
      backend.GroupedMatMul({s->experts, offsets.data(), up_w, gathered.data(), up.data()}, ws);
      backend.Glu(act, gate.data(), up.data(), gate.data());
      backend.GroupedMatMul({s->experts, offsets.data(), down_w, gate.data(), gathered.data()}, ws);
    }
    const double call =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(call);
    seconds += call;
    bytes += static_cast<double>(used) * static_cast<double>(experts->bytes_per_expert);
    ws.Reset();
  }
  SetGemmPrecision(GemmPrecision::kFp32);
  state.counters["GB/s"] = bytes / seconds / 1e9;
  state.counters["of_bandwidth"] = bytes / seconds / 1e9 / bandwidth_gbs;
  state.counters["us/call"] = 1e6 * seconds / static_cast<double>(state.iterations());
}

const Shape kShapes[] = {
    {"K3", {"mxfp4", WeightFormat::kMxfp4}, 64, 16, 1024, 768},
    // fp8_nan_free as the loader sets it for checkpoints without NaN codes (FillRandom draws none).
    {"K2",
     {"fp8_block128", WeightFormat::kFp8Block, 128, 0.25f, 2.0f, 0x7E, true},
     64,
     8,
     2048,
     512},
};

void RegisterAll() {
  for (const Shape& s : kShapes) {
    for (int64_t tokens : {1, 8, 32}) {
      for (bool fused : {true, false}) {
        const std::string name = std::string(s.name) + "/" + (fused ? "Fused" : "Unfused") +
                                 "/tokens:" + std::to_string(tokens);
        benchmark::RegisterBenchmark(name.c_str(), BM_Experts, &s, tokens, fused,
                                     GemmPrecision::kFp32)
            ->UseManualTime()
            ->MinTime(0.5);
      }
      // The fused layer again under --gemm-precision bf16 (where the CPU has a BF16 path).
      if (std::string(MatMulBf16Path()) == "none") continue;
      const std::string name =
          std::string(s.name) + "/Fused/tokens:" + std::to_string(tokens) + "/bf16";
      benchmark::RegisterBenchmark(name.c_str(), BM_Experts, &s, tokens, true, GemmPrecision::kBf16)
          ->UseManualTime()
          ->MinTime(0.5);
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
  std::printf("read bandwidth %.1f GB/s, %zu threads\n", bandwidth_gbs, Pool().parallelism());
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
