// Engine settings and how the cache memory budget is split between latent-cache blocks, running
// state slots and state checkpoints.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "engine/model_runner.h"

namespace k3::engine {

struct EngineConfig {
  int64_t cache_memory_bytes = int64_t{1} << 30;  // blocks + state slots + checkpoints
  int block_size = 16;                            // tokens per latent-cache block
  int max_running = 64;                           // sequences in the running batch
  int max_batched_tokens = 2048;                  // tokens per step (decode + prefill chunks)
  int64_t max_waiting = 4096;                     // queued sequences before Submit says no
  bool enable_prefix_caching = true;
  // Keep a KDA checkpoint every this many tokens (a multiple of block_size; 0 = only at prompt
  // ends). The "linear layer caching interval".
  int64_t state_checkpoint_interval = 0;
  // Share of the memory left after running slots that goes to checkpoints (models with state).
  double checkpoint_memory_fraction = 0.25;
  int64_t max_model_len = 0;  // 0 = the model's limit, capped by what the cache can hold
};

struct CacheLayout {
  int num_blocks = 0;
  int block_size = 0;
  int running_slots = 0;     // slot ids [0, running_slots)
  int checkpoint_slots = 0;  // slot ids [running_slots, running_slots + checkpoint_slots)
  int64_t block_bytes = 0;
  int64_t slot_bytes = 0;
  int64_t max_model_len = 0;
  int64_t cache_tokens() const { return int64_t{num_blocks} * block_size; }
  std::string ToString() const;
};

// INVALID_ARGUMENT if the settings contradict each other or the budget cannot hold
// max_running sequences of at least one block each.
base::Result<CacheLayout> PlanCache(const EngineConfig& config, const RunnerInfo& info);

}  // namespace k3::engine
