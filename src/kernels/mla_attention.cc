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
// Heads of a sequence run in parallel; each head task takes its scratch from its Workspace slot.
#include <algorithm>
#include <cstring>

#include "base/arena.h"
#include "kernels/cpu_ops.h"
#include "kernels/matmul_detail.h"
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

// Absorbed form for one (sequence, head) between the two projections, reading only the cache
// entries, stored as E (float, or uint16_t bfloat16 read in place: Dot and Axpy widen each value
// with a shift): from each row t's latent query q_latent[t] ([rows, r]: q_nope W_uk) to
// mixed[t] = sum_j p_j entry_j[0, r) ([rows, r]). scratch: p [start + rows].
template <typename E>
K3_MULTIVERSION void AttendAbsorbed(const Dims& d, const float* q, const E* const* entries,
                                    int64_t start, int64_t rows, int64_t head, float scale,
                                    const float* q_latent, float* p, float* mixed) {
  for (int64_t t = 0; t < rows; ++t) {
    const float* q_rope = q + t * d.h * d.qk + head * d.qk + d.dn;
    const float* ql = q_latent + t * d.r;
    const int64_t len = start + t + 1;
    for (int64_t j = 0; j < len; ++j) {
      const E* e = entries[j];
      p[j] = (Dot(ql, e, d.r) + Dot(q_rope, e + d.r, d.dr)) * scale;
    }
    SoftmaxInPlace(p, len);
    float* m = mixed + t * d.r;
    std::fill(m, m + d.r, 0.0f);
    for (int64_t j = 0; j < len; ++j) Axpy(p[j], entries[j], m, d.r);
  }
}

