// Routed experts as three steps around the grouped products: dispatch (assignments grouped by
// expert, input rows gathered in that order), GroupedMatMul or GroupedMlp per expert, and the
// weighted combine in assignment order (expert, then row), so sums never depend on thread
// scheduling.
#include <algorithm>
#include <cstring>

#include "base/arena.h"
#include "kernels/cpu_ops.h"

namespace k3::kernels::cpu {

void MoeDispatch(const MoeDispatchArgs& a, base::ThreadPool* pool) {
  int64_t* offsets = a.expert_offsets;
  std::fill(offsets, offsets + a.num_experts + 1, 0);
  const int64_t n = a.rows * a.top_k;
  for (int64_t i = 0; i < n; ++i) ++offsets[a.experts[i] + 1];
  for (int e = 0; e < a.num_experts; ++e) offsets[e + 1] += offsets[e];
  // offsets[e] walks expert e's range; afterwards it holds e's end, which is (e + 1)'s start.
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int j = 0; j < a.top_k; ++j) {
      const int64_t slot = offsets[a.experts[r * a.top_k + j]]++;
      a.source_rows[slot] = r;
      a.source_weights[slot] = a.weights[r * a.top_k + j];
    }
  }
  for (int e = a.num_experts; e > 0; --e) offsets[e] = offsets[e - 1];
  offsets[0] = 0;
  // The copies, the bulk of the work (assignments x width floats), split over the assignments.
  ForRanges(pool, n, a.width, [&](int64_t s0, int64_t s1, size_t) {
    for (int64_t s = s0; s < s1; ++s) {
      std::memcpy(a.gathered + s * a.width, a.x + a.source_rows[s] * a.width,
                  a.width * sizeof(float));
    }
  });
}

void MoeCombine(const MoeCombineArgs& a, base::ThreadPool* pool) {
  // Split over output rows: each range scans every assignment and adds those of its rows, so
  // each row still receives its terms in assignment order (the bits of one pass).
  const int64_t per_row = a.rows > 0 ? a.assignments / a.rows : 0;
  ForRanges(pool, a.rows, per_row * a.width, [&](int64_t r0, int64_t r1, size_t) {
    std::fill(a.out + r0 * a.width, a.out + r1 * a.width, 0.0f);
    for (int64_t i = 0; i < a.assignments; ++i) {
      const int64_t row = a.source_rows[i];
      if (row < r0 || row >= r1) continue;
      float* dst = a.out + row * a.width;
      const float weight = a.source_weights[i];
      const float* y = a.y + i * a.width;
      for (int64_t k = 0; k < a.width; ++k) dst[k] += weight * y[k];
    }
  });
}

namespace {

// Runs run(g, slot) for every group: on the pool most rows first (ties by index), so the last
// tasks the threads claim are the smallest and they finish close together (a batch-32 step of
// the K3 bench model gives its 64 experts 3-14 rows each; handed out by index, a 14-row expert
// could start last); without one in index order. The order only decides which thread runs a
// group: every group's products are its own, so the sums are the same whichever order runs.
template <class Run>
void ForEachGroupLargestFirst(const int64_t* offsets, int64_t groups, base::ThreadPool* pool,
                              Workspace& ws, const Run& run) {
  if (pool == nullptr) {
    for (int64_t g = 0; g < groups; ++g) run(g, 0);
    return;
  }
  base::ArenaMark mark(ws.arena());
  int64_t* order = ws.arena().Allocate<int64_t>(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) order[g] = g;
  std::sort(order, order + groups, [offsets](int64_t a, int64_t b) {  // allocates nothing
    const int64_t rows_a = offsets[a + 1] - offsets[a], rows_b = offsets[b + 1] - offsets[b];
    return rows_a != rows_b ? rows_a > rows_b : a < b;
  });
  pool->ParallelForSlots(static_cast<size_t>(groups),
                         [&](size_t i, size_t slot) { run(order[i], slot); });
}

}  // namespace

void GroupedMatMul(const GroupedMatMulArgs& a, base::ThreadPool* pool, Workspace& ws) {
  // One single-threaded task per group: at decode a group's matrices are too small to split
  // across threads profitably, and groups are independent.
  auto run = [&](int64_t g, size_t slot) {
    const int64_t begin = a.group_offsets[g], rows = a.group_offsets[g + 1] - begin;
    if (rows == 0) return;
    const WeightMatrix& w = a.weights[g];
    MatMul(a.x + begin * w.cols, rows, w, a.y + begin * w.rows, nullptr, &ws.slot(slot));
  };
  ForEachGroupLargestFirst(a.group_offsets, a.num_groups, pool, ws, run);
}

void GroupedMlp(const GroupedMlpArgs& a, base::ThreadPool* pool, Workspace& ws) {
  // One single-threaded task per group, its three products and the GLU back to back: one pool
  // dispatch and join per MoE layer instead of three. On the 2-core development VM, whose workers
  // spin between calls, this measured the same as the unfused ops (moe_benchmark: the expert
  // products are core-bound there); it saves the joins where wake-ups cost more. The hidden rows
  // live in the task's slot arena ([rows, 2 * inter] floats), still in cache for the down product.
  auto run = [&](int64_t g, size_t slot) {
    const int64_t begin = a.group_offsets[g], rows = a.group_offsets[g + 1] - begin;
    if (rows == 0) return;
    const WeightMatrix &gate_w = a.gate[g], &up_w = a.up[g], &down_w = a.down[g];
    const int64_t inter = gate_w.rows;
    base::Arena& arena = ws.slot(slot);
    base::ArenaMark mark(arena);
    float* gate = arena.Allocate<float>(rows * inter);  // [rows, inter]
    float* up = arena.Allocate<float>(rows * inter);    // [rows, inter]
    const float* x = a.x + begin * gate_w.cols;
    MatMul(x, rows, gate_w, gate, nullptr, &arena);
    MatMul(x, rows, up_w, up, nullptr, &arena);
    ActivationShape act = a.act;
    act.n = rows * inter;
    Glu(act, gate, up, gate);
    if (a.mxfp8_hidden) QuantizeMxfp8InPlace(gate, rows * inter);
    MatMul(gate, rows, down_w, a.y + begin * down_w.rows, nullptr, &arena);
  };
  ForEachGroupLargestFirst(a.group_offsets, a.num_groups, pool, ws, run);
}

}  // namespace k3::kernels::cpu
