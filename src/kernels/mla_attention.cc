// Multi-head latent attention over a paged latent cache (spec/model.md §3). The cache holds per
// position only [c_kv | k_pe], as fp32, bf16 or fp8 (LatentDtype); the attention reads fp32
// entries, and bf16 ones in the absorbed form, in place through a per-sequence table of entry
// pointers; otherwise it decodes the entries to floats once per sequence and layer
// (FloatEntryTable states the cost, AttendSequence the measured choice). Forms:
// - naive: every cached latent expanded into per-head keys and values with kv_b (one product per
//   sequence, cheap per query when many queries share it: prefill), per-pair dot products;
// - naive GEMM (mla_attention_gemm.cc): the same as two matrix products per head;
// - absorbed: kv_b's key half folded into the query and its value half applied after the
//   weighted sum, so each query touches only the 576-wide entries (decode).
// Heads (naive forms) or groups of heads (absorbed form) run in parallel; each task takes its
// scratch from its Workspace slot.
#include <algorithm>
#include <cstring>
#include <limits>

#include "base/arena.h"
#include "kernels/cpu_ops.h"
#include "kernels/matmul_detail.h"
#include "kernels/row_table.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

struct Dims {
  int64_t h, dn, dr, dv, r, qk;
};

Dims DimsOf(const MlaShape& s) {
  return {s.heads, s.nope_dim, s.rope_dim, s.value_dim, s.latent_dim, s.qk_dim()};
}

// Naive form for one (sequence, head): keys/values expanded from the latents in `kv`
// [len, H (dn + dv)]; entries[j] is position j's cache entry. p: [start + rows] scratch.
K3_MULTIVERSION void AttendNaive(const Dims& d, const float* q, const float* kv,
                                 const float* const* entries, int64_t start, int64_t rows,
                                 int64_t head, float scale, float* p, float* out) {
  for (int64_t t = 0; t < rows; ++t) {
    const float* qh = q + t * d.h * d.qk + head * d.qk;
    const int64_t len = start + t + 1;
    for (int64_t j = 0; j < len; ++j) {
      const float* k_nope = kv + j * d.h * (d.dn + d.dv) + head * (d.dn + d.dv);
      const float* k_pe = entries[j] + d.r;
      p[j] = (Dot(qh, k_nope, d.dn) + Dot(qh + d.dn, k_pe, d.dr)) * scale;
    }
    SoftmaxInPlace(p, len);
    float* o = out + t * d.h * d.dv + head * d.dv;
    std::memset(o, 0, d.dv * sizeof(float));
    for (int64_t j = 0; j < len; ++j) {
      Axpy(p[j], kv + j * d.h * (d.dn + d.dv) + head * (d.dn + d.dv) + d.dn, o, d.dv);
    }
  }
}

// Position j's stored entry for j in [0, len), as a table of pointers into the cache (from
// `arena`).
const void** EntryPointers(const LatentCacheView& cache, const PagedSequence& s, int64_t len,
                           base::Arena& arena) {
  const void** table = arena.Allocate<const void*>(len);
  for (int64_t j = 0; j < len; ++j) {
    table[j] = cache.entry(s.pages[j / cache.page_size], j % cache.page_size);
  }
  return table;
}

// The sequence's entries as floats: pointers into an fp32 cache (no copy); otherwise every entry
// decoded once into [len, entry_dim] floats from `arena`, shared by all heads and rows. Cost of the
// decode: len x entry_dim conversions and 4 len entry_dim bytes written per sequence and layer
// (FP8: a table look-up and a multiply per value), against the naive forms' len x entry_dim x
// H (dn + dv) multiply-adds of the kv_b expansion, or the absorbed form's 2 H len entry_dim.
const float** FloatEntryTable(const LatentCacheView& cache, const PagedSequence& s, int64_t len,
                              base::Arena& arena) {
  const float** table = arena.Allocate<const float*>(len);
  if (cache.dtype == LatentDtype::kF32) {  // pointers into the cache, no copy
    for (int64_t j = 0; j < len; ++j) {
      table[j] = reinterpret_cast<const float*>(
          cache.entry(s.pages[j / cache.page_size], j % cache.page_size));
    }
    return table;
  }
  const int64_t dim = cache.entry_dim;
  float* decoded = arena.Allocate<float>(len * dim);
  for (int64_t j = 0; j < len; ++j) {
    DecodeLatentEntry(cache.dtype, cache.entry(s.pages[j / cache.page_size], j % cache.page_size),
                      dim, decoded + j * dim);
    table[j] = decoded + j * dim;
  }
  return table;
}