// Position j's stored entry for j in [0, len), as a table of pointers to E (from `arena`).
template <typename E>
const E** EntryTable(const LatentCacheView& cache, const PagedSequence& s, int64_t len,
                     base::Arena& arena) {
  const E** table = arena.Allocate<const E*>(len);
  for (int64_t j = 0; j < len; ++j) {
    table[j] =
        reinterpret_cast<const E*>(cache.entry(s.pages[j / cache.page_size], j % cache.page_size));
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
  if (cache.dtype == LatentDtype::kF32) return EntryTable<float>(cache, s, len, arena);
  const int64_t dim = cache.entry_dim;
  const float** table = arena.Allocate<const float*>(len);
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

// task(head, scratch) for every head, in parallel over the pool's slots.
template <typename Task>
void ForEachHead(int64_t heads, base::ThreadPool* pool, Workspace& ws, const Task& task) {
  auto run = [&](size_t head, size_t slot) {
    base::Arena& scratch = ws.slot(slot);
    base::ArenaMark task_mark(scratch);
    task(static_cast<int64_t>(head), scratch);
  };
  if (pool) return pool->ParallelForSlots(heads, run);
  for (int64_t head = 0; head < heads; ++head) run(head, 0);
}

// One sequence of the absorbed form: its rows and its entries, as E (BF16 read in place) or floats.
struct AbsorbedSequence {
  const PagedSequence* seq;
  const uint16_t* const* bf16_entries;  // when the cache is BF16
  const float* const* float_entries;    // otherwise
};

// y [tokens, w.rows] = x W^T on the calling thread in the decode regime: every token's sums are
// the same whatever the number of tokens.
void DecodeProduct(const WeightMatrix& w, const float* x, int64_t tokens, float* y,
                   base::Arena& scratch) {
  detail::MatMulWithIsa(detail::BestIsa(), detail::Regime::kDecode, x, tokens, w, y, nullptr,
                        &scratch);
}

// The absorbed form of every sequence in `seqs` (total_rows rows), in one pass over the heads. A
// head's task folds all rows' queries into the latent space with one product (q_nope [rows, dn]
// times its W_uk^T slice), runs each sequence's softmax over the entries, and applies its W_uv
// slice to all rows' mixed latents with a second product: kv_b is read once per head and layer,
// not once per sequence, in its stored format where the layout keeps it (K2's FP8: a quarter of
// float32's bytes; AbsorbedKvBStorage), and the products run on the decode kernels' register tiles
// (4 weight rows x up to 6 tokens) instead of an Axpy per query value and a Dot per output value.
// Results do not depend on which sequences share the step (the decode kernels' per-token sums do
// not depend on the token tiling).
void AttendAbsorbedAll(const MlaAttentionArgs& a, std::span<const AbsorbedSequence> seqs,
                       int64_t total_rows, base::ThreadPool* pool, Workspace& ws) {
  const Dims d = DimsOf(a.shape);
  ForEachHead(d.h, pool, ws, [&](int64_t head, base::Arena& scratch) {
    const WeightMatrix w_uk_t = RowRange(a.absorbed.keys_t, head * d.r, d.r);  // [r, dn]
    const WeightMatrix w_uv =
        RowRange(a.absorbed.values, head * (d.dn + d.dv) + d.dn, d.dv);  // [dv, r]
    float* q_nope = scratch.Allocate<float>(total_rows * d.dn);          // [total_rows, dn]
    float* q_latent = scratch.Allocate<float>(total_rows * d.r);         // [total_rows, r]
    float* mixed = scratch.Allocate<float>(total_rows * d.r);            // [total_rows, r]
    float* values = scratch.Allocate<float>(total_rows * d.dv);          // [total_rows, dv]
    int64_t row = 0;
    for (const AbsorbedSequence& as : seqs) {
      for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
        std::memcpy(q_nope + row * d.dn, a.q + ((as.seq->row_begin + t) * d.h + head) * d.qk,
                    d.dn * sizeof(float));
      }
    }
    DecodeProduct(w_uk_t, q_nope, total_rows, q_latent, scratch);
    row = 0;
    for (const AbsorbedSequence& as : seqs) {
      const PagedSequence& s = *as.seq;
      base::ArenaMark mark(scratch);
      float* p = scratch.Allocate<float>(s.start_position + s.rows);
      const float* qs = a.q + s.row_begin * d.h * d.qk;
      if (as.bf16_entries != nullptr) {
        AttendAbsorbed(d, qs, as.bf16_entries, s.start_position, s.rows, head, a.shape.scale,
                       q_latent + row * d.r, p, mixed + row * d.r);
      } else {
        AttendAbsorbed(d, qs, as.float_entries, s.start_position, s.rows, head, a.shape.scale,
                       q_latent + row * d.r, p, mixed + row * d.r);
      }
      row += s.rows;
    }
    DecodeProduct(w_uv, mixed, total_rows, values, scratch);
    row = 0;
    for (const AbsorbedSequence& as : seqs) {
      for (int64_t t = 0; t < as.seq->rows; ++t, ++row) {
        std::memcpy(a.out + ((as.seq->row_begin + t) * d.h + head) * d.dv, values + row * d.dv,
                    d.dv * sizeof(float));
      }
    }
  });
}

// BF16 caches are read in place by the absorbed form (decode, bandwidth-bound: every head reads
// all entries twice, so half fp32's bytes); FP8 caches, and every naive form, decode the entries
// to floats first (FloatEntryTable). Measured, one decode token, 64 heads, 576-wide entries, one
// thread: at context 4096 fp32 24.5 ms, bf16 in place 22.2, fp8 decoded 22.1 (of which the decode
// 1.4): all in cache; at 32768 fp32 721 ms, bf16 in place 264, fp8 decoded 470 (decode 18). A bf16
// decode-first path would cost the 7.8 ms decode and then read fp32-sized scratch per head.
// Absorbed sequences over BF16 or FP32 caches only get their tables of entry pointers here (from
// ws.arena(), which the caller keeps) and are appended to `absorbed`; the rest run at once.
void AttendSequence(const MlaAttentionArgs& a, const MlaSequence& ms, base::ThreadPool* pool,
                    Workspace& ws, AbsorbedSequence* absorbed, size_t* num_absorbed) {
  const Dims d = DimsOf(a.shape);
  const PagedSequence& s = ms.seq;
  const int64_t len = s.start_position + s.rows;
  if (ms.form == MlaForm::kAbsorbed) {
    if (a.cache.dtype == LatentDtype::kBf16) {
      absorbed[(*num_absorbed)++] = {&s, EntryTable<uint16_t>(a.cache, s, len, ws.arena()),
                                     nullptr};
    } else if (a.cache.dtype == LatentDtype::kF32) {  // pointers into the cache, no copy
      absorbed[(*num_absorbed)++] = {&s, nullptr, FloatEntryTable(a.cache, s, len, ws.arena())};
    } else {
      // Decoded copies (4 len entry_dim bytes) run one sequence at a time, so the scratch never
      // holds more than one sequence's entries.
      base::ArenaMark mark(ws.arena());
      const AbsorbedSequence one{&s, nullptr, FloatEntryTable(a.cache, s, len, ws.arena())};
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
  ForEachHead(d.h, pool, ws, [&](int64_t head, base::Arena& scratch) {
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
