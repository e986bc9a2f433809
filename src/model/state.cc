#include "model/state.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace k3::model {

KdaStatePool::KdaStatePool(const ModelConfig& config, int num_slots) : num_slots_(num_slots) {
  const int64_t p = config.kda.projection_dim();
  conv_floats_ = 3 * int64_t{std::max(config.kda.conv_kernel - 1, 0)} * p;
  recurrent_floats_ = int64_t{config.kda.num_heads} * config.kda.head_dim * config.kda.head_dim;
  per_layer_ = conv_floats_ + recurrent_floats_;
  per_slot_ = per_layer_ * config.num_kda_layers();
  data_ = base::AlignedBuffer<float>(static_cast<size_t>(per_slot_ * num_slots), 0.0f);
}

float* KdaStatePool::conv_state(int slot, int kda_layer) {
  K3_DCHECK(slot >= 0 && slot < num_slots_);
  return data_.data() + slot * per_slot_ + kda_layer * per_layer_;
}

float* KdaStatePool::recurrent_state(int slot, int kda_layer) {
  return conv_state(slot, kda_layer) + conv_floats_;
}

void KdaStatePool::Reset(int slot) {
  K3_CHECK(slot >= 0 && slot < num_slots_) << "state slot " << slot;
  std::fill_n(data_.data() + slot * per_slot_, per_slot_, 0.0f);
}

void KdaStatePool::ResetLayer(int slot, int kda_layer) {
  std::fill_n(conv_state(slot, kda_layer), per_layer_, 0.0f);
}

void KdaStatePool::Copy(int from_slot, int to_slot) {
  K3_CHECK(from_slot >= 0 && from_slot < num_slots_ && to_slot >= 0 && to_slot < num_slots_);
  std::memcpy(data_.data() + to_slot * per_slot_, data_.data() + from_slot * per_slot_,
              per_slot_ * sizeof(float));
}

MlaCache::MlaCache(const ModelConfig& config, int num_pages, int page_size)
    : num_pages_(num_pages),
      page_size_(page_size),
      num_layers_(config.num_mla_layers()),
      entry_dim_(config.mla.cache_dim()) {
  data_ = base::AlignedBuffer<float>(
      static_cast<size_t>(int64_t{num_pages} * num_layers_ * page_size * entry_dim_), 0.0f);
}

}  // namespace k3::model
