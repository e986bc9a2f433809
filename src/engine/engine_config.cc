#include "engine/engine_config.h"

#include <algorithm>
#include <cstdio>

namespace k3::engine {

std::string CacheLayout::ToString() const {
  char text[320];
  std::snprintf(text, sizeof text,
                "%lld tokens of latent cache (%d blocks x %d, %.1f MiB), %d running state slots + "
                "%d checkpoint slots (%.1f MiB, %.2f MiB each), max sequence %lld tokens",
                static_cast<long long>(cache_tokens()), num_blocks, block_size,
                num_blocks * static_cast<double>(block_bytes) / (1 << 20), running_slots,
                checkpoint_slots,
                (running_slots + checkpoint_slots) * static_cast<double>(slot_bytes) / (1 << 20),
                slot_bytes / double(1 << 20), static_cast<long long>(max_model_len));
  return text;
}

base::Result<CacheLayout> PlanCache(const EngineConfig& config, const RunnerInfo& info) {
  if (config.block_size <= 0) return base::InvalidArgument("block size must be positive");
  if (config.max_running <= 0) return base::InvalidArgument("max running must be positive");
  if (config.max_batched_tokens < config.max_running) {
    // Every running sequence must get its decode token each step, or some would starve.
    return base::InvalidArgument(
        "max batched tokens (" + std::to_string(config.max_batched_tokens) +
        ") must be at least max running sequences (" + std::to_string(config.max_running) + ")");
  }
  if (config.state_checkpoint_interval < 0 ||
      config.state_checkpoint_interval % config.block_size != 0) {
    return base::InvalidArgument(
        "state checkpoint interval must be 0 or a multiple of the block "
        "size " +
        std::to_string(config.block_size));
  }
  if (!(config.checkpoint_memory_fraction >= 0 && config.checkpoint_memory_fraction < 1)) {
    return base::InvalidArgument("checkpoint memory fraction must be in [0, 1)");
  }
  CacheLayout layout;
  layout.block_size = config.block_size;
  layout.block_bytes = std::max<int64_t>(1, info.cache_bytes_per_token * config.block_size);
  layout.slot_bytes = info.state_bytes_per_slot;
  layout.running_slots = config.max_running;
  int64_t left = config.cache_memory_bytes - layout.slot_bytes * config.max_running;
  if (info.has_recurrent_state && config.enable_prefix_caching && left > 0) {
    layout.checkpoint_slots = static_cast<int>(
        static_cast<double>(left) * config.checkpoint_memory_fraction / layout.slot_bytes);
    left -= layout.slot_bytes * layout.checkpoint_slots;
  }
  layout.num_blocks = static_cast<int>(std::min<int64_t>(left / layout.block_bytes, 1 << 30));
  if (layout.num_blocks < config.max_running) {
    return base::InvalidArgument(
        "cache memory " + std::to_string(config.cache_memory_bytes >> 20) +
        " MiB is too small: " + std::to_string(config.max_running) + " running sequences need " +
        std::to_string((layout.slot_bytes + layout.block_bytes) * config.max_running >> 20) +
        " MiB or more (lower max running or raise cache memory)");
  }
  int64_t limit = layout.cache_tokens();
  if (info.max_position > 0) limit = std::min(limit, info.max_position);
  if (config.max_model_len > 0) {
    if (config.max_model_len > limit) {
      return base::InvalidArgument("max model length " + std::to_string(config.max_model_len) +
                                   " exceeds what the model and cache allow (" +
                                   std::to_string(limit) + ")");
    }
    limit = config.max_model_len;
  }
  layout.max_model_len = limit;
  return layout;
}

}  // namespace k3::engine
