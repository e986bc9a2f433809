// Per-ISA peak measurement for benchmarks that report each SIMD level against its own limit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/matmul_detail.h"

namespace k3::kernels::detail {

// The buffer MeasureReadBandwidthGBs(pool) reads: 4x the last-level cache, at least 256 MiB, at
// most 2 GiB. Benchmarks that stream weights from memory should cycle through as many bytes.
size_t BandwidthBufferBytes();

// GFLOP/s of `isa`'s FMA chains (kScalar: SSE multiply-add pairs) on every thread of `pool`, best
// of `runs` runs of `iterations` loop iterations per thread.
double MeasurePeakFp32GflopsWithIsa(Isa isa, base::ThreadPool* pool, int64_t iterations = 4 << 20,
                                    int runs = 10);

}  // namespace k3::kernels::detail
