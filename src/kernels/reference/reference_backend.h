// ReferenceBackend: the scalar oracle of every Backend op, written from the op's definition
// (op_args.h, backend.h) as plainly as possible: one thread, no SIMD, no fast-math helpers,
// libm exp/tanh/erf in double, and sums in double. It is the only second copy of any kernel and
// exists to test backends (backend_conformance_test.cc): it shares no code with CpuBackend's ops
// (matrix products use kernels::MatMulReference, weights are dequantised by definition).
// Host memory. Slow; for tests only.
#pragma once

#include "kernels/host_backend.h"

namespace k3::kernels::reference {

// One latent cache entry to its stored form and back, by the format definitions (LatentDtype in
// op_args.h); for WriteLatentCache, MlaAttention and the round-trip tests.
void EncodeLatentEntry(LatentDtype dtype, const float* entry, int64_t dim, uint8_t* stored);
void DecodeLatentEntry(LatentDtype dtype, const uint8_t* stored, int64_t dim, float* entry);

class ReferenceBackend final : public HostBackend {
 public:
  const char* name() const override { return "reference"; }
  size_t num_slots() const override { return 1; }

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
};

// Helpers the reference files share.
double SigmoidRef(double x);
double SiluRef(double x);

}  // namespace k3::kernels::reference
