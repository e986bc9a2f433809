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

// Absorbed form for one (sequence, head) up to the value projection, reading only the cache
// entries, stored as E (float, or uint16_t bfloat16 read in place: Dot and Axpy widen each value
// with a shift): mixed[t] = sum_j p_j entry_j[0, r) for each row t ([rows, r]). scratch: q_latent
// [r], p [start + rows].
template <typename E>
K3_MULTIVERSION void AttendAbsorbed(const Dims& d, const float* kv_b, const float* q,
                                    const E* const* entries, int64_t start, int64_t rows,
                                    int64_t head, float scale, float* q_latent, float* p,
                                    float* mixed) {
  const float* w_uk = kv_b + head * (d.dn + d.dv) * d.r;  // [dn, r]
  for (int64_t t = 0; t < rows; ++t) {
    const float* qh = q + t * d.h * d.qk + head * d.qk;
    std::fill(q_latent, q_latent + d.r, 0.0f);
    for (int64_t n = 0; n < d.dn; ++n) Axpy(qh[n], w_uk + n * d.r, q_latent, d.r);
    const int64_t len = start + t + 1;
    for (int64_t j = 0; j < len; ++j) {
      const E* e = entries[j];
      p[j] = (Dot(q_latent, e, d.r) + Dot(qh + d.dn, e + d.r, d.dr)) * scale;
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

// The absorbed form of every sequence in `seqs`, in one pass over the heads: a head's task runs
// all sequences' rows, then applies its value slice of kv_b (W_uv, [dv, r]) to all of their mixed
// latents in one decode-regime product (4 rows x up to 6 tokens per register tile, W_uv read once
// per head and layer; it was one Dot per row and value, each waiting on its adds). Each row's
// arithmetic is the same whatever the batch (the decode kernels' per-token sums do not depend on
// the token tiling), so results do not depend on which sequences share the step.
void AttendAbsorbedAll(const MlaAttentionArgs& a, std::span<const AbsorbedSequence> seqs,
                       int64_t total_rows, base::ThreadPool* pool, Workspace& ws) {
  const Dims d = DimsOf(a.shape);
  const detail::Isa isa = detail::BestIsa();
  ForEachHead(d.h, pool, ws, [&](int64_t head, base::Arena& scratch) {
    float* mixed = scratch.Allocate<float>(total_rows * d.r);    // [total_rows, r]
    float* values = scratch.Allocate<float>(total_rows * d.dv);  // [total_rows, dv]
    int64_t row = 0;
    for (const AbsorbedSequence& as : seqs) {
      const PagedSequence& s = *as.seq;
      base::ArenaMark mark(scratch);
      float* p = scratch.Allocate<float>(s.start_position + s.rows);
      float* q_latent = scratch.Allocate<float>(d.r);
      const float* qs = a.q + s.row_begin * d.h * d.qk;
      float* m = mixed + row * d.r;
      if (as.bf16_entries != nullptr) {
        AttendAbsorbed(d, a.kv_b_f32, qs, as.bf16_entries, s.start_position, s.rows, head,
                       a.shape.scale, q_latent, p, m);
      } else {
        AttendAbsorbed(d, a.kv_b_f32, qs, as.float_entries, s.start_position, s.rows, head,
                       a.shape.scale, q_latent, p, m);
      }
      row += s.rows;
    }
    WeightMatrix w_uv;  // [dv, r] float32 rows of this head's value slice
    w_uv.format = WeightFormat::kF32;
    w_uv.rows = d.dv;
    w_uv.cols = d.r;
    w_uv.data = a.kv_b_f32 + (head * (d.dn + d.dv) + d.dn) * d.r;
    detail::MatMulWithIsa(isa, detail::Regime::kDecode, mixed, total_rows, w_uv, values, nullptr,
                          &scratch);
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
// Absorbed sequences only get their entry tables here (from ws.arena(), which the caller keeps)
// and are appended to `absorbed`; the naive forms run at once.
void AttendSequence(const MlaAttentionArgs& a, const MlaSequence& ms, base::ThreadPool* pool,
                    Workspace& ws, AbsorbedSequence* absorbed, size_t* num_absorbed) {
  const Dims d = DimsOf(a.shape);
  const PagedSequence& s = ms.seq;
  const int64_t len = s.start_position + s.rows;
  if (ms.form == MlaForm::kAbsorbed) {
    if (a.cache.dtype == LatentDtype::kBf16) {
      absorbed[(*num_absorbed)++] = {&s, EntryTable<uint16_t>(a.cache, s, len, ws.arena()),
                                     nullptr};
    } else {
      absorbed[(*num_absorbed)++] = {&s, nullptr, FloatEntryTable(a.cache, s, len, ws.arena())};
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
