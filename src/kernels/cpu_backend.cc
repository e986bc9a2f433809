#include "kernels/cpu_backend.h"

#include <cstring>

#include "base/check.h"
#include "kernels/cpu_ops.h"

namespace k3::kernels {

CpuBackend& CpuBackend::Serial() {
  static CpuBackend backend(nullptr);
  return backend;
}

void CpuBackend::CheckSlots(const Workspace& ws) const {
  K3_CHECK(ws.num_slots() >= num_slots())
      << "workspace has " << ws.num_slots() << " slots, the backend runs " << num_slots();
}

void CpuBackend::MatMul(const float* x, int64_t rows, const WeightMatrix& w, float* y,
                        Workspace& ws) {
  kernels::MatMul(x, rows, w, y, pool_, &ws.arena());
}
void CpuBackend::GroupedMatMul(const GroupedMatMulArgs& args, Workspace& ws) {
  CheckSlots(ws);
  cpu::GroupedMatMul(args, pool_, ws);
}
void CpuBackend::GroupedMlp(const GroupedMlpArgs& args, Workspace& ws) {
  CheckSlots(ws);
  cpu::GroupedMlp(args, pool_, ws);
}
void CpuBackend::GatherRows(const WeightMatrix& table, const int32_t* ids, int64_t count,
                            float* out) {
  for (int64_t i = 0; i < count; ++i) DequantizeRow(table, ids[i], out + i * table.cols);
}
void CpuBackend::QuantizeMxfp8(float* x, int64_t n) { QuantizeMxfp8InPlace(x, n); }

void CpuBackend::RmsNorm(const RmsNormShape& shape, const float* x, const float* weight,
                         float* out) {
  cpu::RmsNorm(shape, x, weight, out, pool_);
}
void CpuBackend::GatedRmsNorm(const RmsNormShape& shape, const float* x, const float* weight,
                              const float* gate, float* out) {
  cpu::GatedRmsNorm(shape, x, weight, gate, out, pool_);
}
void CpuBackend::L2Normalize(const L2NormShape& shape, float* x) { cpu::L2Normalize(shape, x); }
void CpuBackend::Add(float* x, const float* y, int64_t n) { cpu::Add(x, y, n, pool_); }
void CpuBackend::Activate(const ActivationShape& shape, const float* x, float* out) {
  cpu::Activate(shape, x, out);
}
void CpuBackend::Glu(const ActivationShape& shape, const float* gate, const float* up, float* out) {
  cpu::Glu(shape, gate, up, out);
}
void CpuBackend::SigmoidGate(float* x, const float* gate, int64_t n) {
  cpu::SigmoidGate(x, gate, n);
}
void CpuBackend::ApplyRope(const RopeArgs& args) { cpu::ApplyRope(args); }

void CpuBackend::WriteLatentCache(const LatentCacheView& cache, std::span<const PagedSequence> seqs,
                                  const float* entries) {
  cpu::WriteLatentCache(cache, seqs, entries);
}
void CpuBackend::MlaAttention(const MlaAttentionArgs& args, std::span<const MlaSequence> seqs,
                              Workspace& ws) {
  CheckSlots(ws);
  cpu::MlaAttention(args, seqs, pool_, ws);
}

void CpuBackend::KdaGates(const KdaGateArgs& args) { cpu::KdaGates(args); }
void CpuBackend::ShortConv(const ShortConvArgs& args, std::span<const ConvSequence> seqs) {
  cpu::ShortConv(args, seqs, pool_);
}
void CpuBackend::KdaDeltaRule(const KdaArgs& args, std::span<const KdaSequence> seqs,
                              Workspace& ws) {
  CheckSlots(ws);
  cpu::KdaDeltaRule(args, seqs, pool_, ws);
}

void CpuBackend::MoeRoute(const MoeRouteArgs& args, Workspace& ws) {
  CheckSlots(ws);
  cpu::MoeRoute(args, pool_, ws);
}
void CpuBackend::MoeDispatch(const MoeDispatchArgs& args) { cpu::MoeDispatch(args, pool_); }
void CpuBackend::MoeCombine(const MoeCombineArgs& args) { cpu::MoeCombine(args, pool_); }

void CpuBackend::AttnResMix(const AttnResArgs& args, Workspace& ws) {
  CheckSlots(ws);
  cpu::AttnResMix(args, pool_, ws);
}

void CpuBackend::ApplyTokenBitmask(const VocabRows& shape, const uint64_t* bitmask, float* logits) {
  cpu::ApplyTokenBitmask(shape, bitmask, logits);
}
void CpuBackend::MaxArgmax(const VocabRows& shape, const float* logits, float* max,
                           int32_t* argmax) {
  cpu::MaxArgmax(shape, logits, max, argmax);
}
void CpuBackend::ScaledExp(const VocabRows& shape, const float* logits, const float* max,
                           float inv_temperature, float* out) {
  cpu::ScaledExp(shape, logits, max, inv_temperature, out);
}
void CpuBackend::Softmax(const VocabRows& shape, const float* x, float* out) {
  cpu::Softmax(shape, x, out);
}
void CpuBackend::LogSoftmax(const VocabRows& shape, const float* x, float* out) {
  cpu::LogSoftmax(shape, x, out);
}

}  // namespace k3::kernels
