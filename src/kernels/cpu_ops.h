// The CPU implementations behind CpuBackend, one source file per op family (norm.cc,
// activation.cc, rope.cc, mla_attention.cc, kda_conv.cc, kda_recurrence.cc, moe_router.cc,
// moe_dispatch.cc, attn_res.cc, sampling_ops.cc). Float32 storage; sums that are long or feed a
// normalisation accumulate in double, as the model always did (results are bit-identical to the
// loops these replaced). `pool` may be null (the calling thread does everything).
// Internal to kernels/: model code reaches these through kernels::Backend.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "kernels/matmul_split.h"
#include "kernels/op_args.h"
#include "kernels/workspace.h"

namespace k3::kernels::cpu {

// Runs fn(begin, end, slot) over contiguous ranges of [0, n) items (rows, sequences) of about
// `work_per_item` multiply-adds or element touches each: on `pool` when the whole reaches
// detail::kMinParallelWork, else in one call on this thread. For ops whose items are independent,
// so a range's results are the bits of one pass. Without it the row-wise ops of a batched decode
// step (norms, Attention Residuals, the MoE gather and combine, the short convolutions) ran on the
// calling thread while the other waited: 5 % of a K3 batch-32 step on 2 threads.
template <class Fn>
void ForRanges(base::ThreadPool* pool, int64_t n, int64_t work_per_item, const Fn& fn) {
  detail::SplitRangeSlots(n, 1, detail::TaskCount(pool, n * work_per_item), pool, fn);
}

// norm.cc
void RmsNorm(const RmsNormShape& shape, const float* x, const float* weight, float* out,
             base::ThreadPool* pool = nullptr);
void GatedRmsNorm(const RmsNormShape& shape, const float* x, const float* weight, const float* gate,
                  float* out, base::ThreadPool* pool = nullptr);
void L2Normalize(const L2NormShape& shape, float* x);
void Add(float* x, const float* y, int64_t n, base::ThreadPool* pool = nullptr);

// activation.cc
void Activate(const ActivationShape& shape, const float* x, float* out);
void Glu(const ActivationShape& shape, const float* gate, const float* up, float* out);
void SigmoidGate(float* x, const float* gate, int64_t n);
// In-place softmax over n values (max-subtracted, double sum).
void SoftmaxInPlace(float* x, int64_t n);

// rope.cc
void ApplyRope(const RopeArgs& args);

// latent_codec.cc: one latent cache entry of `dim` values to its stored form (LatentEntryBytes)
// and back. Encode then decode is exact for kF32; the bounds of the others are LatentDtype's.
void EncodeLatentEntry(LatentDtype dtype, const float* entry, int64_t dim, uint8_t* stored);
void DecodeLatentEntry(LatentDtype dtype, const uint8_t* stored, int64_t dim, float* entry);

// mla_attention.cc, mla_attention_gemm.cc
// WriteLatentCache encodes each entry into the cache's dtype.
void WriteLatentCache(const LatentCacheView& cache, std::span<const PagedSequence> seqs,
                      const float* entries);
void MlaAttention(const MlaAttentionArgs& args, std::span<const MlaSequence> seqs,
                  base::ThreadPool* pool, Workspace& ws);
// The naive form of one sequence as two matrix products per head. expanded: [len, heads,
// nope + value] keys and values of every position; entries[j]: position j's entry as floats.
void MlaAttendNaiveGemm(const MlaAttentionArgs& args, const PagedSequence& seq,
                        const float* expanded, const float* const* entries, base::ThreadPool* pool,
                        base::Arena& scratch);

// kda_conv.cc
void KdaGates(const KdaGateArgs& args);
void ShortConv(const ShortConvArgs& args, std::span<const ConvSequence> seqs,
               base::ThreadPool* pool = nullptr);

// kda_recurrence.cc
void KdaDeltaRule(const KdaArgs& args, std::span<const KdaSequence> seqs, base::ThreadPool* pool,
                  Workspace& ws);

// moe_router.cc
// Each task takes its scratch from its slot of ws.
void MoeRoute(const MoeRouteArgs& args, base::ThreadPool* pool, Workspace& ws);

// moe_dispatch.cc
void MoeDispatch(const MoeDispatchArgs& args, base::ThreadPool* pool = nullptr);
void MoeCombine(const MoeCombineArgs& args, base::ThreadPool* pool = nullptr);
void GroupedMatMul(const GroupedMatMulArgs& args, base::ThreadPool* pool, Workspace& ws);
void GroupedMlp(const GroupedMlpArgs& args, base::ThreadPool* pool, Workspace& ws);

// attn_res.cc
// Each task takes its scratch from its slot of ws.
void AttnResMix(const AttnResArgs& args, base::ThreadPool* pool, Workspace& ws);

// sampling_ops.cc
void ApplyTokenBitmask(const VocabRows& shape, const uint64_t* bitmask, float* logits);
void MaxArgmax(const VocabRows& shape, const float* logits, float* max, int32_t* argmax);
void ScaledExp(const VocabRows& shape, const float* logits, const float* max, float inv_temperature,
               float* out);
void Softmax(const VocabRows& shape, const float* x, float* out);
void LogSoftmax(const VocabRows& shape, const float* x, float* out);

}  // namespace k3::kernels::cpu
