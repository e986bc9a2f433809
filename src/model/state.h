// Per-sequence memory the forward pass reads and writes:
// - KdaStatePool: one slot per live sequence holding, for every KDA layer, the short-convolution
//   history (the last kernel-1 pre-activation q, k, v projections) and the fp32 recurrent state
//   S[h][k][v] (decay runs along k, spec/model.md §2.1).
// - MlaCache: fixed-size pages of latent cache entries; an entry is the normalised c_kv (kv_lora
//   wide) followed by the shared key part k_pe (rope dim, rotated for RoPE models), per MLA layer.
// Both are plain storage; which sequence owns which slot or page is the caller's business.
#pragma once

#include <cstdint>
#include <vector>

#include "base/aligned_buffer.h"
#include "model/config.h"

namespace k3::model {

class KdaStatePool {
 public:
  KdaStatePool(const ModelConfig& config, int num_slots);

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
  int num_slots_;
  int64_t conv_floats_, recurrent_floats_, per_layer_, per_slot_;
  base::AlignedBuffer<float> data_;
};

class MlaCache {
 public:
  MlaCache(const ModelConfig& config, int num_pages, int page_size);

  int num_pages() const { return num_pages_; }
  int page_size() const { return page_size_; }
  int entry_dim() const { return entry_dim_; }
  // The entry of `mla_layer` at slot `offset` of `page`: entry_dim floats.
  float* entry(int page, int offset, int mla_layer) {
    return data_.data() +
           ((static_cast<int64_t>(page) * num_layers_ + mla_layer) * page_size_ + offset) *
               entry_dim_;
  }

 private:
  int num_pages_, page_size_, num_layers_, entry_dim_;
  base::AlignedBuffer<float> data_;
};

}  // namespace k3::model
