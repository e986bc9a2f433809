// The machine's physical limits that kernel throughput is judged against: streaming read bandwidth
// from memory and the peak fp32 FMA (and vdpbf16ps) rate, each with every thread of a pool (nullptr
// = the calling thread). `k3 bench model` divides measured throughput by these.
#pragma once

#include <cstddef>
#include <string>

#include "base/aligned_buffer.h"
#include "base/thread_pool.h"

namespace k3::kernels {

// GB/s (1e9 bytes) reading a buffer much larger than the last-level cache (4x its size, at least
// 256 MiB, at most 2 GiB), split over the pool's threads; the best of a few passes over two
// access patterns (with software prefetch, as the decode kernels read).
double MeasureReadBandwidthGBs(base::ThreadPool* pool);
// The same over `bytes` bytes, best of `passes`.
double MeasureReadBandwidthGBs(base::ThreadPool* pool, size_t bytes, int passes);

// MeasureReadBandwidthGBs for benchmarks that read the bandwidth again before each round: the
// buffer is allocated and first touched once. On a KVM guest whose host had taken the pages back,
// that first touch cleared pages at ~0.25 GB/s: 1 GiB (4x a 260 MiB L3) took ~4 s, longer than the
// reading itself, on every call (perf: clear_page_erms).
class ReadBandwidthProbe {
 public:
  // 0 bytes: 4x the last-level cache, at least 256 MiB, at most 2 GiB.
  explicit ReadBandwidthProbe(size_t bytes = 0);
  // GB/s over the whole buffer, split over the pool's threads (nullptr: the calling thread), best
  // of `passes` alternating between the two access patterns.
  double MeasureGBs(base::ThreadPool* pool, int passes = 6) const;

 private:
  base::AlignedBuffer<uint64_t> buffer_;
};

// GFLOP/s (an FMA counts 2) of independent register-resident FMA chains on the best SIMD level,
// on every thread at once; the best of ten runs of about 10 ms.
double MeasurePeakFp32Gflops(base::ThreadPool* pool);

// GFLOP/s (a BF16 pair's two multiply-adds count 4) of independent register-resident vdpbf16ps
// chains on every thread at once, best of ten runs; 0 when the CPU lacks AVX512-BF16. The
// instruction does twice the FP32 FMA's flops, so this is the peak GemmPrecision::kBf16 GEMMs on
// the "avx512-bf16" path are judged against.
double MeasurePeakBf16Gflops(base::ThreadPool* pool);

// GFLOP/s (as above) of register-resident tdpbf16ps chains (four accumulating tiles) on every
// thread at once, best of ten runs; 0 without AMX (MatMulHasAmx()). The peak kBf16 GEMMs on the
// "amx" path are judged against.
double MeasurePeakAmxBf16Gflops(base::ThreadPool* pool);

// GOP/s (a multiply-add counts 2, as in GFLOP/s) of independent register-resident integer dot
// chains of the set MatMul uses (vpdpbusd, or vpmaddubsw + vpmaddwd on plain AVX2) on every
// thread at once, best of ten runs; 0 without AVX2. The integer products (--expert-activations
// int8, --weight-quant int8) run on these instructions.
double MeasurePeakInt8Gops(base::ThreadPool* pool);

// "machine: <processor> (vendor family F model M[, under a hypervisor]), L3 N MiB, T threads;
// kernels: matmul avx512 (+vbmi fp8), int8 dots avx512-vnni, bf16 avx512-bf16" (base::DescribeCpu
// and MatMulPaths): the line every benchmark prints above its figures, so a figure names the
// machine it came from, and the line `k3 serve` logs at start.
std::string MachineLine(size_t threads);

}  // namespace k3::kernels
