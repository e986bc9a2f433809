#include "model/state.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "kernels/cpu_backend.h"

namespace k3::model {

namespace {

kernels::Backend& OrHost(kernels::Backend* backend) {
  return backend != nullptr ? *backend : kernels::CpuBackend::Serial();
}

// A zeroed backend buffer of `bytes` bytes (none for an empty pool or cache).
kernels::DeviceBuffer ZeroedBytes(kernels::Backend& backend, int64_t bytes) {
  if (bytes <= 0) return {};
  kernels::DeviceBuffer buffer = backend.Allocate(static_cast<size_t>(bytes));
  backend.Zero(buffer.data(), buffer.bytes());
  return buffer;
}

}  // namespace

KdaStatePool::KdaStatePool(const ModelConfig& config, int num_slots, kernels::Backend* backend)
    : backend_(&OrHost(backend)), num_slots_(num_slots) {
  const int64_t p = config.kda.projection_dim();
  conv_floats_ = 3 * int64_t{std::max(config.kda.conv_kernel - 1, 0)} * p;
  recurrent_floats_ = int64_t{config.kda.num_heads} * config.kda.head_dim * config.kda.head_dim;
  per_layer_ = conv_floats_ + recurrent_floats_;
  per_slot_ = per_layer_ * config.num_kda_layers();
  data_ = ZeroedBytes(*backend_, per_slot_ * num_slots * int64_t{sizeof(float)});
}

float* KdaStatePool::conv_state(int slot, int kda_layer) {
  K3_DCHECK(slot >= 0 && slot < num_slots_);
  return data() + slot * per_slot_ + kda_layer * per_layer_;
}

float* KdaStatePool::recurrent_state(int slot, int kda_layer) {
  return conv_state(slot, kda_layer) + conv_floats_;
}

void KdaStatePool::Reset(int slot) {
  K3_CHECK(slot >= 0 && slot < num_slots_) << "state slot " << slot;
  backend_->Zero(data() + slot * per_slot_, per_slot_ * sizeof(float));
}

void KdaStatePool::ResetLayer(int slot, int kda_layer) {
  backend_->Zero(conv_state(slot, kda_layer), per_layer_ * sizeof(float));
}

void KdaStatePool::Copy(int from_slot, int to_slot) {
  K3_CHECK(from_slot >= 0 && from_slot < num_slots_ && to_slot >= 0 && to_slot < num_slots_);
  backend_->Copy(data() + to_slot * per_slot_, data() + from_slot * per_slot_,
                 per_slot_ * sizeof(float));
}

MlaCache::MlaCache(const ModelConfig& config, int num_pages, int page_size,
                   kernels::Backend* backend, kernels::LatentDtype dtype)
    : num_pages_(num_pages),
      page_size_(page_size),
      num_layers_(config.num_mla_layers()),
      entry_dim_(config.mla.cache_dim()),
      dtype_(dtype) {
  data_ =
      ZeroedBytes(OrHost(backend), int64_t{num_pages} * num_layers_ * page_size * entry_bytes());
}

int64_t MlaCache::BytesPerToken(const ModelConfig& config, kernels::LatentDtype dtype) {
  return int64_t{config.num_mla_layers()} *
         kernels::LatentEntryBytes(dtype, config.mla.cache_dim());
}

}  // namespace k3::model