// kv_b applied to every cached latent of the sequence: [len, H (dn + dv)], from `arena`.
float* ExpandLatents(const MlaAttentionArgs& a, const float* const* entries, int64_t len,
                     base::ThreadPool* pool, base::Arena& arena) {
  const int64_t r = a.shape.latent_dim;
  float* latents = arena.Allocate<float>(len * r);
  for (int64_t j = 0; j < len; ++j) std::memcpy(latents + j * r, entries[j], r * sizeof(float));
  float* expanded = arena.Allocate<float>(len * a.kv_b->rows);
  MatMul(latents, len, *a.kv_b, expanded, pool, &arena);
  return expanded;
}

// task(i, scratch) for every i < n, in parallel over the pool's slots.
template <typename Task>
void ForEachTask(int64_t n, base::ThreadPool* pool, Workspace& ws, const Task& task) {
  auto run = [&](size_t i, size_t slot) {
    base::Arena& scratch = ws.slot(slot);
    base::ArenaMark task_mark(scratch);
    task(static_cast<int64_t>(i), scratch);
  };
  if (pool) return pool->ParallelForSlots(n, run);
  for (int64_t i = 0; i < n; ++i) run(i, 0);
}

// One sequence of the absorbed form: its rows and its entries [len, r + dr] (BF16 or F32 read in
// place, FP8 decoded to F32 first).
struct AbsorbedSequence {
  const PagedSequence* seq;
  RowTable entries;
};

// y [tokens, w.rows] = x W^T on the calling thread in the decode regime: every token's sums are
// the same whatever the number of tokens.
void DecodeProduct(const WeightMatrix& w, const float* x, int64_t tokens, float* y,
                   base::Arena& scratch) {
  detail::MatMulWithIsa(detail::BestIsa(), detail::Regime::kDecode, x, tokens, w, y, nullptr,
                        &scratch);
}

// Heads per task of the absorbed form. A task reads its sequences' entries once for all of its
// heads (AttendRow), so larger groups read the cache fewer times;
// two tasks per thread, where the heads allow, keep the threads balanced.
int64_t HeadsPerTask(int64_t heads, const base::ThreadPool* pool) {
  const int64_t threads = pool != nullptr ? static_cast<int64_t>(pool->parallelism()) : 1;
  return std::clamp<int64_t>(heads / (2 * threads), 1, 8);
}

// Heads [h0, h0 + gh) of every row folded into the latent space: queries[row][i] = (q_nope
// W_uk^T, q_rope) of head h0 + i, [total_rows, gh, r + dr]. One product per head over all rows.
void FoldQueries(const MlaAttentionArgs& a, const Dims& d, std::span<const AbsorbedSequence> seqs,
                 int64_t h0, int64_t gh, int64_t total_rows, float* queries, base::Arena& scratch) {
  base::ArenaMark mark(scratch);
  const int64_t qw = d.r + d.dr;
  float* q_nope = scratch.Allocate<float>(total_rows * d.dn);   // [total_rows, dn]
  float* q_latent = scratch.Allocate<float>(total_rows * d.r);  // [total_rows, r]
  for (int64_t i = 0; i < gh; ++i) {
    const int64_t head = h0 + i;
    int64_t row = 0;
    for (const AbsorbedSequence& as : seqs) {
      for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
        std::memcpy(q_nope + row * d.dn, a.q + ((as.seq->row_begin + t) * d.h + head) * d.qk,
                    d.dn * sizeof(float));
      }
    }
    DecodeProduct(RowRange(a.absorbed.keys_t, head * d.r, d.r), q_nope, total_rows, q_latent,
                  scratch);
    row = 0;
    for (const AbsorbedSequence& as : seqs) {
      for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
        float* query = queries + (row * gh + i) * qw;
        std::memcpy(query, q_latent + row * d.r, d.r * sizeof(float));
        std::memcpy(query + d.r, a.q + ((as.seq->row_begin + t) * d.h + head) * d.qk + d.dn,
                    d.dr * sizeof(float));
      }
    }
  }
}

// Positions per block of AttendRow's single pass: a block's entries (256 x 1152 bytes in BF16)
// stay in L2 between their scores and their weighted sum, so each entry comes from memory once
// per head group instead of twice.
constexpr int64_t kEntryBlock = 256;

// One head's block of scores in place: p[j] = exp(scale p[j] - m) for j < n, where m = max(*max,
// scale p[j] over the block) becomes the new *max. Returns sum_j p[j] (in double, as
// SoftmaxInPlace) and the factor exp(old max - m) that rescales what earlier blocks summed.
K3_MULTIVERSION float ExpBlock(float* p, int64_t n, float scale, float* max, double* sum) {
  float m = *max;
  for (int64_t j = 0; j < n; ++j) {
    p[j] *= scale;
    m = p[j] > m ? p[j] : m;
  }
  double block_sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    p[j] = FastExp(p[j] - m);
    block_sum += p[j];
  }
  const float rescale = FastExp(*max - m);
  *max = m;
  *sum = block_sum;
  return rescale;
}

