// Per-sequence memory the forward pass reads and writes:
// - KdaStatePool: one slot per live sequence holding, for every KDA layer, the short-convolution
//   history (the last kernel-1 pre-activation q, k, v projections) and the fp32 recurrent state
//   S[h][k][v] (decay runs along k, spec/model.md §2.1).
// - MlaCache: fixed-size pages of latent cache entries; an entry is the normalised c_kv (kv_lora
//   wide) followed by the shared key part k_pe (rope dim, rotated for RoPE models), per MLA layer,
//   stored as fp32, bf16 or fp8 E4M3 with a per-entry scale (kernels::LatentDtype). KDA states
//   stay fp32 whatever the cache's dtype (they are rewritten every token: rounding would
//   accumulate).
// Both are plain storage in a compute backend's memory (host memory for the default CpuBackend);
// which sequence owns which slot or page is the caller's business.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "model/config.h"

namespace k3::model {

class KdaStatePool {
 public:
  // Zeroed. backend: whose memory holds the states (nullptr: the host, CpuBackend::Serial()).
  KdaStatePool(const ModelConfig& config, int num_slots, kernels::Backend* backend = nullptr);

  int num_slots() const { return num_slots_; }
  // [3][kernel - 1][P]: q, k, v histories, oldest first.
  float* conv_state(int slot, int kda_layer);
  // [H][K][V].
  float* recurrent_state(int slot, int kda_layer);
  void Reset(int slot);
  // Zeroes one KDA layer's conv history and recurrent state in `slot`.
  void ResetLayer(int slot, int kda_layer);
  void Copy(int from_slot, int to_slot);
  int64_t floats_per_slot() const { return per_slot_; }

 private:
  float* data() const { return data_.as<float>(); }

  kernels::Backend* backend_;
  int num_slots_;
  int64_t conv_floats_, recurrent_floats_, per_layer_, per_slot_;
  kernels::DeviceBuffer data_;  // [slots, kda layers, per_layer_]
};

class MlaCache {
 public:
  // Zeroed. backend: whose memory holds the pages (nullptr: the host, CpuBackend::Serial()).
  // dtype: how entries are stored (kernels::LatentDtype: fp32, bf16, or fp8 with a scale per
  // entry); the model computes each entry in fp32 and WriteLatentCache encodes it.
  MlaCache(const ModelConfig& config, int num_pages, int page_size,
           kernels::Backend* backend = nullptr,
           kernels::LatentDtype dtype = kernels::LatentDtype::kF32);

  int num_pages() const { return num_pages_; }
  int page_size() const { return page_size_; }
  int entry_dim() const { return entry_dim_; }
  kernels::LatentDtype dtype() const { return dtype_; }
  // Bytes of one stored entry, and of one token over every MLA layer.
  int64_t entry_bytes() const { return kernels::LatentEntryBytes(dtype_, entry_dim_); }
  static int64_t BytesPerToken(const ModelConfig& config, kernels::LatentDtype dtype);
  // The entry of `mla_layer` at slot `offset` of `page`: entry_bytes() bytes.
  uint8_t* entry(int page, int offset, int mla_layer) {
    return data_.as<uint8_t>() +
           ((static_cast<int64_t>(page) * num_layers_ + mla_layer) * page_size_ + offset) *
               entry_bytes();
  }
  // One layer's pages as the attention kernels address them.
  kernels::LatentCacheView layer_view(int mla_layer) {
    return {data_.as<uint8_t>() + static_cast<int64_t>(mla_layer) * page_size_ * entry_bytes(),
            int64_t{num_layers_} * page_size_ * entry_bytes(), page_size_, entry_dim_, dtype_};
  }

 private:
  int num_pages_, page_size_, num_layers_, entry_dim_;
  kernels::LatentDtype dtype_;
  kernels::DeviceBuffer data_;  // [pages, mla layers, page_size, entry_bytes()]
};

}  // namespace k3::model
