// CpuBackend: the Backend ops on the host, split over an optional thread pool (the ops'
// parallelism: matrix rows, (sequence, head) pairs of attention and KDA, experts). Memory is
// host memory (64-byte aligned). Immutable; share one between threads, each with a Workspace
// from MakeWorkspace().
#pragma once

#include "base/thread_pool.h"
#include "kernels/host_backend.h"

namespace k3::kernels {

class CpuBackend final : public HostBackend {
 public:
  explicit CpuBackend(base::ThreadPool* pool = nullptr) : pool_(pool) {}

  // A process-wide CpuBackend without a pool (for memory owners that have no backend at hand).
  static CpuBackend& Serial();

  base::ThreadPool* pool() const { return pool_; }
  const char* name() const override { return "cpu"; }
  size_t num_slots() const override { return pool_ ? pool_->parallelism() : 1; }

  void MatMul(const float* x, int64_t rows, const WeightMatrix& w, float* y,
              Workspace& ws) override;
  void GroupedMatMul(const GroupedMatMulArgs& args, Workspace& ws) override;
  void GroupedMlp(const GroupedMlpArgs& args, Workspace& ws) override;
  void GatherRows(const WeightMatrix& table, const int32_t* ids, int64_t count,
                  float* out) override;
  void QuantizeMxfp8(float* x, int64_t n) override;

  void RmsNorm(const RmsNormShape& shape, const float* x, const float* weight, float* out) override;
  void GatedRmsNorm(const RmsNormShape& shape, const float* x, const float* weight,
                    const float* gate, float* out) override;
  void L2Normalize(const L2NormShape& shape, float* x) override;
  void Add(float* x, const float* y, int64_t n) override;
  void Activate(const ActivationShape& shape, const float* x, float* out) override;
  void Glu(const ActivationShape& shape, const float* gate, const float* up, float* out) override;
  void SigmoidGate(float* x, const float* gate, int64_t n) override;
  void ApplyRope(const RopeArgs& args) override;

  void WriteLatentCache(const LatentCacheView& cache, std::span<const PagedSequence> seqs,
                        const float* entries) override;
  void MlaAttention(const MlaAttentionArgs& args, std::span<const MlaSequence> seqs,
                    Workspace& ws) override;

  void KdaGates(const KdaGateArgs& args) override;
  void ShortConv(const ShortConvArgs& args, std::span<const ConvSequence> seqs) override;
  void KdaDeltaRule(const KdaArgs& args, std::span<const KdaSequence> seqs, Workspace& ws) override;

  void MoeRoute(const MoeRouteArgs& args, Workspace& ws) override;
  void MoeDispatch(const MoeDispatchArgs& args) override;
  void MoeCombine(const MoeCombineArgs& args) override;

  void AttnResMix(const AttnResArgs& args, Workspace& ws) override;

  void ApplyTokenBitmask(const VocabRows& shape, const uint64_t* bitmask, float* logits) override;
  void MaxArgmax(const VocabRows& shape, const float* logits, float* max, int32_t* argmax) override;
  void ScaledExp(const VocabRows& shape, const float* logits, const float* max,
                 float inv_temperature, float* out) override;
  void Softmax(const VocabRows& shape, const float* x, float* out) override;
  void LogSoftmax(const VocabRows& shape, const float* x, float* out) override;

 private:
  // The Workspace must have a slot per thread of the pool.
  void CheckSlots(const Workspace& ws) const;

  base::ThreadPool* pool_;
};

}  // namespace k3::kernels