// Row t of a sequence (its position start + t sees entries [0, len)) for gh heads: scores of the
// folded queries [gh, r + dr] against every entry, softmax per head, and the weighted sums of the
// entries' latent parts into mixed[i * ldm, + r) for head i, on the row-table tiles
// (row_table.h). One pass over blocks of kEntryBlock entries with a running maximum and sum per
// head (the softmax's exponentials are taken against the running maximum and earlier blocks'
// sums rescaled when it grows), so each entry is read once per step for all gh heads.
void AttendRow(const Dims& d, float scale, const RowTable& entries, int64_t len, int64_t gh,
               const float* queries, float* mixed, int64_t ldm, base::Arena& scratch) {
  base::ArenaMark mark(scratch);
  const int64_t block = std::min(len, kEntryBlock);
  float* p = scratch.Allocate<float>(gh * block);   // [gh, block]
  float* part = scratch.Allocate<float>(gh * d.r);  // [gh, r]: one block's weighted sums
  float* max = scratch.Allocate<float>(gh);
  double* total = scratch.Allocate<double>(gh);
  std::fill(max, max + gh, -std::numeric_limits<float>::infinity());
  std::fill(total, total + gh, 0.0);
  for (int64_t i = 0; i < gh; ++i) std::fill(mixed + i * ldm, mixed + i * ldm + d.r, 0.0f);
  for (int64_t b0 = 0; b0 < len; b0 += block) {
    const int64_t nb = std::min(block, len - b0);
    RowTable keys = entries;
    keys.rows += b0;
    keys.n = nb;
    RowTableDots(queries, gh, keys, p, nb, scratch);
    RowTable latents = keys;
    latents.cols = d.r;
    for (int64_t i = 0; i < gh; ++i) {
      double block_sum = 0.0;
      const float rescale = ExpBlock(p + i * nb, nb, scale, &max[i], &block_sum);
      total[i] = total[i] * rescale + block_sum;
      if (b0 > 0 && rescale != 1.0f) {
        for (int64_t c = 0; c < d.r; ++c) mixed[i * ldm + c] *= rescale;
      }
    }
    RowTableCombine(p, gh, nb, latents, part, d.r);
    for (int64_t i = 0; i < gh; ++i) {
      for (int64_t c = 0; c < d.r; ++c) mixed[i * ldm + c] += part[i * d.r + c];
    }
  }
  for (int64_t i = 0; i < gh; ++i) {
    const float inv = static_cast<float>(1.0 / total[i]);
    for (int64_t c = 0; c < d.r; ++c) mixed[i * ldm + c] *= inv;
  }
}

// The absorbed form of every sequence in `seqs` (total_rows rows), in one pass over groups of
// heads. A group's task folds all rows' queries into the latent space (one product per head: q_nope
// [rows, dn] times its W_uk^T slice), attends every row over its sequence's entries for all heads
// of the group at once, and applies each head's W_uv slice to all rows' mixed latents with a
// second product: kv_b is read once per head and layer, not once per sequence, in its stored
// format where the layout keeps it (K2's FP8: a quarter of float32's bytes; AbsorbedKvBStorage).
// Results do not depend on which sequences share the step, nor on the grouping of heads (the
// decode kernels' per-token sums and the row-table products do not depend on the token tiling).
void AttendAbsorbedAll(const MlaAttentionArgs& a, std::span<const AbsorbedSequence> seqs,
                       int64_t total_rows, base::ThreadPool* pool, Workspace& ws) {
  const Dims d = DimsOf(a.shape);
  const int64_t group = HeadsPerTask(d.h, pool);
  ForEachTask((d.h + group - 1) / group, pool, ws, [&](int64_t task, base::Arena& scratch) {
    const int64_t h0 = task * group, gh = std::min(group, d.h - h0);
    const int64_t qw = d.r + d.dr;
    float* queries = scratch.Allocate<float>(total_rows * gh * qw);  // [total_rows, gh, qw]
    float* mixed = scratch.Allocate<float>(gh * total_rows * d.r);   // [gh, total_rows, r]
    float* values = scratch.Allocate<float>(total_rows * d.dv);      // [total_rows, dv]
    FoldQueries(a, d, seqs, h0, gh, total_rows, queries, scratch);
    int64_t row = 0;
    for (const AbsorbedSequence& as : seqs) {
      for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
        AttendRow(d, a.shape.scale, as.entries, as.seq->start_position + t + 1, gh,
                  queries + row * gh * qw, mixed + row * d.r, total_rows * d.r, scratch);
      }
    }
    for (int64_t i = 0; i < gh; ++i) {
      const int64_t head = h0 + i;
      const WeightMatrix w_uv = RowRange(a.absorbed.values, head * (d.dn + d.dv) + d.dn, d.dv);
      DecodeProduct(w_uv, mixed + i * total_rows * d.r, total_rows, values, scratch);
      row = 0;
      for (const AbsorbedSequence& as : seqs) {
        for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
          std::memcpy(a.out + ((as.seq->row_begin + t) * d.h + head) * d.dv, values + row * d.dv,
                      d.dv * sizeof(float));
        }
      }
    }
  });
}

