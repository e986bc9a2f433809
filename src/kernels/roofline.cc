#include "kernels/roofline.h"

#include <emmintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/check.h"
#include "base/cpu_info.h"
#include "kernels/matmul.h"
#include "kernels/matmul_int8.h"
#include "kernels/matmul_kernels.h"
#include "kernels/roofline_detail.h"

namespace k3::kernels {
namespace {

// Seconds `fn` takes.
template <typename Fn>
double Time(const Fn& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs fn(i) for i in [0, n) on the pool (or the calling thread).
void RunOnAll(base::ThreadPool* pool, size_t n, const std::function<void(size_t)>& fn) {
  if (pool == nullptr) {
    for (size_t i = 0; i < n; ++i) fn(i);
  } else {
    pool->ParallelFor(n, fn);
  }
}

size_t Threads(base::ThreadPool* pool) { return pool == nullptr ? 1 : pool->parallelism(); }

// XOR of every 16-byte word in [p, p + words): the loads cannot be optimised away. Two access
// patterns, because which one a memory system serves fastest varies (MeasureReadBandwidthGBs keeps
// the best): kStreams sequential streams a quarter of the range apart, or the range read chunk by
// chunk, each chunk as kStreams adjacent interleaved streams (as the decode kernels read a group
// of weight rows). Both prefetch kPrefetchBytes ahead: one plain stream per core leaves
// bandwidth unused on many servers.
constexpr size_t kStreams = 4;
constexpr size_t kPrefetchBytes = 16384;
constexpr size_t kChunkWords = kPrefetchBytes / 16;

__m128i XorLine(const __m128i* p) {
  return _mm_xor_si128(_mm_xor_si128(_mm_load_si128(p), _mm_load_si128(p + 1)),
                       _mm_xor_si128(_mm_load_si128(p + 2), _mm_load_si128(p + 3)));
}

__m128i XorWords(const __m128i* p, size_t words, bool chunked) {
  __m128i acc[kStreams];
  for (__m128i& a : acc) a = _mm_setzero_si128();
  // Each of kStreams streams covers `part` words at `stride` words from the previous one, for
  // `rounds` rounds that advance `step` words.
  const size_t part = chunked ? kChunkWords / kStreams : words / kStreams / 4 * 4;
  const size_t rounds = chunked ? words / kChunkWords : 1;
  const size_t stride = part, step = chunked ? kChunkWords : 0;
  for (size_t round = 0; round < rounds; ++round) {
    const __m128i* base = p + round * step;
    for (size_t i = 0; i < part; i += 4) {
      for (size_t k = 0; k < kStreams; ++k) {
        const __m128i* line = base + k * stride + i;
        _mm_prefetch(reinterpret_cast<const char*>(line) + kPrefetchBytes, _MM_HINT_T0);
        acc[k] = _mm_xor_si128(acc[k], XorLine(line));
      }
    }
  }
  for (size_t i = rounds * (chunked ? kChunkWords : kStreams * part); i < words; ++i) {
    acc[0] = _mm_xor_si128(acc[0], _mm_load_si128(p + i));
  }
  __m128i all = acc[0];
  for (size_t k = 1; k < kStreams; ++k) all = _mm_xor_si128(all, acc[k]);
  return all;
}

// Portable stand-in for the scalar level: 4-wide multiply-add pairs (SSE, no FMA).
double MulAddLoop(int64_t iterations) {
  using V = float __attribute__((vector_size(16)));
  constexpr int kChains = 8;
  V acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = V{} + (1.0f + 0.001f * static_cast<float>(i));
  const V mul = V{} + 0.999999f, add = V{} + 1e-6f;
  for (int64_t n = 0; n < iterations; ++n) {
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * mul + add;
  }
  V sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum += acc[i];
  volatile float sink = sum[0] + sum[1] + sum[2] + sum[3];
  (void)sink;
  return static_cast<double>(iterations) * kChains * 4 * 2;
}

// GFLOP/s of `loop` (returning the flops it did) on every thread of `pool`, best of `runs`.
double MeasureLoopGflops(double (*loop)(int64_t), base::ThreadPool* pool, int64_t iterations,
                         int runs) {
  const size_t threads = Threads(pool);
  std::vector<double> flops(threads);
  double best = 0.0;
  for (int run = 0; run < runs; ++run) {
    double seconds =
        Time([&] { RunOnAll(pool, threads, [&](size_t t) { flops[t] = loop(iterations); }); });
    double total = 0.0;
    for (double f : flops) total += f;
    best = std::max(best, total / seconds / 1e9);
  }
  return best;
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(size_t bytes)
    : buffer_((bytes == 0 ? detail::BandwidthBufferBytes() : bytes) / 16 * 2,
              0x5A5A5A5A5A5A5A5Aull) {
  K3_CHECK(buffer_.size() >= 512);
}

double ReadBandwidthProbe::MeasureGBs(base::ThreadPool* pool, int passes) const {
  K3_CHECK(passes >= 1);
  const size_t words = buffer_.size() / 2;  // 16-byte words
  const auto* data = reinterpret_cast<const __m128i*>(buffer_.data());
  const size_t threads = Threads(pool);
  std::vector<int> sinks(threads);
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    const bool chunked = pass % 2 == 1;
    double seconds = Time([&] {
      RunOnAll(pool, threads, [&](size_t t) {
        // Whole cache lines per thread, so the 16-byte loads stay aligned to them.
        const size_t begin = words / 4 * t / threads * 4;
        const size_t end = t + 1 == threads ? words : words / 4 * (t + 1) / threads * 4;
        sinks[t] = _mm_cvtsi128_si32(XorWords(data + begin, end - begin, chunked));
      });
    });
    best = std::max(best, static_cast<double>(words * 16) / seconds / 1e9);
  }
  volatile int sink = 0;
  for (int s : sinks) sink = sink ^ s;
  return best;
}

double MeasureReadBandwidthGBs(base::ThreadPool* pool, size_t bytes, int passes) {
  K3_CHECK(bytes >= 4096 && passes >= 1);
  return ReadBandwidthProbe(bytes).MeasureGBs(pool, passes);
}

double MeasureReadBandwidthGBs(base::ThreadPool* pool) {
  return ReadBandwidthProbe().MeasureGBs(pool);
}

double MeasurePeakFp32Gflops(base::ThreadPool* pool) {
  return detail::MeasurePeakFp32GflopsWithIsa(detail::BestIsa(), pool);
}

double MeasurePeakBf16Gflops(base::ThreadPool* pool) {
  if (!detail::CpuHasAvx512Bf16()) return 0.0;
  return MeasureLoopGflops(detail::Avx512Bf16Kernels().dot_loop, pool, 4 << 20, 10);
}

double MeasurePeakAmxBf16Gflops(base::ThreadPool* pool) {
  if (!MatMulHasAmx()) return 0.0;
  return MeasureLoopGflops(detail::AmxBf16Kernels().dot_loop, pool, 1 << 19, 10);
}

double MeasurePeakInt8Gops(base::ThreadPool* pool) {
  const detail::Int8Kernels* k = detail::Int8KernelsFor(detail::BestIsa());
  if (k == nullptr) return 0.0;
  return MeasureLoopGflops(k->dot_loop, pool, 4 << 20, 10);
}

std::string MachineLine(size_t threads) {
  return "machine: " + base::DescribeCpu(base::ReadCpuIdentity()) + ", " + std::to_string(threads) +
         " threads; kernels: " + MatMulPaths();
}

namespace detail {

size_t BandwidthBufferBytes() {
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = 64L << 20;
  return std::clamp<size_t>(static_cast<size_t>(llc) * 4, size_t{256} << 20, size_t{2} << 30);
}

double MeasurePeakFp32GflopsWithIsa(Isa isa, base::ThreadPool* pool, int64_t iterations, int runs) {
  K3_CHECK(IsaSupported(isa)) << IsaName(isa);
  double (*loop)(int64_t) = MulAddLoop;
  if (isa == Isa::kAvx512) loop = Avx512Kernels().fma_loop;
  if (isa == Isa::kAvx2) loop = Avx2Kernels().fma_loop;
  return MeasureLoopGflops(loop, pool, iterations, runs);
}

}  // namespace detail
}  // namespace k3::kernels
