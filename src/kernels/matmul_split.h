// How MatMul's drivers divide work over a thread pool. Baseline code only: the ISA-flagged kernel
// files must not include this header (see matmul_kernels.h), so its inline templates are never
// compiled with wider-ISA flags.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "base/arena.h"
#include "base/thread_pool.h"

namespace k3::kernels::detail {

// Runs fn(begin, end, slot) over [0, n) in about `tasks` contiguous pieces whose bounds are
// multiples of `align`, on `pool` when it has workers; `slot` (< SplitSlots(pool)) names the
// thread running the piece within this call, so per-slot scratch needs no lock. The pieces depend
// only on (n, align, tasks), so a piece's work never depends on which thread runs it.
template <typename Fn>
void SplitRangeSlots(int64_t n, int64_t align, int64_t tasks, base::ThreadPool* pool,
                     const Fn& fn) {
  const int64_t units = (n + align - 1) / align;
  tasks = std::clamp<int64_t>(tasks, 1, std::max<int64_t>(units, 1));
  auto run = [&](size_t task, size_t slot) {
    const int64_t begin = units * static_cast<int64_t>(task) / tasks * align;
    const int64_t end = std::min(n, units * static_cast<int64_t>(task + 1) / tasks * align);
    if (begin < end) fn(begin, end, slot);
  };
  if (pool == nullptr || pool->parallelism() == 1 || tasks == 1) {
    for (int64_t t = 0; t < tasks; ++t) run(static_cast<size_t>(t), 0);
  } else {
    pool->ParallelForSlots(static_cast<size_t>(tasks), run);
  }
}

// The slots SplitRangeSlots may pass.
inline size_t SplitSlots(base::ThreadPool* pool) { return pool ? pool->parallelism() : 1; }

// SplitRangeSlots without the slot.
template <typename Fn>
void SplitRange(int64_t n, int64_t align, int64_t tasks, base::ThreadPool* pool, const Fn& fn) {
  SplitRangeSlots(n, align, tasks, pool,
                  [&](int64_t begin, int64_t end, size_t) { fn(begin, end); });
}

// Splits [0, n) (n >= 1) into the fewest near-equal tiles of at most max_tile: tile j is
// [start[j], start[j + 1]), with start (num_tiles + 1 entries) in arena memory. Returns num_tiles.
// The tiles depend only on (n, max_tile): the token tiles of the GEMM kernels.
inline int64_t SplitTiles(int64_t n, int64_t max_tile, base::Arena& arena, int64_t** start) {
  const int64_t num_tiles = (n + max_tile - 1) / max_tile;
  int64_t* s = arena.Allocate<int64_t>(static_cast<size_t>(num_tiles + 1));
  s[0] = 0;
  for (int64_t j = 0; j < num_tiles; ++j) {
    s[j + 1] = s[j] + n / num_tiles + (j < n % num_tiles ? 1 : 0);
  }
  *start = s;
  return num_tiles;
}

// Below this many multiply-adds (tens of microseconds) a call stays on the calling thread: waking
// the pool would cost about as much as it saves.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 18;

// Tasks for `work` multiply-adds: 4 per thread (for balance), or 1 when small or without a pool.
inline int64_t TaskCount(base::ThreadPool* pool, int64_t work) {
  if (pool == nullptr || work < kMinParallelWork) return 1;
  return static_cast<int64_t>(pool->parallelism()) * 4;
}

// Tasks for a call over `units` equal, independent pieces (row groups) of `work` multiply-adds in
// all: one piece per task, up to kMaxTasksPerThread per thread, where TaskCount's 4 per thread
// would give pieces of several groups. The threads claim tasks as they go, so the one that
// finishes first waits at most one task for the other; with 4 tasks per thread a 768-row BF16
// panel product (12 groups of 64 rows) ran 8 tasks of 1 or 2 groups. Same pieces for the same
// (work, units), whichever thread runs them.
inline constexpr int64_t kMaxTasksPerThread = 16;
inline int64_t PieceTaskCount(base::ThreadPool* pool, int64_t work, int64_t units) {
  const int64_t tasks = TaskCount(pool, work);
  if (tasks == 1) return 1;
  const int64_t most = static_cast<int64_t>(pool->parallelism()) * kMaxTasksPerThread;
  return std::max(tasks, std::min(units, most));
}

}  // namespace k3::kernels::detail
