// Backend: the compute interface the model composition runs on. It owns nothing of a model; it
// holds the ops the Kimi families need (matrix products on every stored weight format, norms,
// activations, RoPE, paged MLA attention, KDA, MoE routing and dispatch, Attention Residuals,
// sampling) and the memory they work on (allocation and copies of backend buffers, so a device
// backend can own the KDA state pool and the MLA cache). CpuBackend (cpu_backend.h) runs them on
// the host; reference/reference_backend.h is the scalar oracle every backend is tested against
// (backend_conformance_test.cc).
//
// Conventions: every float* is backend memory unless its struct says "host"; shapes are given
// as structs (op_args.h); ops write their outputs and nothing else. Ops that need scratch take it
// from the caller's Workspace and give it back before returning. A Backend is immutable after
// construction and safe to share between threads, each with its own Workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "base/arena.h"
#include "kernels/matmul.h"
#include "kernels/op_args.h"
#include "kernels/workspace.h"

namespace k3::kernels {

class Backend;

// Backend memory of one allocation, freed with its owner's allocator. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(base::BlockAllocator* allocator, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : allocator_(std::exchange(other.allocator_, nullptr)),
        data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(allocator_, other.allocator_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  base::BlockAllocator* allocator_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;
  // Workers an op may run on at once (the Workspace slot count).
  virtual size_t num_slots() const = 0;

  // ---- memory
  // Whether backend memory is ordinary host memory (host code may then read and write it
  // directly, skipping CopyToHost/CopyToDevice).
  virtual bool memory_is_host() const = 0;
  // Where backend buffers and workspace blocks come from.
  virtual base::BlockAllocator& memory() = 0;
  DeviceBuffer Allocate(size_t bytes) { return DeviceBuffer(&memory(), bytes); }
  Workspace MakeWorkspace() { return Workspace(num_slots(), &memory()); }
  // Copies and zeroing accept bytes == 0 with null pointers (an empty state or cache range).
  virtual void Copy(void* dst, const void* src, size_t bytes) = 0;           // backend -> backend
  virtual void CopyToDevice(void* dst, const void* host, size_t bytes) = 0;  // host -> backend
  virtual void CopyToHost(void* host, const void* src, size_t bytes) = 0;    // backend -> host
  virtual void Zero(void* dst, size_t bytes) = 0;

  // ---- matrix products (kernels/matmul.h: y[t, r] = sum_c x[t, c] W[r, c])
  virtual void MatMul(const float* x, int64_t rows, const WeightMatrix& w, float* y,
                      Workspace& ws) = 0;
  virtual void GroupedMatMul(const GroupedMatMulArgs& args, Workspace& ws) = 0;
  virtual void GroupedMlp(const GroupedMlpArgs& args, Workspace& ws) = 0;
  // out[i] = table[ids[i]] as float32 (embedding lookup); ids: host, [count].
  virtual void GatherRows(const WeightMatrix& table, const int32_t* ids, int64_t count,
                          float* out) = 0;
  // MXFP8 round trip in place (kernels::QuantizeMxfp8InPlace); n % 32 == 0.
  virtual void QuantizeMxfp8(float* x, int64_t n) = 0;

  // ---- norms and elementwise ops
  // out = x / sqrt(mean(x^2) + eps) * weight (weight may be null); out may alias x.
  virtual void RmsNorm(const RmsNormShape& shape, const float* x, const float* weight,
                       float* out) = 0;
  // out = RmsNorm(x) * weight * sigmoid(gate), gate laid out like x; out may alias x.
  virtual void GatedRmsNorm(const RmsNormShape& shape, const float* x, const float* weight,
                            const float* gate, float* out) = 0;
  virtual void L2Normalize(const L2NormShape& shape, float* x) = 0;
  // x[i] += y[i].
  virtual void Add(float* x, const float* y, int64_t n) = 0;
  // out[i] = act(x[i]).
  virtual void Activate(const ActivationShape& shape, const float* x, float* out) = 0;
  // Gated linear unit: out[i] = act(gate[i]) * up[i] (SiTU: * linear_beta tanh(up / linear_beta)).
  virtual void Glu(const ActivationShape& shape, const float* gate, const float* up,
                   float* out) = 0;
  // x[i] *= sigmoid(gate[i]).
  virtual void SigmoidGate(float* x, const float* gate, int64_t n) = 0;
  virtual void ApplyRope(const RopeArgs& args) = 0;

  // ---- MLA over a paged latent cache
  // Copies entries ([rows, entry_dim], in batch row order) to their sequences' cache slots.
  virtual void WriteLatentCache(const LatentCacheView& cache, std::span<const PagedSequence> seqs,
                                const float* entries) = 0;
  // Causal attention of each sequence's rows over cache positions [0, start_position + row].
  virtual void MlaAttention(const MlaAttentionArgs& args, std::span<const MlaSequence> seqs,
                            Workspace& ws) = 0;

  // ---- Kimi Delta Attention
  virtual void KdaGates(const KdaGateArgs& args) = 0;
  virtual void ShortConv(const ShortConvArgs& args, std::span<const ConvSequence> seqs) = 0;
  virtual void KdaDeltaRule(const KdaArgs& args, std::span<const KdaSequence> seqs,
                            Workspace& ws) = 0;

  // ---- mixture of experts
  virtual void MoeRoute(const MoeRouteArgs& args, Workspace& ws) = 0;
  virtual void MoeDispatch(const MoeDispatchArgs& args) = 0;
  virtual void MoeCombine(const MoeCombineArgs& args) = 0;

  // ---- Attention Residuals
  virtual void AttnResMix(const AttnResArgs& args, Workspace& ws) = 0;

  // ---- sampling, per row of logits
  // Masked-out tokens (bit clear in bitmask [rows, mask_words], bit t % 64 of word t / 64) to -inf.
  virtual void ApplyTokenBitmask(const VocabRows& shape, const uint64_t* bitmask,
                                 float* logits) = 0;
  // The largest logit and the first index holding it, per row ([rows] each).
  virtual void MaxArgmax(const VocabRows& shape, const float* logits, float* max,
                         int32_t* argmax) = 0;
  // out = exp((logits - max[row]) * inv_temperature), exactly 0 below e^-87.
  virtual void ScaledExp(const VocabRows& shape, const float* logits, const float* max,
                         float inv_temperature, float* out) = 0;
  virtual void Softmax(const VocabRows& shape, const float* x, float* out) = 0;
  virtual void LogSoftmax(const VocabRows& shape, const float* x, float* out) = 0;
};

}  // namespace k3::kernels