// BF16 and FP32 caches are read in place by the absorbed form (decode: each head group reads all
// entries once, AttendRow, so BF16 halves fp32's bytes); FP8 caches, and every naive form, decode
// the entries to floats first (FloatEntryTable, on the calling thread). Measured with
// mla_benchmark (docs/model.md: one decode token, 16 or 64 heads, 2 threads of a Zen 5 VM): BF16
// in place runs at ~0.3-0.55 of the FP32 FMA peak at contexts 512-32768; FP8's serial decode
// holds it to ~0.1. Absorbed sequences over BF16 or FP32 caches only get their tables of entry
// pointers here (from ws.arena(), which the caller keeps) and are appended to `absorbed`; the
// rest run at once.
void AttendSequence(const MlaAttentionArgs& a, const MlaSequence& ms, base::ThreadPool* pool,
                    Workspace& ws, AbsorbedSequence* absorbed, size_t* num_absorbed) {
  const Dims d = DimsOf(a.shape);
  const PagedSequence& s = ms.seq;
  const int64_t len = s.start_position + s.rows;
  if (ms.form == MlaForm::kAbsorbed) {
    const int64_t entry_dim = a.cache.entry_dim;
    if (a.cache.dtype == LatentDtype::kBf16 || a.cache.dtype == LatentDtype::kF32) {
      const WeightFormat format =
          a.cache.dtype == LatentDtype::kBf16 ? WeightFormat::kBF16 : WeightFormat::kF32;
      absorbed[(*num_absorbed)++] = {
          &s, RowTable{EntryPointers(a.cache, s, len, ws.arena()), len, entry_dim, format}};
    } else {
      // Decoded copies (4 len entry_dim bytes) run one sequence at a time, so the scratch never
      // holds more than one sequence's entries.
      base::ArenaMark mark(ws.arena());
      const float* const* floats = FloatEntryTable(a.cache, s, len, ws.arena());
      const void** rows = ws.arena().Allocate<const void*>(len);
      std::copy(floats, floats + len, rows);
      const AbsorbedSequence one{&s, RowTable{rows, len, entry_dim, WeightFormat::kF32}};
      AttendAbsorbedAll(a, {&one, 1}, s.rows, pool, ws);
    }
    return;
  }
  base::ArenaMark mark(ws.arena());  // the naive forms' scratch goes back at once
  const float* const* entries = FloatEntryTable(a.cache, s, len, ws.arena());
  const float* expanded = ExpandLatents(a, entries, len, pool, ws.arena());
  if (ms.form == MlaForm::kNaiveGemm) {
    return MlaAttendNaiveGemm(a, s, expanded, entries, pool, ws.arena());
  }
  const float* qs = a.q + s.row_begin * d.h * d.qk;
  float* os = a.out + s.row_begin * d.h * d.dv;
  ForEachTask(d.h, pool, ws, [&](int64_t head, base::Arena& scratch) {
    float* p = scratch.Allocate<float>(len);
    AttendNaive(d, qs, expanded, entries, s.start_position, s.rows, head, a.shape.scale, p, os);
  });
}

}  // namespace

void WriteLatentCache(const LatentCacheView& cache, std::span<const PagedSequence> seqs,
                      const float* entries) {
  for (const PagedSequence& s : seqs) {
    for (int64_t t = 0; t < s.rows; ++t) {
      const int64_t position = s.start_position + t;
      EncodeLatentEntry(
          cache.dtype, entries + (s.row_begin + t) * cache.entry_dim, cache.entry_dim,
          cache.entry(s.pages[position / cache.page_size], position % cache.page_size));
    }
  }
}

void MlaAttention(const MlaAttentionArgs& args, std::span<const MlaSequence> seqs,
                  base::ThreadPool* pool, Workspace& ws) {
  base::ArenaMark mark(ws.arena());  // the absorbed sequences' entry tables live until the end
  auto* absorbed = ws.arena().Allocate<AbsorbedSequence>(seqs.size());
  size_t num_absorbed = 0;
  for (const MlaSequence& s : seqs) AttendSequence(args, s, pool, ws, absorbed, &num_absorbed);
  int64_t absorbed_rows = 0;
  for (size_t i = 0; i < num_absorbed; ++i) absorbed_rows += absorbed[i].seq->rows;
  if (num_absorbed > 0) {
    AttendAbsorbedAll(args, {absorbed, num_absorbed}, absorbed_rows, pool, ws);
  }
}

}  // namespace k3::kernels::cpu
